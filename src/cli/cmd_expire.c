/*
 * cmd_expire.c — `tarn maintain expire -C DIR --older-than AGE | --keep-last
 * N`: the project's lake, with retention that respects the record
 * (materialize/retain.h): of the snapshots the rule picks, the newest, the
 * last good build of every model and the pinned ones are kept (each named
 * on stderr with why), the rest expired with ducklake_expire_snapshots.
 * `tarn maintain expire --lake …` (cmd_maintain.c) is the plain DuckLake
 * expiry of any lake; this one is chosen when no --lake is given.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/status.h"

#include "materialize/build.h"
#include "materialize/retain.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *dir, *older_than;
    long keep_last;
    int dry_run;
    render_format fmt;
} expire_opts;

static int parse(expire_opts *o, int argc, char **argv)
{
    for (int i = 2; i < argc; i++) { /* argv[1] is "expire" */
        const char *a = argv[i], *val;
        int m;
        if (strcmp(a, "--dry-run") == 0) {
            o->dry_run = 1;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--older-than", &val)) != 0) {
            if (m < 0)
                return -1;
            o->older_than = val;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--keep-last", &val)) != 0) {
            if (m < 0 || cli_opt_int("--keep-last", val, &o->keep_last) < 0)
                return -1;
        } else if ((m = cli_opt_value(argc, argv, &i, "-C", "--project", &val)) != 0) {
            if (m < 0)
                return -1;
            o->dir = val;
        } else if ((m = cli_opt_format(argc, argv, &i, &o->fmt)) != 0) {
            if (m < 0)
                return -1;
        } else if (cli_opt_quiet(a)) {
            continue;
        } else {
            cli_errorf(a[0] == '-' ? "unknown option '%s' (tarn maintain expire of a project "
                                     "takes --older-than, --keep-last, --dry-run, -q, -C)"
                                   : "unexpected argument '%s'",
                       a);
            return -1;
        }
    }
    if (!o->older_than && !o->keep_last) {
        cli_errorf("expire needs --older-than AGE (e.g. '30 days'), --keep-last N, or both");
        return -1;
    }
    return 0;
}

static int expire(cli_project *cp, const retain_plan *plan, const expire_opts *o)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT snapshot_id, snapshot_time, schema_version, changes FROM "
                 "ducklake_expire_snapshots(");
    quote_literal(&q, cp->p->lake_alias);
    buf_puts(&q, ", versions => [");
    for (size_t i = 0; i < plan->nexpire; i++)
        buf_printf(&q, "%s%lld", i ? ", " : "", (long long)plan->expire[i]);
    buf_printf(&q, "], dry_run => %s) ORDER BY snapshot_id", o->dry_run ? "true" : "false");
    int status = cli_project_print(cp, buf_cstr(&q), o->fmt);
    buf_free(&q);
    return status;
}

int cmd_maintain_expire_project(int argc, char **argv)
{
    expire_opts o = {.fmt = RENDER_TABLE};
    if (parse(&o, argc, argv) < 0) {
        fputs("Try 'tarn maintain --help'.\n", stderr);
        return CLI_USAGE;
    }
    cli_project cp;
    int status = cli_project_open(&cp, o.dir);
    if (status != CLI_OK)
        return status;
    retain_plan plan = {0};
    if (!cli_project_lake_exists(&cp)) {
        cli_errorf("lake \"%s\" has nothing built yet", cp.p->lake_alias);
        status = CLI_USAGE;
    } else if (build_run_config(cp.p, cp.s) != 0 ||
               retain_plan_make(&plan, cp.s, cp.p->lake_alias,
                                tarn_session_catalog_prefix(cp.s, cp.p->lake_alias), o.older_than,
                                o.keep_last) != 0) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        status = CLI_USAGE;
    } else {
        for (size_t i = 0; i < plan.nkept && !cli_quiet(); i++) {
            fputs("tarn: ", stderr);
            cli_status(stderr, CLI_TONE_DIM, 0, "keeping");
            fprintf(stderr, " snapshot %lld: %s\n", (long long)plan.kept[i], plan.why.items[i]);
        }
        /* --quiet: the expired snapshots (stdout) and errors only */
        if (plan.nexpire == 0 && !cli_quiet())
            fprintf(stderr, "tarn: nothing to expire (%zu snapshot%s kept)\n", plan.nkept,
                    plan.nkept == 1 ? "" : "s");
        else if (plan.nexpire)
            status = expire(&cp, &plan, &o);
        if (status == CLI_OK && plan.nexpire && !cli_quiet()) {
            fputs("tarn: ", stderr);
            cli_status(stderr, CLI_TONE_OK, 0, o.dry_run ? "would expire" : "expired");
            fprintf(stderr, " %zu snapshot%s, kept %zu%s\n", plan.nexpire,
                    plan.nexpire == 1 ? "" : "s", plan.nkept,
                    o.dry_run ? "" : " (tarn maintain cleanup deletes the files only they used)");
        }
    }
    retain_plan_free(&plan);
    cli_project_close(&cp);
    return status;
}

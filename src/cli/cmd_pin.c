/*
 * cmd_pin.c — `tarn pin [MODEL | SNAPSHOT] [--note TEXT] [--remove]`: pins a
 * snapshot so that `tarn maintain expire` never forgets it (a release, an
 * audit), lists the pins, or removes one (materialize/retain.h; the pins
 * are the tarn_pin table of the lake's catalog). MODEL pins the snapshot
 * of the model's last good build.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"

#include "materialize/build.h"
#include "materialize/retain.h"
#include "project/query.h"
#include "project/select.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_pin_usage[] =
    "usage: tarn pin [MODEL | SNAPSHOT] [--note TEXT] [-C DIR]\n"
    "       tarn pin --remove SNAPSHOT [-C DIR]\n"
    "\n"
    "Pins a snapshot of the lake so that `tarn maintain expire` keeps it: SNAPSHOT\n"
    "by id, or MODEL's last good build. Without an argument, lists the pins.\n"
    "\n"
    "  --note TEXT         why it is pinned (shown by the list and by expire)\n"
    "  --remove            unpin SNAPSHOT\n"
    "  --format FORMAT     the list: table (default), csv or json\n"
    "  -C, --project DIR   the project folder (default: the current one)\n";

typedef struct {
    const char *dir, *target, *note;
    int remove;
    render_format fmt;
} pin_opts;

static int parse(pin_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, cmd_pin_usage))
            return 1;
        if (strcmp(a, "--remove") == 0) {
            o->remove = 1;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--note", &val)) != 0) {
            if (m < 0)
                return -1;
            o->note = val;
        } else if ((m = cli_opt_format(argc, argv, &i, &o->fmt)) != 0) {
            if (m < 0)
                return -1;
        } else if (cli_opt_dir_model(argc, argv, &i, &o->dir, &o->target) < 0) {
            return -1;
        }
    }
    if (o->remove && !o->target) {
        cli_errorf("which snapshot? tarn pin --remove SNAPSHOT");
        return -1;
    }
    return 0;
}

static int is_number(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!isdigit((unsigned char)*s))
            return 0;
    return 1;
}

static int list_pins(cli_project *cp, const char *cat, render_format fmt)
{
    if (query_catalog_columns(cp->s, cat, "tarn_pin", NULL) == 0) {
        fprintf(stderr, "tarn: no snapshot is pinned in lake \"%s\"\n", cp->p->lake_alias);
        return CLI_OK;
    }
    tarn_buf q = {0};
    buf_puts(&q, "SELECT snapshot_id AS snapshot, model, note, strftime(pinned_at, '%Y-%m-%d "
                 "%H:%M:%S') AS pinned FROM ");
    quote_prefixed(&q, cat, "tarn_pin");
    buf_puts(&q, " ORDER BY snapshot_id");
    int status = cli_project_print(cp, buf_cstr(&q), fmt);
    buf_free(&q);
    return status;
}

/* Pins or unpins; the target is a snapshot id or a model. */
static int change_pin(cli_project *cp, const char *cat, const pin_opts *o)
{
    int64_t snap = -1;
    const char *model = NULL;
    char *name = NULL;
    int rc = 0;
    if (is_number(o->target)) {
        snap = strtoll(o->target, NULL, 10);
    } else if (o->remove) {
        cli_errorf("--remove takes a snapshot id (tarn pin lists them)");
        return CLI_USAGE;
    } else {
        unsigned char *sel = NULL;
        char *args[] = {(char *)o->target};
        rc = select_models(&sel, cp->p, args, 1);
        for (size_t i = 0; !rc && i < cp->p->nmodels && !name; i++)
            if (sel[i])
                name = xstrdup(cp->p->models[i].name);
        free(sel);
        model = name;
        if (!rc)
            rc = retain_last_good(&snap, cp->s, cat, model);
    }
    int removed = 0;
    if (!rc && o->remove)
        rc = retain_unpin(cp->s, cat, snap, &removed);
    else if (!rc)
        rc = retain_pin(cp->s, cp->p->lake_alias, cat, snap, model, o->note);
    int status = CLI_OK;
    if (rc) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        status = CLI_USAGE;
    } else if (o->remove) {
        fprintf(stderr,
                removed ? "tarn: snapshot %lld unpinned\n" : "tarn: snapshot %lld was not pinned\n",
                (long long)snap);
        status = removed ? CLI_OK : CLI_FAILED;
    } else {
        fprintf(stderr, "tarn: snapshot %lld pinned%s%s%s: tarn maintain expire keeps it\n",
                (long long)snap, model ? " (last good build of " : "", model ? model : "",
                model ? ")" : "");
    }
    free(name);
    return status;
}

int cmd_pin(int argc, char **argv)
{
    pin_opts o = {.fmt = RENDER_TABLE};
    int p = parse(&o, argc, argv);
    if (p != 0) {
        return cli_parse_result(p, "pin");
    }
    cli_project cp;
    int status = cli_project_open(&cp, o.dir);
    if (status != CLI_OK)
        return status;
    if (!cli_project_lake_exists(&cp)) {
        cli_errorf("lake \"%s\" has nothing built yet", cp.p->lake_alias);
        cli_project_close(&cp);
        return o.target ? CLI_USAGE : CLI_OK;
    }
    /* listing reads; pinning writes the catalog (the whole config/ runs) */
    if (o.target ? build_run_config(cp.p, cp.s) != 0 : cli_project_attach(&cp) != CLI_OK) {
        if (*tarn_error_last())
            cli_report(tarn_error_last());
        tarn_error_clear();
        cli_project_close(&cp);
        return CLI_USAGE;
    }
    const char *cat = tarn_session_catalog_prefix(cp.s, cp.p->lake_alias);
    status = o.target ? change_pin(&cp, cat, &o) : list_pins(&cp, cat, o.fmt);
    cli_project_close(&cp);
    return status;
}

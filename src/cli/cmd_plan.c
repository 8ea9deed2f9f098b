/*
 * cmd_plan.c — `tarn plan`: what `tarn run` would build, in order, with
 * each model's strategy, partitions and inputs, and whether it would run
 * and why or be skipped as unchanged — without running anything: the lake
 * is only attached (config/'s ATTACH statements, not the rest of config/)
 * to read its run records, and not even that when its catalog file does
 * not exist yet.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/status.h"

#include "materialize/build.h"
#include "project/attach.h"
#include "project/select.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char cmd_plan_usage[] =
    "usage: tarn plan [SELECTOR...] [--partition P | --from A --to B] [--force]\n"
    "                 [--full-refresh] [--now TIME] [--json] [-C DIR]\n"
    "\n"
    "Lists the models `tarn run` would consider with the same arguments, in\n"
    "build order: strategy, partitions, the models and sources each reads, and\n"
    "whether it would run (and why) or be skipped as unchanged. Nothing is\n"
    "run; the lake is only read.\n"
    "\n"
    "  --partition P       as for tarn run\n"
    "  --from A --to B     as for tarn run\n"
    "  --force             as for tarn run\n"
    "  --full-refresh      as for tarn run (a refused change of strategy would run)\n"
    "  --now TIME          as for tarn run: plan as if at TIME (UTC)\n"
    "  --json              one JSON object on stdout\n"
    "  -q, --quiet         only the models that would run or fail\n"
    "  -C, --project DIR   the project folder (default: the current one)\n"
    "\n"
    "Exit status: 0 the plan is complete, 1 the lake could not be read (e.g. a\n"
    "run holds it: the models are listed without would run / would skip),\n"
    "2 usage or project error.\n";

static json_t *strlist_json(const strlist *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_string(l->items[i]));
    return a;
}

/* What each selected model would do (build_plan), reading the lake when
 * it exists; NULL (reported, *failed set) when it cannot be read. */
static plan_entry *plan_reasons(cli_project *cp, const build_opts *o, int *failed)
{
    *failed = 1;
    /* A local catalog file that does not exist yet: a first run, and no
     * ATTACH (which would create it). */
    int exists = cli_project_lake_exists(cp);
    if (exists && project_attach_read_only(cp->p, cp->s) != 0) {
        /* a catalog database (PostgreSQL) that holds no lake yet: a first
         * run too (the read-only ATTACH makes none) */
        const char *path = cp->p->lake_path;
        if (tarn_error_code() == TARN_ENOTFOUND && path && strchr(path, ':')) {
            tarn_error_clear();
            exists = 0;
        } else {
            cli_report(tarn_error_last());
            fputs("tarn: plan: cannot read the lake; whether models would run is not shown\n",
                  stderr);
            tarn_error_clear();
            return NULL;
        }
    }
    plan_entry *why = NULL;
    if (build_plan(&why, cp->p, cp->s, o, exists) != 0) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        return NULL;
    }
    *failed = 0;
    return why;
}

typedef struct {
    build_opts o;
    cli_common common;
    int json;
} plan_cli;

/* Returns 1 for --help, 0 to go on, -1 on a usage error (reported). */
static int plan_parse(plan_cli *pc, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, cmd_plan_usage))
            return 1;
        if (strcmp(a, "--json") == 0) {
            pc->json = 1;
        } else if (strcmp(a, "--force") == 0) {
            pc->o.force = 1;
        } else if (strcmp(a, "--full-refresh") == 0) {
            pc->o.full_refresh = 1;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--now", &val)) != 0) {
            if (m < 0 || cli_parse_utc(&pc->o.now, val) != 0) {
                cli_errorf("--now takes a UTC time such as 2026-06-01T06:00:00Z, not '%s'",
                           m < 0 ? "" : val);
                return -1;
            }
        } else if ((m = cli_opt_common(argc, argv, &i, &pc->common, CLI_COMMON_POSITIONAL)) != 0) {
            if (m < 0)
                return -1;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--partition", &val)) != 0) {
            if (m < 0)
                return -1;
            pc->o.partition = val;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--from", &val)) != 0) {
            if (m < 0)
                return -1;
            pc->o.from = val;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--to", &val)) != 0) {
            if (m < 0)
                return -1;
            pc->o.to = val;
        } else {
            cli_errorf("unknown option '%s'", a);
            return -1;
        }
    }
    return 0;
}

/* "N models selected, in order (…):" — with the counts when the lake was
 * read (why). */
static void print_header(const tarn_project *p, const unsigned char *sel, const plan_entry *why)
{
    size_t total = 0, runs = 0, fails = 0;
    for (size_t k = 0; k < p->nmodels; k++) {
        const plan_entry *e = why && sel[p->order[k]] ? &why[p->order[k]] : NULL;
        total += sel[p->order[k]];
        fails += e && e->fails;
        runs += e && e->reason && !e->fails && !e->skip;
    }
    const char *s = total == 1 ? "" : "s";
    if (why && fails)
        printf("%zu model%s selected, in order (%zu would run, %zu would fail, %zu would skip):\n",
               total, s, runs, fails, total - runs - fails);
    else if (why)
        printf("%zu model%s selected, in order (%zu would run, %zu would skip):\n", total, s, runs,
               total - runs);
    else
        printf("%zu model%s selected, in order:\n", total, s);
}

/* One model of the --json plan. e: what it would do, NULL when the lake
 * was not read. */
static json_t *model_json(const tarn_model *m, const strlist *parts, const strlist *ups,
                          const plan_entry *e)
{
    json_t *o1 = json_object();
    json_object_set_new(o1, "model", json_string(m->name));
    json_object_set_new(o1, "path", json_string(m->path));
    json_object_set_new(o1, "strategy", json_string(annot_strategy_label(&m->annot)));
    if (m->annot.grain) {
        json_object_set_new(o1, "partitioned", json_string(grain_name(m->annot.grain)));
        json_object_set_new(o1, "partition_column", json_string(m->annot.partition_column));
    }
    if (m->annot.key.n)
        json_object_set_new(o1, "key", strlist_json(&m->annot.key));
    if (m->annot.track.n)
        json_object_set_new(o1, "track", strlist_json(&m->annot.track));
    if (m->annot.deletes_close)
        json_object_set_new(o1, "deletes", json_string("close"));
    if (m->annot.watermark)
        json_object_set_new(o1, "watermark", json_string(m->annot.watermark));
    json_object_set_new(o1, "partitions", strlist_json(parts));
    json_object_set_new(o1, "upstream", strlist_json(ups));
    json_object_set_new(o1, "sources", strlist_json(&m->sources));
    json_object_set_new(o1, "model_hash", json_string(m->hash));
    if (!e)
        return o1;
    json_object_set_new(o1, "would_run", json_boolean(e->reason != NULL));
    json_object_set_new(o1, "reason",
                        json_string(e->reason    ? e->reason
                                    : e->nothing ? e->nothing
                                                 : "unchanged"));
    if (e->fails)
        json_object_set_new(o1, "would_fail", json_string(e->fails));
    if (e->skip)
        json_object_set_new(o1, "would_skip", json_string(e->skip));
    if (e->warning)
        json_object_set_new(o1, "warning", json_string(e->warning));
    if (e->cost)
        json_object_set_new(o1, "cost", json_string(e->cost));
    if (e->range)
        json_object_set_new(o1, "range", json_string(e->range));
    return o1;
}

/* A model's first line: number, name, strategy and its options, the
 * partitions it would build. */
static void print_model_line(size_t n, const tarn_model *m, const strlist *parts)
{
    tarn_buf line = {0};
    buf_printf(&line, "%3zu. %-32s %s", n, m->name, annot_strategy_label(&m->annot));
    if (m->annot.key.n) {
        char *k1 = strlist_join(&m->annot.key, ",");
        buf_printf(&line, " key=%s", k1);
        free(k1);
    }
    if (m->annot.track.n) {
        char *t1 = strlist_join(&m->annot.track, ",");
        buf_printf(&line, " track=%s", t1);
        free(t1);
    }
    if (m->annot.deletes_close)
        buf_puts(&line, " deletes=close");
    if (m->annot.watermark)
        buf_printf(&line, " watermark=%s", m->annot.watermark);
    if (m->annot.grain) {
        buf_printf(&line, " %s by %s", grain_name(m->annot.grain), m->annot.partition_column);
        if (parts->n == 0)
            buf_puts(&line, ": every value the SELECT yields");
        else if (parts->n == 1)
            buf_printf(&line, ": %s", parts->items[0]);
        else
            buf_printf(&line, ": %zu partitions %s … %s", parts->n, parts->items[0],
                       parts->items[parts->n - 1]);
    }
    printf("%s\n", buf_cstr(&line));
    buf_free(&line);
}

/* "would run: why" / "would skip: …" / "would fail: …", and the range
 * and warning lines under it. */
static void print_verdict(const tarn_model *m, const plan_entry *e)
{
    fputs("       ", stdout);
    int skips = e->skip || !e->reason;
    cli_status(stdout,
               e->fails ? CLI_TONE_FAIL
               : skips  ? CLI_TONE_DIM
                        : CLI_TONE_OK,
               0,
               e->fails ? "would fail:"
               : skips  ? "would skip:"
                        : "would run:");
    if (e->fails)
        printf(" %s\n", e->fails);
    else if (e->skip)
        printf(" %s\n", e->skip);
    else if (e->reason)
        printf(" %s%s%s\n", e->reason, e->cost ? ": " : "", e->cost ? e->cost : "");
    else if (e->nothing)
        printf(" %s\n", e->nothing);
    else
        printf(" unchanged\n");
    if (e->range && (e->reason || m->annot.grain))
        printf("       %s: %s\n",
               m->annot.strategy == STRAT_INCREMENTAL ? "would read" : "would build", e->range);
    if (e->warning)
        printf("       warning: %s\n", e->warning);
}

/* One model of the text plan. e: NULL when the lake was not read. */
static void print_model(size_t n, const tarn_model *m, const strlist *parts, const strlist *ups,
                        const plan_entry *e)
{
    print_model_line(n, m, parts);
    printf("       %s\n", m->path);
    if (e)
        print_verdict(m, e);
    if (ups->n) {
        char *u = strlist_join(ups, ", ");
        printf("       reads models: %s\n", u);
        free(u);
    }
    if (m->sources.n) {
        char *s = strlist_join(&m->sources, ", ");
        printf("       reads sources: %s\n", s);
        free(s);
    }
}

static void print_json(const tarn_project *p, json_t *jmodels)
{
    json_t *root = json_object();
    json_object_set_new(root, "schema_version", json_integer(1));
    json_object_set_new(root, "lake", json_string(p->lake_alias));
    json_object_set_new(root, "models", jmodels);
    char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    puts(s);
    free(s);
    json_decref(root);
}

/* Lists the selected models in build order (text, or into jmodels with
 * --json). Returns CLI_OK or CLI_USAGE (a bad partition, reported). */
static int list_models(const tarn_project *p, const unsigned char *sel, const plan_entry *why,
                       const plan_cli *pc, json_t *jmodels)
{
    size_t n = 0;
    for (size_t k = 0; k < p->nmodels; k++) {
        size_t mi = p->order[k];
        if (!sel[mi])
            continue;
        const tarn_model *m = &p->models[mi];
        strlist parts = {0}, ups = {0};
        if (why) { /* the run's slices, a first run's from start= included */
            strlist_copy(&parts, &why[mi].slices);
        } else if (build_partitions(&parts, m, &pc->o,
                                    pc->o.now > 0 ? pc->o.now : (int64_t)time(NULL)) != 0) {
            cli_report(tarn_error_last());
            strlist_free(&parts);
            return CLI_USAGE;
        }
        for (size_t i = 0; i < m->nup; i++)
            strlist_push(&ups, p->models[m->up[i].model].name);
        n++;
        const plan_entry *e = why ? &why[mi] : NULL;
        if (pc->json)
            json_array_append_new(jmodels, model_json(m, &parts, &ups, e));
        else if (!(cli_quiet() && e && !e->fails && (e->skip || !e->reason)))
            print_model(n, m, &parts, &ups, e); /* --quiet: only what would run or fail */
        strlist_free(&parts);
        strlist_free(&ups);
    }
    return CLI_OK;
}

int cmd_plan(int argc, char **argv)
{
    plan_cli pc = {0};
    int parsed = plan_parse(&pc, argc, argv);
    if (parsed != 0) {
        cli_common_free(&pc.common);
        return cli_parse_result(parsed, "plan");
    }
    cli_project cp;
    int status = cli_project_open_or_free(&cp, &pc.common);
    if (status != CLI_OK)
        return status;
    unsigned char *sel = NULL;
    if (cli_project_select(&sel, &cp, &pc.common) != CLI_OK)
        return CLI_USAGE;
    tarn_project *p = cp.p;
    pc.o.selected = sel;
    int unread = 0;
    plan_entry *why = plan_reasons(&cp, &pc.o, &unread);
    if (!pc.json)
        print_header(p, sel, why);
    json_t *jmodels = json_array();
    status = list_models(p, sel, why, &pc, jmodels);
    if (pc.json && status == CLI_OK)
        print_json(p, jmodels);
    else
        json_decref(jmodels);
    build_plan_free(why, p->nmodels);
    if (unread && status == CLI_OK)
        status = CLI_FAILED; /* the plan is incomplete: a script must not take it as one */
    free(sel);
    cli_project_close(&cp);
    cli_common_free(&pc.common);
    return status;
}

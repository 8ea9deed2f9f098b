/*
 * cmd_test.c — `tarn test [SELECTOR…]`: runs the selected models' data
 * tests on what is published (each table at the lake's current snapshot),
 * building nothing. One line per test on stdout (PASS, FAIL, WARN), with a
 * failing test's violations, examples and a few of its sample rows; the
 * run is recorded (tarn_run trigger `test`, one tarn_test_result row per
 * test with up to 20 violating rows as JSON). With --json, stdout carries
 * one JSON object per event instead (run_start, test, model_error,
 * run_finish). Exit 1 when a test of error severity failed or could not
 * run; a failing severity=warn test is reported and does not count.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/status.h"

#include "materialize/build.h"
#include "project/select.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_JSON_SCHEMA_VERSION 1
#define SHOWN_SAMPLE_ROWS 5
#define SHOWN_ROW_CHARS 160

const char cmd_test_usage[] =
    "usage: tarn test [SELECTOR...] [-s SEL...] [--exclude SEL...] [--json] [-q] [-t TARGET]\n"
    "                 [-C DIR]\n"
    "\n"
    "Runs the data tests (-- data_test lines, and tarn's own checks of history\n"
    "tables) of the selected models (all by default) on their tables as\n"
    "published, at the lake's current snapshot. Nothing is built. Each failing\n"
    "test keeps up to 20 of its violating rows (at most 50 KB of JSON) with the\n"
    "run: `tarn runs show ID` shows them.\n"
    "\n"
    "  -s, --select SEL…   dbt's selectors (see `tarn help run`); bare ones too\n"
    "  --exclude SEL…      removed from the selection\n"
    "  --json              one JSON object per test on stdout\n"
    "  -q, --quiet         print only failed tests and errors\n"
    "  -t, --target NAME   config/targets/NAME.sql in place of config/catalog.sql\n"
    "  -C, --project DIR   the project folder (default: the one holding models/, upwards)\n"
    "  -h, --help          show this help\n"
    "\n"
    "Exit status: 0 no test of error severity failed (severity=warn failures\n"
    "are reported), 1 one failed or could not run, 2 usage or project error.\n";

typedef struct {
    cli_common common;
    int json;
    size_t passed, failed, warned;
} test_cli;

static void json_emit(json_t *o)
{
    cli_json_event(o, TEST_JSON_SCHEMA_VERSION);
}

static json_t *json_event(const char *name, int64_t run_id)
{
    json_t *o = json_object();
    json_object_set_new(o, "event", json_string(name));
    json_object_set_new(o, "run_id", json_integer(run_id));
    return o;
}

/* A sample row as one line of at most SHOWN_ROW_CHARS characters (the
 * record keeps the whole row). */
static void print_row(const json_t *row)
{
    char *s = json_dumps(row, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (!s)
        return;
    if (strlen(s) > SHOWN_ROW_CHARS)
        printf("            %.*s…\n", SHOWN_ROW_CHARS, s);
    else
        printf("            %s\n", s);
    free(s);
}

static void print_test(test_cli *tc, const tarn_model *m, json_t *t)
{
    const char *status = json_string_value(json_object_get(t, "status"));
    const char *name = json_string_value(json_object_get(t, "test"));
    json_int_t n = json_integer_value(json_object_get(t, "violations"));
    int pass = !status || strcmp(status, "pass") == 0, warn = !pass && strcmp(status, "warn") == 0;
    if (cli_quiet() && (pass || warn))
        return;
    fputs("  ", stdout);
    cli_status(stdout,
               pass   ? CLI_TONE_OK
               : warn ? CLI_TONE_WARN
                      : CLI_TONE_FAIL,
               0,
               pass   ? "PASS"
               : warn ? "WARN"
                      : "FAIL");
    printf("  %-28s %s", m->name, name ? name : "?");
    if (n > 0)
        printf("  (%lld violation%s)", (long long)n, n == 1 ? "" : "s");
    putchar('\n');
    if (n == 0)
        return;
    printf("          %s:%lld", m->path, (long long)json_integer_value(json_object_get(t, "line")));
    const char *ex = json_string_value(json_object_get(t, "examples"));
    if (ex)
        printf("  e.g. %s", ex);
    putchar('\n');
    json_t *sample = json_object_get(t, "sample");
    size_t rows = json_array_size(sample);
    json_int_t dropped = json_integer_value(json_object_get(t, "sample_dropped"));
    if (rows) {
        printf("          sample: %zu row%s kept", rows, rows == 1 ? "" : "s");
        if (dropped)
            printf(" (%lld more dropped: 50 KB)", (long long)dropped);
        puts(rows > SHOWN_SAMPLE_ROWS ? ", the first:" : ":");
        for (size_t i = 0; i < rows && i < SHOWN_SAMPLE_ROWS; i++)
            print_row(json_array_get(sample, i));
    } else if (json_object_get(t, "sample_error")) {
        printf("          no sample: %s\n", json_string_value(json_object_get(t, "sample_error")));
    }
}

static void on_model(test_cli *tc, const build_event *ev)
{
    const model_result *r = ev->result;
    const tarn_model *m = &ev->project->models[r->model];
    json_t *a = r->tests_json ? json_loads(r->tests_json, 0, NULL) : NULL;
    size_t i, fails = 0;
    json_t *t;
    json_array_foreach(a, i, t)
    {
        const char *st = json_string_value(json_object_get(t, "status"));
        if (st && strcmp(st, "fail") == 0)
            fails++;
        else if (st && strcmp(st, "warn") == 0)
            tc->warned++;
        else
            tc->passed++;
        if (tc->json) {
            json_t *o = json_event("test", ev->summary->run_id);
            json_object_set_new(o, "model", json_string(m->name));
            json_object_set_new(o, "path", json_string(m->path));
            json_object_update(o, t);
            json_emit(o);
        } else {
            print_test(tc, m, t);
        }
    }
    json_decref(a);
    tc->failed += fails;
    /* a failure its tests do not explain: not built, or a test that could
     * not run */
    if (r->status == MODEL_SUCCESS || fails || !r->error)
        return;
    tc->failed++;
    if (tc->json) {
        json_t *o = json_event("model_error", ev->summary->run_id);
        json_object_set_new(o, "model", json_string(m->name));
        json_object_set_new(o, "path", json_string(m->path));
        json_object_set_new(o, "error", json_string(r->error));
        json_emit(o);
    } else {
        fputs("  ", stdout);
        cli_status(stdout, CLI_TONE_FAIL, 0, "ERROR");
        printf(" %s\n", m->name);
        fflush(stdout);
        cli_report(r->error);
    }
}

static void on_event(void *ctx, const build_event *ev)
{
    test_cli *tc = ctx;
    const build_summary *s = ev->summary;
    if (ev->type == BUILD_MODEL_FINISH) {
        on_model(tc, ev);
    } else if (ev->type == BUILD_RUN_START) {
        if (tc->json) {
            json_t *o = json_event("run_start", s->run_id);
            json_object_set_new(o, "snapshot_id", json_integer(s->start_snapshot));
            json_emit(o);
        } else if (!cli_quiet()) {
            fprintf(stderr, "tarn: test run %lld: %zu model%s, lake \"%s\" at snapshot %lld\n",
                    (long long)s->run_id, s->nrun, s->nrun == 1 ? "" : "s", ev->project->lake_alias,
                    (long long)s->start_snapshot);
        }
    } else if (ev->type == BUILD_RUN_FINISH) {
        if (tc->json) {
            json_t *o = json_event("run_finish", s->run_id);
            json_object_set_new(o, "status", json_string(s->failed ? "failed" : "success"));
            json_object_set_new(o, "passed", json_integer((json_int_t)tc->passed));
            json_object_set_new(o, "failed", json_integer((json_int_t)tc->failed));
            json_object_set_new(o, "warned", json_integer((json_int_t)tc->warned));
            json_emit(o);
        } else if (!cli_quiet() || tc->failed) {
            fflush(stdout);
            fprintf(stderr,
                    "tarn: test run %lld %s: %zu passed, %zu failed, %zu warned in %.1f s\n",
                    (long long)s->run_id, s->failed ? "failed" : "passed", tc->passed, tc->failed,
                    tc->warned, s->duration_ms / 1000.0);
        }
    }
}

static int opts_parse(test_cli *tc, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (cli_opt_help(a, cmd_test_usage))
            return 1;
        if ((m = cli_opt_common(argc, argv, &i, &tc->common, CLI_COMMON_POSITIONAL)) != 0) {
            if (m < 0)
                return -1;
        } else if (strcmp(a, "--json") == 0) {
            tc->json = 1;
        } else {
            cli_errorf("unknown option '%s'", a);
            return -1;
        }
    }
    return 0;
}

/* Keeps the selected models that have something to test; how many. */
static size_t with_tests(const tarn_project *p, unsigned char *sel)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nmodels; i++) {
        const model_annot *a = &p->models[i].annot;
        if (sel[i] && !a->ntests && !(a->strategy == STRAT_HISTORY && a->key.n))
            sel[i] = 0;
        n += sel[i];
    }
    return n;
}

static int test_models(test_cli *tc, cli_project *cp, unsigned char *sel)
{
    if (!cli_project_lake_exists(cp)) {
        cli_errorf("lake \"%s\" has nothing built yet: tarn run first", cp->p->lake_alias);
        return CLI_USAGE;
    }
    char *seltext = cli_common_selectors_text(&tc->common);
    build_opts o = {.selected = sel,
                    .selectors = seltext,
                    .test_only = 1,
                    .trigger = "test",
                    .jobs = 1,
                    .tarn_version = TARN_VERSION,
                    .on_event = on_event,
                    .ctx = tc};
    build_summary sum;
    int r = build_run(&sum, cp->p, cp->s, &o);
    int status = CLI_OK;
    if (r != 0) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        status = CLI_USAGE;
    } else if (sum.failed) {
        status = CLI_FAILED;
    }
    build_summary_free(&sum, cp->p->nmodels);
    free(seltext);
    return status;
}

int cmd_test(int argc, char **argv)
{
    test_cli tc = {0};
    int p = opts_parse(&tc, argc, argv);
    if (p != 0) {
        cli_common_free(&tc.common);
        return cli_parse_result(p, "test");
    }
    cli_project cp;
    int status = cli_project_open_or_free(&cp, &tc.common);
    if (status != CLI_OK)
        return status;
    unsigned char *sel = NULL;
    if (cli_common_select(&sel, &tc.common, cp.p) != 0) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        status = CLI_USAGE;
    } else if (with_tests(cp.p, sel) == 0) {
        fprintf(stderr, "tarn: no data tests in the selected models (add -- data_test lines)\n");
    } else {
        status = test_models(&tc, &cp, sel);
    }
    free(sel);
    cli_project_close(&cp);
    cli_common_free(&tc.common);
    return status;
}

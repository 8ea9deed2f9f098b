/*
 * cmd_runs.c — `tarn runs`: one line per run, newest first, from tarn_run
 * (trigger, status, start, duration, counts), and `tarn runs show ID`: the
 * run's models from tarn_model_run (status, rows, snapshot, reason, tests,
 * error) and its data tests from tarn_test_result (status, violations, the
 * sample of violating rows). Read-only: the lake is attached READ_ONLY, as `tarn history`
 * does.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/render.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_runs_usage[] =
    "usage: tarn runs [--limit N] [--format table|csv|json | --json] [-C DIR]\n"
    "       tarn runs show RUN_ID [--format …] [-C DIR]\n"
    "\n"
    "Lists the runs, newest first: id, trigger (manual, scheduler, backfill, test), status,\n"
    "start, duration in seconds, and how many models were built (for a test run: passed),\n"
    "unchanged, skipped and failed. `show` lists one run's models: status, rows written,\n"
    "snapshot, why it ran, data tests, error; then its data tests: status, violations and\n"
    "a failing test's sample of violating rows (JSON; whole with --format csv|json).\n"
    "\n"
    "  --limit N           at most N runs (default 50)\n"
    "  --format FORMAT     table (default), csv or json; --json is --format json\n"
    "  -C, --project DIR   the project folder (default: the current one)\n";

typedef struct {
    const char *dir;
    cli_common common; /* -C, --target, --wide */
    long limit, show_id;
    int show;
    render_format fmt;
} runs_opts;

static int parse(runs_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, cmd_runs_usage))
            return 1;
        if (strcmp(a, "--json") == 0) {
            o->fmt = RENDER_JSON_TYPED;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--limit", &val)) != 0) {
            if (m < 0 || cli_opt_int("--limit", val, &o->limit) < 0)
                return -1;
        } else if ((m = cli_opt_common(argc, argv, &i, &o->common, 0)) != 0) {
            if (m < 0)
                return -1;
            o->dir = o->common.dir;
        } else if ((m = cli_opt_format(argc, argv, &i, &o->fmt)) != 0) {
            if (m < 0)
                return -1;
        } else if (strcmp(a, "show") == 0 && !o->show) {
            o->show = 1;
        } else if (o->show && !o->show_id && a[0] != '-') {
            if (cli_opt_int("RUN_ID", a, &o->show_id) < 0)
                return -1;
        } else {
            cli_errorf(a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
            return -1;
        }
    }
    if (o->show && !o->show_id) {
        cli_errorf("which run? tarn runs show RUN_ID");
        return -1;
    }
    return 0;
}

static void list_sql(tarn_buf *b, const char *cat, int has_trigger, long limit)
{
    buf_printf(b,
               "SELECT run_id AS run, %s AS \"trigger\", status, strftime(started_at, "
               "'%%Y-%%m-%%d %%H:%%M:%%S') AS started, CAST(round(epoch(finished_at) - "
               "epoch(started_at)) AS BIGINT) AS seconds, models_succeeded AS built, "
               "models_unchanged AS unchanged, models_skipped AS skipped, models_failed AS "
               "failed, %s AS occurrence FROM ",
               has_trigger ? "coalesce(\"trigger\", 'manual')" : "'manual'",
               has_trigger ? "occurrence" : "CAST(NULL AS VARCHAR)");
    quote_prefixed(b, cat, "tarn_run");
    buf_printf(b, " ORDER BY run_id DESC LIMIT %ld", limit);
}

static void show_sql(tarn_buf *b, const char *cat, long run_id, render_format fmt)
{
    /* in a table, how many passed (the tests follow, one per line) */
    buf_printf(b,
               "SELECT model, status, rows_written AS rows, snapshot_id AS snapshot, run_reason "
               "AS reason, %s AS tests, coalesce(error, note) AS message FROM ",
               fmt == RENDER_TABLE
                   ? "CASE WHEN tests IS NULL THEN NULL ELSE CAST(len(list_filter("
                     "json_extract_string(tests, '$[*].status'), x -> x = 'pass')) AS VARCHAR) "
                     "|| '/' || CAST(json_array_length(tests) AS VARCHAR) || ' passed' END"
                   : "tests");
    quote_prefixed(b, cat, "tarn_model_run");
    buf_printf(b, " WHERE run_id = %ld ORDER BY started_at, model", run_id);
}

/* The run's data tests (tarn_test_result), a failing test with its sample
 * of violating rows: whole as JSON text in csv and json, its start in a
 * table. */
static void tests_sql(tarn_buf *b, const char *cat, long run_id, render_format fmt)
{
    buf_printf(b,
               "SELECT model, test, severity, status, violations, examples, sample_rows AS "
               "sample_rows, %s AS sample FROM ",
               fmt == RENDER_TABLE ? "CASE WHEN length(sample) > 100 THEN sample[1:99] || '…' "
                                     "ELSE sample END"
                                   : "sample");
    quote_prefixed(b, cat, "tarn_test_result");
    buf_printf(b, " WHERE run_id = %ld ORDER BY model, line, test", run_id);
}

static int64_t count_rows(cli_project *cp, const char *cat, const char *table, long run_id)
{
    if (query_catalog_columns(cp->s, cat, table, NULL) == 0)
        return 0;
    tarn_buf q = {0};
    buf_puts(&q, "SELECT count(*) FROM ");
    quote_prefixed(&q, cat, table);
    buf_printf(&q, " WHERE run_id = %ld", run_id);
    int64_t n = 0;
    if (query_int64(&n, cp->s, buf_cstr(&q)) != 0)
        tarn_error_clear();
    buf_free(&q);
    return n;
}

/* `runs show ID`: its models (none for a `tarn test` run), then its data
 * tests when it ran any. */
static int show_run(cli_project *cp, const char *cat, long run_id, render_format fmt)
{
    int64_t models = count_rows(cp, cat, "tarn_model_run", run_id);
    int64_t tests = count_rows(cp, cat, "tarn_test_result", run_id);
    tarn_buf sql = {0};
    int status = CLI_OK;
    if (models || !tests) {
        show_sql(&sql, cat, run_id, fmt);
        status = cli_project_print(cp, buf_cstr(&sql), fmt);
        buf_free(&sql);
    }
    if (status == CLI_OK && tests) {
        if (models && fmt == RENDER_TABLE)
            puts("\ndata tests:");
        tests_sql(&sql, cat, run_id, fmt);
        status = cli_project_print(cp, buf_cstr(&sql), fmt);
        buf_free(&sql);
    }
    return status;
}

int cmd_runs(int argc, char **argv)
{
    runs_opts o = {.limit = 50, .fmt = RENDER_TABLE};
    int p = parse(&o, argc, argv);
    if (p != 0) {
        return cli_parse_result(p, "runs");
    }
    cli_project cp;
    int status = cli_project_open_common(&cp, &o.common);
    cli_common_free(&o.common);
    if (status != CLI_OK)
        return status;
    const char *cat = NULL;
    if (cli_project_lake_exists(&cp) && cli_project_attach(&cp) == CLI_OK)
        cat = tarn_session_catalog_prefix(cp.s, cp.p->lake_alias);
    if (!cat || query_catalog_columns(cp.s, cat, "tarn_run", NULL) == 0) {
        fprintf(stderr, "tarn: no runs recorded in lake \"%s\" yet\n", cp.p->lake_alias);
        cli_project_close(&cp);
        return o.show ? CLI_FAILED : CLI_OK;
    }
    tarn_buf sql = {0};
    if (o.show) {
        tarn_buf q = {0};
        quote_prefixed(&q, cat, "tarn_run");
        char *exists =
            xasprintf("SELECT count(*) FROM %s WHERE run_id = %ld", buf_cstr(&q), o.show_id);
        int64_t n = 0;
        if (query_int64(&n, cp.s, exists) != 0)
            tarn_error_clear();
        free(exists);
        buf_free(&q);
        if (n == 0) {
            cli_errorf("no run %ld (tarn runs lists them)", o.show_id);
            cli_project_close(&cp);
            return CLI_FAILED;
        }
        status = show_run(&cp, cat, o.show_id, o.fmt);
    } else {
        list_sql(&sql, cat, query_catalog_columns(cp.s, cat, "tarn_run", "trigger") > 0, o.limit);
        status = cli_project_print(&cp, buf_cstr(&sql), o.fmt);
    }
    buf_free(&sql);
    cli_project_close(&cp);
    return status;
}

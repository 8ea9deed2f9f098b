/*
 * cmd_history.c — `tarn history [MODEL]`: builds newest first, from the
 * run records in the lake's catalog (tarn_model_run), failures included.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/render.h"
#include "materialize/records.h"

#include "project/query.h"
#include "project/select.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_history_usage[] =
    "usage: tarn history [MODEL] [--limit N] [--all] [--format table|csv|json] [-C DIR]\n"
    "\n"
    "Lists model builds, newest first: time, run id, model, status, snapshot,\n"
    "rows written, duration, partitions, why it ran (reason), its data tests\n"
    "(how many passed) and message (the error, or a note). With MODEL, only its builds. The "
    "records live in the\n"
    "lake's catalog (table tarn_model_run).\n"
    "\n"
    "  --limit N           at most N builds (default 50)\n"
    "  --all               also the models skipped as unchanged\n"
    "  --format FORMAT     table (default), csv or json\n"
    "  -C, --project DIR   the project folder (default: the current one)\n";

/* A build's data tests in a few words: "3/3 passed", "2/3 passed, 1
 * warn" (the failures are named in the message; `tarn runs show ID` has
 * their samples of violating rows). */
#define TESTS_SUMMARY                                                                              \
    "CASE WHEN tests IS NULL OR json_array_length(tests) = 0 THEN NULL ELSE "                      \
    "CAST(len(list_filter(json_extract_string(tests, '$[*].status'), x -> x = 'pass')) AS "        \
    "VARCHAR) || '/' || CAST(json_array_length(tests) AS VARCHAR) || ' passed' || CASE WHEN "      \
    "list_contains(json_extract_string(tests, '$[*].status'), 'warn') THEN ', ' || "               \
    "CAST(len(list_filter(json_extract_string(tests, '$[*].status'), x -> x = 'warn')) AS "        \
    "VARCHAR) || ' warn' ELSE '' END END"

/* The runs that ended without finishing — killed (kill -9), or the
 * machine stopped — as rows of the listing: those recorded 'interrupted',
 * and those still recorded 'running' whose process is gone (a read-only
 * command cannot mark them; the next run does). Nothing when the lake's
 * tarn_run predates the process columns. */
static void dead_runs_union(tarn_buf *sql, tarn_session *s, const char *alias, const char *cat)
{
    int64_t *ids = NULL;
    size_t n = 0;
    if (records_dead_runs(&ids, &n, s, alias, cat) != 0) {
        tarn_error_clear();
        return;
    }
    buf_puts(sql,
             " UNION ALL SELECT strftime(started_at, '%Y-%m-%d %H:%M:%S'), run_id, '(run)', "
             "'interrupted', NULL, NULL, NULL, NULL, NULL, NULL, 'the run (' || coalesce('pid ' || "
             "pid || ' on ' || host, 'an earlier tarn') || ') ended without finishing: "
             "killed, or the machine stopped; what it committed is kept, the build in "
             "flight left nothing', started_at FROM ");
    quote_prefixed(sql, cat, "tarn_run");
    buf_puts(sql, " WHERE status = 'interrupted'");
    for (size_t i = 0; i < n; i++)
        buf_printf(sql, "%s%lld", i ? ", " : " OR run_id IN (", (long long)ids[i]);
    if (n)
        buf_putc(sql, ')');
    free(ids);
}

/* The name of the model MODEL selects (caller frees); MODEL itself when
 * it selects none: a model removed from the project still has its
 * history. */
static char *history_model(const tarn_project *p, const char *model)
{
    unsigned char *sel = NULL;
    char *args[] = {(char *)model};
    if (select_models(&sel, p, args, 1) != 0) {
        tarn_error_clear();
        return xstrdup(model);
    }
    char *name = NULL;
    for (size_t i = 0; i < p->nmodels && !name; i++)
        if (sel[i])
            name = xstrdup(p->models[i].name);
    free(sel);
    return name;
}

/* Attaches the lake and sets *cat to its catalog's prefix; *cat stays
 * NULL (said on stderr) when no build has been recorded yet. */
static int history_catalog(const char **cat, cli_project *cp)
{
    int exists = cli_project_lake_exists(cp);
    int status = exists ? cli_project_attach(cp) : CLI_OK;
    *cat =
        status == CLI_OK && exists ? tarn_session_catalog_prefix(cp->s, cp->p->lake_alias) : NULL;
    if (!exists)
        fprintf(stderr,
                "tarn: no builds recorded in lake \"%s\" yet (its catalog %s does not "
                "exist)\n",
                cp->p->lake_alias, cp->p->lake_path);
    /* the catalog database is left out of duckdb_tables() (DuckLake hides
     * it): ask for the table's columns instead */
    if (*cat && query_catalog_columns(cp->s, *cat, "tarn_model_run", NULL) == 0) {
        fprintf(stderr, "tarn: no builds recorded in lake \"%s\" yet\n", cp->p->lake_alias);
        *cat = NULL;
    }
    return status;
}

/* The query of the builds shown: name's only, or every model's with the
 * runs that died (dead_runs_union); `all` keeps the unchanged ones. */
static void history_sql(tarn_buf *sql, cli_project *cp, const char *cat, const char *name, int all,
                        long limit)
{
    /* A lake last built by an older tarn has no run_reason column yet. */
    int has_reason = query_catalog_columns(cp->s, cat, "tarn_model_run", "run_reason") > 0;
    buf_printf(sql,
               "SELECT * EXCLUDE (_at) FROM (SELECT strftime(finished_at, '%%Y-%%m-%%d "
               "%%H:%%M:%%S') AS time, run_id, model, status, snapshot_id AS snapshot, "
               "rows_written AS rows, CAST(round(duration_ms) AS BIGINT) AS ms, partitions, "
               "%s AS reason, %s AS tests, coalesce(error, note) AS message, started_at AS "
               "_at FROM ",
               has_reason ? "run_reason" : "CAST(NULL AS VARCHAR)",
               query_catalog_columns(cp->s, cat, "tarn_model_run", "tests") > 0
                   ? TESTS_SUMMARY
                   : "CAST(NULL AS VARCHAR)");
    quote_prefixed(sql, cat, "tarn_model_run");
    buf_puts(sql, " WHERE true");
    if (!all)
        buf_puts(sql, " AND coalesce(note, '') <> 'unchanged'");
    if (name) {
        buf_puts(sql, " AND model = ");
        quote_literal(sql, name);
    } else {
        dead_runs_union(sql, cp->s, cp->p->lake_alias, cat);
    }
    buf_printf(sql, ") ORDER BY run_id DESC, _at DESC LIMIT %ld", limit);
}

int cmd_history(int argc, char **argv)
{
    const char *dir = NULL, *model = NULL;
    cli_common common = {0};
    long limit = 50;
    int all = 0;
    render_format fmt = RENDER_TABLE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, cmd_history_usage))
            return CLI_OK;
        if ((m = cli_opt_common(argc, argv, &i, &common, 0)) != 0) {
            if (m < 0)
                goto usage;
        } else if (strcmp(a, "--all") == 0) {
            all = 1;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--limit", &val)) != 0) {
            if (m < 0 || cli_opt_int("--limit", val, &limit) < 0)
                goto usage;
        } else if ((m = cli_opt_format(argc, argv, &i, &fmt)) != 0) {
            if (m < 0)
                goto usage;
        } else if (cli_opt_dir_model(argc, argv, &i, &dir, &model) < 0) {
            goto usage;
        }
    }
    if (dir)
        common.dir = dir;
    cli_project cp;
    int status = cli_project_open_common(&cp, &common);
    cli_common_free(&common);
    if (status != CLI_OK)
        return status;
    char *name = model ? history_model(cp.p, model) : NULL;
    const char *cat = NULL;
    status = history_catalog(&cat, &cp);
    if (cat) {
        tarn_buf sql = {0};
        history_sql(&sql, &cp, cat, name, all, limit);
        status = cli_project_print(&cp, buf_cstr(&sql), fmt);
        buf_free(&sql);
    }
    free(name);
    cli_project_close(&cp);
    return status;
usage:
    cli_common_free(&common);
    fputs("Try 'tarn history --help'.\n", stderr);
    return CLI_USAGE;
}

/*
 * cmd_partitions.c — `tarn partitions MODEL`: each slice of a partitioned
 * model, from tarn_partition (records.h): its state (built by the current
 * SQL, stale: built by other SQL, failed, cancelled), rows, last good
 * snapshot, when it was last built, by which run, and its last error. With
 * start= on the model's -- partitioned line, the slices from there to now
 * that were never built are listed too (state missing). Read-only: the lake
 * is attached READ_ONLY, as `tarn history` does.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"

#include "project/query.h"
#include "project/select.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_partitions_usage[] =
    "usage: tarn partitions MODEL [--format table|csv|json | --json] [-C DIR]\n"
    "\n"
    "Lists the slices of partitioned MODEL, oldest first: state (built, stale: built\n"
    "by other SQL, failed, cancelled, missing: never built, from the model's start=),\n"
    "rows, the last good snapshot, when and by which run it was last built, and its\n"
    "last error. `tarn backfill MODEL` builds the missing and failed ones.\n"
    "\n"
    "  --format FORMAT     table (default), csv or json; --json is --format json\n"
    "  -C, --project DIR   the project folder (default: the current one)\n";

/* The slices from the model's start= to now, as a list literal; NULL
 * without start= (or when it names too many). */
static char *expected_slices(const tarn_model *m)
{
    if (!m->annot.partition_start || m->annot.grain == GRAIN_DYNAMIC)
        return NULL;
    char *now = partition_format(m->annot.grain, (int64_t)clock_epoch_s());
    strlist all = {0};
    int rc = partition_range(&all, m->annot.grain, m->annot.partition_start, now, 100000);
    free(now);
    if (rc) {
        tarn_error_clear();
        strlist_free(&all);
        return NULL;
    }
    tarn_buf b = {0};
    buf_puts(&b, "[");
    quote_literal_list(&b, all.items, all.n);
    buf_puts(&b, "]::VARCHAR[]");
    strlist_free(&all);
    return buf_detach(&b);
}

static void list_sql(tarn_buf *b, const char *cat, const tarn_model *m, const char *expected)
{
    buf_puts(b, "SELECT coalesce(t.\"partition\", e.p) AS \"partition\", CASE WHEN t.\"partition\" "
                "IS NULL OR t.status IS NULL THEN 'missing' WHEN t.status = 'success' AND "
                "t.model_hash = ");
    quote_literal(b, m->hash);
    buf_puts(b, " THEN 'built' WHEN t.status = 'success' THEN 'stale' ELSE t.status END AS state, "
                "t.\"rows\" AS rows, t.snapshot_id AS snapshot, strftime(t.updated_at, "
                "'%Y-%m-%d %H:%M:%S') AS updated, t.run_id AS run, t.error AS error FROM (SELECT * "
                "FROM ");
    quote_prefixed(b, cat, "tarn_partition");
    buf_puts(b, " WHERE model = ");
    quote_literal(b, m->name);
    buf_puts(b, ") AS t FULL OUTER JOIN (SELECT unnest(");
    buf_puts(b, expected ? expected : "[]::VARCHAR[]");
    buf_puts(b, ") AS p) AS e ON e.p = t.\"partition\" ORDER BY 1");
}

int cmd_partitions(int argc, char **argv)
{
    const char *dir = NULL, *model = NULL;
    render_format fmt = RENDER_TABLE;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int m;
        if (cli_opt_help(a, cmd_partitions_usage))
            return CLI_OK;
        if (strcmp(a, "--json") == 0) {
            fmt = RENDER_JSON_TYPED;
        } else if ((m = cli_opt_format(argc, argv, &i, &fmt)) != 0) {
            if (m < 0)
                goto usage;
        } else if (cli_opt_dir_model(argc, argv, &i, &dir, &model) < 0) {
            goto usage;
        }
    }
    if (!model) {
        cli_errorf("which model? tarn partitions MODEL");
        goto usage;
    }
    cli_project cp;
    int status = cli_project_open(&cp, dir);
    if (status != CLI_OK)
        return status;
    unsigned char *sel = NULL;
    char *args[] = {(char *)model};
    long mi = -1;
    if (select_models(&sel, cp.p, args, 1) != 0) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        cli_project_close(&cp);
        return CLI_USAGE;
    }
    for (size_t i = 0; i < cp.p->nmodels && mi < 0; i++)
        if (sel[i])
            mi = (long)i;
    free(sel);
    const tarn_model *m = &cp.p->models[mi];
    if (!m->annot.grain) {
        cli_errorf("%s is not partitioned (%s has no -- partitioned line)", m->name, m->path);
        cli_project_close(&cp);
        return CLI_USAGE;
    }
    const char *cat = NULL;
    if (cli_project_lake_exists(&cp) && cli_project_attach(&cp) == CLI_OK)
        cat = tarn_session_catalog_prefix(cp.s, cp.p->lake_alias);
    char *expected = expected_slices(m);
    tarn_buf sql = {0};
    if (cat && query_catalog_columns(cp.s, cat, "tarn_partition", NULL) > 0) {
        list_sql(&sql, cat, m, expected);
    } else {
        /* nothing built yet: every expected slice is missing */
        buf_printf(&sql,
                   "SELECT unnest(%s) AS \"partition\", 'missing' AS state, NULL AS rows, NULL "
                   "AS snapshot, NULL AS updated, NULL AS run, NULL AS error",
                   expected ? expected : "[]::VARCHAR[]");
    }
    status = cli_project_print(&cp, buf_cstr(&sql), fmt);
    buf_free(&sql);
    free(expected);
    cli_project_close(&cp);
    return status;
usage:
    fputs("Try 'tarn partitions --help'.\n", stderr);
    return CLI_USAGE;
}

/*
 * aggstats.c — a table's live row count and column extremes from its
 * catalog rows (see aggstats.h).
 *
 * Reads ducklake_snapshot (the latest id), ducklake_table_stats
 * (record_count), ducklake_data_file and ducklake_delete_file (record and
 * delete counts of the live files), ducklake_inlined_delete_<tid> (the
 * inlined deletions of live files), the table's inlined data tables (their
 * live rows) and ducklake_table_column_stats (min_value, max_value).
 * Writes nothing.
 */
#include "lake/aggstats.h"

#include "lake/catdb.h"
#include "lake/txn.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

void lk_aggstats_free(lk_aggstats *a)
{
    for (size_t i = 0; i < a->ncols; i++) {
        free(a->min[i]);
        free(a->max[i]);
    }
    free(a->min);
    free(a->max);
    memset(a, 0, sizeof(*a));
}

/* Types whose catalog min / max are exact values of the column (strings
 * may be truncated prefixes; floats leave NaN out). */
static int exact_type(const char *type)
{
    static const char *const OK[] = {"int8",      "int16",       "int32",        "int64",
                                     "int128",    "uint8",       "uint16",       "uint32",
                                     "uint64",    "uint128",     "date",         "time",
                                     "timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns"};
    for (size_t i = 0; i < sizeof(OK) / sizeof(OK[0]); i++)
        if (strcmp(type, OK[i]) == 0)
            return 1;
    return strncmp(type, "decimal", 7) == 0;
}

/* Whether the open transaction changed anything (its reads of the table
 * would see pending rows, files or deletions). */
static int txn_changed(const lk_txn *txn)
{
    return txn && (txn->nstmts || txn->ndeltas || txn->nfiles || txn->has_deletes ||
                   txn->catalog_changed || txn->npins);
}

/* Appends the live row count of table `t` at snapshot s as an SQL expression. */
static void live_count_sql(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                           long long s)
{
    const char *m = lk_catdb_name(&lake->db);
    long long id = (long long)t->id;
    buf_printf(
        b,
        "(SELECT coalesce(sum(d.record_count), 0) FROM %s.ducklake_data_file d WHERE "
        "d.table_id = %lld AND " LK_LIVE(
            "d") ") - (SELECT coalesce(sum(x.delete_count), 0) "
                 "FROM %s.ducklake_delete_file x JOIN %s.ducklake_data_file d ON d.data_file_id = "
                 "x.data_file_id WHERE d.table_id = %lld AND " LK_LIVE("d") " AND " LK_LIVE(
                     "x") ")",
        m, id, s, s, m, m, id, s, s, s, s);
    tarn_buf del = {0};
    if (lk_lake_inlined_deletes_from(&del, lake, con, t->id, s))
        buf_printf(b, " - (SELECT count(*) %s)", buf_cstr(&del));
    buf_free(&del);
    for (size_t i = 0; i < t->ninlined; i++) {
        if (!lk_lake_meta_table_exists(lake, con, t->inlined[i].name))
            continue;
        buf_printf(b, " + (SELECT count(*) FROM %s.", m);
        quote_ident(b, t->inlined[i].name);
        buf_printf(b, " r WHERE " LK_LIVE("r") ")", s, s);
    }
}

static int load_extremes(lk_aggstats *out, lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    duck_table r;
    int rc = lk_catdb_queryf(&r, &lake->db, con,
                             "SELECT column_id, min_value, max_value FROM "
                             "%s.ducklake_table_column_stats WHERE table_id = %lld",
                             lk_catdb_name(&lake->db), (long long)t->id);
    if (rc)
        return rc;
    for (size_t k = 0; k < r.nrows; k++) {
        int64_t cid = duck_table_int64(&r, k, 0);
        for (size_t i = 0; i < t->ncols; i++) {
            /* a column added with a default: the rows before it read the
             * default, which its statistics need not hold */
            const char *def = t->cols[i].initial_default;
            if (t->cols[i].id != cid || !exact_type(t->cols[i].type) ||
                (def && strcmp(def, "NULL") != 0))
                continue;
            const char *mn = duck_table_get(&r, k, 1), *mx = duck_table_get(&r, k, 2);
            out->min[i] = mn ? xstrdup(mn) : NULL;
            out->max[i] = mx ? xstrdup(mx) : NULL;
        }
    }
    duck_table_free(&r);
    return 0;
}

int lk_aggstats_load(lk_aggstats *out, lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    memset(out, 0, sizeof(*out));
    const lk_catalog *cat = lk_txn_catalog(lake);
    if (lake->pinned >= 0 || txn_changed(lake->txn))
        return 0;
    long long s = (long long)cat->snapshot_id;
    tarn_buf b = {0};
    buf_printf(&b,
               "SELECT (SELECT max(snapshot_id) FROM %s.ducklake_snapshot), (SELECT record_count "
               "FROM %s.ducklake_table_stats WHERE table_id = %lld), ",
               lk_catdb_name(&lake->db), lk_catdb_name(&lake->db), (long long)t->id);
    live_count_sql(&b, lake, con, t, s);
    duck_table r;
    int rc = lk_catdb_query(&r, &lake->db, con, buf_cstr(&b));
    buf_free(&b);
    if (rc) {
        tarn_error_clear();
        return 0;
    }
    const char *latest = r.nrows ? duck_table_get(&r, 0, 0) : NULL;
    const char *gross = r.nrows ? duck_table_get(&r, 0, 1) : NULL;
    const char *live = r.nrows ? duck_table_get(&r, 0, 2) : NULL;
    int ok = latest && live && strtoll(latest, NULL, 10) == s;
    if (ok) {
        out->count = strtoll(live, NULL, 10);
        out->exact = gross && strtoll(gross, NULL, 10) == out->count;
    }
    duck_table_free(&r);
    if (!ok)
        return 0;
    out->ncols = t->ncols;
    out->min = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
    out->max = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
    if (out->exact && load_extremes(out, lake, con, t) != 0) {
        tarn_error_clear();
        out->exact = 0;
    }
    return 1;
}

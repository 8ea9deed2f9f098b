/*
 * functions.c — DuckLake's table functions as subqueries (see functions.h).
 */
#include "session/functions.h"

#include "duck/duck.h"
#include "lake/feed.h"
#include "lake/scan.h"
#include "lake/maintain.h"
#include "lake/options.h"
#include "lake/snapshots.h"
#include "lake/txn.h"
#include "tarn/error.h"
#include "tarn/version.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int64_t view_snapshot(lk_lake *l)
{
    return lk_txn_catalog(l)->snapshot_id;
}

static int fn_table_info(char **out, lk_lake *l)
{
    long long sn = (long long)view_snapshot(l);
    const char *m = l->meta;
    *out = xasprintf(
        "SELECT t.table_name, t.schema_id, t.table_id, t.table_uuid, "
        "(SELECT count(*) FROM %s.ducklake_data_file d WHERE d.table_id = t.table_id AND %lld >= "
        "d.begin_snapshot AND (%lld < d.end_snapshot OR d.end_snapshot IS NULL)) AS file_count, "
        "(SELECT COALESCE(sum(file_size_bytes), 0)::BIGINT FROM %s.ducklake_data_file d WHERE "
        "d.table_id = t.table_id AND %lld >= d.begin_snapshot AND (%lld < d.end_snapshot OR "
        "d.end_snapshot IS NULL)) AS file_size_bytes, "
        "(SELECT count(*) FROM %s.ducklake_delete_file d WHERE d.table_id = t.table_id AND %lld "
        ">= d.begin_snapshot AND (%lld < d.end_snapshot OR d.end_snapshot IS NULL)) AS "
        "delete_file_count, "
        "(SELECT COALESCE(sum(file_size_bytes), 0)::BIGINT FROM %s.ducklake_delete_file d WHERE "
        "d.table_id = t.table_id AND %lld >= d.begin_snapshot AND (%lld < d.end_snapshot OR "
        "d.end_snapshot IS NULL)) AS delete_file_size_bytes "
        "FROM %s.ducklake_table t WHERE %lld >= t.begin_snapshot AND (%lld < t.end_snapshot OR "
        "t.end_snapshot IS NULL)",
        m, sn, sn, m, sn, sn, m, sn, sn, m, sn, sn, m, sn, sn);
    return 0;
}

static int fn_options(char **out, tarn_session *s, lk_lake *l)
{
    duck_table keys;
    char *q = xasprintf("SELECT DISTINCT \"key\" FROM %s.ducklake_metadata", l->meta);
    int rc = duck_table_query(&keys, s->con, q);
    free(q);
    if (rc)
        return rc;
    tarn_buf d = {0};
    buf_puts(&d, "(VALUES (NULL, NULL)");
    for (size_t r = 0; r < keys.nrows; r++) {
        const char *desc = lk_option_description(duck_table_get(&keys, r, 0));
        if (!desc)
            continue;
        buf_puts(&d, ", (");
        quote_literal(&d, duck_table_get(&keys, r, 0));
        buf_puts(&d, ", ");
        quote_literal(&d, desc);
        buf_putc(&d, ')');
    }
    buf_puts(&d, ") d(k, description)");
    duck_table_free(&keys);
    const char *m = l->meta;
    *out = xasprintf(
        "SELECT o.\"key\" AS option_name, d.description::VARCHAR AS description, o.\"value\" AS "
        "value, upper(COALESCE(o.\"scope\", 'global')) AS scope, CASE o.\"scope\" WHEN 'table' "
        "THEN (SELECT s.schema_name || '.' || t.table_name FROM %s.ducklake_table t JOIN "
        "%s.ducklake_schema s USING (schema_id) WHERE t.table_id = o.scope_id AND t.end_snapshot "
        "IS NULL LIMIT 1) WHEN 'schema' THEN (SELECT s.schema_name FROM %s.ducklake_schema s "
        "WHERE s.schema_id = o.scope_id LIMIT 1) END AS scope_entry FROM %s.ducklake_metadata o "
        "LEFT JOIN %s ON d.k = o.\"key\" ORDER BY o.\"key\", CASE o.\"scope\" WHEN 'schema' THEN 1 "
        "WHEN 'table' THEN 2 ELSE 0 END",
        m, m, m, m, buf_cstr(&d));
    buf_free(&d);
    return 0;
}

/* A change feed bound: a snapshot id, or a timestamp: the first snapshot
 * at or after it for the start (`lower`), the last at or before it for
 * the end, as DuckLake reads them. */
static int feed_bound(int64_t *out, tarn_session *s, lk_lake *l, const char *v, int lower)
{
    if (!v)
        return tarn_error_set(TARN_EINVALID, "Snapshot identifier cannot be NULL");
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (end != v && !*end) {
        *out = n;
        return 0;
    }
    tarn_buf b = {0};
    buf_printf(&b,
               "SELECT snapshot_id FROM %s.ducklake_snapshot WHERE snapshot_time::TIMESTAMPTZ %s ",
               l->meta, lower ? ">=" : "<=");
    quote_literal(&b, v);
    buf_printf(&b, "::TIMESTAMPTZ ORDER BY snapshot_time::TIMESTAMPTZ %s LIMIT 1",
               lower ? "ASC" : "DESC");
    int rc = duck_query_int64(out, NULL, s->con, buf_cstr(&b));
    buf_free(&b);
    if (rc == TARN_ENOTFOUND)
        rc = tarn_error_set(TARN_ENOTFOUND, "No snapshot found at timestamp %s", v);
    return rc;
}

/* ducklake_list_files(catalog, table [, schema, snapshot_version |
 * snapshot_time]): the data files of the table at that snapshot (the
 * session's when neither is given), each with its delete file. */
static int fn_list_files(char **out, tarn_session *s, lk_lake *l, const lk_args *a)
{
    if (a->npos < 2)
        return tarn_error_set(TARN_EINVALID, "ducklake_list_files(catalog, table [, schema => "
                                             "…]) needs a table name");
    const char *ver = lk_args_named(a, "snapshot_version");
    const char *at = lk_args_named(a, "snapshot_time");
    if (ver && at)
        return tarn_error_set(TARN_EINVALID, "Invalid Input Error: Either snapshot_version OR "
                                             "snapshot_time must be specified - not both");
    const lk_catalog *cat = lk_txn_catalog(l);
    int64_t snap = -1;
    int rc = ver || at ? feed_bound(&snap, s, l, ver ? ver : at, 0) : 0;
    if (!rc && snap >= 0)
        rc = lk_lake_catalog_at(&cat, l, s->con, snap);
    if (rc)
        return rc;
    const char *schema = lk_args_named(a, "schema");
    lk_schema *sc = lk_catalog_schema((lk_catalog *)cat, schema ? schema : "main");
    const lk_table *t = sc ? lk_catalog_table(cat, sc->id, a->pos[1]) : NULL;
    if (!t)
        return tarn_error_set(TARN_ENOTFOUND, "Catalog Error: Table with name %s does not exist!",
                              a->pos[1]);
    long long sn = (long long)(snap >= 0 ? snap : cat->snapshot_id);
    char *dir = lk_lake_table_dir(l, cat, t);
    tarn_buf b = {0};
    buf_puts(&b, "SELECT CASE WHEN d.path_is_relative THEN ");
    quote_literal(&b, dir);
    buf_puts(&b, " || d.path ELSE d.path END AS data_file, d.file_size_bytes AS "
                 "data_file_size_bytes, d.footer_size AS data_file_footer_size, d.encryption_key "
                 "AS data_file_encryption_key, CASE WHEN x.path IS NULL THEN NULL WHEN "
                 "x.path_is_relative THEN ");
    quote_literal(&b, dir);
    buf_printf(&b,
               " || x.path ELSE x.path END AS delete_file, x.file_size_bytes AS "
               "delete_file_size_bytes, x.footer_size AS delete_file_footer_size, "
               "x.encryption_key AS delete_file_encryption_key FROM %s.ducklake_data_file d LEFT "
               "JOIN (SELECT * FROM %s.ducklake_delete_file WHERE %lld >= begin_snapshot AND "
               "(%lld < end_snapshot OR end_snapshot IS NULL)) x ON x.data_file_id = "
               "d.data_file_id WHERE d.table_id = %lld AND %lld >= d.begin_snapshot AND (%lld < "
               "d.end_snapshot OR d.end_snapshot IS NULL)",
               l->meta, l->meta, sn, sn, (long long)t->id, sn, sn);
    free(dir);
    *out = buf_detach(&b);
    return 0;
}

static int feed(char **out, tarn_session *s, lk_lake *l, const lk_args *a, int kind)
{
    if (a->npos < 5)
        return tarn_error_set(TARN_EINVALID,
                              "the change feed takes (catalog, schema, table, start, end)");
    int64_t from = 0, to = 0;
    int rc = feed_bound(&from, s, l, a->pos[3], 1);
    if (!rc)
        rc = feed_bound(&to, s, l, a->pos[4], 0);
    if (rc)
        return rc;
    return lk_feed_sql(out, s->con, l, a->pos[1], a->pos[2], from, to, kind);
}

/* The feed's virtual columns from a statement's scan flags. */
static int feed_virtual(int virt)
{
    return (virt & LK_SCAN_ROWID ? LK_FEED_ROWID : 0) |
           (virt & LK_SCAN_SNAPSHOT ? LK_FEED_SNAPSHOT : 0);
}

/* ducklake_settings(): the catalog's database kind (always DuckDB here),
 * the implementation's version and the lake's data path. */
static int fn_settings(char **out, lk_lake *l)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT 'duckdb' AS catalog_type, 'tarn " TARN_VERSION "' AS extension_version, ");
    quote_literal(&b, l->data_path);
    buf_puts(&b, " AS data_path");
    *out = buf_detach(&b);
    return 0;
}

/* The lake a ducklake_* function names by its first argument (the lake's
 * alias); an error about the call when it names none. */
static int fn_lake(lk_lake **out, tarn_session *s, const char *fn, const lk_args *a)
{
    if (a->npos < 1 || !a->pos[0])
        return tarn_error_set(TARN_EINVALID, "%s: the first argument is the lake's name", fn);
    *out = session_lake(s, a->pos[0]);
    if (!*out)
        return tarn_error_set(TARN_EINVALID, "%s: no DuckLake lake is attached as \"%s\"", fn,
                              a->pos[0]);
    return 0;
}

int session_function_sql(char **out, tarn_session *s, const char *fn, const lk_args *a, int virt)
{
    static const char *const KNOWN[] = {
        "ducklake_snapshots",        "ducklake_table_info",
        "ducklake_current_snapshot", "ducklake_last_committed_snapshot",
        "ducklake_options",          "ducklake_list_files",
        "ducklake_table_changes",    "ducklake_table_insertions",
        "ducklake_table_deletions",  "ducklake_settings",
    };
    *out = NULL;
    size_t k = 0;
    while (k < sizeof(KNOWN) / sizeof(KNOWN[0]) && strcasecmp(KNOWN[k], fn) != 0)
        k++;
    if (k == sizeof(KNOWN) / sizeof(KNOWN[0]))
        return session_maintain(out, s, fn, a);
    lk_lake *l = NULL;
    int rc = fn_lake(&l, s, fn, a);
    if (rc)
        return rc;
    switch (k) {
    case 0:
        return lk_snapshots_sql(out, l, s->con);
    case 1:
        return fn_table_info(out, l);
    case 2:
        *out = xasprintf("SELECT %lld::BIGINT AS id", (long long)view_snapshot(l));
        return 0;
    case 3:
        *out = xasprintf("SELECT max(snapshot_id) AS id FROM %s.ducklake_snapshot", l->meta);
        return 0;
    case 4:
        return fn_options(out, s, l);
    case 5:
        return fn_list_files(out, s, l, a);
    case 6:
        return feed(out, s, l, a, LK_FEED_CHANGES);
    case 7:
        return feed(out, s, l, a, LK_FEED_INSERTIONS | feed_virtual(virt));
    case 8:
        return feed(out, s, l, a, LK_FEED_DELETIONS | feed_virtual(virt));
    default:
        return fn_settings(out, l);
    }
}

int session_maintain(char **out, tarn_session *s, const char *fn, const lk_args *a)
{
    *out = NULL;
    if (!lk_maintain_is_function(fn)) {
        tarn_error_clear();
        return TARN_ENOTFOUND;
    }
    lk_lake *l = NULL;
    int rc = fn_lake(&l, s, fn, a);
    if (rc)
        return rc;
    return lk_maintain_run(out, l, s->con, s->explicit_txn, fn, a);
}

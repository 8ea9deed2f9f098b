/*
 * functions.c — DuckLake's table functions as subqueries (see functions.h).
 */
#include "session/functions.h"

#include "duck/duck.h"
#include "lake/feed.h"
#include "lake/info.h"
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
    tarn_buf when = {0};
    quote_literal(&when, v);
    int rc = lk_lake_snapshot_at_time(out, l, s->con, buf_cstr(&when), lower);
    buf_free(&when);
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
    return lk_info_list_files_sql(out, l, cat, t, snap >= 0 ? snap : cat->snapshot_id);
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
        return lk_info_table_info_sql(out, l, view_snapshot(l));
    case 2:
        *out = xasprintf("SELECT %lld::BIGINT AS id", (long long)view_snapshot(l));
        return 0;
    case 3:
        *out = lk_info_last_snapshot_sql(l);
        return 0;
    case 4:
        return lk_info_options_sql(out, l, s->con);
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

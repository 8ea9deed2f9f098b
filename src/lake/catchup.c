/*
 * catchup.c — an attached lake brought up to date with the commits other
 * processes made since it read its catalog (lake.h, lk_lake_catch_up):
 * the catalog model reloaded, and only the views those commits' changes
 * call for rebuilt, as after a commit of the session's own — a full
 * reload rebuilds every table's view, which costs a statement per table
 * per catch-up. Reads ducklake_snapshot and ducklake_snapshot_changes
 * (the changes_made of the snapshots in between), then every catalog
 * table at the latest snapshot (lk_catalog_load).
 */
#include "lake/catdb.h"
#include "lake/info.h"
#include "lake/lake.h"
#include "lake/model.h"
#include "lake/views.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/strlist.h"

#include <stdlib.h>
#include <string.h>

/* Splits changes_made ("created_table:\"s\".\"t\",inserted_into_table:4")
 * at the commas outside double quotes. */
static void split_tokens(strlist *out, const char *s)
{
    tarn_buf b = {0};
    int quoted = 0;
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            quoted = !quoted;
        if (*p == ',' && !quoted) {
            if (b.len)
                strlist_push(out, buf_cstr(&b));
            buf_free(&b);
            b = (tarn_buf){0};
            continue;
        }
        buf_putc(&b, *p);
    }
    if (b.len)
        strlist_push(out, buf_cstr(&b));
    buf_free(&b);
}

int lk_lake_changes_made(char **out, lk_lake *lake, duckdb_connection con, int64_t after,
                         int64_t upto)
{
    *out = NULL;
    tarn_buf sql = {0};
    buf_printf(&sql,
               "SELECT changes_made FROM %s.ducklake_snapshot_changes WHERE snapshot_id > %lld "
               "AND snapshot_id <= %lld ORDER BY snapshot_id",
               lake->meta, (long long)after, (long long)upto);
    duck_table t;
    int rc = lk_catdb_query(&t, &lake->db, con, buf_cstr(&sql));
    buf_free(&sql);
    if (rc)
        return rc;
    tarn_buf all = {0};
    for (size_t i = 0; i < t.nrows; i++) {
        const char *v = duck_table_get(&t, i, 0);
        if (!v || !*v)
            continue;
        if (all.len)
            buf_putc(&all, ',');
        buf_puts(&all, v);
    }
    duck_table_free(&t);
    *out = xstrdup(buf_cstr(&all));
    buf_free(&all);
    return 0;
}

int lk_lake_catch_up(lk_lake *lake, duckdb_connection con)
{
    if (lake->txn)
        return tarn_error_set(TARN_EINVALID, "lake \"%s\" has an open transaction", lake->alias);
    if (lake->pinned >= 0)
        return 0; /* it reads one snapshot */
    char *q = lk_info_last_snapshot_sql(lake);
    int64_t last = -1;
    int rc = lk_catdb_query_int64(&last, NULL, &lake->db, con, q);
    free(q);
    if (rc || last == lake->cat.snapshot_id)
        return rc;
    /* their commits may have made catalog tables (inlined data) */
    rc = lk_catdb_refresh(&lake->db, con);
    if (rc)
        return rc;
    char *changes = NULL;
    rc = lk_lake_changes_made(&changes, lake, con, lake->cat.snapshot_id, last);
    if (rc)
        return rc;
    strlist tokens = {0};
    split_tokens(&tokens, changes);
    free(changes);
    /* at `last`, not the latest: a commit landing after `last` was read
     * would be in the catalog without its changes above, and its tables
     * would never get views (the next catch-up starts after it) */
    lk_catalog fresh;
    rc = lk_catalog_load(&fresh, &lake->db, con, last);
    if (rc) {
        strlist_free(&tokens);
        return rc;
    }
    lk_lake_caches_forget(lake);
    lk_lake_meta_tables_forget(lake); /* their inlined-data tables */
    lk_catalog old = lake->cat;
    lake->cat = fresh;
    lake->nrow_ids = 0; /* row ids moved */
    rc = lk_lake_sync_views(lake, con, &old, tokens.items, tokens.n, NULL, 0);
    lk_catalog_free(&old);
    strlist_free(&tokens);
    return rc;
}

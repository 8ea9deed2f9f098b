/*
 * codegen.c — strategy SQL (see codegen.h).
 */
#include "materialize/codegen.h"

#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

void cg_target(tarn_buf *b, const char *lake, const char *schema, const char *table)
{
    quote_qualified(b, lake, schema, table);
}

char *cg_replace(const char *target, const char *query)
{
    return xasprintf("CREATE OR REPLACE TABLE %s AS\n%s\n", target, query);
}

char *cg_append(const char *target, const char *query)
{
    return xasprintf("INSERT INTO %s SELECT * FROM (\n%s\n)", target, query);
}

char *cg_stage(const char *query)
{
    return xasprintf("CREATE OR REPLACE TEMP TABLE _tarn_stage AS\n%s\n", query);
}

char *cg_create_from_stage(const char *target, const char *partition_expr, int empty)
{
    tarn_buf b = {0};
    buf_printf(&b, "CREATE OR REPLACE TABLE %s AS SELECT *", target);
    if (partition_expr) {
        buf_printf(&b, ", %s AS ", partition_expr);
        quote_ident(&b, CG_PARTITION_COLUMN);
    }
    buf_printf(&b, " FROM %s", CG_STAGE);
    if (empty)
        buf_puts(&b, " LIMIT 0");
    return buf_detach(&b);
}

char *cg_insert_from_stage(const char *target, const char *partition_expr)
{
    tarn_buf b = {0};
    buf_printf(&b, "INSERT INTO %s SELECT *", target);
    if (partition_expr)
        buf_printf(&b, ", %s", partition_expr);
    buf_printf(&b, " FROM %s", CG_STAGE);
    return buf_detach(&b);
}

static void ident_list(tarn_buf *b, const char *prefix, const strlist *cols)
{
    for (size_t i = 0; i < cols->n; i++) {
        if (i)
            buf_puts(b, ", ");
        if (prefix)
            buf_printf(b, "%s.", prefix);
        quote_ident(b, cols->items[i]);
    }
}

/* a.k1 IS NOT DISTINCT FROM b.k1 AND … */
static void key_match(tarn_buf *b, const char *x, const char *y, const strlist *key)
{
    for (size_t i = 0; i < key->n; i++) {
        if (i)
            buf_puts(b, " AND ");
        buf_printf(b, "%s.", x);
        quote_ident(b, key->items[i]);
        buf_printf(b, " IS NOT DISTINCT FROM %s.", y);
        quote_ident(b, key->items[i]);
    }
}

char *cg_duplicate_keys(const strlist *key, int limit)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT concat_ws(', '");
    for (size_t i = 0; i < key->n; i++) {
        buf_puts(&b, ", ");
        quote_literal(&b, key->items[i]);
        buf_puts(&b, " || '=' || CAST(");
        quote_ident(&b, key->items[i]);
        buf_puts(&b, " AS VARCHAR)");
    }
    buf_puts(&b, ") AS k, count(*) AS n, count(*) OVER () AS keys FROM " CG_STAGE " WHERE ");
    /* A key with a NULL part is not a key (as in a UNIQUE constraint):
     * such rows are merged NULL-safely but never counted as duplicates. */
    for (size_t i = 0; i < key->n; i++) {
        if (i)
            buf_puts(&b, " AND ");
        quote_ident(&b, key->items[i]);
        buf_puts(&b, " IS NOT NULL");
    }
    buf_puts(&b, " GROUP BY ALL HAVING count(*) > 1 ORDER BY n DESC, k");
    buf_printf(&b, " LIMIT %d", limit);
    return buf_detach(&b);
}

/* SELECT DISTINCT key FROM ((stage EXCEPT rel) UNION ALL (rel's rows with a
 * staged key EXCEPT stage)), over `cols`: the keys whose rows differ. */
static void changed_keys(tarn_buf *b, const char *target, const strlist *cols, const strlist *key)
{
    buf_puts(b, "SELECT DISTINCT ");
    ident_list(b, NULL, key);
    buf_puts(b, " FROM ((SELECT ");
    ident_list(b, NULL, cols);
    buf_puts(b, " FROM " CG_STAGE " EXCEPT SELECT ");
    ident_list(b, NULL, cols);
    buf_printf(b, " FROM %s) UNION ALL (SELECT ", target);
    ident_list(b, "t", cols);
    buf_printf(b, " FROM %s AS t WHERE EXISTS (SELECT 1 FROM " CG_STAGE " AS s WHERE ", target);
    key_match(b, "s", "t", key);
    buf_puts(b, ") EXCEPT SELECT ");
    ident_list(b, NULL, cols);
    buf_puts(b, " FROM " CG_STAGE "))");
}

char *cg_changed_keys(const char *target, const strlist *cols, const strlist *key)
{
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE TEMP TABLE _tarn_keys AS ");
    changed_keys(&b, target, cols, key);
    return buf_detach(&b);
}

char *cg_stage_where(const char *query, const char *where)
{
    return xasprintf("CREATE OR REPLACE TEMP TABLE _tarn_stage AS SELECT * FROM (\n%s\n) WHERE %s",
                     query, where);
}

char *cg_watermark(const char *target, const char *col)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT CAST(max(");
    quote_ident(&b, col);
    buf_puts(&b, ") AS VARCHAR), typeof(max(");
    quote_ident(&b, col);
    buf_printf(&b, ")) FROM %s", target);
    return buf_detach(&b);
}

char *cg_history_create(const char *target, const char *ts)
{
    tarn_buf b = {0};
    buf_printf(&b, "CREATE OR REPLACE TABLE %s AS SELECT *, %s AS ", target, ts);
    quote_ident(&b, CG_VALID_FROM);
    buf_puts(&b, ", CAST(NULL AS TIMESTAMP) AS ");
    quote_ident(&b, CG_VALID_TO);
    buf_puts(&b, ", true AS ");
    quote_ident(&b, CG_IS_CURRENT);
    buf_puts(&b, " FROM " CG_STAGE);
    return buf_detach(&b);
}

/* (SELECT * FROM t WHERE is_current) */
static void current_rows(tarn_buf *b, const char *target)
{
    buf_printf(b, "(SELECT * FROM %s WHERE ", target);
    quote_ident(b, CG_IS_CURRENT);
    buf_puts(b, ")");
}

char *cg_history_keys(const char *target, const strlist *key, const strlist *track,
                      int deletes_close)
{
    strlist cols = {0};
    strlist_copy(&cols, key);
    for (size_t i = 0; i < track->n; i++)
        strlist_push(&cols, track->items[i]);
    tarn_buf cur = {0};
    current_rows(&cur, target);
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE TEMP TABLE _tarn_keys AS SELECT *, true AS _tarn_open FROM (");
    changed_keys(&b, buf_cstr(&cur), &cols, key);
    buf_puts(&b, ")");
    if (deletes_close) {
        buf_puts(&b, " UNION ALL SELECT DISTINCT ");
        ident_list(&b, "t", key);
        buf_printf(&b,
                   ", false FROM %s AS t WHERE NOT EXISTS (SELECT 1 FROM " CG_STAGE " AS s WHERE ",
                   buf_cstr(&cur));
        key_match(&b, "s", "t", key);
        buf_puts(&b, ")");
    }
    buf_free(&cur);
    strlist_free(&cols);
    return buf_detach(&b);
}

char *cg_history_close(const char *target, const strlist *key, const char *ts)
{
    tarn_buf b = {0};
    buf_printf(&b, "UPDATE %s AS t SET ", target);
    quote_ident(&b, CG_VALID_TO);
    buf_printf(&b, " = %s, ", ts);
    quote_ident(&b, CG_IS_CURRENT);
    buf_puts(&b, " = false WHERE t.");
    quote_ident(&b, CG_IS_CURRENT);
    buf_puts(&b, " AND EXISTS (SELECT 1 FROM " CG_KEYS " AS k WHERE ");
    key_match(&b, "k", "t", key);
    buf_puts(&b, ")");
    return buf_detach(&b);
}

char *cg_history_open(const char *target, const strlist *key, const char *ts)
{
    tarn_buf b = {0};
    buf_printf(&b,
               "INSERT INTO %s SELECT s.*, %s, CAST(NULL AS TIMESTAMP), true FROM " CG_STAGE
               " AS s WHERE EXISTS (SELECT 1 FROM " CG_KEYS " AS k WHERE k._tarn_open AND ",
               target, ts);
    key_match(&b, "k", "s", key);
    buf_puts(&b, ")");
    return buf_detach(&b);
}

char *cg_history_view(const char *lake, const char *schema, const char *table)
{
    char *view = xasprintf("%s" CG_CURRENT_SUFFIX, table);
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE VIEW ");
    quote_qualified(&b, lake, schema, view);
    buf_puts(&b, " AS SELECT * EXCLUDE (");
    quote_ident(&b, CG_VALID_TO);
    buf_puts(&b, ", ");
    quote_ident(&b, CG_IS_CURRENT);
    buf_puts(&b, ") FROM ");
    quote_qualified(&b, NULL, schema, table);
    buf_puts(&b, " WHERE ");
    quote_ident(&b, CG_IS_CURRENT);
    free(view);
    return buf_detach(&b);
}

char *cg_delete_keys(const char *target, const strlist *key)
{
    return cg_delete_keys_in(target, key, NULL);
}

char *cg_insert_keys(const char *target, const strlist *key)
{
    return cg_insert_keys_in(target, key, NULL);
}

/* Appends `"<partition column>" = 'slice'`: the rows of one slice. */
static void slice_match(tarn_buf *b, const char *slice)
{
    quote_ident(b, CG_PARTITION_COLUMN);
    buf_puts(b, " = ");
    quote_literal(b, slice);
}

char *cg_slice_rows(const char *target, const char *slice)
{
    tarn_buf b = {0};
    buf_printf(&b, "(SELECT * FROM %s WHERE ", target);
    slice_match(&b, slice);
    buf_puts(&b, ")");
    return buf_detach(&b);
}

char *cg_delete_keys_in(const char *target, const strlist *key, const char *slice)
{
    tarn_buf b = {0};
    buf_printf(&b, "DELETE FROM %s AS t WHERE ", target);
    if (slice) {
        buf_puts(&b, "t.");
        slice_match(&b, slice);
        buf_puts(&b, " AND ");
    }
    buf_puts(&b, "EXISTS (SELECT 1 FROM " CG_KEYS " AS k WHERE ");
    key_match(&b, "k", "t", key);
    buf_puts(&b, ")");
    return buf_detach(&b);
}

char *cg_insert_keys_in(const char *target, const strlist *key, const char *slice)
{
    tarn_buf b = {0};
    buf_printf(&b, "INSERT INTO %s SELECT s.*", target);
    if (slice) {
        buf_puts(&b, ", ");
        quote_literal(&b, slice);
    }
    buf_puts(&b, " FROM " CG_STAGE " AS s WHERE EXISTS (SELECT 1 FROM " CG_KEYS " AS k WHERE ");
    key_match(&b, "k", "s", key);
    buf_puts(&b, ")");
    return buf_detach(&b);
}

char *cg_partition_expr(part_grain g, const char *col)
{
    tarn_buf b = {0};
    if (g == GRAIN_DYNAMIC) {
        buf_puts(&b, "CAST(");
        quote_ident(&b, col);
        buf_puts(&b, " AS VARCHAR)");
    } else {
        buf_puts(&b, "strftime(");
        quote_ident(&b, col);
        buf_puts(&b, ", ");
        quote_literal(&b, grain_strftime(g));
        buf_puts(&b, ")");
    }
    return buf_detach(&b);
}

char *cg_outside_partition(part_grain g, const char *col, const char *identity)
{
    char *e = cg_partition_expr(g, col);
    tarn_buf b = {0};
    buf_printf(&b, "SELECT count(*), CAST(min(");
    quote_ident(&b, col);
    buf_printf(&b, ") AS VARCHAR), count(*) FILTER (WHERE ");
    quote_ident(&b, col);
    buf_printf(&b, " IS NULL) FROM " CG_STAGE " WHERE %s IS DISTINCT FROM ", e);
    quote_literal(&b, identity);
    free(e);
    return buf_detach(&b);
}

char *cg_delete_partitions(const char *target, const strlist *identities)
{
    tarn_buf b = {0};
    buf_printf(&b, "DELETE FROM %s WHERE ", target);
    quote_ident(&b, CG_PARTITION_COLUMN);
    buf_puts(&b, " IN (");
    quote_literal_list(&b, identities->items, identities->n);
    buf_puts(&b, ")");
    return buf_detach(&b);
}

char *cg_partition_macro(part_grain g)
{
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE TEMP MACRO tarn_partition(ts) AS strftime(ts, ");
    quote_literal(&b, grain_strftime(g));
    buf_puts(&b, ")");
    return buf_detach(&b);
}

char *cg_commit_message(const char *lake, const char *message, const char *extra_json)
{
    tarn_buf b = {0};
    buf_puts(&b, "CALL ducklake_set_commit_message(");
    quote_literal(&b, lake);
    buf_puts(&b, ", 'tarn', ");
    quote_literal(&b, message);
    buf_puts(&b, ", extra_info => ");
    quote_literal(&b, extra_json);
    buf_puts(&b, ")");
    return buf_detach(&b);
}

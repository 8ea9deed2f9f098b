/*
 * ddl_rows.c — the catalog rows and change tokens that every DDL file
 * writes (ddl.c, ddl_alter.c, ddl_alter_table.c, ddl_view.c; declared in
 * ddl_int.h), and the columns a DuckDB shape table gives a lake table.
 *
 * Rows: a new version of a ducklake_schema, _table or _view row; the
 * ducklake_column rows of a column and its children; ending the live rows
 * of an object (end_snapshot = the transaction's snapshot), also a view's
 * ducklake_view and ducklake_tag rows; a ducklake_schema_versions row (and
 * a new ducklake_inlined_data_tables row and table) when a table's layout
 * changes. Tokens: the change tokens of ducklake_snapshot_changes
 * (created_table:"s"."t", altered_table:<id>, …). Everything is queued in
 * the open transaction (lake->txn); nothing is written before the commit.
 * These files sit below the DDL files that use them and call none of them.
 */
#include "lake/ddl_int.h"

#include "duck/duck.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- change tokens ---- */

char *ddl_name_token(const char *kind, const char *schema, const char *name)
{
    tarn_buf b = {0};
    buf_printf(&b, "%s:", kind);
    quote_ident(&b, schema);
    if (name) {
        buf_putc(&b, '.');
        quote_ident(&b, name);
    }
    return buf_detach(&b);
}

void ddl_token_name(lk_txn *txn, const char *kind, const char *schema, const char *name)
{
    char *tok = ddl_name_token(kind, schema, name);
    lk_txn_change(txn, tok);
    free(tok);
}

void ddl_changed(lk_txn *txn, const char *kind, int64_t id)
{
    char *tok = xasprintf("%s:%lld", kind, (long long)id);
    lk_txn_change(txn, tok);
    free(tok);
    txn->catalog_changed = 1;
}

void ddl_altered(lk_lake *lake, const lk_table *t)
{
    ddl_changed(lake->txn, "altered_table", t->id);
}

/* ---- catalog rows ---- */

void ddl_end_rows(lk_lake *lake, const char *table, const char *key, int64_t id)
{
    lk_txn_sql(lake->txn,
               "UPDATE %s.%s SET end_snapshot = %lld WHERE end_snapshot IS NULL AND %s = %lld",
               lake->meta, table, (long long)lake->txn->snapshot_id, key, (long long)id);
}

void ddl_object_row(tarn_buf *b, int64_t id, const char *uuid, int64_t begin, int64_t schema_id,
                    const char *name)
{
    buf_printf(b, "(%lld, '%s', %lld, NULL, ", (long long)id, uuid, (long long)begin);
    if (schema_id >= 0)
        buf_printf(b, "%lld, ", (long long)schema_id);
    quote_literal(b, name);
}

void ddl_path_object_row(lk_txn *txn, const char *table, int64_t id, const char *uuid,
                         int64_t schema_id, const char *name, const char *path, int path_rel)
{
    tarn_buf b = {0};
    ddl_object_row(&b, id, uuid, txn->snapshot_id, schema_id, name);
    buf_puts(&b, ", ");
    quote_literal(&b, path);
    buf_printf(&b, ", %s)", path_rel ? "true" : "false");
    lk_txn_row(txn, table, "%s", buf_cstr(&b));
    buf_free(&b);
}

void ddl_column_rows(lk_lake *lake, const lk_table *t, const lk_column *c)
{
    lk_txn *txn = lake->txn;
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, %lld, NULL, %lld, %lld, ", (long long)c->id, (long long)txn->snapshot_id,
               (long long)t->id, (long long)c->id);
    quote_literal(&b, c->name);
    buf_puts(&b, ", ");
    quote_literal(&b, c->type);
    buf_puts(&b, ", ");
    quote_literal(&b, c->initial_default);
    buf_puts(&b, ", ");
    quote_literal(&b, c->default_value);
    buf_printf(&b, ", %s, ", c->nulls_allowed ? "true" : "false");
    if (c->parent >= 0)
        buf_printf(&b, "%lld", (long long)c->parent);
    else
        buf_puts(&b, "NULL");
    buf_puts(&b, ", ");
    quote_literal(&b, c->default_value_type);
    buf_puts(&b, ", 'duckdb')");
    lk_txn_row(txn, "ducklake_column", "%s", buf_cstr(&b));
    buf_free(&b);
    for (size_t i = 0; i < c->nchildren; i++)
        ddl_column_rows(lake, t, &c->children[i]);
}

/* Records, once per table and commit, that the table's layout changed:
 * a schema_versions row and, when the columns themselves changed and the
 * table inlines, a new inlined-data table with the new columns (DuckLake
 * keeps one inlined table per column layout; default and NOT NULL changes
 * keep the layout; a layout with a GEOMETRY column gets none). */
void ddl_layout_changed(lk_lake *lake, lk_table *t, int new_columns)
{
    lk_txn *txn = lake->txn;
    int64_t sv = txn->cat.schema_version + 1;
    char *name = xasprintf("ducklake_inlined_data_%lld_%lld", (long long)t->id, (long long)sv);
    int had_inlined = t->ninlined > 0;
    int fresh = !had_inlined || t->inlined[t->ninlined - 1].schema_version != sv;
    lk_txn_schema_changed(txn, t->id);
    if (fresh)
        lk_txn_row(txn, "ducklake_schema_versions", "(%lld, %lld, %lld)",
                   (long long)txn->snapshot_id, (long long)sv, (long long)t->id);
    if (had_inlined && new_columns && lk_table_inlinable(t)) {
        if (!fresh) {
            lk_txn_sql(txn, "DROP TABLE IF EXISTS %s.%s", lake->meta, name);
            lk_txn_meta_table(txn, '-', name);
            lk_txn_sql(txn, "DELETE FROM %s.ducklake_inlined_data_tables WHERE table_name = '%s'",
                       lake->meta, name);
            free(t->inlined[--t->ninlined].name);
        }
        lk_write_inlined_table(lake, t, sv);
    }
    free(name);
    txn->catalog_changed = 1;
}

void ddl_drop_view_rows(lk_lake *lake, const lk_view *v)
{
    lk_txn *txn = lake->txn;
    ddl_end_rows(lake, "ducklake_view", "view_id", v->id);
    ddl_end_rows(lake, "ducklake_tag", "object_id", v->id);
    ddl_changed(txn, "dropped_view", v->id);
}

/* ---- columns ---- */

static int is_number(const char *s)
{
    char *end = NULL;
    if (!*s)
        return 0;
    strtod(s, &end);
    return end && *end == 0;
}

/* DuckDB renders a column default as SQL text; DuckLake stores literals
 * unquoted (type 'literal') and anything else as expression text. */
static void set_default(lk_column *c, const char *text)
{
    free(c->default_value);
    free(c->default_value_type);
    c->initial_default = NULL;
    if (!text) {
        c->default_value = xstrdup("NULL");
        c->default_value_type = xstrdup("literal");
        return;
    }
    size_t n = strlen(text);
    if (n >= 2 && text[0] == '\'' && text[n - 1] == '\'') {
        tarn_buf b = {0};
        for (size_t i = 1; i + 1 < n; i++) {
            buf_putc(&b, text[i]);
            if (text[i] == '\'' && text[i + 1] == '\'')
                i++;
        }
        c->default_value = xstrdup(buf_cstr(&b));
        c->initial_default = buf_detach(&b);
        c->default_value_type = xstrdup("literal");
    } else if (is_number(text)) {
        c->default_value = xstrdup(text);
        c->initial_default = xstrdup(text);
        c->default_value_type = xstrdup("literal");
    } else {
        c->default_value = xstrdup(text);
        c->default_value_type = xstrdup("expression");
    }
}

int ddl_read_shape(lk_table *t, duckdb_connection con, const char *shape)
{
    char *sql = xasprintf("SELECT * FROM %s LIMIT 0", shape);
    duckdb_result res;
    int rc = 0;
    if (duckdb_query(con, sql, &res) != DuckDBSuccess) {
        rc = duck_error_from_result(&res, sql);
        duckdb_destroy_result(&res);
        free(sql);
        return rc;
    }
    free(sql);
    idx_t n = duckdb_column_count(&res);
    t->cols = xcalloc(n ? n : 1, sizeof(lk_column));
    int64_t next_id = 1;
    for (idx_t i = 0; i < n && !rc; i++) {
        duckdb_logical_type lt = duckdb_column_logical_type(&res, i);
        rc = lk_type_from_logical(&t->cols[i], duckdb_column_name(&res, i), lt, &next_id);
        t->ncols++;
        duckdb_destroy_logical_type(&lt);
    }
    duckdb_destroy_result(&res);
    return rc;
}

int ddl_read_constraints(lk_table *t, duckdb_connection con, const char *shape_name)
{
    tarn_buf b = {0};
    /* pragma_table_info reads one table; duckdb_columns() would list (and
     * bind) every column of every view of every lake attached */
    tarn_buf name = {0};
    quote_qualified(&name, "temp", "main", shape_name);
    buf_puts(&b, "SELECT name, dflt_value, CASE WHEN \"notnull\" THEN 'false' ELSE 'true' END FROM "
                 "pragma_table_info(");
    quote_literal(&b, buf_cstr(&name));
    buf_puts(&b, ") ORDER BY cid");
    buf_free(&name);
    duck_table r;
    int rc = duck_table_query(&r, con, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows && i < t->ncols; i++) {
        lk_column *c = &t->cols[i];
        if (!lk_type_is_nested(c->type))
            set_default(c, duck_table_get(&r, i, 1));
        const char *nullable = duck_table_get(&r, i, 2);
        c->nulls_allowed = !nullable || strcmp(nullable, "true") == 0;
    }
    duck_table_free(&r);
    return 0;
}

int ddl_reserved_error(const char *name)
{
    return tarn_error_set(TARN_EINVALID,
                          "Column name \"%s\" is reserved by DuckLake for internal use when data "
                          "inlining is enabled. If you must use this column name, disable inlining "
                          "by calling ducklake_set_option('data_inlining_row_limit', 0).",
                          name);
}

lk_column *ddl_top_column(lk_table *t, const char *name, size_t *index)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (strcasecmp(t->cols[i].name, name) == 0) {
            if (index)
                *index = i;
            return &t->cols[i];
        }
    }
    return NULL;
}

void ddl_set_begin(lk_column *c, int64_t snapshot)
{
    c->begin = snapshot;
    for (size_t i = 0; i < c->nchildren; i++)
        ddl_set_begin(&c->children[i], snapshot);
}

lk_schema *ddl_schema_to_create_in(lk_lake *lake, const char *schema)
{
    lk_schema *s = lk_catalog_schema(&lake->txn->cat, schema);
    if (!s)
        tarn_error_set(TARN_ENOTFOUND,
                       "Binder Error: Schema \"%s\" not found in DuckLakeCatalog \"%s\"", schema,
                       lake->alias);
    return s;
}

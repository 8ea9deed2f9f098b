/*
 * ddl.c — CREATE/DROP SCHEMA and TABLE as DuckLake catalog rows (see ddl.h).
 *
 * Directory rule (DuckLake's): a schema or table gets the directory
 * `<name>/` when its name is only [A-Za-z0-9_-], else `<uuid>/`, so no
 * name can ever make a path that escapes the data path.
 */
#include "lake/ddl.h"
#include "lake/idorder.h"
#include "lake/macro.h"
#include "lake/sort.h"

#include "duck/duck.h"
#include "lake/bucket.h"
#include "lake/colstats.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/uuid.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *dir_for(const char *name, const char *uuid)
{
    return xasprintf("%s/", quote_is_plain_path_segment(name) ? name : uuid);
}

static void token_name(lk_txn *txn, const char *kind, const char *schema, const char *name)
{
    tarn_buf b = {0};
    buf_printf(&b, "%s:", kind);
    quote_ident(&b, schema);
    if (name) {
        buf_putc(&b, '.');
        quote_ident(&b, name);
    }
    lk_txn_change(txn, buf_cstr(&b));
    buf_free(&b);
}

int lk_create_schema(lk_lake *lake, duckdb_connection con, const char *name, int if_not_exists)
{
    lk_txn *txn = lake->txn;
    if (lk_catalog_schema(&txn->cat, name)) {
        if (if_not_exists)
            return 0;
        return tarn_error_set(TARN_EINVALID,
                              "Schema with name \"%s\" already exists in lake \"%s\"", name,
                              lake->alias);
    }
    lk_schema *s = lk_catalog_add_schema(&txn->cat);
    s->id = lk_txn_new_catalog_id(txn);
    lk_idorder_schema_created(txn->ids, name, s->id);
    txn->schemas_created = 1; /* its alias schema: no rebuild of every view */
    s->begin = txn->snapshot_id;
    s->uuid = uuid_v7();
    s->name = xstrdup(name);
    s->path = dir_for(name, s->uuid);
    s->path_rel = 1;
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, '%s', %lld, NULL, ", (long long)s->id, s->uuid,
               (long long)txn->snapshot_id);
    quote_literal(&b, name);
    buf_puts(&b, ", ");
    quote_literal(&b, s->path);
    buf_puts(&b, ", true)");
    lk_txn_row(txn, "ducklake_schema", "%s", buf_cstr(&b));
    buf_free(&b);
    token_name(txn, "created_schema", name, NULL);
    txn->catalog_changed = 1;
    return 0;
}

static void drop_table_rows(lk_lake *lake, const lk_table *t)
{
    lk_txn *txn = lake->txn;
    static const char *const TABLES[] = {
        "ducklake_table",      "ducklake_partition_info", "ducklake_column",
        "ducklake_column_tag", "ducklake_data_file",      "ducklake_delete_file",
        "ducklake_sort_info",
    };
    for (size_t i = 0; i < sizeof(TABLES) / sizeof(TABLES[0]); i++)
        lk_txn_sql(txn,
                   "UPDATE %s.%s SET end_snapshot = %lld WHERE end_snapshot IS NULL AND table_id "
                   "= %lld",
                   lake->meta, TABLES[i], (long long)txn->snapshot_id, (long long)t->id);
    lk_txn_sql(txn,
               "UPDATE %s.ducklake_tag SET end_snapshot = %lld WHERE end_snapshot IS NULL AND "
               "object_id = %lld",
               lake->meta, (long long)txn->snapshot_id, (long long)t->id);
    char *tok = xasprintf("dropped_table:%lld", (long long)t->id);
    lk_txn_change(txn, tok);
    free(tok);
    txn->catalog_changed = 1;
}

static void drop_view_rows(lk_lake *lake, const lk_view *v);
static void set_begin(lk_column *c, int64_t snapshot);
static char *name_token(const char *kind, const char *schema, const char *name);

/* The catalog tables whose rows name a table by table_id (ducklake_tag:
 * object_id). */
static const char *const TABLE_ROWS[] = {
    "ducklake_table",
    "ducklake_column",
    "ducklake_column_mapping",
    "ducklake_column_tag",
    "ducklake_data_file",
    "ducklake_delete_file",
    "ducklake_file_column_stats",
    "ducklake_file_partition_value",
    "ducklake_file_variant_stats",
    "ducklake_inlined_data_tables",
    "ducklake_partition_column",
    "ducklake_partition_info",
    "ducklake_schema_versions",
    "ducklake_sort_expression",
    "ducklake_sort_info",
    "ducklake_table_column_stats",
    "ducklake_table_stats",
};

/* DROP of a table this transaction created: as in DuckLake, nothing of it
 * is committed (no rows, no change tokens) and its files go now. */
static int drop_created_table(lk_lake *lake, duckdb_connection con, const char *schema,
                              const char *name, const lk_table *t)
{
    lk_txn *txn = lake->txn;
    int64_t id = t->id;
    lk_txn_forget_table(lake, con, id);
    lk_ids_add(&txn->forgotten, &txn->nforgotten, id);
    if (t->partition_id >= txn->base_catalog_id)
        lk_ids_add(&txn->forgotten, &txn->nforgotten, t->partition_id);
    if (t->sort_id >= txn->base_catalog_id)
        lk_ids_add(&txn->forgotten, &txn->nforgotten, t->sort_id);
    for (size_t i = 0; i < sizeof(TABLE_ROWS) / sizeof(TABLE_ROWS[0]); i++)
        if (lk_lake_meta_table_exists(lake, con, TABLE_ROWS[i]))
            lk_txn_sql(txn, "DELETE FROM %s.%s WHERE table_id = %lld", lake->meta, TABLE_ROWS[i],
                       (long long)id);
    lk_txn_sql(txn, "DELETE FROM %s.ducklake_tag WHERE object_id = %lld", lake->meta,
               (long long)id);
    for (size_t i = 0; i < t->ninlined; i++) {
        tarn_buf b = {0};
        buf_printf(&b, "DROP TABLE IF EXISTS %s.", lake->meta);
        quote_ident(&b, t->inlined[i].name);
        lk_txn_sql(txn, "%s", buf_cstr(&b));
        lk_txn_meta_table(txn, '-', t->inlined[i].name);
        buf_free(&b);
    }
    char *tok = name_token("created_table", schema, name);
    lk_txn_unchange(txn, tok);
    free(tok);
    lk_idorder_entry_dropped(txn->ids, schema, name);
    lk_txn_view_dropped(txn, schema, name);
    lk_catalog_remove_table(&txn->cat, (size_t)(t - txn->cat.tables));
    return 0;
}

/* DROP of a table this transaction renamed: DuckLake ends its committed
 * row and writes none under the new name. */
static void unrename_table(lk_lake *lake, const char *schema, const lk_table *t)
{
    lk_txn *txn = lake->txn;
    lk_txn_sql(txn, "DELETE FROM %s.ducklake_table WHERE table_id = %lld AND begin_snapshot = %lld",
               lake->meta, (long long)t->id, (long long)txn->snapshot_id);
    char *tok = name_token("created_table", schema, t->name);
    lk_txn_unchange(txn, tok);
    free(tok);
}

int lk_drop_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                  int if_exists)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    const lk_table *t = s ? lk_catalog_table(&txn->cat, s->id, name) : NULL;
    if (!t) {
        if (if_exists)
            return 0;
        return tarn_error_set(TARN_ENOTFOUND,
                              "Table with name %s does not exist in schema \"%s\" of lake \"%s\"",
                              name, schema, lake->alias);
    }
    if (lk_txn_created_table(lake, txn, t))
        return drop_created_table(lake, con, schema, name, t);
    if (t->begin == txn->snapshot_id)
        unrename_table(lake, schema, t);
    drop_table_rows(lake, t);
    lk_idorder_entry_dropped(txn->ids, schema, name);
    lk_txn_view_dropped(txn, schema, name);
    lk_catalog_remove_table(&txn->cat, (size_t)(t - txn->cat.tables));
    (void)con;
    return 0;
}

static void dependent(tarn_buf *b, const char *kind, const char *name, const char *schema)
{
    buf_printf(b, "%s ", kind);
    quote_ident(b, name);
    buf_puts(b, " depends on schema ");
    quote_ident(b, schema);
    buf_puts(b, ".\n");
}

/* DROP SCHEMA without CASCADE: DuckLake's error when anything lives in it. */
static int schema_dependents(const lk_catalog *c, int64_t sid, const char *schema)
{
    tarn_buf b = {0};
    for (size_t i = 0; i < c->ntables; i++)
        if (c->tables[i].schema_id == sid)
            dependent(&b, "table", c->tables[i].name, schema);
    for (size_t i = 0; i < c->nviews; i++)
        if (c->views[i].schema_id == sid)
            dependent(&b, "view", c->views[i].name, schema);
    for (size_t i = 0; i < c->nmacros; i++)
        if (c->macros[i].schema_id == sid)
            dependent(&b, c->macros[i].is_table ? "table macro function" : "macro function",
                      c->macros[i].name, schema);
    int rc = 0;
    if (b.len)
        rc = tarn_error_set(TARN_EINVALID,
                            "Catalog Error: Cannot drop schema \"%s\" because there are entries "
                            "that depend on it\n%sUse DROP...CASCADE to drop all dependents.",
                            schema, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

int lk_drop_schema(lk_lake *lake, duckdb_connection con, const char *name, int if_exists,
                   int cascade)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, name);
    if (!s) {
        if (if_exists)
            return 0;
        return tarn_error_set(TARN_ENOTFOUND, "Schema with name %s does not exist in lake \"%s\"",
                              name, lake->alias);
    }
    int64_t sid = s->id;
    if (!cascade) {
        int rc = schema_dependents(&txn->cat, sid, name);
        if (rc)
            return rc;
    }
    int rc = lk_drop_schema_macros(lake, sid, name);
    if (rc)
        return rc;
    for (size_t i = txn->cat.ntables; i-- > 0;) {
        if (txn->cat.tables[i].schema_id != sid)
            continue;
        drop_table_rows(lake, &txn->cat.tables[i]);
        lk_idorder_entry_dropped(txn->ids, name, txn->cat.tables[i].name);
        lk_catalog_remove_table(&txn->cat, i);
    }
    for (size_t i = txn->cat.nviews; i-- > 0;) {
        if (txn->cat.views[i].schema_id != sid)
            continue;
        drop_view_rows(lake, &txn->cat.views[i]);
        lk_idorder_entry_dropped(txn->ids, name, txn->cat.views[i].name);
        lk_catalog_remove_view(&txn->cat, i);
    }
    lk_txn_sql(txn,
               "UPDATE %s.ducklake_schema SET end_snapshot = %lld WHERE end_snapshot IS NULL AND "
               "schema_id = %lld",
               lake->meta, (long long)txn->snapshot_id, (long long)sid);
    char *tok = xasprintf("dropped_schema:%lld", (long long)sid);
    lk_txn_change(txn, tok);
    free(tok);
    txn->catalog_changed = 1;
    lk_idorder_schema_dropped(txn->ids, name);
    lk_txn_views_all(txn);
    s = lk_catalog_schema(&txn->cat, name);
    lk_catalog_remove_schema(&txn->cat, (size_t)(s - txn->cat.schemas));
    (void)con;
    return 0;
}

/* ---- CREATE TABLE ---- */

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

static int read_shape(lk_table *t, duckdb_connection con, const char *shape)
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

/* What a DuckDB table may have and a DuckLake table may not: PRIMARY KEY,
 * UNIQUE, CHECK and FOREIGN KEY constraints, generated columns, collations
 * (DuckLake's messages). */
static int check_shape(duckdb_connection con, const char *shape_name)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT (SELECT string_agg(DISTINCT constraint_type, ',') FROM "
                 "duckdb_constraints() WHERE database_name = 'temp' AND table_name = ");
    quote_literal(&b, shape_name);
    buf_puts(&b, " AND constraint_type <> 'NOT NULL'), (SELECT sql FROM duckdb_tables() WHERE "
                 "database_name = 'temp' AND table_name = ");
    quote_literal(&b, shape_name);
    buf_putc(&b, ')');
    duck_table r;
    int rc = duck_table_query(&r, con, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        return rc;
    const char *kinds = r.nrows ? duck_table_get(&r, 0, 0) : NULL;
    const char *sql = r.nrows ? duck_table_get(&r, 0, 1) : NULL;
    if (kinds && strstr(kinds, "CHECK"))
        rc = tarn_error_set(TARN_EUNSUPPORTED, "Not implemented Error: CHECK constraints are not "
                                               "supported in DuckLake");
    else if (kinds && strstr(kinds, "FOREIGN KEY"))
        rc = tarn_error_set(TARN_EUNSUPPORTED, "Not implemented Error: FOREIGN KEY constraints "
                                               "are not supported in DuckLake");
    else if (kinds)
        rc = tarn_error_set(TARN_EUNSUPPORTED, "Not implemented Error: PRIMARY KEY/UNIQUE "
                                               "constraints are not supported in DuckLake");
    else if (sql && strstr(sql, " GENERATED ALWAYS AS("))
        rc = tarn_error_set(TARN_EUNSUPPORTED,
                            "Not implemented Error: DuckLake does not support generated columns");
    else if (sql && strstr(sql, " COLLATE "))
        rc = tarn_error_set(TARN_EUNSUPPORTED,
                            "Invalid Input Error: Collations are not supported in DuckLake storage");
    duck_table_free(&r);
    return rc;
}

static int read_constraints(lk_table *t, duckdb_connection con, const char *shape_name)
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

static const char *const RESERVED[] = {"row_id", "begin_snapshot", "end_snapshot",
                                       "_ducklake_internal_row_id",
                                       "_ducklake_internal_snapshot_id"};

static int check_column_names(const lk_table *t, int inlining)
{
    for (size_t i = 0; i < t->ncols; i++) {
        for (size_t j = 0; j < i; j++)
            if (strcasecmp(t->cols[i].name, t->cols[j].name) == 0)
                return tarn_error_set(TARN_EINVALID, "column \"%s\" is defined twice",
                                      t->cols[i].name);
        for (size_t r = 0; inlining && r < sizeof(RESERVED) / sizeof(RESERVED[0]); r++)
            if (strcasecmp(t->cols[i].name, RESERVED[r]) == 0)
                return tarn_error_set(TARN_EINVALID,
                                      "column name \"%s\" is reserved while data inlining is "
                                      "enabled; rename the column or set data_inlining_row_limit "
                                      "to 0",
                                      t->cols[i].name);
    }
    return 0;
}

static void column_rows(lk_lake *lake, const lk_table *t, const lk_column *c)
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
        column_rows(lake, t, &c->children[i]);
}

static void inlined_table(lk_lake *lake, lk_table *t, int64_t sv)
{
    lk_txn *txn = lake->txn;
    char *name = xasprintf("ducklake_inlined_data_%lld_%lld", (long long)t->id, (long long)sv);
    lk_txn_row(txn, "ducklake_inlined_data_tables", "(%lld, '%s', %lld)", (long long)t->id, name,
               (long long)sv);
    tarn_buf b = {0};
    buf_printf(&b,
               "CREATE TABLE IF NOT EXISTS %s.%s(row_id BIGINT, begin_snapshot BIGINT, "
               "end_snapshot BIGINT",
               lake->meta, name);
    for (size_t i = 0; i < t->ncols; i++) {
        buf_puts(&b, ", ");
        quote_ident(&b, t->cols[i].name);
        buf_putc(&b, ' ');
        lk_type_to_sql(&b, &t->cols[i]);
    }
    buf_putc(&b, ')');
    lk_txn_sql(txn, "%s", buf_cstr(&b));
    lk_txn_meta_table(txn, '+', name);
    buf_free(&b);
    t->inlined = xrealloc(t->inlined, (t->ninlined + 1) * sizeof(lk_inlined));
    t->inlined[t->ninlined].name = name;
    t->inlined[t->ninlined].schema_version = sv;
    t->ninlined++;
}

int lk_create_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                    const char *shape, int64_t *table_id)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    if (!s)
        return tarn_error_set(TARN_ENOTFOUND, "Schema with name %s does not exist in lake \"%s\"",
                              schema, lake->alias);
    if (lk_catalog_table(&txn->cat, s->id, name))
        return tarn_error_set(TARN_EINVALID, "Table with name \"%s\" already exists in lake \"%s\"",
                              name, lake->alias);
    if (lk_catalog_view(&txn->cat, s->id, name)) /* one namespace, as in DuckDB */
        return tarn_error_set(TARN_EINVALID, "Catalog Error: View with name \"%s\" already exists",
                              name);
    lk_table nt = {0};
    int rc = read_shape(&nt, con, shape);
    if (!rc) {
        const char *dot = strrchr(shape, '.');
        char *raw = xstrdup(dot ? dot + 1 : shape);
        if (raw[0] == '"') {
            memmove(raw, raw + 1, strlen(raw));
            raw[strlen(raw) - 1] = 0;
        }
        rc = check_shape(con, raw);
        if (!rc)
            rc = read_constraints(&nt, con, raw);
        free(raw);
    }
    nt.schema_id = s->id;
    nt.name = xstrdup(name);
    nt.partition_id = -1;
    int64_t limit = lake->inline_limit >= 0 ? lake->inline_limit : 10;
    if (!rc)
        rc = check_column_names(&nt, limit > 0);
    if (rc) {
        lk_table_free(&nt);
        return rc;
    }
    nt.id = lk_txn_new_catalog_id(txn);
    lk_idorder_entry_touched(txn->ids, schema, name);
    lk_idorder_entry_id(txn->ids, schema, name, nt.id);
    lk_idorder_entry_created(txn->ids, schema, name);
    lk_txn_view_dirty(txn, nt.id);
    nt.begin = txn->snapshot_id;
    for (size_t i = 0; i < nt.ncols; i++)
        set_begin(&nt.cols[i], txn->snapshot_id);
    nt.uuid = uuid_v7();
    nt.path = dir_for(name, nt.uuid);
    nt.path_rel = 1;
    int64_t sv = txn->cat.schema_version + 1;
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, '%s', %lld, NULL, %lld, ", (long long)nt.id, nt.uuid,
               (long long)txn->snapshot_id, (long long)s->id);
    quote_literal(&b, name);
    buf_puts(&b, ", ");
    quote_literal(&b, nt.path);
    buf_puts(&b, ", true)");
    lk_txn_row(txn, "ducklake_table", "%s", buf_cstr(&b));
    buf_free(&b);
    for (size_t i = 0; i < nt.ncols; i++)
        column_rows(lake, &nt, &nt.cols[i]);
    if (limit > 0 && lk_table_inlinable(&nt))
        inlined_table(lake, &nt, sv);
    lk_txn_schema_changed(txn, nt.id);
    lk_txn_row(txn, "ducklake_schema_versions", "(%lld, %lld, %lld)", (long long)txn->snapshot_id,
               (long long)sv, (long long)nt.id);
    token_name(txn, "created_table", schema, name);
    txn->catalog_changed = 1;
    *table_id = nt.id;
    *lk_catalog_add_table(&txn->cat) = nt;
    return 0;
}

/* ---- ALTER TABLE ---- */

static lk_column *top_column(lk_table *t, const char *name, size_t *index)
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

static void end_column_rows(lk_lake *lake, const lk_table *t, const lk_column *c, int recursive)
{
    lk_txn_sql(lake->txn,
               "UPDATE %s.ducklake_column SET end_snapshot = %lld WHERE table_id = %lld AND "
               "column_id = %lld AND end_snapshot IS NULL",
               lake->meta, (long long)lake->txn->snapshot_id, (long long)t->id, (long long)c->id);
    for (size_t i = 0; recursive && i < c->nchildren; i++)
        end_column_rows(lake, t, &c->children[i], 1);
}

/* Ends the column's live row and writes its new version (same id). */
static void rewrite_column_row(lk_lake *lake, const lk_table *t, lk_column *c)
{
    end_column_rows(lake, t, c, 0);
    lk_column copy = *c;
    copy.nchildren = 0; /* children rows stay as they are */
    c->begin = lake->txn->snapshot_id;
    column_rows(lake, t, &copy);
}

static int64_t next_column_id(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    char *q = xasprintf("SELECT COALESCE(max(column_id), 0) FROM %s.ducklake_column WHERE "
                        "table_id = %lld",
                        lake->meta, (long long)t->id);
    int64_t m = 0;
    if (duck_query_int64(&m, NULL, con, q) != 0)
        tarn_error_clear();
    free(q);
    int64_t model = lk_table_max_column_id(t);
    return (m > model ? m : model) + 1;
}

/* Records, once per table and commit, that the table's layout changed:
 * a schema_versions row and, when the columns themselves changed and the
 * table inlines, a new inlined-data table with the new columns (DuckLake
 * keeps one inlined table per column layout; default and NOT NULL changes
 * keep the layout; a layout with a GEOMETRY column gets none). */
static void layout_changed(lk_lake *lake, lk_table *t, int new_columns)
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
        inlined_table(lake, t, sv);
    }
    free(name);
    txn->catalog_changed = 1;
}

static void altered(lk_lake *lake, const lk_table *t)
{
    char *tok = xasprintf("altered_table:%lld", (long long)t->id);
    lk_txn_change(lake->txn, tok);
    free(tok);
    lake->txn->catalog_changed = 1;
}

/* DuckLake allows a type change when the new type is what DuckDB would
 * combine the two into (LogicalType::TryGetMaxLogicalType): TINYINT →
 * HUGEINT, INTEGER → DOUBLE, TIMESTAMP → TIMESTAMPTZ, … but not INTEGER →
 * VARCHAR or DOUBLE → FLOAT. DuckDB answers through a list of both. */
static int widening_ok(duckdb_connection con, const lk_column *from, const lk_column *to)
{
    if (strcmp(from->type, to->type) == 0)
        return 1;
    tarn_buf a = {0}, b = {0};
    lk_type_to_sql(&a, from);
    lk_type_to_sql(&b, to);
    char *q = xasprintf("SELECT typeof([NULL::%s, NULL::%s][1]) = typeof(NULL::%s)", buf_cstr(&a),
                        buf_cstr(&b), buf_cstr(&b));
    char *ok = NULL;
    if (duck_query_string(&ok, con, q) != 0)
        tarn_error_clear(); /* no common type: not a promotion */
    int yes = ok && strcmp(ok, "true") == 0;
    free(ok);
    free(q);
    buf_free(&a);
    buf_free(&b);
    return yes;
}

static int shape_column(lk_column *out, duckdb_connection con, const char *shape)
{
    lk_table tmp = {0};
    int rc = read_shape(&tmp, con, shape);
    if (!rc)
        rc = read_constraints(&tmp, con, "__tarn_shape");
    if (!rc && tmp.ncols != 1)
        rc = tarn_error_set(TARN_EINVALID, "expected one column definition");
    if (!rc)
        lk_column_copy(out, &tmp.cols[0]);
    lk_table_free(&tmp);
    return rc;
}

static void set_begin(lk_column *c, int64_t snapshot)
{
    c->begin = snapshot;
    for (size_t i = 0; i < c->nchildren; i++)
        set_begin(&c->children[i], snapshot);
}

static void renumber(lk_column *c, int64_t *next, int64_t parent)
{
    c->id = (*next)++;
    c->parent = parent;
    for (size_t i = 0; i < c->nchildren; i++)
        renumber(&c->children[i], next, c->id);
}

/* The column at `path` (names from the top level down), or NULL. */
static lk_column *column_at(lk_table *t, const char *const *path, size_t n)
{
    lk_column *cols = t->cols;
    size_t ncols = t->ncols;
    lk_column *c = NULL;
    for (size_t i = 0; i < n; i++) {
        c = NULL;
        for (size_t k = 0; k < ncols; k++)
            if (strcasecmp(cols[k].name, path[i]) == 0)
                c = &cols[k];
        if (!c)
            return NULL;
        cols = c->children;
        ncols = c->nchildren;
    }
    return c;
}

static void mark_added_field(lk_column *c)
{
    /* DuckLake records fields added to a struct as NOT NULL (measured) */
    c->nulls_allowed = 0;
    for (size_t i = 0; i < c->nchildren; i++)
        mark_added_field(&c->children[i]);
}

/* ADD COLUMN s.f / DROP COLUMN s.f / RENAME COLUMN s.f TO g on a field of
 * a STRUCT (through list elements and map values: ls.element.f). */
static int alter_nested(lk_lake *lake, duckdb_connection con, lk_table *t, const lk_alter *op)
{
    lk_column *parent = column_at(t, op->path, op->npath - 1);
    const char *field = op->path[op->npath - 1];
    if (!parent || strcmp(parent->type, "struct") != 0)
        return tarn_error_set(TARN_EINVALID,
                              "Binder Error: \"%s\" is not a STRUCT column of table %s: cannot "
                              "alter its field \"%s\"",
                              op->path[op->npath - 2], t->name, field);
    lk_column *c = column_at(t, op->path, op->npath);
    if (op->kind == LK_ALTER_ADD_COLUMN) {
        if (c)
            return op->if_not_exists
                       ? 0
                       : tarn_error_set(TARN_EINVALID, "Catalog Error: field %s already exists",
                                        field);
        lk_column nc;
        int rc = shape_column(&nc, con, op->shape);
        if (rc)
            return rc;
        int64_t next = next_column_id(lake, con, t);
        renumber(&nc, &next, parent->id);
        mark_added_field(&nc);
        set_begin(&nc, lake->txn->snapshot_id);
        parent->children = xrealloc(parent->children, (parent->nchildren + 1) * sizeof(lk_column));
        parent->children[parent->nchildren++] = nc;
        column_rows(lake, t, &parent->children[parent->nchildren - 1]);
        return 0;
    }
    if (!c)
        return op->if_exists ? 0
                             : tarn_error_set(TARN_EINVALID,
                                              "Binder Error: field \"%s\" does not exist", field);
    if (op->kind == LK_ALTER_DROP_COLUMN) {
        if (parent->nchildren == 1)
            return tarn_error_set(TARN_EINVALID, "cannot drop the last field of a STRUCT");
        end_column_rows(lake, t, c, 1);
        size_t idx = (size_t)(c - parent->children);
        lk_column_free(c);
        memmove(c, c + 1, (parent->nchildren - idx - 1) * sizeof(lk_column));
        parent->nchildren--;
        return 0;
    }
    if (op->kind == LK_ALTER_RENAME_COLUMN) {
        free(c->name);
        c->name = xstrdup(op->new_name);
        /* … and a renamed field's new row is NOT NULL without a default
         * type (measured) */
        c->nulls_allowed = 0;
        free(c->default_value_type);
        c->default_value_type = xstrdup("");
        rewrite_column_row(lake, t, c);
        return 0;
    }
    return tarn_error_set(TARN_EUNSUPPORTED, "this change of a STRUCT field is not supported");
}

/* Applies an ALTER to the transaction's pending inlined rows of `t` too,
 * so they follow the table's new layout. */
static int alter_pending(lk_lake *lake, duckdb_connection con, const lk_table *t,
                         const char *action)
{
    if (!lk_write_pending_exists(lake, con, t->id))
        return 0;
    char *pins = lk_txn_pending_inserts(lake, t->id);
    char *sql = xasprintf("ALTER TABLE %s %s", pins, action);
    int rc = duck_exec(con, sql);
    free(sql);
    free(pins);
    return rc;
}

/* The rows this transaction inserted before an ADD COLUMN … DEFAULT now
 * hold the default: DuckLake's table statistics count it (its pending
 * rows are altered in place), so fold the pending rows' stats in again
 * (table-level stats keep bounds and null flags, not counts). */
static int pending_default_stats(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    lk_table_delta *d = lk_txn_delta(lake, con, t->id);
    char *pins = lk_txn_pending_inserts(lake, t->id);
    lk_stats_set st;
    lk_stats_init(&st, t);
    int rc = lk_stats_from_rows(&st, con, pins, t);
    if (!rc)
        rc = lk_stats_accumulate(&d->stats, &st, con);
    lk_stats_free(&st);
    free(pins);
    return rc;
}

static int alter_add(lk_lake *lake, duckdb_connection con, lk_table *t, const lk_alter *op)
{
    lk_column nc;
    int rc = shape_column(&nc, con, op->shape);
    if (rc)
        return rc;
    if (top_column(t, nc.name, NULL)) {
        lk_column_free(&nc);
        if (op->if_not_exists)
            return 0;
        return tarn_error_set(TARN_EINVALID,
                              "Catalog Error: Column with name %s already exists in table %s",
                              op->column ? op->column : "", t->name);
    }
    if (nc.default_value_type && strcmp(nc.default_value_type, "expression") == 0) {
        lk_column_free(&nc);
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "ADD COLUMN with a non-literal default (%s) is not supported by "
                              "DuckLake: use a plain literal such as 42 or 'text'",
                              "the given expression");
    }
    int64_t next = next_column_id(lake, con, t);
    renumber(&nc, &next, -1);
    set_begin(&nc, lake->txn->snapshot_id);
    t->cols = xrealloc(t->cols, (t->ncols + 1) * sizeof(lk_column));
    t->cols[t->ncols++] = nc;
    column_rows(lake, t, &t->cols[t->ncols - 1]);
    lk_column *c = &t->cols[t->ncols - 1];
    tarn_buf a = {0};
    buf_puts(&a, "ADD COLUMN ");
    quote_ident(&a, c->name);
    buf_putc(&a, ' ');
    lk_type_to_sql(&a, c);
    if (c->initial_default) {
        buf_puts(&a, " DEFAULT ");
        quote_literal(&a, c->initial_default);
    }
    int rc2 = alter_pending(lake, con, t, buf_cstr(&a));
    buf_free(&a);
    if (!rc2 && c->initial_default && lk_write_pending_exists(lake, con, t->id))
        rc2 = pending_default_stats(lake, con, t);
    return rc2;
}

/* A sort order names columns: after a rename it names the new one, and
 * DuckLake writes it again under a new sort id. */
static int sort_renamed(lk_lake *lake, lk_table *t, const char *old_name, const char *new_name)
{
    int changed = 0;
    int rc = lk_sort_rename_column(t, old_name, new_name, &changed);
    if (rc || !changed)
        return rc;
    lk_txn *txn = lake->txn;
    t->sort_id = lk_txn_new_catalog_id(txn);
    lk_schema *sc = lk_catalog_schema_by_id(&txn->cat, t->schema_id);
    lk_idorder_entry_id(txn->ids, sc ? sc->name : "main", t->name, t->sort_id);
    lk_ids_add(&txn->sort_changed, &txn->nsort_changed, t->id);
    return 0;
}

/* The type error of a change DuckLake does not allow. */
static int not_widening(const char *name, const lk_column *from, const lk_column *to)
{
    tarn_buf a = {0}, b = {0};
    lk_type_to_sql(&a, from);
    lk_type_to_sql(&b, to);
    int rc = tarn_error_set(TARN_EINVALID,
                            "Catalog Error: Cannot change type of column %s from %s to %s - only "
                            "widening type promotions are allowed",
                            name, buf_cstr(&a), buf_cstr(&b));
    buf_free(&a);
    buf_free(&b);
    return rc;
}

static int evolve(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_column *src,
                  const lk_column *target, int64_t *next);

static int kind_error(const lk_column *src, const lk_column *target)
{
    tarn_buf a = {0}, b = {0};
    lk_type_to_sql(&a, src);
    lk_type_to_sql(&b, target);
    int rc = tarn_error_set(TARN_EUNSUPPORTED,
                            "Not implemented Error: Type evolution is not supported from type %s "
                            "to type %s",
                            buf_cstr(&a), buf_cstr(&b));
    buf_free(&a);
    buf_free(&b);
    return rc;
}

/* The errors evolve() would meet, found before it writes anything. */
static int evolve_check(duckdb_connection con, const lk_column *src, const lk_column *target)
{
    if (strcmp(src->type, target->type) != 0)
        return kind_error(src, target);
    for (size_t i = 0; i < target->nchildren; i++) {
        const lk_column *tc = &target->children[i];
        for (size_t k = 0; k < src->nchildren; k++) {
            const lk_column *sc = &src->children[k];
            if (strcasecmp(sc->name, tc->name) != 0)
                continue;
            int rc = 0;
            if (sc->nchildren)
                rc = evolve_check(con, sc, tc);
            else if (strcmp(sc->type, tc->type) != 0 &&
                     (lk_type_is_nested(tc->type) || !widening_ok(con, sc, tc)))
                rc = not_widening(sc->name, sc, tc);
            if (rc)
                return rc;
            break;
        }
    }
    return 0;
}

/* A field of the new type that the old one has under the same name:
 * DuckLake's TypePromotion. A nested field evolves in turn; a leaf of
 * another type is promoted (widening only) under its id, its new row NOT
 * NULL without a default type, as DuckLake writes a promoted field. */
static int promote(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_column *src,
                   const lk_column *target, int64_t *next)
{
    if (src->nchildren)
        return evolve(lake, con, t, src, target, next);
    if (strcmp(src->type, target->type) == 0)
        return 0;
    if (lk_type_is_nested(target->type) || !widening_ok(con, src, target))
        return not_widening(src->name, src, target);
    free(src->type);
    src->type = xstrdup(target->type);
    src->nulls_allowed = 0;
    free(src->default_value_type);
    src->default_value_type = xstrdup("");
    free(src->initial_default);
    src->initial_default = NULL;
    rewrite_column_row(lake, t, src);
    return 0;
}

/* SET DATA TYPE from one nested type to another of the same kind
 * (DuckLake's GetNestedEvolution): children are matched by name; a new one
 * gets new column ids (and rows, nullable), a missing one's rows end, a
 * matched one is promoted. The parent's own row stays. */
static int evolve(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_column *src,
                  const lk_column *target, int64_t *next)
{
    if (strcmp(src->type, target->type) != 0)
        return kind_error(src, target);
    lk_column *kids = xcalloc(target->nchildren + 1, sizeof(lk_column));
    int *used = xcalloc(src->nchildren + 1, sizeof(int));
    int rc = 0;
    size_t n = 0;
    for (size_t i = 0; i < target->nchildren && !rc; i++) {
        const lk_column *tc = &target->children[i];
        size_t k = 0;
        while (k < src->nchildren && (used[k] || strcasecmp(src->children[k].name, tc->name) != 0))
            k++;
        if (k < src->nchildren) {
            used[k] = 1;
            rc = promote(lake, con, t, &src->children[k], tc, next);
            kids[n++] = src->children[k];
            continue;
        }
        lk_column_copy(&kids[n], tc);
        renumber(&kids[n], next, src->id);
        set_begin(&kids[n], lake->txn->snapshot_id);
        column_rows(lake, t, &kids[n]);
        n++;
    }
    for (size_t k = 0; k < src->nchildren; k++) {
        if (used[k])
            continue;
        if (!rc)
            end_column_rows(lake, t, &src->children[k], 1);
        lk_column_free(&src->children[k]);
    }
    free(used);
    free(src->children);
    src->children = kids;
    src->nchildren = n;
    return rc;
}

/* SET DATA TYPE of a nested column to another nested type: its fields
 * evolve (evolve()), the pending rows of this transaction follow. */
static int evolve_column(lk_lake *lake, duckdb_connection con, lk_table *t, lk_column *c,
                         lk_column *target)
{
    int rc = evolve_check(con, c, target);
    int64_t next = next_column_id(lake, con, t);
    if (!rc)
        rc = evolve(lake, con, t, c, target, &next);
    lk_column_free(target);
    if (rc)
        return rc;
    tarn_buf a = {0};
    buf_puts(&a, "ALTER COLUMN ");
    quote_ident(&a, c->name);
    buf_puts(&a, " SET DATA TYPE ");
    lk_type_to_sql(&a, c);
    rc = alter_pending(lake, con, t, buf_cstr(&a));
    buf_free(&a);
    return rc;
}

static int alter_column(lk_lake *lake, duckdb_connection con, lk_table *t, const lk_alter *op)
{
    size_t idx = 0;
    lk_column *c = top_column(t, op->column, &idx);
    if (!c) {
        if (op->if_exists)
            return 0;
        return tarn_error_set(TARN_EINVALID,
                              "Binder Error: Table \"%s\" does not have a column with name \"%s\"",
                              t->name, op->column);
    }
    lk_column nc;
    int rc = 0;
    switch (op->kind) {
    case LK_ALTER_DROP_COLUMN:
        if (t->ncols == 1)
            return tarn_error_set(TARN_EINVALID,
                                  "Catalog Error: Cannot drop column: table only has one column "
                                  "remaining!");
        for (size_t k = 0; k < t->nkeys; k++)
            if (t->keys[k].column_id == c->id)
                return tarn_error_set(TARN_EINVALID,
                                      "Catalog Error: Cannot drop column \"%s\" - the table is "
                                      "partitioned by this column. Reset or change the "
                                      "partitioning on this table in order to drop this column",
                                      c->name);
        rc = lk_sort_uses_column(t, c->name);
        if (rc)
            return rc < 0 ? rc
                          : tarn_error_set(TARN_EINVALID,
                                           "Catalog Error: Cannot drop column \"%s\" - the table "
                                           "is sorted by this column. Reset or change the sort "
                                           "order on this table in order to drop this column",
                                           c->name);
        end_column_rows(lake, t, c, 1);
        {
            tarn_buf a = {0};
            buf_puts(&a, "DROP COLUMN ");
            quote_ident(&a, c->name);
            rc = alter_pending(lake, con, t, buf_cstr(&a));
            buf_free(&a);
            if (rc)
                return rc;
        }
        lk_column_free(c);
        memmove(c, c + 1, (t->ncols - idx - 1) * sizeof(lk_column));
        t->ncols--;
        return 0;
    case LK_ALTER_RENAME_COLUMN:
        if (top_column(t, op->new_name, NULL))
            return tarn_error_set(
                TARN_EINVALID, "Catalog Error: Column with name %s already exists", op->new_name);
        {
            tarn_buf a = {0};
            buf_puts(&a, "RENAME COLUMN ");
            quote_ident(&a, c->name);
            buf_puts(&a, " TO ");
            quote_ident(&a, op->new_name);
            rc = alter_pending(lake, con, t, buf_cstr(&a));
            buf_free(&a);
            if (rc)
                return rc;
        }
        rc = sort_renamed(lake, t, c->name, op->new_name);
        if (rc)
            return rc;
        free(c->name);
        c->name = xstrdup(op->new_name);
        break;
    case LK_ALTER_SET_TYPE:
        rc = shape_column(&nc, con, op->shape);
        if (rc)
            return rc;
        if (lk_type_is_nested(c->type) && lk_type_is_nested(nc.type))
            return evolve_column(lake, con, t, c, &nc);
        if (lk_type_is_nested(c->type) || lk_type_is_nested(nc.type) ||
            !widening_ok(con, c, &nc)) {
            tarn_buf a = {0}, b = {0};
            lk_type_to_sql(&a, c);
            lk_type_to_sql(&b, &nc);
            rc = tarn_error_set(TARN_EINVALID,
                                "Catalog Error: Cannot change type of column %s from %s to %s - "
                                "only widening type promotions are allowed",
                                c->name, buf_cstr(&a), buf_cstr(&b));
            buf_free(&a);
            buf_free(&b);
            lk_column_free(&nc);
            return rc;
        }
        free(c->type);
        c->type = xstrdup(nc.type);
        lk_column_free(&nc);
        {
            tarn_buf a = {0};
            buf_puts(&a, "ALTER COLUMN ");
            quote_ident(&a, c->name);
            buf_puts(&a, " SET DATA TYPE ");
            lk_type_to_sql(&a, c);
            rc = alter_pending(lake, con, t, buf_cstr(&a));
            buf_free(&a);
            if (rc)
                return rc;
        }
        break;
    case LK_ALTER_SET_DEFAULT:
        rc = shape_column(&nc, con, op->shape);
        if (rc)
            return rc;
        if (nc.default_value_type && strcmp(nc.default_value_type, "expression") == 0) {
            lk_column_free(&nc);
            return tarn_error_set(TARN_EUNSUPPORTED,
                                  "SET DEFAULT with a non-literal default is not supported by "
                                  "DuckLake: use a plain literal");
        }
        free(c->default_value);
        free(c->default_value_type);
        c->default_value = nc.default_value ? xstrdup(nc.default_value) : xstrdup("NULL");
        c->default_value_type = xstrdup("literal");
        lk_column_free(&nc);
        break;
    case LK_ALTER_DROP_DEFAULT:
        free(c->default_value);
        free(c->default_value_type);
        c->default_value = xstrdup("NULL");
        c->default_value_type = xstrdup("literal");
        break;
    case LK_ALTER_SET_NOT_NULL:
        if (!c->nulls_allowed)
            return tarn_error_set(TARN_EINVALID,
                                  "Catalog Error: Cannot SET NOT NULL on column %s - it already "
                                  "has a NOT NULL constraint",
                                  c->name);
        c->nulls_allowed = 0;
        break;
    case LK_ALTER_DROP_NOT_NULL:
        if (c->nulls_allowed)
            return tarn_error_set(TARN_EINVALID,
                                  "Catalog Error: Cannot DROP NULL on column %s - it has no NOT "
                                  "NULL constraint defined",
                                  c->name);
        c->nulls_allowed = 1;
        break;
    default:
        break;
    }
    rewrite_column_row(lake, t, c);
    return 0;
}

static int rename_table(lk_lake *lake, lk_table *t, const char *new_name)
{
    lk_txn *txn = lake->txn;
    const lk_table *other = lk_catalog_table(&txn->cat, t->schema_id, new_name);
    if (other && other->id != t->id) /* (itself: a change of case only) */
        return tarn_error_set(TARN_EINVALID, "Table with name \"%s\" already exists", new_name);
    lk_txn_sql(txn,
               "UPDATE %s.ducklake_table SET end_snapshot = %lld WHERE end_snapshot IS NULL AND "
               "table_id = %lld",
               lake->meta, (long long)txn->snapshot_id, (long long)t->id);
    free(t->name);
    t->name = xstrdup(new_name);
    t->begin = txn->snapshot_id;
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, '%s', %lld, NULL, %lld, ", (long long)t->id, t->uuid,
               (long long)txn->snapshot_id, (long long)t->schema_id);
    quote_literal(&b, new_name);
    buf_puts(&b, ", ");
    quote_literal(&b, t->path);
    buf_printf(&b, ", %s)", t->path_rel ? "true" : "false");
    lk_txn_row(txn, "ducklake_table", "%s", buf_cstr(&b));
    buf_free(&b);
    lk_schema *sc = lk_catalog_schema_by_id(&txn->cat, t->schema_id);
    token_name(txn, "created_table", sc ? sc->name : "main", new_name);
    layout_changed(lake, t, 1);
    return 0;
}

static int same_spec(const lk_table *t, const int64_t *ids, const lk_alter *op)
{
    if (t->nkeys != op->nkeys)
        return 0;
    for (size_t i = 0; i < t->nkeys; i++)
        if (t->keys[i].column_id != ids[i] || strcmp(t->keys[i].transform, op->key_transforms[i]))
            return 0;
    return 1;
}

/* SET PARTITIONED BY / RESET PARTITIONED BY: the live spec ends and a new
 * one begins (RESET writes a spec with no keys). Files keep the spec they
 * were written under. */
static int set_partition(lk_lake *lake, lk_table *t, const lk_alter *op)
{
    lk_txn *txn = lake->txn;
    int64_t *ids = xcalloc(op->nkeys ? op->nkeys : 1, sizeof(int64_t));
    for (size_t i = 0; i < op->nkeys; i++) {
        lk_column *c = top_column(t, op->key_columns[i], NULL);
        int32_t buckets = 0; /* bucket(N) hashes a nested value by its text, as DuckLake does */
        if (!c ||
            (lk_type_is_nested(c->type) && !lk_bucket_parse(op->key_transforms[i], &buckets))) {
            free(ids);
            return tarn_error_set(TARN_EINVALID,
                                  "cannot partition by \"%s\": not a top-level column of a "
                                  "primitive type in table %s",
                                  op->key_columns[i], t->name);
        }
        ids[i] = c->id;
    }
    if (same_spec(t, ids, op)) {
        free(ids);
        return 1; /* identical spec: nothing changes */
    }
    lk_txn_sql(txn,
               "UPDATE %s.ducklake_partition_info SET end_snapshot = %lld WHERE table_id = %lld "
               "AND end_snapshot IS NULL",
               lake->meta, (long long)txn->snapshot_id, (long long)t->id);
    int64_t pid = lk_txn_new_catalog_id(txn);
    lk_schema *sc = lk_catalog_schema_by_id(&txn->cat, t->schema_id);
    lk_idorder_entry_id(txn->ids, sc ? sc->name : "main", t->name, pid);
    lk_txn_row(txn, "ducklake_partition_info", "(%lld, %lld, %lld, NULL)", (long long)pid,
               (long long)t->id, (long long)txn->snapshot_id);
    for (size_t i = 0; i < t->nkeys; i++)
        free(t->keys[i].transform);
    free(t->keys);
    t->keys = op->nkeys ? xcalloc(op->nkeys, sizeof(lk_partkey)) : NULL;
    t->nkeys = op->nkeys;
    t->partition_id = op->nkeys ? pid : -1;
    for (size_t i = 0; i < op->nkeys; i++) {
        t->keys[i].column_id = ids[i];
        t->keys[i].transform = xstrdup(op->key_transforms[i]);
        tarn_buf b = {0};
        buf_printf(&b, "(%lld, %lld, %zu, %lld, ", (long long)pid, (long long)t->id, i,
                   (long long)ids[i]);
        quote_literal(&b, op->key_transforms[i]);
        buf_putc(&b, ')');
        lk_txn_row(txn, "ducklake_partition_column", "%s", buf_cstr(&b));
        buf_free(&b);
    }
    free(ids);
    return 0;
}

/* SET SORTED BY / RESET SORTED BY: the working model takes the new order
 * (keys rendered as DuckDB does, every column checked); the catalog rows
 * are written at commit from the final order (lk_sort_commit), as DuckLake
 * writes only a transaction's last order of a table. Each SET takes a
 * sort id, as DuckLake's does at commit. */
static int set_sort(lk_lake *lake, lk_table *t, const lk_alter *op)
{
    lk_txn *txn = lake->txn;
    size_t n = op->nsort_keys;
    lk_sortkey *keys = xcalloc(n ? n : 1, sizeof(lk_sortkey));
    for (size_t i = 0; i < n; i++) {
        keys[i] = op->sort_keys[i];
        keys[i].expr = xstrdup(op->sort_keys[i].expr);
        keys[i].dialect = (char *)"duckdb";
    }
    int rc = lk_sort_normalize(keys, n, t);
    if (!rc) {
        int64_t id = -1;
        if (n) {
            id = lk_txn_new_catalog_id(txn);
            lk_schema *sc = lk_catalog_schema_by_id(&txn->cat, t->schema_id);
            lk_idorder_entry_id(txn->ids, sc ? sc->name : "main", t->name, id);
        }
        lk_table_set_sorts(t, id, keys, n);
        lk_ids_add(&txn->sort_changed, &txn->nsort_changed, t->id);
    }
    for (size_t i = 0; i < n; i++)
        free(keys[i].expr);
    free(keys);
    return rc;
}

static int check_not_null(lk_lake *lake, duckdb_connection con, const lk_table *t,
                          const char *column)
{
    lk_schema *sc = lk_catalog_schema_by_id(&lake->txn->cat, t->schema_id);
    tarn_buf b = {0};
    buf_puts(&b, "SELECT count(*) FROM ");
    quote_qualified(&b, lake->alias, sc ? sc->name : "main", t->name);
    buf_puts(&b, " WHERE ");
    quote_ident(&b, column);
    buf_puts(&b, " IS NULL");
    int64_t n = 0;
    int rc = duck_query_int64(&n, NULL, con, buf_cstr(&b));
    buf_free(&b);
    if (!rc && n > 0)
        rc = tarn_error_set(TARN_EINVALID,
                            "Constraint Error: cannot SET NOT NULL on column \"%s\": it has %lld "
                            "NULL values",
                            column, (long long)n);
    return rc;
}

int lk_alter_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                   const lk_alter *op)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    lk_table *t =
        lk_catalog_table_edit(&txn->cat, s ? lk_catalog_table(&txn->cat, s->id, name) : NULL);
    if (!t)
        return tarn_error_set(TARN_ENOTFOUND,
                              "Catalog Error: Table with name %s does not exist in schema \"%s\" "
                              "of lake \"%s\"",
                              name, schema, lake->alias);
    if (op->kind == LK_ALTER_RENAME_TABLE) {
        int rc = rename_table(lake, t, op->new_name);
        if (!rc) {
            lk_idorder_entry_renamed(txn->ids, schema, name, op->new_name);
            lk_txn_views_all(txn);
        }
        return rc;
    }
    lk_idorder_entry_touched(txn->ids, schema, name);
    lk_txn_view_dirty(txn, t->id);
    if (op->kind == LK_ALTER_SET_SORT) {
        int rc = set_sort(lake, t, op);
        if (!rc)
            altered(lake, t);
        return rc;
    }
    if (op->kind == LK_ALTER_SET_PARTITION) {
        int rc = set_partition(lake, t, op);
        if (rc)
            return rc < 0 ? rc : 0;
        layout_changed(lake, t, 1);
        altered(lake, t);
        return 0;
    }
    int rc = 0;
    if (op->kind == LK_ALTER_SET_NOT_NULL)
        rc = check_not_null(lake, con, t, op->column);
    if (!rc && op->npath > 1)
        rc = alter_nested(lake, con, t, op);
    else if (!rc)
        rc = op->kind == LK_ALTER_ADD_COLUMN ? alter_add(lake, con, t, op)
                                             : alter_column(lake, con, t, op);
    if (rc)
        return rc;
    int columns_changed = op->kind == LK_ALTER_ADD_COLUMN || op->kind == LK_ALTER_DROP_COLUMN ||
                          op->kind == LK_ALTER_RENAME_COLUMN || op->kind == LK_ALTER_SET_TYPE;
    layout_changed(lake, t, columns_changed);
    altered(lake, t);
    return 0;
}

/* ---- views ---- */

static void drop_view_rows(lk_lake *lake, const lk_view *v)
{
    lk_txn *txn = lake->txn;
    lk_txn_sql(txn,
               "UPDATE %s.ducklake_view SET end_snapshot = %lld WHERE end_snapshot IS NULL AND "
               "view_id = %lld",
               lake->meta, (long long)txn->snapshot_id, (long long)v->id);
    lk_txn_sql(txn,
               "UPDATE %s.ducklake_tag SET end_snapshot = %lld WHERE end_snapshot IS NULL AND "
               "object_id = %lld",
               lake->meta, (long long)txn->snapshot_id, (long long)v->id);
    char *tok = xasprintf("dropped_view:%lld", (long long)v->id);
    lk_txn_change(txn, tok);
    free(tok);
    txn->catalog_changed = 1;
}

int lk_drop_view(lk_lake *lake, const char *schema, const char *name, int if_exists)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    lk_view *v = s ? lk_catalog_view(&txn->cat, s->id, name) : NULL;
    if (!v) {
        if (if_exists)
            return 0;
        return tarn_error_set(TARN_ENOTFOUND,
                              "Catalog Error: View with name %s does not exist in lake \"%s\"",
                              name, lake->alias);
    }
    drop_view_rows(lake, v);
    lk_idorder_entry_dropped(txn->ids, schema, name);
    lk_txn_view_dropped(txn, schema, name); /* alone: views reading it stay */
    lk_catalog_remove_view(&txn->cat, (size_t)(v - txn->cat.views));
    return 0;
}

int lk_create_view(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                   const char *sql, const char *aliases, int or_replace, int if_not_exists)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    if (!s)
        return tarn_error_set(TARN_ENOTFOUND, "Schema with name %s does not exist in lake \"%s\"",
                              schema, lake->alias);
    if (lk_catalog_table(&txn->cat, s->id, name))
        return tarn_error_set(TARN_EINVALID,
                              "Catalog Error: a table named \"%s\" already exists in lake \"%s\"",
                              name, lake->alias);
    lk_view *old = lk_catalog_view(&txn->cat, s->id, name);
    if (old && if_not_exists)
        return 0;
    if (old && !or_replace)
        return tarn_error_set(TARN_EINVALID, "Catalog Error: View with name \"%s\" already exists",
                              name);
    if (old) {
        drop_view_rows(lake, old);
        lk_idorder_entry_dropped(txn->ids, schema, name);
        lk_catalog_remove_view(&txn->cat, (size_t)(old - txn->cat.views));
    }
    lk_view *v = lk_catalog_add_view(&txn->cat);
    v->id = lk_txn_new_catalog_id(txn);
    lk_idorder_entry_touched(txn->ids, schema, name);
    lk_idorder_entry_id(txn->ids, schema, name, v->id);
    lk_idorder_entry_created(txn->ids, schema, name);
    lk_txn_views_all(txn);
    v->begin = txn->snapshot_id;
    v->schema_id = s->id;
    v->uuid = uuid_v7();
    v->name = xstrdup(name);
    v->sql = xstrdup(sql);
    v->aliases = xstrdup(aliases);
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, '%s', %lld, NULL, %lld, ", (long long)v->id, v->uuid,
               (long long)txn->snapshot_id, (long long)s->id);
    quote_literal(&b, name);
    buf_puts(&b, ", 'duckdb', ");
    quote_literal(&b, sql);
    buf_puts(&b, ", ");
    quote_literal(&b, aliases);
    buf_putc(&b, ')');
    lk_txn_row(txn, "ducklake_view", "%s", buf_cstr(&b));
    buf_free(&b);
    token_name(txn, "created_view", schema, name);
    txn->catalog_changed = 1;
    return 0;
}

/* ---- comments ---- */

int lk_comment(lk_lake *lake, const char *schema, const char *name, const char *column,
               const char *text)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    lk_table *t =
        lk_catalog_table_edit(&txn->cat, s ? lk_catalog_table(&txn->cat, s->id, name) : NULL);
    if (!t)
        return tarn_error_set(TARN_ENOTFOUND,
                              "Catalog Error: Table with name %s does not exist in lake \"%s\"",
                              name, lake->alias);
    lk_column *c = column ? top_column(t, column, NULL) : NULL;
    if (column && !c)
        return tarn_error_set(TARN_EINVALID,
                              "Binder Error: Table \"%s\" does not have a column with name \"%s\"",
                              name, column);
    tarn_buf b = {0};
    if (c) {
        lk_txn_sql(txn,
                   "UPDATE %s.ducklake_column_tag SET end_snapshot = %lld WHERE table_id = %lld "
                   "AND column_id = %lld AND \"key\" = 'comment' AND end_snapshot IS NULL",
                   lake->meta, (long long)txn->snapshot_id, (long long)t->id, (long long)c->id);
        buf_printf(&b, "(%lld, %lld, %lld, NULL, 'comment', ", (long long)t->id, (long long)c->id,
                   (long long)txn->snapshot_id);
    } else {
        lk_txn_sql(txn,
                   "UPDATE %s.ducklake_tag SET end_snapshot = %lld WHERE object_id = %lld AND "
                   "\"key\" = 'comment' AND end_snapshot IS NULL",
                   lake->meta, (long long)txn->snapshot_id, (long long)t->id);
        buf_printf(&b, "(%lld, %lld, NULL, 'comment', ", (long long)t->id,
                   (long long)txn->snapshot_id);
    }
    quote_literal(&b, text);
    buf_putc(&b, ')');
    if (text)
        lk_txn_row(txn, c ? "ducklake_column_tag" : "ducklake_tag", "%s", buf_cstr(&b));
    buf_free(&b);
    lk_idorder_entry_touched(txn->ids, schema, name);
    lk_txn_view_dirty(txn, t->id);
    char **slot = c ? &c->comment : &t->comment;
    free(*slot);
    *slot = text ? xstrdup(text) : NULL;
    altered(lake, t);
    return 0;
}

/* ---- ALTER VIEW / COMMENT ON VIEW ---- */

static lk_view *find_view(lk_lake *lake, const char *schema, const char *name, const char *verb)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = lk_catalog_schema(&txn->cat, schema);
    lk_view *v = s ? lk_catalog_view(&txn->cat, s->id, name) : NULL;
    if (v)
        return v;
    if (s && lk_catalog_table(&txn->cat, s->id, name))
        tarn_error_set(TARN_EINVALID, "Binder Error: Cannot use %s on entry %s - it is not a view",
                       verb, name);
    else
        tarn_error_set(TARN_ENOTFOUND, "Catalog Error: View with name %s does not exist!", name);
    return NULL;
}

/* Replaces change token `from` by `to` (a rename of an object this
 * transaction created: DuckLake names it once, by its final name). */
static void retoken(lk_txn *txn, const char *from, const char *to)
{
    for (size_t i = 0; i < txn->nchange_tokens; i++)
        if (strcmp(txn->change_tokens[i], from) == 0) {
            free(txn->change_tokens[i]);
            txn->change_tokens[i] = xstrdup(to);
        }
}

static char *name_token(const char *kind, const char *schema, const char *name)
{
    tarn_buf b = {0};
    buf_printf(&b, "%s:", kind);
    quote_ident(&b, schema);
    buf_putc(&b, '.');
    quote_ident(&b, name);
    return buf_detach(&b);
}

int lk_rename_view(lk_lake *lake, const char *schema, const char *name, const char *new_name)
{
    lk_txn *txn = lake->txn;
    lk_view *v = find_view(lake, schema, name, "ALTER VIEW");
    if (!v)
        return tarn_error_code();
    if (strcasecmp(name, new_name) != 0 && (lk_catalog_view(&txn->cat, v->schema_id, new_name) ||
                                            lk_catalog_table(&txn->cat, v->schema_id, new_name)))
        return tarn_error_set(TARN_EINVALID,
                              "Catalog Error: Could not rename view \"%s\" to \"%s\": another "
                              "entry with this name already exists!",
                              name, new_name);
    if (v->begin == txn->snapshot_id) {
        /* its live row is this transaction's: DuckLake writes it once,
         * under the final name */
        tarn_buf b = {0};
        buf_printf(&b, "UPDATE %s.ducklake_view SET view_name = ", lake->meta);
        quote_literal(&b, new_name);
        buf_printf(&b, " WHERE view_id = %lld AND begin_snapshot = %lld", (long long)v->id,
                   (long long)txn->snapshot_id);
        lk_txn_sql(txn, "%s", buf_cstr(&b));
        buf_free(&b);
        char *from = name_token("created_view", schema, v->name);
        char *to = name_token("created_view", schema, new_name);
        retoken(txn, from, to);
        free(from);
        free(to);
    } else {
        lk_txn_sql(txn,
                   "UPDATE %s.ducklake_view SET end_snapshot = %lld WHERE end_snapshot IS NULL AND "
                   "view_id = %lld",
                   lake->meta, (long long)txn->snapshot_id, (long long)v->id);
        tarn_buf b = {0};
        buf_printf(&b, "(%lld, '%s', %lld, NULL, %lld, ", (long long)v->id, v->uuid,
                   (long long)txn->snapshot_id, (long long)v->schema_id);
        quote_literal(&b, new_name);
        buf_puts(&b, ", 'duckdb', ");
        quote_literal(&b, v->sql);
        buf_puts(&b, ", ");
        quote_literal(&b, v->aliases);
        buf_putc(&b, ')');
        lk_txn_row(txn, "ducklake_view", "%s", buf_cstr(&b));
        buf_free(&b);
        token_name(txn, "created_view", schema, new_name);
        v->begin = txn->snapshot_id;
    }
    lk_idorder_entry_renamed(txn->ids, schema, v->name, new_name);
    free(v->name);
    v->name = xstrdup(new_name);
    txn->catalog_changed = 1;
    lk_txn_views_all(txn);
    return 0;
}

int lk_comment_view(lk_lake *lake, const char *schema, const char *name, const char *text)
{
    lk_txn *txn = lake->txn;
    lk_view *v = find_view(lake, schema, name, "ALTER VIEW");
    if (!v)
        return tarn_error_code();
    lk_txn_sql(txn,
               "UPDATE %s.ducklake_tag SET end_snapshot = %lld WHERE object_id = %lld AND "
               "\"key\" = 'comment' AND end_snapshot IS NULL",
               lake->meta, (long long)txn->snapshot_id, (long long)v->id);
    if (text) {
        tarn_buf b = {0};
        buf_printf(&b, "(%lld, %lld, NULL, 'comment', ", (long long)v->id,
                   (long long)txn->snapshot_id);
        quote_literal(&b, text);
        buf_putc(&b, ')');
        lk_txn_row(txn, "ducklake_tag", "%s", buf_cstr(&b));
        buf_free(&b);
    }
    free(v->comment);
    v->comment = text ? xstrdup(text) : NULL;
    lk_idorder_entry_touched(txn->ids, schema, name);
    if (v->begin != txn->snapshot_id) { /* a new view is reported as created only */
        char *tok = xasprintf("altered_view:%lld", (long long)v->id);
        lk_txn_change(txn, tok);
        free(tok);
    }
    lk_txn_views_all(txn);
    return 0;
}

int lk_entry_conflict(lk_lake *lake, const char *schema, const char *name, int want_view,
                      const char *action)
{
    const lk_catalog *cat = lk_txn_catalog(lake);
    lk_schema *s = lk_catalog_schema((lk_catalog *)cat, schema);
    if (!s)
        return 0;
    int is_view = lk_catalog_view((lk_catalog *)cat, s->id, name) != NULL;
    int is_table = lk_catalog_table(cat, s->id, name) != NULL;
    if ((want_view && !is_table) || (!want_view && !is_view))
        return 0;
    return tarn_error_set(TARN_EINVALID,
                          "Catalog Error: Existing object %s is of type %s, trying to %s type %s",
                          name, want_view ? "Table" : "View", action, want_view ? "View" : "Table");
}

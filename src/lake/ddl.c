/*
 * ddl.c — CREATE/DROP SCHEMA and TABLE as DuckLake catalog rows (see ddl.h).
 *
 * CREATE SCHEMA / TABLE write ducklake_schema / ducklake_table rows with
 * ids from next_catalog_id, ducklake_column rows (nested columns under
 * parent_column) and, with inlining on, the table's first
 * ducklake_inlined_data_tables row and inlined-data table. DROP ends every
 * live row that names the object (ducklake_table, _column, _data_file,
 * _delete_file, _partition_info, _sort_info, the tags) at the
 * transaction's snapshot; a DROP of an object this transaction created
 * deletes its rows instead, so nothing of it is committed. ALTER TABLE is
 * in ddl_alter.c, views and comments in ddl_view.c; the rows and helpers
 * they all share are in ddl_rows.c (ddl_int.h), below them all.
 *
 * Directory rule (DuckLake's): a schema or table gets the directory
 * `<name>/` when its name is only [A-Za-z0-9_-], else `<uuid>/`, so no
 * name can ever make a path that escapes the data path.
 */
#include "lake/ddl.h"
#include "lake/ddl_int.h"
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
    ddl_path_object_row(txn, "ducklake_schema", s->id, s->uuid, -1, name, s->path, 1);
    ddl_token_name(txn, "created_schema", name, NULL);
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
        ddl_end_rows(lake, TABLES[i], "table_id", t->id);
    ddl_end_rows(lake, "ducklake_tag", "object_id", t->id);
    ddl_changed(txn, "dropped_table", t->id);
}

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
    char *tok = ddl_name_token("created_table", schema, name);
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
    char *tok = ddl_name_token("created_table", schema, t->name);
    lk_txn_unchange(txn, tok);
    free(tok);
}

int lk_drop_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                  int if_exists)
{
    lk_txn *txn = lake->txn;
    const lk_table *t = lk_catalog_table_named(&txn->cat, schema, name);
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
        ddl_drop_view_rows(lake, &txn->cat.views[i]);
        lk_idorder_entry_dropped(txn->ids, name, txn->cat.views[i].name);
        lk_catalog_remove_view(&txn->cat, i);
    }
    ddl_end_rows(lake, "ducklake_schema", "schema_id", sid);
    ddl_changed(txn, "dropped_schema", sid);
    lk_idorder_schema_dropped(txn->ids, name);
    lk_txn_views_all(txn);
    s = lk_catalog_schema(&txn->cat, name);
    lk_catalog_remove_schema(&txn->cat, (size_t)(s - txn->cat.schemas));
    (void)con;
    return 0;
}

/* ---- CREATE TABLE ---- */

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
        rc =
            tarn_error_set(TARN_EUNSUPPORTED,
                           "Invalid Input Error: Collations are not supported in DuckLake storage");
    duck_table_free(&r);
    return rc;
}

static int check_column_names(const lk_table *t, int inlining)
{
    for (size_t i = 0; i < t->ncols; i++) {
        for (size_t j = 0; j < i; j++)
            if (strcasecmp(t->cols[i].name, t->cols[j].name) == 0)
                return tarn_error_set(TARN_EINVALID, "column \"%s\" is defined twice",
                                      t->cols[i].name);
        if (inlining && lk_column_name_reserved(t->cols[i].name))
            return ddl_reserved_error(t->cols[i].name);
    }
    return 0;
}

/* Whether a table created in schema `schema_id` gets its inlined-data
 * table with it: the lake's options (schema, then global) or the attach
 * option, else 10. The ducklake_default_data_inlining_row_limit setting is
 * not asked here (DuckLake's DataInliningRowLimit without a context); an
 * insert that may inline creates the inlined table later. */
static int inlines_at_create(lk_lake *lake, duckdb_connection con, int64_t schema_id)
{
    lk_table probe = {.id = -1, .schema_id = schema_id};
    const char *v = lk_lake_option(lake, con, "data_inlining_row_limit", &probe);
    if (v)
        return strtoll(v, NULL, 10) > 0;
    return lake->inline_limit != 0;
}

int lk_create_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                    const char *shape, int64_t *table_id)
{
    lk_txn *txn = lake->txn;
    lk_schema *s = ddl_schema_to_create_in(lake, schema);
    if (!s)
        return tarn_error_code();
    if (lk_catalog_table(&txn->cat, s->id, name))
        return tarn_error_set(TARN_EINVALID, "Table with name \"%s\" already exists in lake \"%s\"",
                              name, lake->alias);
    if (lk_catalog_view(&txn->cat, s->id, name)) /* one namespace, as in DuckDB */
        return tarn_error_set(TARN_EINVALID, "Catalog Error: View with name \"%s\" already exists",
                              name);
    lk_table nt = {0};
    int rc = ddl_read_shape(&nt, con, shape);
    if (!rc) {
        const char *dot = strrchr(shape, '.');
        char *raw = xstrdup(dot ? dot + 1 : shape);
        if (raw[0] == '"') {
            memmove(raw, raw + 1, strlen(raw));
            raw[strlen(raw) - 1] = 0;
        }
        rc = check_shape(con, raw);
        if (!rc)
            rc = ddl_read_constraints(&nt, con, raw);
        free(raw);
    }
    nt.schema_id = s->id;
    nt.name = xstrdup(name);
    nt.partition_id = -1;
    /* the names are checked against the limit inserts would use (the
     * setting counts) */
    lk_table probe = {.id = -1, .schema_id = s->id};
    if (!rc)
        rc = check_column_names(&nt, lk_lake_inline_limit(lake, con, &probe) > 0);
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
        ddl_set_begin(&nt.cols[i], txn->snapshot_id);
    nt.uuid = uuid_v7();
    nt.path = dir_for(name, nt.uuid);
    nt.path_rel = 1;
    int64_t sv = txn->cat.schema_version + 1;
    ddl_path_object_row(txn, "ducklake_table", nt.id, nt.uuid, s->id, name, nt.path, 1);
    for (size_t i = 0; i < nt.ncols; i++)
        ddl_column_rows(lake, &nt, &nt.cols[i]);
    if (inlines_at_create(lake, con, s->id) && lk_table_inlinable(&nt))
        lk_write_inlined_table(lake, &nt, sv);
    lk_txn_schema_changed(txn, nt.id);
    lk_txn_row(txn, "ducklake_schema_versions", "(%lld, %lld, %lld)", (long long)txn->snapshot_id,
               (long long)sv, (long long)nt.id);
    ddl_token_name(txn, "created_table", schema, name);
    txn->catalog_changed = 1;
    *table_id = nt.id;
    *lk_catalog_add_table(&txn->cat) = nt;
    return 0;
}

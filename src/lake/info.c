/*
 * info.c — DuckLake's read-only reports over a lake's catalog, and
 * ducklake_set_option (see info.h).
 *
 * Catalog rows read: ducklake_table, ducklake_schema, ducklake_data_file,
 * ducklake_delete_file (live at a snapshot: begin_snapshot <= S <
 * end_snapshot, or end_snapshot NULL), ducklake_metadata (key, value,
 * scope, scope_id), ducklake_table_stats (record_count), ducklake_snapshot,
 * ducklake_snapshot_changes (changes_made, for the tables' content versions).
 * Written: ducklake_metadata, one row per (key, scope, scope_id): setting
 * an option deletes the row it replaces, as DuckLake does.
 */
#include "lake/info.h"

#include "lake/catdb.h"
#include "lake/options.h"
#include "lake/txn.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

int lk_info_table_info_sql(char **out, lk_lake *lake, int64_t snapshot)
{
    long long sn = (long long)snapshot;
    const char *m = lake->meta;
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

int lk_info_options_sql(char **out, lk_lake *lake, duckdb_connection con)
{
    duck_table keys;
    int rc = lk_catdb_queryf(&keys, &lake->db, con,
                             "SELECT DISTINCT \"key\" FROM %s.ducklake_metadata", lake->meta);
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
    const char *m = lake->meta;
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

int lk_info_list_files_sql(char **out, lk_lake *lake, const lk_catalog *cat, const lk_table *t,
                           int64_t snapshot)
{
    long long sn = (long long)snapshot;
    char *dir = lk_lake_table_dir(lake, cat, t);
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
               lake->meta, lake->meta, sn, sn, (long long)t->id, sn, sn);
    free(dir);
    *out = buf_detach(&b);
    return 0;
}

char *lk_info_last_snapshot_sql(lk_lake *lake)
{
    return xasprintf("SELECT max(snapshot_id) AS id FROM %s.ducklake_snapshot", lake->meta);
}

void lk_info_size_sql(tarn_buf *b, lk_lake *lake)
{
    buf_printf(b,
               "(SELECT COALESCE(sum(file_size_bytes), 0) FROM (SELECT file_size_bytes FROM "
               "%s.ducklake_data_file WHERE end_snapshot IS NULL UNION ALL SELECT file_size_bytes "
               "FROM %s.ducklake_delete_file WHERE end_snapshot IS NULL))",
               lake->meta, lake->meta);
}

int lk_info_record_counts(duck_table *out, lk_lake *lake, duckdb_connection con)
{
    int rc =
        lk_catdb_queryf(out, &lake->db, con,
                        "SELECT table_id, record_count FROM %s.ducklake_table_stats", lake->meta);
    return rc;
}

int lk_info_table_versions(duck_table *out, lk_lake *lake, duckdb_connection con)
{
    const char *m = lake->meta;
    /* SQL that DuckDB and PostgreSQL both run (string_to_array, split_part,
     * a CASE for the cast: every kind counted is kind:table_id), so that
     * the catalog database runs it: through DuckDB a PostgreSQL catalog
     * sent every row of ducklake_snapshot_changes over for each run (a
     * worker opens one per model it builds) */
    char *q = xasprintf(
        "WITH u AS (SELECT snapshot_id, tok, split_part(tok, ':', 1) AS kind FROM (SELECT "
        "snapshot_id, unnest(string_to_array(changes_made, ',')) AS tok FROM "
        "%s.ducklake_snapshot_changes) x), p AS (SELECT snapshot_id, kind, CASE WHEN kind IN "
        "('inserted_into_table', 'deleted_from_table', 'altered_table', 'inlined_insert', "
        "'inlined_delete', 'flushed_inlined', 'inline_flush', 'merge_adjacent', "
        "'rewrite_delete') THEN CAST(split_part(tok, ':', 2) AS BIGINT) END AS table_id FROM u), "
        "c AS (SELECT table_id, max(snapshot_id) AS snap FROM p WHERE kind IN "
        "('inserted_into_table', 'deleted_from_table', 'altered_table', 'inlined_insert', "
        "'inlined_delete') AND table_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM p f WHERE "
        "f.snapshot_id = p.snapshot_id AND f.table_id = p.table_id AND f.kind IN "
        "('flushed_inlined', 'inline_flush', 'merge_adjacent', 'rewrite_delete')) GROUP BY "
        "table_id) SELECT lower(s.schema_name) || '.' || lower(t.table_name), "
        "greatest(t.begin_snapshot, coalesce(c.snap, 0)) FROM %s.ducklake_table t JOIN "
        "%s.ducklake_schema s ON s.schema_id = t.schema_id LEFT JOIN c ON c.table_id = "
        "t.table_id WHERE t.end_snapshot IS NULL AND s.end_snapshot IS NULL",
        m, m, m);
    int rc = lk_catdb_query(out, &lake->db, con, q);
    free(q);
    return rc;
}

int lk_info_set_option(lk_lake *lake, duckdb_connection con, const char *key, const char *value,
                       const char *scope, int64_t scope_id, int in_txn)
{
    tarn_buf del = {0}, ins = {0};
    buf_printf(&del, "DELETE FROM %s.ducklake_metadata WHERE \"key\" = ", lake->meta);
    quote_literal(&del, key);
    buf_printf(&ins, "INSERT INTO %s.ducklake_metadata VALUES (", lake->meta);
    quote_literal(&ins, key);
    buf_puts(&ins, ", ");
    quote_literal(&ins, value);
    if (scope) {
        buf_puts(&del, " AND \"scope\" = ");
        quote_literal(&del, scope);
        buf_printf(&del, " AND scope_id = %lld", (long long)scope_id);
        buf_puts(&ins, ", ");
        quote_literal(&ins, scope);
        buf_printf(&ins, ", %lld)", (long long)scope_id);
    } else {
        buf_puts(&del, " AND \"scope\" IS NULL");
        buf_puts(&ins, ", NULL, NULL)");
    }
    int rc = 0;
    if (in_txn) {
        /* written with the transaction's commit; its own reads see it now */
        lk_txn_sql(lake->txn, "%s", buf_cstr(&del));
        lk_txn_sql(lake->txn, "%s", buf_cstr(&ins));
        lake->txn->options_changed = 1;
        int rank = !scope ? 2 : strcmp(scope, "table") == 0 ? 0 : 1;
        lk_lake_option_pending(lake, con, key, rank, scope_id, value);
    } else {
        rc = lk_catdb_exec(&lake->db, con, buf_cstr(&del));
        if (!rc)
            rc = lk_catdb_exec(&lake->db, con, buf_cstr(&ins));
        lk_lake_options_changed(lake);
    }
    buf_free(&del);
    buf_free(&ins);
    return rc;
}

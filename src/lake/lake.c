/*
 * lake.c — attaching, creating and detaching a DuckLake lake, and keeping
 * the alias database's views in step with the catalog (see lake.h).
 *
 * A new lake is created exactly as DuckLake 1.0 creates one: the 28
 * ducklake_* tables in the catalog database, snapshot 0 with schema_version
 * 0, next_catalog_id 1, next_file_id 0, the `main` schema with id 0, and the
 * four metadata rows (version, created_by, data_path, encrypted), all in one
 * catalog transaction.
 */
#include "lake/lake.h"

#include "duck/duck.h"
#include "lake/migrate.h"
#include "lake/scan.h"
#include "lake/txn.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LAKE_FORMAT_VERSION "1.0"

static const char *const CATALOG_DDL[] = {
    "CREATE TABLE %s.ducklake_metadata(\"key\" VARCHAR NOT NULL, \"value\" VARCHAR NOT NULL, "
    "\"scope\" VARCHAR, scope_id BIGINT)",
    "CREATE TABLE %s.ducklake_snapshot(snapshot_id BIGINT PRIMARY KEY, snapshot_time TIMESTAMP "
    "WITH TIME ZONE, schema_version BIGINT, next_catalog_id BIGINT, next_file_id BIGINT)",
    "CREATE TABLE %s.ducklake_snapshot_changes(snapshot_id BIGINT PRIMARY KEY, changes_made "
    "VARCHAR, author VARCHAR, commit_message VARCHAR, commit_extra_info VARCHAR)",
    "CREATE TABLE %s.ducklake_schema(schema_id BIGINT PRIMARY KEY, schema_uuid UUID, "
    "begin_snapshot BIGINT, end_snapshot BIGINT, schema_name VARCHAR, path VARCHAR, "
    "path_is_relative BOOLEAN)",
    "CREATE TABLE %s.ducklake_table(table_id BIGINT, table_uuid UUID, begin_snapshot BIGINT, "
    "end_snapshot BIGINT, schema_id BIGINT, table_name VARCHAR, path VARCHAR, path_is_relative "
    "BOOLEAN)",
    "CREATE TABLE %s.ducklake_view(view_id BIGINT, view_uuid UUID, begin_snapshot BIGINT, "
    "end_snapshot BIGINT, schema_id BIGINT, view_name VARCHAR, dialect VARCHAR, \"sql\" VARCHAR, "
    "column_aliases VARCHAR)",
    "CREATE TABLE %s.ducklake_tag(object_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, "
    "\"key\" VARCHAR, \"value\" VARCHAR)",
    "CREATE TABLE %s.ducklake_column_tag(table_id BIGINT, column_id BIGINT, begin_snapshot "
    "BIGINT, end_snapshot BIGINT, \"key\" VARCHAR, \"value\" VARCHAR)",
    "CREATE TABLE %s.ducklake_data_file(data_file_id BIGINT PRIMARY KEY, table_id BIGINT, "
    "begin_snapshot BIGINT, end_snapshot BIGINT, file_order BIGINT, path VARCHAR, "
    "path_is_relative BOOLEAN, file_format VARCHAR, record_count BIGINT, file_size_bytes BIGINT, "
    "footer_size BIGINT, row_id_start BIGINT, partition_id BIGINT, encryption_key VARCHAR, "
    "mapping_id BIGINT, partial_max BIGINT)",
    "CREATE TABLE %s.ducklake_file_column_stats(data_file_id BIGINT, table_id BIGINT, column_id "
    "BIGINT, column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, "
    "max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR)",
    "CREATE TABLE %s.ducklake_file_variant_stats(data_file_id BIGINT, table_id BIGINT, column_id "
    "BIGINT, variant_path VARCHAR, shredded_type VARCHAR, column_size_bytes BIGINT, value_count "
    "BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, "
    "extra_stats VARCHAR)",
    "CREATE TABLE %s.ducklake_delete_file(delete_file_id BIGINT PRIMARY KEY, table_id BIGINT, "
    "begin_snapshot BIGINT, end_snapshot BIGINT, data_file_id BIGINT, path VARCHAR, "
    "path_is_relative BOOLEAN, format VARCHAR, delete_count BIGINT, file_size_bytes BIGINT, "
    "footer_size BIGINT, encryption_key VARCHAR, partial_max BIGINT)",
    "CREATE TABLE %s.ducklake_column(column_id BIGINT, begin_snapshot BIGINT, end_snapshot "
    "BIGINT, table_id BIGINT, column_order BIGINT, column_name VARCHAR, column_type VARCHAR, "
    "initial_default VARCHAR, default_value VARCHAR, nulls_allowed BOOLEAN, parent_column "
    "BIGINT, default_value_type VARCHAR, default_value_dialect VARCHAR)",
    "CREATE TABLE %s.ducklake_table_stats(table_id BIGINT, record_count BIGINT, next_row_id "
    "BIGINT, file_size_bytes BIGINT)",
    "CREATE TABLE %s.ducklake_table_column_stats(table_id BIGINT, column_id BIGINT, "
    "contains_null BOOLEAN, contains_nan BOOLEAN, min_value VARCHAR, max_value VARCHAR, "
    "extra_stats VARCHAR)",
    "CREATE TABLE %s.ducklake_partition_info(partition_id BIGINT, table_id BIGINT, "
    "begin_snapshot BIGINT, end_snapshot BIGINT)",
    "CREATE TABLE %s.ducklake_partition_column(partition_id BIGINT, table_id BIGINT, "
    "partition_key_index BIGINT, column_id BIGINT, \"transform\" VARCHAR)",
    "CREATE TABLE %s.ducklake_file_partition_value(data_file_id BIGINT, table_id BIGINT, "
    "partition_key_index BIGINT, partition_value VARCHAR)",
    "CREATE TABLE %s.ducklake_files_scheduled_for_deletion(data_file_id BIGINT, path VARCHAR, "
    "path_is_relative BOOLEAN, schedule_start TIMESTAMP WITH TIME ZONE)",
    "CREATE TABLE %s.ducklake_inlined_data_tables(table_id BIGINT, table_name VARCHAR, "
    "schema_version BIGINT)",
    "CREATE TABLE %s.ducklake_column_mapping(mapping_id BIGINT, table_id BIGINT, \"type\" "
    "VARCHAR)",
    "CREATE TABLE %s.ducklake_name_mapping(mapping_id BIGINT, column_id BIGINT, source_name "
    "VARCHAR, target_field_id BIGINT, parent_column BIGINT, is_partition BOOLEAN)",
    "CREATE TABLE %s.ducklake_schema_versions(begin_snapshot BIGINT, schema_version BIGINT, "
    "table_id BIGINT)",
    "CREATE TABLE %s.ducklake_macro(schema_id BIGINT, macro_id BIGINT, macro_name VARCHAR, "
    "begin_snapshot BIGINT, end_snapshot BIGINT)",
    "CREATE TABLE %s.ducklake_macro_impl(macro_id BIGINT, impl_id BIGINT, dialect VARCHAR, "
    "\"sql\" VARCHAR, \"type\" VARCHAR)",
    "CREATE TABLE %s.ducklake_macro_parameters(macro_id BIGINT, impl_id BIGINT, column_id "
    "BIGINT, parameter_name VARCHAR, parameter_type VARCHAR, default_value VARCHAR, "
    "default_value_type VARCHAR)",
    "CREATE TABLE %s.ducklake_sort_info(sort_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, "
    "end_snapshot BIGINT)",
    "CREATE TABLE %s.ducklake_sort_expression(sort_id BIGINT, table_id BIGINT, sort_key_index "
    "BIGINT, expression VARCHAR, dialect VARCHAR, sort_direction VARCHAR, null_order VARCHAR)",
    "INSERT INTO %s.ducklake_snapshot VALUES (0, now(), 0, 1, 0)",
    "INSERT INTO %s.ducklake_snapshot_changes VALUES (0, 'created_schema:\"main\"', NULL, NULL, "
    "NULL)",
    "INSERT INTO %s.ducklake_schema VALUES (0, uuid(), 0, NULL, 'main', 'main/', true)",
};

#define NDDL (sizeof(CATALOG_DDL) / sizeof(CATALOG_DDL[0]))

static char *normalize_data_path(const char *given)
{
    size_t n = strlen(given);
    if (n == 0)
        return xstrdup("");
    if (given[n - 1] == '/')
        return xstrdup(given);
    return xasprintf("%s/", given);
}

static int create_catalog(lk_lake *lake, duckdb_connection con, const char *data_path)
{
    int rc = duck_exec(con, "BEGIN TRANSACTION");
    for (size_t i = 0; i < NDDL && !rc; i++) {
        char *sql = xasprintf(CATALOG_DDL[i], lake->meta);
        rc = duck_exec(con, sql);
        free(sql);
    }
    if (!rc) {
        tarn_buf b = {0};
        buf_printf(&b,
                   "INSERT INTO %s.ducklake_metadata (\"key\", \"value\") VALUES "
                   "('version', '" LAKE_FORMAT_VERSION "'), "
                   "('created_by', 'DuckDB ' || (SELECT source_id FROM pragma_version())), "
                   "('data_path', ",
                   lake->meta);
        quote_literal(&b, data_path);
        buf_puts(&b, "), ('encrypted', 'false')");
        rc = duck_exec(con, buf_cstr(&b));
        buf_free(&b);
    }
    if (rc) {
        duck_exec(con, "ROLLBACK");
        return tarn_error_prefix(rc, "creating the DuckLake catalog");
    }
    return duck_exec(con, "COMMIT");
}

static int catalog_exists(lk_lake *lake, duckdb_connection con)
{
    return duck_table_exists(con, lake->meta_name, "ducklake_metadata");
}

static int read_metadata(lk_lake *lake, duckdb_connection con, const char *key, char **out)
{
    tarn_buf b = {0};
    buf_printf(&b, "SELECT value FROM %s.ducklake_metadata WHERE \"key\" = ", lake->meta);
    quote_literal(&b, key);
    buf_puts(&b, " AND scope IS NULL");
    int rc = duck_query_string(out, con, buf_cstr(&b));
    if (rc && rc != TARN_ENOTFOUND) {
        /* DuckLake 0.1 catalogs have no scope column */
        buf_clear(&b);
        buf_printf(&b, "SELECT value FROM %s.ducklake_metadata WHERE \"key\" = ", lake->meta);
        quote_literal(&b, key);
        rc = duck_query_string(out, con, buf_cstr(&b));
    }
    buf_free(&b);
    return rc;
}

static int check_existing(lk_lake *lake, duckdb_connection con, const lk_attach_opts *opts)
{
    char *version = NULL;
    int rc = read_metadata(lake, con, "version", &version);
    if (rc)
        return tarn_error_prefix(rc, "reading the DuckLake version of \"%s\"", opts->path);
    if (version && strcmp(version, LAKE_FORMAT_VERSION) != 0 && opts->automatic_migration &&
        !lake->read_only) {
        tarn_buf report = {0};
        rc = lk_migrate(con, lake->meta, version, 0, &report);
        buf_free(&report);
        if (rc) {
            free(version);
            return tarn_error_prefix(rc, "AUTOMATIC_MIGRATION of \"%s\"", opts->path);
        }
        free(version);
        version = xstrdup(LAKE_FORMAT_VERSION);
    }
    if (!version || strcmp(version, LAKE_FORMAT_VERSION) != 0) {
        rc = tarn_error_set(
            TARN_EUNSUPPORTED,
            "\"%s\" is a DuckLake %s catalog; tarn reads and writes DuckLake " LAKE_FORMAT_VERSION
            " only. Upgrade it with `tarn lake upgrade %s "
            "--confirm` (one-way), attach it with AUTOMATIC_MIGRATION, or open "
            "it with the DuckDB version that wrote it",
            opts->path, version ? version : "(unknown)", opts->path);
        free(version);
        return rc;
    }
    free(version);
    char *stored = NULL;
    rc = read_metadata(lake, con, "data_path", &stored);
    if (rc && tarn_error_code() != TARN_ENOTFOUND)
        return rc;
    if (opts->data_path) {
        char *given = normalize_data_path(opts->data_path);
        if (stored && strcmp(given, stored) != 0) {
            rc = tarn_error_set(TARN_EINVALID,
                                "DATA_PATH '%s' does not match the data path '%s' stored in the "
                                "lake \"%s\"; attach without DATA_PATH to use the stored one",
                                opts->data_path, stored, opts->path);
            free(given);
            free(stored);
            return rc;
        }
        free(given);
    }
    lake->data_path = stored ? stored : xstrdup("");
    return 0;
}

static char *default_data_path(const char *meta_path)
{
    return xasprintf("%s.files/", meta_path);
}

static char *absolute_dir(const char *path)
{
    if (path[0] == '/')
        return xstrdup(path);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        return xstrdup(path);
    return xasprintf("%s/%s", cwd, path);
}

static int attach_meta(lk_lake *lake, duckdb_connection con, const lk_attach_opts *opts,
                       int *is_new)
{
    struct stat st;
    *is_new = stat(opts->path, &st) != 0;
    if (*is_new && (opts->read_only || opts->snapshot_version >= 0 || opts->snapshot_time))
        return tarn_error_set(TARN_ENOTFOUND, "DuckLake catalog \"%s\" does not exist", opts->path);
    tarn_buf b = {0};
    buf_puts(&b, "ATTACH ");
    quote_literal(&b, opts->path);
    buf_printf(&b, " AS %s", lake->meta);
    if (opts->read_only || opts->snapshot_version >= 0 || opts->snapshot_time)
        buf_puts(&b, " (READ_ONLY)");
    int rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static int resolve_pin(lk_lake *lake, duckdb_connection con, const lk_attach_opts *opts)
{
    lake->pinned = -1;
    if (opts->snapshot_version >= 0) {
        char *sql = xasprintf("SELECT count(*) FROM %s.ducklake_snapshot WHERE snapshot_id = %lld",
                              lake->meta, (long long)opts->snapshot_version);
        int64_t n = 0;
        int rc = duck_query_int64(&n, NULL, con, sql);
        free(sql);
        if (rc)
            return rc;
        if (n == 0)
            return tarn_error_set(TARN_ENOTFOUND, "No snapshot found at version %lld",
                                  (long long)opts->snapshot_version);
        lake->pinned = opts->snapshot_version;
    } else if (opts->snapshot_time) {
        tarn_buf b = {0};
        buf_printf(
            &b, "SELECT snapshot_id FROM %s.ducklake_snapshot WHERE snapshot_time <= ", lake->meta);
        quote_literal(&b, opts->snapshot_time);
        buf_puts(&b, "::TIMESTAMPTZ ORDER BY snapshot_time DESC LIMIT 1");
        int64_t id = 0;
        int rc = duck_query_int64(&id, NULL, con, buf_cstr(&b));
        buf_free(&b);
        if (rc)
            return tarn_error_set(TARN_ENOTFOUND, "No snapshot found at or before %s",
                                  opts->snapshot_time);
        lake->pinned = id;
    }
    return 0;
}

static int attach_alias(lk_lake *lake, duckdb_connection con)
{
    tarn_buf b = {0};
    buf_puts(&b, "ATTACH ':memory:' AS ");
    quote_ident(&b, lake->alias);
    int rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static void lake_free(lk_lake *lake)
{
    lk_catalog_free(&lake->cat);
    lk_lake_options_changed(lake);
    lk_lake_views_forget(lake);
    lk_lake_caches_forget(lake);
    free(lake->row_ids);
    free(lake->row_vals);
    free(lake->alias);
    free(lake->meta_name);
    free(lake->meta);
    free(lake->meta_path);
    free(lake->data_path);
    free(lake->data_abs);
    free(lake);
}

static void detach_quiet(duckdb_connection con, const char *quoted)
{
    char *sql = xasprintf("DETACH DATABASE IF EXISTS %s", quoted);
    duck_exec(con, sql);
    free(sql);
}

int lk_lake_attach(lk_lake **out, duckdb_connection con, const lk_attach_opts *opts)
{
    lk_lake *lake = xcalloc(1, sizeof(*lake));
    lake->alias = xstrdup(opts->alias);
    lake->meta_name = opts->metadata_catalog ? xstrdup(opts->metadata_catalog)
                                             : xasprintf("__tarn_meta_%s", opts->alias);
    tarn_buf q = {0};
    quote_ident(&q, lake->meta_name);
    lake->meta = buf_detach(&q);
    lake->meta_path = xstrdup(opts->path);
    lake->read_only = opts->read_only || opts->snapshot_version >= 0 || opts->snapshot_time;
    lake->inline_limit = opts->inline_limit;
    int is_new = 0;
    int rc = attach_meta(lake, con, opts, &is_new);
    if (rc) {
        lake_free(lake);
        return rc;
    }
    int exists = is_new ? 0 : catalog_exists(lake, con);
    if (exists < 0) {
        rc = exists;
    } else if (!exists) {
        lake->data_path =
            opts->data_path ? normalize_data_path(opts->data_path) : default_data_path(opts->path);
        rc = create_catalog(lake, con, lake->data_path);
    } else {
        rc = check_existing(lake, con, opts);
    }
    if (!rc)
        rc = resolve_pin(lake, con, opts);
    if (!rc) {
        lake->data_abs = absolute_dir(lake->data_path);
        rc = attach_alias(lake, con);
        if (rc)
            tarn_error_prefix(rc, "attaching \"%s\"", lake->alias);
    }
    if (!rc)
        rc = lk_lake_reload(lake, con);
    if (rc) {
        detach_quiet(con, lake->meta);
        lake_free(lake);
        return rc;
    }
    *out = lake;
    return 0;
}

void lk_lake_detach(lk_lake *lake, duckdb_connection con)
{
    if (lake->txn)
        lk_txn_rollback(lake, con);
    tarn_buf b = {0};
    quote_ident(&b, lake->alias);
    detach_quiet(con, buf_cstr(&b));
    buf_free(&b);
    detach_quiet(con, lake->meta);
    lake_free(lake);
}

int lk_lake_reload(lk_lake *lake, duckdb_connection con)
{
    lk_lake_caches_forget(lake);
    lk_catalog fresh;
    int rc = lk_catalog_load(&fresh, con, lake->meta, lake->pinned);
    if (rc)
        return rc;
    if (lake->txn) /* its working model borrows the tables about to go */
        lk_catalog_unshare(&lake->txn->cat);
    lk_catalog_free(&lake->cat);
    lake->cat = fresh;
    lake->nrow_ids = 0; /* row ids may have moved: forget the cache */
    return lk_lake_refresh_views(lake, con);
}

/* ---- views ---- */

static int drop_alias_objects(lk_lake *lake, duckdb_connection con)
{
    lk_lake_views_forget(lake);
    tarn_buf b = {0};
    buf_puts(&b, "SELECT schema_name FROM duckdb_schemas() WHERE database_name = ");
    quote_literal(&b, lake->alias);
    buf_puts(&b, " AND NOT internal");
    duck_table t;
    int rc = duck_table_query(&t, con, buf_cstr(&b));
    buf_clear(&b);
    for (size_t r = 0; r < t.nrows && !rc; r++) {
        buf_clear(&b);
        buf_puts(&b, "DROP SCHEMA ");
        quote_qualified(&b, lake->alias, NULL, duck_table_get(&t, r, 0));
        buf_puts(&b, " CASCADE");
        rc = duck_exec(con, buf_cstr(&b));
    }
    duck_table_free(&t);
    if (!rc) {
        buf_clear(&b);
        buf_puts(&b, "SELECT view_name FROM duckdb_views() WHERE database_name = ");
        quote_literal(&b, lake->alias);
        buf_puts(&b, " AND schema_name = 'main' AND NOT internal");
        rc = duck_table_query(&t, con, buf_cstr(&b));
        for (size_t r = 0; r < t.nrows && !rc; r++) {
            buf_clear(&b);
            buf_puts(&b, "DROP VIEW ");
            quote_qualified(&b, lake->alias, "main", duck_table_get(&t, r, 0));
            rc = duck_exec(con, buf_cstr(&b));
        }
        duck_table_free(&t);
    }
    buf_free(&b);
    return rc;
}

/* Table and column comments ride on the table's DuckDB view, so that
 * duckdb_columns() and DESCRIBE show them. */
static int comment_view(lk_lake *lake, duckdb_connection con, const char *schema, const lk_table *t)
{
    int rc = 0;
    tarn_buf b = {0};
    if (t->comment) {
        buf_puts(&b, "COMMENT ON VIEW ");
        quote_qualified(&b, lake->alias, schema, t->name);
        buf_puts(&b, " IS ");
        quote_literal(&b, t->comment);
        rc = duck_exec(con, buf_cstr(&b));
    }
    for (size_t i = 0; i < t->ncols && !rc; i++) {
        if (!t->cols[i].comment)
            continue;
        buf_clear(&b);
        buf_puts(&b, "COMMENT ON COLUMN ");
        quote_qualified(&b, lake->alias, schema, t->name);
        buf_putc(&b, '.');
        quote_ident(&b, t->cols[i].name);
        buf_puts(&b, " IS ");
        quote_literal(&b, t->cols[i].comment);
        rc = duck_exec(con, buf_cstr(&b));
    }
    buf_free(&b);
    return rc;
}

/* A DuckLake view becomes a DuckDB view in the alias database. One that no
 * longer binds (its table was dropped) is left out: querying it then fails
 * with DuckDB's "does not exist", as it would under DuckLake. */
static void create_lake_view(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                             const lk_view *v)
{
    lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, v->schema_id);
    if (!sc)
        return;
    tarn_buf name = {0};
    quote_ident(&name, lake->alias);
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE VIEW ");
    quote_qualified(&b, lake->alias, sc->name, v->name);
    if (v->aliases && *v->aliases)
        buf_printf(&b, " (%s)", v->aliases);
    buf_puts(&b, " AS ");
    const char *p = v->sql;
    const char *tag = "{DUCKLAKE_CATALOG}";
    const char *hit;
    while ((hit = strstr(p, tag)) != NULL) {
        buf_append(&b, p, (size_t)(hit - p));
        buf_puts(&b, buf_cstr(&name));
        p = hit + strlen(tag);
    }
    buf_puts(&b, p);
    if (duck_exec(con, buf_cstr(&b)) != 0)
        tarn_error_clear();
    buf_free(&b);
    buf_free(&name);
}

void lk_lake_views_forget(lk_lake *lake)
{
    for (size_t i = 0; i < lake->nmade; i++)
        free(lake->made_sql[i]);
    free(lake->made_ids);
    free(lake->made_sql);
    lake->made_ids = NULL;
    lake->made_sql = NULL;
    lake->nmade = 0;
}

/* The slot remembering table `id`'s view statement (made when absent). */
static char **made_slot(lk_lake *lake, int64_t id)
{
    for (size_t i = 0; i < lake->nmade; i++)
        if (lake->made_ids[i] == id)
            return &lake->made_sql[i];
    lake->made_ids = xrealloc(lake->made_ids, (lake->nmade + 1) * sizeof(int64_t));
    lake->made_sql = xrealloc(lake->made_sql, (lake->nmade + 1) * sizeof(char *));
    lake->made_ids[lake->nmade] = id;
    lake->made_sql[lake->nmade] = NULL;
    return &lake->made_sql[lake->nmade++];
}

/* What the view of `t` is made of besides its statement: its comments. */
static void comments_key(tarn_buf *b, const lk_table *t)
{
    buf_putc(b, '\n');
    quote_literal(b, t->comment);
    for (size_t i = 0; i < t->ncols; i++) {
        buf_putc(b, ',');
        quote_literal(b, t->cols[i].comment);
    }
}

/* CREATE OR REPLACE VIEW alias.schema.table AS <its scan>; nothing when
 * the view already is that (a commit's view of a table written inside
 * BEGIN … COMMIT often reads the same files as the statement's). */
static int table_view(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                      const lk_table *t)
{
    lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
    if (!sc)
        return 0;
    char *scan = NULL;
    int rc = lk_scan_sql(&scan, lake, con, cat, t, -1, 0);
    if (rc)
        return rc;
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE VIEW ");
    quote_qualified(&b, lake->alias, sc->name, t->name);
    buf_puts(&b, " AS ");
    buf_puts(&b, scan);
    free(scan);
    size_t stmt_len = b.len;
    comments_key(&b, t);
    char **made = made_slot(lake, t->id);
    if (*made && strcmp(*made, buf_cstr(&b)) == 0) {
        buf_free(&b);
        return 0;
    }
    free(*made);
    *made = NULL;
    char *key = xstrdup(buf_cstr(&b));
    b.ptr[stmt_len] = '\0';
    rc = duck_exec(con, b.ptr);
    buf_free(&b);
    if (!rc)
        rc = comment_view(lake, con, sc->name, t);
    if (rc) {
        free(key);
        return tarn_error_prefix(rc, "building the view of %s.%s", sc->name, t->name);
    }
    *made_slot(lake, t->id) = key;
    return 0;
}

int lk_lake_refresh_table_view(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    const lk_catalog *cat = lk_txn_catalog(lake);
    const lk_table *t = lk_catalog_table_by_id(cat, table_id);
    return t ? table_view(lake, con, cat, t) : 0;
}

static void lk_lake_meta_tables_forget(lk_lake *lake)
{
    for (size_t i = 0; i < lake->nmeta_tables; i++)
        free(lake->meta_tables[i]);
    free(lake->meta_tables);
    lake->meta_tables = NULL;
    lake->nmeta_tables = 0;
    lake->meta_tables_loaded = 0;
}

static void lk_lake_schema_versions_forget(lk_lake *lake)
{
    free(lake->sv_ids);
    free(lake->sv_at);
    lake->sv_ids = lake->sv_at = NULL;
    lake->nsv = 0;
    lake->sv_loaded = 0;
}

static void sv_set(lk_lake *lake, int64_t id, int64_t at)
{
    for (size_t i = 0; i < lake->nsv; i++)
        if (lake->sv_ids[i] == id) {
            lake->sv_at[i] = at;
            return;
        }
    lake->sv_ids = xrealloc(lake->sv_ids, (lake->nsv + 1) * sizeof(int64_t));
    lake->sv_at = xrealloc(lake->sv_at, (lake->nsv + 1) * sizeof(int64_t));
    lake->sv_ids[lake->nsv] = id;
    lake->sv_at[lake->nsv++] = at;
}

int64_t lk_lake_schema_changed_at(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    if (!lake->sv_loaded) {
        char *q = xasprintf("SELECT table_id, max(begin_snapshot) FROM %s.ducklake_schema_versions "
                            "WHERE table_id IS NOT NULL GROUP BY table_id",
                            lake->meta);
        duck_table r;
        int rc = duck_table_query(&r, con, q);
        free(q);
        if (rc) {
            tarn_error_clear();
            return -1;
        }
        for (size_t i = 0; i < r.nrows; i++)
            sv_set(lake, strtoll(duck_table_get(&r, i, 0), NULL, 10),
                   strtoll(duck_table_get(&r, i, 1), NULL, 10));
        duck_table_free(&r);
        lake->sv_loaded = 1;
    }
    for (size_t i = 0; i < lake->nsv; i++)
        if (lake->sv_ids[i] == table_id)
            return lake->sv_at[i];
    return -1;
}

void lk_lake_schema_changed(lk_lake *lake, const int64_t *ids, size_t n, int64_t snapshot)
{
    for (size_t i = 0; lake->sv_loaded && i < n; i++)
        sv_set(lake, ids[i], snapshot);
}

int lk_lake_snapshot_exists(lk_lake *lake, duckdb_connection con, int64_t snap)
{
    for (size_t i = 0; i < lake->nlive; i++)
        if (lake->live[i] == snap)
            return 1;
    char *q = xasprintf("SELECT count(*) FROM %s.ducklake_snapshot WHERE snapshot_id = %lld",
                        lake->meta, (long long)snap);
    int64_t n = 0;
    if (duck_query_int64(&n, NULL, con, q) != 0) {
        tarn_error_clear();
        n = 0;
    }
    free(q);
    if (n > 0)
        lk_lake_snapshot_live(lake, snap);
    return n > 0;
}

void lk_lake_snapshot_live(lk_lake *lake, int64_t snap)
{
    lake->live = xrealloc(lake->live, (lake->nlive + 1) * sizeof(int64_t));
    lake->live[lake->nlive++] = snap;
}

static void lk_lake_past_forget(lk_lake *lake)
{
    free(lake->live);
    lake->live = NULL;
    lake->nlive = 0;
    for (size_t i = 0; i < lake->npast; i++)
        lk_catalog_free(&lake->past[i]);
    lake->npast = lake->past_next = 0;
}

int lk_lake_catalog_at(const lk_catalog **out, lk_lake *lake, duckdb_connection con, int64_t snap)
{
    for (size_t i = 0; i < lake->npast; i++) {
        if (lake->past[i].snapshot_id == snap) {
            *out = &lake->past[i];
            return 0;
        }
    }
    lk_catalog cat;
    int rc = lk_catalog_load(&cat, con, lake->meta, snap);
    if (rc)
        return rc;
    size_t cap = sizeof(lake->past) / sizeof(lake->past[0]), slot;
    if (lake->npast < cap) {
        slot = lake->npast++;
    } else { /* round robin: the oldest entry goes */
        slot = lake->past_next;
        lake->past_next = (lake->past_next + 1) % cap;
        lk_catalog_free(&lake->past[slot]);
    }
    lake->past[slot] = cat;
    *out = &lake->past[slot];
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void lk_lake_meta_tables_apply(lk_lake *lake, const strlist *ops)
{
    if (!lake->meta_tables_loaded)
        return;
    for (size_t i = 0; i < ops->n; i++) {
        const char *name = ops->items[i] + 1;
        char **hit =
            bsearch(&name, lake->meta_tables, lake->nmeta_tables, sizeof(char *), cmp_name);
        if (ops->items[i][0] == '+' && !hit) {
            lake->meta_tables =
                xrealloc(lake->meta_tables, (lake->nmeta_tables + 1) * sizeof(char *));
            lake->meta_tables[lake->nmeta_tables++] = xstrdup(name);
            qsort(lake->meta_tables, lake->nmeta_tables, sizeof(char *), cmp_name);
        } else if (ops->items[i][0] == '-' && hit) {
            free(*hit);
            size_t at = (size_t)(hit - lake->meta_tables);
            memmove(hit, hit + 1, (lake->nmeta_tables - at - 1) * sizeof(char *));
            lake->nmeta_tables--;
        }
    }
}

int lk_lake_meta_table_exists(lk_lake *lake, duckdb_connection con, const char *name)
{
    if (!lake->meta_tables_loaded) {
        tarn_buf b = {0};
        buf_puts(&b, "SELECT table_name FROM duckdb_tables() WHERE database_name = ");
        quote_literal(&b, lake->meta_name);
        buf_puts(&b, " AND schema_name = 'main' ORDER BY table_name");
        duck_table r;
        int rc = duck_table_query(&r, con, buf_cstr(&b));
        buf_free(&b);
        if (rc) { /* answer without the list, as before it existed */
            tarn_error_clear();
            return duck_table_exists(con, lake->meta_name, name);
        }
        lake->meta_tables = xcalloc(r.nrows ? r.nrows : 1, sizeof(char *));
        for (size_t i = 0; i < r.nrows; i++)
            lake->meta_tables[lake->nmeta_tables++] = xstrdup(duck_table_get(&r, i, 0));
        duck_table_free(&r);
        qsort(lake->meta_tables, lake->nmeta_tables, sizeof(char *), cmp_name);
        lake->meta_tables_loaded = 1;
    }
    return bsearch(&name, lake->meta_tables, lake->nmeta_tables, sizeof(char *), cmp_name) != NULL;
}

/* DROP VIEW IF EXISTS alias.schema.name (a table's view in the alias
 * database). */
static int drop_view_named(lk_lake *lake, duckdb_connection con, const char *schema,
                           const char *name)
{
    lk_lake_views_forget(lake);
    tarn_buf b = {0};
    buf_puts(&b, "DROP VIEW IF EXISTS ");
    quote_qualified(&b, lake->alias, schema, name);
    int rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static void drop_table_view(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                            const lk_table *t)
{
    lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
    if (sc && drop_view_named(lake, con, sc->name, t->name) != 0)
        tarn_error_clear();
}

/* CREATE SCHEMA IF NOT EXISTS alias.s for each schema of `cat` that `old`
 * does not have (a new lake schema has no tables yet, and so no views). */
static int create_new_schemas(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                              const lk_catalog *old)
{
    int rc = 0;
    for (size_t i = 0; i < cat->nschemas && !rc; i++) {
        if (lk_catalog_schema((lk_catalog *)old, cat->schemas[i].name))
            continue;
        tarn_buf b = {0};
        buf_puts(&b, "CREATE SCHEMA IF NOT EXISTS ");
        quote_qualified(&b, lake->alias, NULL, cat->schemas[i].name);
        rc = duck_exec(con, buf_cstr(&b));
        buf_free(&b);
    }
    return rc;
}

int lk_lake_sync_statement_views(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    int rc = 0;
    if (txn->schemas_created && !txn->views_all)
        rc = create_new_schemas(lake, con, &txn->cat, &lake->cat);
    txn->schemas_created = 0;
    if (!rc && txn->views_all) {
        rc = lk_lake_refresh_views(lake, con);
    } else if (!rc) {
        const lk_catalog *cat = &txn->cat;
        for (size_t i = 0; i < txn->ndropped && !rc; i++) {
            const char *schema = txn->dropped[i], *name = schema + strlen(schema) + 1;
            lk_schema *sc = lk_catalog_schema((lk_catalog *)cat, schema);
            if (sc && lk_catalog_table(cat, sc->id, name))
                continue; /* replaced: its new view is built below */
            rc = drop_view_named(lake, con, schema, name);
        }
        for (size_t i = 0; i < txn->ndirty && !rc; i++)
            rc = lk_lake_refresh_table_view(lake, con, txn->dirty[i]);
    }
    for (size_t i = 0; i < txn->ndropped; i++)
        free(txn->dropped[i]);
    txn->ndropped = 0;
    txn->ndirty = 0;
    txn->views_all = 0;
    return rc;
}

int lk_lake_refresh_views(lk_lake *lake, duckdb_connection con)
{
    const lk_catalog *cat = lk_txn_catalog(lake);
    int rc = lk_scan_prefill(lake, con, cat);
    if (!rc)
        rc = drop_alias_objects(lake, con);
    tarn_buf b = {0};
    for (size_t i = 0; i < cat->nschemas && !rc; i++) {
        if (strcmp(cat->schemas[i].name, "main") == 0)
            continue;
        buf_clear(&b);
        buf_puts(&b, "CREATE SCHEMA ");
        quote_qualified(&b, lake->alias, NULL, cat->schemas[i].name);
        rc = duck_exec(con, buf_cstr(&b));
    }
    for (size_t i = 0; i < cat->ntables && !rc; i++)
        rc = table_view(lake, con, cat, &cat->tables[i]);
    for (size_t i = 0; i < cat->nviews && !rc; i++)
        create_lake_view(lake, con, cat, &cat->views[i]);
    buf_free(&b);
    return rc;
}

static int64_t token_table_id(const lk_catalog *cat, const char *token)
{
    const char *colon = strchr(token, ':');
    if (!colon)
        return -1;
    if (colon[1] != '"')
        return strtoll(colon + 1, NULL, 10);
    /* created_table:"schema"."table" — names as written by quote_ident */
    for (size_t i = 0; i < cat->ntables; i++) {
        const lk_table *t = &cat->tables[i];
        lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
        if (!sc)
            continue;
        tarn_buf b = {0};
        quote_ident(&b, sc->name);
        buf_putc(&b, '.');
        quote_ident(&b, t->name);
        int same = strcmp(buf_cstr(&b), colon + 1) == 0;
        buf_free(&b);
        if (same)
            return t->id;
    }
    return -1;
}

int lk_lake_restore_views(lk_lake *lake, duckdb_connection con, const lk_catalog *working,
                          const int64_t *touched, size_t ntouched)
{
    const lk_catalog *cat = &lake->cat;
    int rc = 0;
    /* views of tables the transaction created (or took under a new name) */
    for (size_t i = 0; i < working->ntables; i++) {
        const lk_table *w = &working->tables[i];
        const lk_table *c = lk_catalog_table_by_id(cat, w->id);
        if (!c || strcmp(c->name, w->name) != 0 || c->schema_id != w->schema_id)
            drop_table_view(lake, con, working, w);
    }
    /* the committed tables it dropped, renamed, or showed pending rows of */
    for (size_t i = 0; i < cat->ntables && !rc; i++) {
        const lk_table *c = &cat->tables[i];
        const lk_table *w = lk_catalog_table_by_id(working, c->id);
        int redo = !w || strcmp(c->name, w->name) != 0 || c->schema_id != w->schema_id;
        for (size_t k = 0; k < ntouched && !redo; k++)
            redo = touched[k] == c->id;
        if (redo)
            rc = table_view(lake, con, cat, c);
    }
    return rc;
}

int lk_lake_sync_views(lk_lake *lake, duckdb_connection con, const lk_catalog *old,
                       char *const *tokens, size_t n, const int64_t *touched, size_t ntouched)
{
    static const char *const WHOLE[] = {
        "dropped_schema:", "created_view:", "dropped_view:", "altered_view:"};
    const lk_catalog *cat = &lake->cat;
    int ddl = 0, new_schemas = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t k = 0; k < sizeof(WHOLE) / sizeof(WHOLE[0]); k++)
            if (strncmp(tokens[i], WHOLE[k], strlen(WHOLE[k])) == 0)
                return lk_lake_refresh_views(lake, con);
        new_schemas |= strncmp(tokens[i], "created_schema:", 15) == 0;
        ddl |= strncmp(tokens[i], "created_table:", 14) == 0 ||
               strncmp(tokens[i], "dropped_table:", 14) == 0 ||
               strncmp(tokens[i], "altered_table:", 14) == 0;
    }
    if (new_schemas) {
        int rc = create_new_schemas(lake, con, cat, old);
        if (rc)
            return rc;
    }
    /* drops first: CREATE OR REPLACE TABLE ends one id and makes another
     * under the same name (whose view then replaces the dropped one) */
    int64_t *ids = NULL;
    size_t nids = 0;
    for (size_t i = 0; i < n; i++) {
        /* a rename is created_table with the new name: find its id there */
        int64_t id = token_table_id(old, tokens[i]);
        if (id < 0)
            id = token_table_id(cat, tokens[i]);
        const lk_table *was = id >= 0 ? lk_catalog_table_by_id(old, id) : NULL;
        const lk_table *now = id >= 0 ? lk_catalog_table_by_id(cat, id) : NULL;
        lk_schema *sc = was ? lk_catalog_schema_by_id((lk_catalog *)cat, was->schema_id) : NULL;
        int replaced = sc && !now && lk_catalog_table(cat, sc->id, was->name);
        if (was && !replaced && lk_ids_add(&ids, &nids, id) &&
            (!now || strcmp(was->name, now->name) != 0 || was->schema_id != now->schema_id))
            drop_table_view(lake, con, old, was);
    }
    nids = 0;
    /* then each changed table's view once: the tables named by the
     * changes and those whose views showed this transaction's pending
     * state (a view that reads the same as before costs no statement:
     * inlined inserts usually show through, as at the latest snapshot a
     * view reads every live inlined row) */
    for (size_t i = 0; i < n; i++) {
        int64_t id = token_table_id(cat, tokens[i]);
        if (id >= 0 && lk_catalog_table_by_id(cat, id))
            lk_ids_add(&ids, &nids, id);
    }
    for (size_t i = 0; i < ntouched; i++)
        if (lk_catalog_table_by_id(cat, touched[i]))
            lk_ids_add(&ids, &nids, touched[i]);
    int rc = 0;
    for (size_t i = 0; i < nids && !rc; i++)
        rc = table_view(lake, con, cat, lk_catalog_table_by_id(cat, ids[i]));
    free(ids);
    /* lake views bind to the tables' views: remake them after table DDL */
    for (size_t i = 0; ddl && i < cat->nviews && !rc; i++)
        create_lake_view(lake, con, cat, &cat->views[i]);
    return rc;
}

char *lk_lake_table_dir(lk_lake *lake, const lk_catalog *cat, const lk_table *t)
{
    lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)cat, t->schema_id);
    const char *sp = sc && sc->path ? sc->path : "";
    const char *tp = t->path ? t->path : "";
    char *schema_dir = sc && !sc->path_rel ? xstrdup(sp) : xasprintf("%s%s", lake->data_abs, sp);
    char *dir = t->path_rel ? xasprintf("%s%s", schema_dir, tp) : xstrdup(tp);
    free(schema_dir);
    return dir;
}

/* One data_inlining_row_limit row of ducklake_metadata. */
struct lk_limit_opt {
    int rank;         /* 0 table scope, 1 schema scope, 2 global */
    int64_t scope_id; /* the table's or schema's id */
    char *value;      /* NULL: SQL NULL */
};

void lk_lake_options_changed(lk_lake *lake)
{
    for (size_t i = 0; i < lake->nlimits; i++)
        free(lake->limits[i].value);
    free(lake->limits);
    lake->limits = NULL;
    lake->nlimits = 0;
    lake->limits_loaded = 0;
}

static void load_limits(lk_lake *lake, duckdb_connection con)
{
    char *q = xasprintf("SELECT CASE scope WHEN 'table' THEN 0 WHEN 'schema' THEN 1 ELSE 2 END, "
                        "scope_id, value FROM %s.ducklake_metadata WHERE \"key\" = "
                        "'data_inlining_row_limit' AND (scope IN ('table', 'schema') OR scope IS "
                        "NULL)",
                        lake->meta);
    duck_table r;
    int rc = duck_table_query(&r, con, q);
    free(q);
    if (rc) { /* as with no option */
        tarn_error_clear();
        return;
    }
    lake->limits = xcalloc(r.nrows ? r.nrows : 1, sizeof(struct lk_limit_opt));
    for (size_t i = 0; i < r.nrows; i++) {
        const char *id = duck_table_get(&r, i, 1), *v = duck_table_get(&r, i, 2);
        lake->limits[i].rank = (int)strtol(duck_table_get(&r, i, 0), NULL, 10);
        lake->limits[i].scope_id = id ? strtoll(id, NULL, 10) : -1;
        lake->limits[i].value = v ? xstrdup(v) : NULL;
    }
    lake->nlimits = r.nrows;
    duck_table_free(&r);
    lake->limits_loaded = 1;
}

int64_t lk_lake_inline_limit(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    if (!lake->limits_loaded)
        load_limits(lake, con);
    /* the table's option, else its schema's, else the global one */
    const struct lk_limit_opt *best = NULL;
    for (size_t i = 0; i < lake->nlimits; i++) {
        const struct lk_limit_opt *o = &lake->limits[i];
        int applies = o->rank == 2 || (o->rank == 0 && o->scope_id == t->id) ||
                      (o->rank == 1 && o->scope_id == t->schema_id);
        if (applies && (!best || o->rank < best->rank))
            best = o;
    }
    if (best && best->value)
        return strtoll(best->value, NULL, 10);
    return lake->inline_limit >= 0 ? lake->inline_limit : 10;
}

void lk_lake_caches_forget(lk_lake *lake)
{
    lk_lake_meta_tables_forget(lake);
    lk_lake_past_forget(lake);
    lk_lake_schema_versions_forget(lake);
    lk_scan_cache_forget(lake);
    lk_lake_options_changed(lake);
}

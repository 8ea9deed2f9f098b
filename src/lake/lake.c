/*
 * lake.c — attaching, creating and detaching a DuckLake lake (see lake.h);
 * the top of the lake layer, over the catalog model, transactions, scans
 * and views.
 *
 * A new lake is created exactly as DuckLake 1.0 creates one: the 28
 * ducklake_* tables in the catalog database, snapshot 0 with schema_version
 * 0, next_catalog_id 1, next_file_id 0, the `main` schema with id 0, and the
 * four metadata rows (version, created_by, data_path, encrypted), all in one
 * catalog transaction.
 */
#include "lake/lake.h"

#include "duck/duck.h"
#include "lake/changes.h"
#include "lake/commit.h"
#include "lake/delmask.h"
#include "lake/dvec.h"
#include "lake/migrate.h"
#include "lake/renumber.h"
#include "lake/scan.h"
#include "lake/txn.h"
#include "lake/views.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/uuid.h"

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

/* created_by's version: the DuckDB library's, asked of the session's
 * DuckDB so that the statement writing it is plain SQL any catalog
 * database runs. */
static int duckdb_source_id(char **out, duckdb_connection con)
{
    return duck_query_string(out, con, "SELECT source_id FROM pragma_version()");
}

static int catalog_exists(lk_lake *lake, duckdb_connection con)
{
    return lk_catdb_table_exists(&lake->db, con, "ducklake_metadata");
}

/* The start of a new catalog's transaction. Two processes attaching the
 * same new PostgreSQL lake at once would both create its tables (one of
 * them failing on PostgreSQL's catalog); the commit lock (held until the
 * COMMIT or ROLLBACK) lets one create while the other waits, then finds
 * the tables made: *exists = 1, the transaction rolled back. */
static int create_begin(lk_lake *lake, duckdb_connection con, int *exists)
{
    *exists = 0;
    int rc = lk_catdb_begin(&lake->db, con);
    if (rc)
        return rc;
    rc = lk_catdb_lock_commits(&lake->db, con);
    if (!rc && lk_catdb_has_commit_lock(&lake->db)) {
        int found = catalog_exists(lake, con);
        rc = found < 0 ? found : 0;
        *exists = found > 0;
    }
    if (!rc && !*exists)
        rc = lk_catdb_prepare_new(&lake->db, con);
    if (rc || *exists)
        lk_catdb_rollback(&lake->db, con);
    return rc;
}

/* Creates the catalog, or (*exists = 1) finds that another process just
 * made it. */
static int create_catalog(lk_lake *lake, duckdb_connection con, const char *data_path, int *exists)
{
    char *source_id = NULL;
    int rc = duckdb_source_id(&source_id, con);
    if (!rc)
        rc = create_begin(lake, con, exists);
    if (rc || *exists) {
        free(source_id);
        return rc ? tarn_error_prefix(rc, "creating the DuckLake catalog") : 0;
    }
    for (size_t i = 0; i < NDDL && !rc; i++) {
        char *sql = xasprintf(CATALOG_DDL[i], lake->meta);
        rc = lk_catdb_exec(&lake->db, con, sql);
        free(sql);
    }
    if (!rc) {
        tarn_buf b = {0};
        char *uuid = uuid_v4(); /* DuckLake's uuid() */
        buf_printf(&b,
                   "INSERT INTO %s.ducklake_schema VALUES (0, '%s', 0, NULL, 'main', 'main/', "
                   "true)",
                   lake->meta, uuid);
        free(uuid);
        rc = lk_catdb_exec(&lake->db, con, buf_cstr(&b));
        buf_free(&b);
    }
    if (!rc) {
        tarn_buf b = {0};
        buf_printf(&b,
                   "INSERT INTO %s.ducklake_metadata (\"key\", \"value\") VALUES "
                   "('version', '" LAKE_FORMAT_VERSION "'), ('created_by', 'DuckDB %s'), "
                   "('data_path', ",
                   lake->meta, source_id);
        quote_literal(&b, data_path);
        buf_puts(&b, "), ('encrypted', 'false')");
        rc = lk_catdb_exec(&lake->db, con, buf_cstr(&b));
        buf_free(&b);
    }
    free(source_id);
    if (rc) {
        lk_catdb_rollback(&lake->db, con);
        return tarn_error_prefix(rc, "creating the DuckLake catalog");
    }
    return lk_catdb_commit(&lake->db, con);
}

static int read_metadata(lk_lake *lake, duckdb_connection con, const char *key, char **out)
{
    tarn_buf b = {0};
    buf_printf(&b, "SELECT value FROM %s.ducklake_metadata WHERE \"key\" = ", lake->meta);
    quote_literal(&b, key);
    buf_puts(&b, " AND scope IS NULL");
    int rc = lk_catdb_query_string(out, &lake->db, con, buf_cstr(&b));
    if (rc && rc != TARN_ENOTFOUND) {
        /* DuckLake 0.1 catalogs have no scope column */
        buf_clear(&b);
        buf_printf(&b, "SELECT value FROM %s.ducklake_metadata WHERE \"key\" = ", lake->meta);
        quote_literal(&b, key);
        rc = lk_catdb_query_string(out, &lake->db, con, buf_cstr(&b));
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
        rc = lk_migrate(&lake->db, con, version, 0, &report);
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
        if (stored && strcmp(given, stored) != 0 && opts->override_data_path) {
            free(stored); /* this session reads and writes the files there */
            stored = given;
            given = NULL;
        } else if (stored && strcmp(given, stored) != 0) {
            rc = tarn_error_set(TARN_EINVALID,
                                "DATA_PATH '%s' does not match existing data path in the catalog "
                                "('%s') of lake \"%s\"; attach without DATA_PATH to use the "
                                "stored one, or with OVERRIDE_DATA_PATH true to use this one",
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
    /* a PostgreSQL catalog is new when its tables are missing (lk_lake_attach) */
    *is_new = !lk_catdb_postgres_conninfo(opts->path) && stat(opts->path, &st) != 0;
    if (*is_new && (opts->read_only || opts->snapshot_version >= 0 || opts->snapshot_time))
        return tarn_error_set(TARN_ENOTFOUND, "DuckLake catalog \"%s\" does not exist", opts->path);
    if (*is_new && opts->no_create)
        return tarn_error_set(TARN_ENOTFOUND,
                              "DuckLake catalog \"%s\" does not exist, and creating a new DuckLake "
                              "is explicitly disabled (CREATE_IF_NOT_EXISTS false)",
                              opts->path);
    return lk_catdb_open(&lake->db, con, opts->path,
                         opts->read_only || opts->snapshot_version >= 0 || opts->snapshot_time);
}

/* A PostgreSQL database without the catalog's tables gets a new lake, as a
 * missing catalog file does, unless the ATTACH cannot make one. There is
 * no file beside which to put the data: DATA_PATH is needed. */
static int new_pg_refused(const lk_lake *lake, const lk_attach_opts *opts)
{
    const char *schema = lake->db.schema ? lake->db.schema : "public";
    if (lake->read_only)
        return tarn_error_set(TARN_ENOTFOUND,
                              "DuckLake catalog \"%s\" does not exist (no ducklake_metadata table "
                              "in schema %s)",
                              opts->path, schema);
    if (opts->no_create)
        return tarn_error_set(TARN_ENOTFOUND,
                              "DuckLake catalog \"%s\" does not exist, and creating a new DuckLake "
                              "is explicitly disabled (CREATE_IF_NOT_EXISTS false)",
                              opts->path);
    if (!opts->data_path || !*opts->data_path)
        return tarn_error_set(TARN_EINVALID,
                              "a new DuckLake with a PostgreSQL catalog needs a DATA_PATH: ATTACH "
                              "'ducklake:%s' AS %s (DATA_PATH 'data/')",
                              opts->path, opts->alias);
    return 0;
}

static int resolve_pin(lk_lake *lake, duckdb_connection con, const lk_attach_opts *opts)
{
    lake->pinned = -1;
    if (opts->snapshot_version >= 0) {
        int64_t n = 0;
        int rc = lk_catdb_query_int64f(
            &n, NULL, &lake->db, con,
            "SELECT count(*) FROM %s.ducklake_snapshot WHERE snapshot_id = %lld", lake->meta,
            (long long)opts->snapshot_version);
        if (rc)
            return rc;
        if (n == 0)
            return tarn_error_set(TARN_ENOTFOUND, "No snapshot found at version %lld",
                                  (long long)opts->snapshot_version);
        lake->pinned = opts->snapshot_version;
    } else if (opts->snapshot_time) {
        tarn_buf when = {0};
        quote_literal(&when, opts->snapshot_time);
        int64_t id = 0;
        int rc = lk_lake_snapshot_at_time(&id, lake, con, buf_cstr(&when), 0);
        buf_free(&when);
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
    free(lake->broken_ids);
    free(lake->alias);
    free(lake->meta_name);
    lk_catdb_release(&lake->db);
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
                                             : xasprintf("__ducklake_metadata_%s", opts->alias);
    lake->meta_hidden = opts->metadata_catalog == NULL;
    const char *conninfo = lk_catdb_postgres_conninfo(opts->path);
    if (conninfo)
        lk_catdb_postgres(&lake->db, lake->meta_name, opts->metadata_schema, conninfo);
    else
        lk_catdb_duckdb(&lake->db, lake->meta_name, opts->metadata_schema);
    lake->meta = lk_catdb_name(&lake->db);
    lake->meta_path = xstrdup(opts->path);
    lake->read_only = opts->read_only || opts->snapshot_version >= 0 || opts->snapshot_time;
    lake->inline_limit = opts->inline_limit;
    lake->write_dvs = opts->write_dvs;
    int is_new = 0;
    int rc = lk_delmask_register(con); /* the views' deleted-row filter */
    if (!rc)
        rc = lk_dvec_register(con); /* DuckLake's deletion vectors, as rows */
    if (!rc)
        rc = attach_meta(lake, con, opts, &is_new);
    if (rc) {
        lake_free(lake);
        return rc;
    }
    int exists = is_new ? 0 : catalog_exists(lake, con);
    if (exists < 0) {
        rc = exists;
    } else if (!exists && conninfo) {
        rc = new_pg_refused(lake, opts);
        char *data_path = rc ? NULL : normalize_data_path(opts->data_path);
        if (!rc)
            rc = create_catalog(lake, con, data_path, &exists);
        if (!rc && exists) /* another process made it meanwhile */
            rc = check_existing(lake, con, opts);
        if (!rc && !exists)
            lake->data_path = data_path;
        else
            free(data_path);
    } else if (!exists) {
        lake->data_path =
            opts->data_path ? normalize_data_path(opts->data_path) : default_data_path(opts->path);
        rc = create_catalog(lake, con, lake->data_path, &exists);
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
        lk_catdb_close(&lake->db, con);
        lake_free(lake);
        return rc;
    }
    *out = lake;
    return 0;
}

void lk_lake_detach(lk_lake *lake, duckdb_connection con)
{
    if (lake->txn)
        lk_lake_rollback(lake, con);
    tarn_buf b = {0};
    quote_ident(&b, lake->alias);
    detach_quiet(con, buf_cstr(&b));
    buf_free(&b);
    lk_catdb_close(&lake->db, con);
    lake_free(lake);
}

int lk_lake_catalog_stmt(lk_lake *lake, duckdb_connection con, const char *sql, int *handled)
{
    *handled = lk_catdb_is_postgres(&lake->db);
    if (!*handled)
        return 0;
    if (lake->read_only)
        return tarn_error_set(TARN_EINVALID,
                              "lake \"%s\" is attached READ_ONLY: its catalog is "
                              "not written",
                              lake->alias);
    int rc = lk_catdb_exec(&lake->db, con, sql);
    lk_lake_meta_tables_forget(lake); /* it may have made or dropped a table */
    return rc ? rc : lk_catdb_refresh(&lake->db, con);
}

int lk_lake_reload(lk_lake *lake, duckdb_connection con)
{
    lk_lake_caches_forget(lake);
    lk_catalog fresh;
    int rc = lk_catalog_load(&fresh, &lake->db, con, lake->pinned);
    if (rc)
        return rc;
    /* after the load: the inlined-data tables it names (another writer's
     * may be newer than the catalog's views) become readable */
    rc = lk_catdb_refresh(&lake->db, con);
    if (rc) {
        lk_catalog_free(&fresh);
        return rc;
    }
    if (lake->txn) /* its working model borrows the tables about to go */
        lk_catalog_unshare(&lake->txn->cat);
    lk_catalog_free(&lake->cat);
    lake->cat = fresh;
    lake->nrow_ids = 0; /* row ids may have moved: forget the cache */
    return lk_lake_refresh_views(lake, con);
}

void lk_lake_caches_forget(lk_lake *lake)
{
    lk_lake_facts_forget(lake);
    lk_scan_cache_forget(lake);
    lake->nrow_ids = 0; /* next row ids another writer may have moved */
}

/* ---- the transaction, with caches and views kept in step ---- */

static void remember_row_ids(lk_lake *lake, const lk_txn *txn)
{
    for (size_t i = 0; i < txn->ndeltas; i++) {
        const lk_table_delta *d = &txn->deltas[i];
        if (!d->touched)
            continue;
        size_t k = 0;
        while (k < lake->nrow_ids && lake->row_ids[k] != d->table_id)
            k++;
        if (k == lake->nrow_ids) {
            lake->row_ids = xrealloc(lake->row_ids, (k + 1) * sizeof(int64_t));
            lake->row_vals = xrealloc(lake->row_vals, (k + 1) * sizeof(int64_t));
            lake->row_ids[k] = d->table_id;
            lake->nrow_ids++;
        }
        lake->row_vals[k] = d->next_row_id;
    }
}

/* The changes a commit's views follow: its own, and the catalog changes
 * of the snapshots the session's catalog had not seen: those others
 * committed before the transaction began (it began on a newer catalog
 * than the session's) and those it was moved over (rebased). Without the
 * first, a table another process created just before would never get its
 * view here (the next catch-up starts after this commit). */
static int unseen_changes(strlist *tokens, lk_lake *lake, const lk_txn *txn, duckdb_connection con,
                          int64_t session_snapshot)
{
    for (size_t i = 0; i < txn->nchange_tokens; i++)
        strlist_push(tokens, txn->change_tokens[i]);
    if (txn->rebased)
        lk_changes_split(tokens, txn->other_changes, 1);
    if (txn->base_snapshot <= session_snapshot)
        return 0;
    return lk_changes_made(tokens, &lake->db, lake->meta, con, session_snapshot, txn->base_snapshot,
                           1);
}

/* The committed catalog read back at the commit's own snapshot becomes the
 * session's; *old gets the one it replaces (the caller frees it). Its own
 * snapshot, not a newer one: the next transaction must see that others
 * committed, to read their counters, and a catch-up must see the changes
 * of later commits (the views follow those up to this one). */
static int take_committed(lk_catalog *old, lk_lake *lake, lk_txn *txn, duckdb_connection con)
{
    lk_catalog fresh = {0};
    int rc = lk_catalog_load(&fresh, &lake->db, con, txn->snapshot_id);
    if (!rc && txn->rebased) /* other writers' inlined-data tables become readable */
        rc = lk_catdb_refresh(&lake->db, con);
    if (rc) {
        lk_catalog_free(&fresh);
        return rc;
    }
    lk_catalog_free(&txn->cat); /* before the tables it borrows go */
    *old = lake->cat;
    lake->cat = fresh;
    if (txn->rebased) /* other writers moved the counters of other tables */
        lake->nrow_ids = 0;
    remember_row_ids(lake, txn);
    return 0;
}

/* After a commit that renumbered ids the working catalog's ids are stale:
 * read the committed catalog back (several objects created in one
 * transaction, or any created on a catalog several processes write). */
static int promote_renumbered(lk_lake *lake, lk_txn *txn, duckdb_connection con)
{
    lk_catalog old;
    int rc = take_committed(&old, lake, txn, con);
    if (rc)
        return rc;
    if (txn->views_all_ever) {
        rc = lk_lake_refresh_views(lake, con);
    } else {
        /* Only the views the changes call for: on a catalog several
         * processes write, every commit that creates an object renumbers
         * it, and a full rebuild per build made a run's time grow with the
         * square of its models. The views built under provisional ids are
         * forgotten (those ids are free for the next transaction's); the
         * changes name the final ids or the names, and the tables the
         * transaction touched but did not create kept theirs. */
        lk_lake_views_forget(lake);
        strlist tokens = {0};
        rc = unseen_changes(&tokens, lake, txn, con, old.snapshot_id);
        int64_t *kept = xcalloc(txn->ntouched + 1, sizeof(int64_t));
        size_t nkept = 0;
        for (size_t i = 0; i < txn->ntouched; i++)
            if (lk_renumber_id(txn, txn->touched[i]) == txn->touched[i])
                kept[nkept++] = txn->touched[i];
        if (!rc)
            rc = lk_lake_sync_views(lake, con, &old, tokens.items, tokens.n, kept, nkept);
        free(kept);
        strlist_free(&tokens);
    }
    lk_catalog_free(&old);
    return rc;
}

/* The views after a commit that kept its ids: every view when the
 * transaction called for it, else those of the tables it touched and
 * those the changes since *old (the catalog it replaced) call for; frees
 * *old. */
static int sync_committed(lk_lake *lake, lk_txn *txn, duckdb_connection con, lk_catalog *old)
{
    int rc;
    strlist tokens = {0};
    if (txn->views_all_ever)
        rc = lk_lake_refresh_views(lake, con);
    else if ((rc = unseen_changes(&tokens, lake, txn, con, old->snapshot_id)) == 0)
        rc =
            lk_lake_sync_views(lake, con, old, tokens.items, tokens.n, txn->touched, txn->ntouched);
    strlist_free(&tokens);
    lk_catalog_free(old);
    return rc;
}

/* After a commit moved onto other writers' snapshots: the catalog at the
 * new snapshot is read back, and the views of the tables this commit
 * changed are rebuilt, and those of the tables the others created,
 * dropped or altered. Views of tables only the others wrote rows to are
 * not rebuilt (that would cost each of many writers statements per table
 * per commit): their reads find the new rows through the caches the
 * rebase forgot (test_lake_pg_concurrent.sh checks a session reads them). */
static int promote_rebased(lk_lake *lake, lk_txn *txn, duckdb_connection con)
{
    lk_catalog old;
    int rc = take_committed(&old, lake, txn, con);
    if (rc)
        return rc;
    return sync_committed(lake, txn, con, &old);
}

/* After a commit the working catalog is the committed one: it becomes the
 * session's catalog with the new snapshot's counters, and only the views
 * of the tables the commit changed are rebuilt (a reload and a full
 * rebuild cost queries per table in the lake, per commit). */
static int promote(lk_lake *lake, lk_txn *txn, duckdb_connection con)
{
    if (txn->renum.n)
        return promote_renumbered(lake, txn, con);
    if (txn->rebased)
        return promote_rebased(lake, txn, con);
    lk_catalog old = lake->cat;
    lk_catalog_take_over(&txn->cat, &old);
    lake->cat = txn->cat;
    lake->cat.schema_version = lk_txn_schema_version(txn);
    memset(&txn->cat, 0, sizeof(txn->cat));
    lake->cat.snapshot_id = txn->snapshot_id;
    lake->cat.next_file_id += txn->file_id_bumps;
    remember_row_ids(lake, txn);
    /* Inside BEGIN … COMMIT the views of the tables the transaction
     * touched were rebuilt over its pending rows: they must drop those
     * parts now, besides the views the commit's changes call for. */
    return sync_committed(lake, txn, con, &old);
}

int lk_lake_begin(lk_lake *lake, duckdb_connection con, int explicit_txn)
{
    if (lake->txn)
        return 0;
    int rc = lk_txn_begin(lake, con, explicit_txn);
    if (!rc && lake->txn->cat.snapshot_id != lake->cat.snapshot_id)
        lk_lake_caches_forget(lake); /* another process committed */
    return rc;
}

/* After a transaction ended without a commit: the views it changed show
 * the committed state again. */
static void restore_views(lk_lake *lake, duckdb_connection con, const lk_txn *txn)
{
    lk_lake_views_forget(lake); /* a DuckDB ROLLBACK may have undone views */
    /* schemas and lake views changed: rebuild everything; else only the
     * views the transaction changed (a failed build must not cost a
     * rebuild of every view in the lake) */
    if (txn->views_all_ever || txn->cat.nschemas != lake->cat.nschemas ||
        txn->cat.nviews != lake->cat.nviews ||
        lk_lake_restore_views(lake, con, &txn->cat, txn->touched, txn->ntouched))
        lk_lake_refresh_views(lake, con);
}

/* Ends a transaction that does not commit. It follows a failure: the
 * caller's message (and its position) survive the cleanup, which runs
 * statements of its own and clears errors. */
static void end_uncommitted(lk_lake *lake, duckdb_connection con, lk_txn *txn)
{
    tarn_error_saved err = tarn_error_save();
    restore_views(lake, con, txn);
    lk_txn_free(lake, txn, con);
    tarn_error_restore(&err);
}

void lk_lake_rollback(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lk_txn_discard(lake);
    if (txn)
        end_uncommitted(lake, con, txn);
}

int lk_lake_commit(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = NULL;
    int rc = lk_txn_commit(&txn, lake, con);
    if (!txn)
        return rc;
    if (!txn->committed) {
        end_uncommitted(lake, con, txn);
        return rc;
    }
    if (txn->rebased) { /* others' snapshots: read again */
        lk_lake_caches_forget(lake);
        lk_scan_cache_note_renumbered(lake, txn);
    } else if (txn->renum.n) {
        /* moved ids: what the cache knows of the transaction's tables
         * goes, its new inlined-data tables are known under their final
         * names, the other tables' entries stand */
        lk_lake_facts_forget(lake);
        lk_scan_cache_commit(lake, txn);
        lk_scan_cache_note_renumbered(lake, txn);
        lake->nrow_ids = 0;
    } else {
        lk_lake_meta_tables_apply(lake, &txn->meta_ops);
        lk_scan_cache_commit(lake, txn);
        lk_lake_snapshot_live(lake, txn->snapshot_id);
        lk_lake_schema_changed(lake, txn->schema_changed, txn->nschema_changed, txn->snapshot_id);
    }
    rc = promote(lake, txn, con);
    if (rc)
        tarn_error_prefix(rc, "snapshot %lld is committed, but reading it back failed",
                          (long long)txn->snapshot_id);
    lk_txn_free(lake, txn, con);
    return rc;
}

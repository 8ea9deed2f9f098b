/*
 * ddl_int.h — what ddl.c, ddl_alter.c, ddl_alter_table.c and ddl_view.c
 * share, all of it defined in ddl_rows.c (not for other files: they use
 * ddl.h). All run inside the open transaction (lake->txn) and only queue
 * catalog rows and change tokens; nothing is written before the commit.
 */
#ifndef TARN_LAKE_DDL_INT_H
#define TARN_LAKE_DDL_INT_H

#include "lake/lake.h"
#include "lake/model.h"
#include "lake/txn.h"
#include "util/buf.h"

/* "kind:<schema>" or "kind:<schema>.<name>" (name NULL: the schema alone),
 * identifiers quoted as DuckLake writes its change tokens; malloc'd. */
char *ddl_name_token(const char *kind, const char *schema, const char *name);
/* Records that change token. */
void ddl_token_name(lk_txn *txn, const char *kind, const char *schema, const char *name);
/* Records change token "kind:<id>" (dropped_table, altered_table, …) and
 * marks the catalog changed (a new schema version). */
void ddl_changed(lk_txn *txn, const char *kind, int64_t id);
/* The schema a CREATE TABLE / VIEW names, or NULL with DuckLake's error
 * ("Schema "x" not found in DuckLakeCatalog "lake"") set. */
lk_schema *ddl_schema_to_create_in(lk_lake *lake, const char *schema);
/* Ends the live rows of catalog table `table` whose `key` column is `id`
 * at the transaction's snapshot. */
void ddl_end_rows(lk_lake *lake, const char *table, const char *key, int64_t id);
/* Opens in b the row of a new version of a schema, table or view as its
 * catalog table (ducklake_schema, _table, _view) lays it out:
 * "(id, 'uuid', begin, NULL, schema_id, 'name'" (schema_id < 0: a schema's
 * row, which has none). The caller adds the rest and the ')'. */
void ddl_object_row(tarn_buf *b, int64_t id, const char *uuid, int64_t begin, int64_t schema_id,
                    const char *name);
/* Records the row of a new version of a schema or table (`table`:
 * ducklake_schema or ducklake_table): ddl_object_row's columns, then its
 * path and whether that is relative to the parent's. */
void ddl_path_object_row(lk_txn *txn, const char *table, int64_t id, const char *uuid,
                         int64_t schema_id, const char *name, const char *path, int path_rel);

/* The columns of DuckDB table `shape` (`SELECT * FROM shape`, quoted by the
 * caller) become t's columns, with fresh column ids from 1. */
int ddl_read_shape(lk_table *t, duckdb_connection con, const char *shape);
/* The defaults and NOT NULL flags of TEMP table `shape_name` (unquoted). */
int ddl_read_constraints(lk_table *t, duckdb_connection con, const char *shape_name);
/* Queues the ducklake_column rows of column c (and its children) of t. */
void ddl_column_rows(lk_lake *lake, const lk_table *t, const lk_column *c);
/* DuckLake's error for a reserved column name (row_id, …) while the
 * table may inline. */
int ddl_reserved_error(const char *name);

/* The top-level column of t named `name` (case-insensitive), or NULL;
 * *index (optional) gets its position. */
lk_column *ddl_top_column(lk_table *t, const char *name, size_t *index);
/* Records that t was altered (altered_table:<id>, a new schema version). */
void ddl_altered(lk_lake *lake, const lk_table *t);
/* Sets c's and its children's begin snapshot. */
void ddl_set_begin(lk_column *c, int64_t snapshot);
/* Records, once per table and commit, that t's layout changed (a
 * schema_versions row; with new_columns, a new inlined-data table when t
 * inlines). */
void ddl_layout_changed(lk_lake *lake, lk_table *t, int new_columns);

/* Ends view v's live rows (and its tags) and records dropped_view:<id>. */
void ddl_drop_view_rows(lk_lake *lake, const lk_view *v);

#endif

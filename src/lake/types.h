/*
 * types.h — DuckDB types ↔ DuckLake column types.
 *
 * DuckLake stores one ducklake_column row per node of a column's type tree:
 * a STRUCT, LIST or MAP column is a row typed `struct`/`list`/`map` whose
 * children are rows of their own (list child `element`, map children `key`
 * and `value`), each with its own column id (= Parquet field id), assigned
 * depth-first, parents first. These functions convert between that tree and
 * DuckDB's logical types / SQL type text.
 */
#ifndef TARN_LAKE_TYPES_H
#define TARN_LAKE_TYPES_H

#include "lake/model.h"
#include "util/buf.h"

#include <duckdb.h>

/* Fills `col` (name, type, children, ids from *next_id onwards, parents
 * first) from a DuckDB logical type. Fails on types DuckLake cannot store
 * (ENUM, ARRAY, UNION, …) with a message naming the column. */
int lk_type_from_logical(lk_column *col, const char *name, duckdb_logical_type type,
                         int64_t *next_id);

/* The Parquet field ids DuckLake reserves for its own columns: a data
 * file's embedded row ids and per-row snapshots, and a delete file's two
 * columns (file_path, pos). */
#define LK_FIELD_ID_ROW_ID 2147483540LL
#define LK_FIELD_ID_SNAPSHOT 2147483539LL
#define LK_FIELD_ID_DELETE_PATH 2147483646LL
#define LK_FIELD_ID_DELETE_POS 2147483645LL

/* Appends the DuckDB SQL type of a DuckLake column tree, e.g.
 * STRUCT("a" INTEGER, "b" VARCHAR)[] — usable in CAST and CREATE TABLE. */
void lk_type_to_sql(tarn_buf *b, const lk_column *col);
/* The column type of `col` in an inlined-data table of a PostgreSQL
 * catalog, as DuckLake makes it there (BYTEA for VARCHAR and BLOB, the
 * text of nested, wide-integer and temporal values). */
void lk_type_to_pg_sql(tarn_buf *b, const lk_column *col);
/* A VARCHAR (or JSON) column: its inlined values are bytea in
 * PostgreSQL, read back as text with DuckDB's decode(). */
int lk_type_pg_is_bytea(const lk_column *col);

/* The DuckLake name (malloc'd) of DuckDB's name of a scalar type:
 * INTEGER → int32, DECIMAL(9,2) → decimal(9,2) (varchar for a name it
 * does not know). */
char *lk_type_lake_name(const char *sql);

/* 1 when the DuckLake type is a nested parent (struct, list, map). */
int lk_type_is_nested(const char *type);

/* 1 when some column of `t` is nested (struct, list, map). */
int lk_table_has_nested(const lk_table *t);
/* 1 when two column trees have the same ids, names and types throughout. */
int lk_column_same_tree(const lk_column *a, const lk_column *b);

/* 1 when values of the column can be inlined into the catalog: DuckLake
 * inlines every type but GEOMETRY, anywhere in a column's tree
 * (DuckLakeMetadataManager::SupportsInlining); a table with one gets no
 * inlined-data table and writes every insert to Parquet. */
int lk_type_inlinable(const lk_column *col);
/* 1 when `name` is one of an inlined-data table's own columns (row_id,
 * begin_snapshot, end_snapshot, …), case-insensitively. */
int lk_column_name_reserved(const char *name);
/* 1 when every column of `t` is inlinable and none has a reserved name. */
int lk_table_inlinable(const lk_table *t);

/* 0 when every column type of `t` (nested ones too) is one DuckLake knows;
 * else sets DuckLake's error for the first that is not (a catalog row
 * written wrong): that table cannot be read or written, the rest of the
 * lake can. */
int lk_table_check_types(const lk_table *t);

/* Appends the FIELD_IDS entry for `col` as used by COPY … (FIELD_IDS {…}):
 * name: id, or name: {__duckdb_field_id: id, child: …} for nested types. */
void lk_type_field_ids(tarn_buf *b, const lk_column *col);

#endif

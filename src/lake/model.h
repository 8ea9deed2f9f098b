/*
 * model.h — the in-memory picture of a DuckLake catalog at one snapshot.
 *
 * DuckLake keeps every version of every schema, table and column as rows
 * with [begin_snapshot, end_snapshot) ranges. tarn loads the rows visible
 * at one snapshot into these structs (lk_catalog_load), and works on a copy
 * of them while a transaction is open: DDL edits the copy, and the commit
 * writes the difference back as catalog rows.
 *
 * The copy is copy-on-write for tables. A lake of a thousand tables holds
 * tens of thousands of strings, and a model build opens one transaction
 * that changes one table: copying all of them at every begin and freeing
 * the old ones at every commit was an eighth of a 1,000-model run. So a
 * transaction's tables start out *borrowed* (they share their strings and
 * arrays with the committed catalog's table of the same id), lookups hand
 * out const pointers, and the only way to a writable table is
 * lk_catalog_table_edit(), which copies it first. At commit the working
 * model takes the borrowed memory over from the committed one
 * (lk_catalog_take_over) before that one is freed. Views, scans and writes are
 * all generated from this model, so it is the single source of truth for
 * "what does the lake look like right now, from this session's point of
 * view".
 */
#ifndef TARN_LAKE_MODEL_H
#define TARN_LAKE_MODEL_H

#include "lake/catdb.h"

#include <duckdb.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lk_column {
    int64_t id;    /* DuckLake column_id == Parquet field_id */
    int64_t begin; /* begin_snapshot of the live row */
    char *name;
    char *type;               /* DuckLake type name: int32, decimal(18,3), struct… */
    char *initial_default;    /* NULL: none */
    char *default_value;      /* as stored; the string "NULL" means none */
    char *default_value_type; /* "literal", "expression" or "" */
    int nulls_allowed;
    int64_t parent; /* parent column id, -1 for top level */
    char *comment;  /* COMMENT ON COLUMN (ducklake_column_tag 'comment'), or NULL */
    struct lk_column *children;
    size_t nchildren;
} lk_column;

typedef struct {
    char *name; /* ducklake_inlined_data_<tid>_<sv> */
    int64_t schema_version;
} lk_inlined;

/* One key of a table's partition spec: a source column and a transform
 * (identity, year, month, day, hour, bucket(N)). */
typedef struct {
    int64_t column_id;
    char *transform;
} lk_partkey;

/* One key of a table's sort order (SET SORTED BY): a DuckDB expression
 * over the table's columns as DuckDB renders it, its direction and where
 * NULLs go. */
typedef struct {
    char *expr;
    char *dialect;   /* "duckdb" (keys of another dialect are kept, not used) */
    int desc;        /* 1: DESC */
    int nulls_first; /* 1: NULLS FIRST, 0: NULLS LAST, -1: not said (stored and
                        used as NULLS LAST, but unequal to a stored NULLS_LAST) */
} lk_sortkey;

typedef struct {
    int64_t id, begin, schema_id;
    char *uuid, *name, *path;
    int path_rel;
    char *comment;        /* COMMENT ON TABLE (ducklake_tag 'comment'), or NULL */
    int64_t partition_id; /* live partition spec, -1 when none */
    lk_partkey *keys;     /* its keys (none: unpartitioned) */
    size_t nkeys;
    int64_t sort_id;   /* live sort order (ducklake_sort_info), -1 when none */
    lk_sortkey *sorts; /* its keys in sort_key_index order */
    size_t nsorts;
    lk_column *cols; /* top-level columns in column_order */
    size_t ncols;
    lk_inlined *inlined; /* ascending schema_version */
    size_t ninlined;
    int borrowed; /* heap fields belong to another catalog (lk_catalog_share) */
} lk_table;

typedef struct {
    int64_t id, begin;
    char *uuid, *name, *path;
    int path_rel;
} lk_schema;

typedef struct {
    int64_t id, begin, schema_id;
    char *uuid, *name;
    char *sql;     /* DuckDB SQL, the lake's name written {DUCKLAKE_CATALOG} */
    char *aliases; /* column aliases as stored: "a","b" or "" */
    char *comment; /* COMMENT ON VIEW (ducklake_tag 'comment'), or NULL */
} lk_view;

/* A macro parameter as ducklake_macro_parameters stores it: type and
 * default value type "unknown" when not given, default value "NULL". */
typedef struct {
    char *name, *type, *default_value, *default_type;
} lk_macro_param;

/* One implementation (overload) of a macro: ducklake_macro_impl. */
typedef struct {
    char *sql;  /* DuckDB's rendering of the expression or query */
    char *type; /* "scalar" or "table" */
    lk_macro_param *params;
    size_t nparams;
} lk_macro_impl;

/* A macro (ducklake_macro). A scalar and a table macro may share a name. */
typedef struct {
    int64_t id; /* -1 until the commit that creates it numbers it */
    int64_t begin, schema_id;
    char *name;
    int is_table;
    lk_macro_impl *impls;
    size_t nimpls;
} lk_macro;

typedef struct {
    int64_t snapshot_id, schema_version, next_catalog_id, next_file_id;
    lk_macro *macros;
    size_t nmacros;
    lk_view *views;
    size_t nviews;
    lk_schema *schemas;
    size_t nschemas;
    lk_table *tables;
    size_t ntables;
} lk_catalog;

/* (load.c) Loads the catalog visible at `snapshot` (-1: the latest) from
 * catalog database `db` (con: the session's connection, as catdb.h takes
 * it). */
int lk_catalog_load(lk_catalog *out, lk_catdb *db, duckdb_connection con, int64_t snapshot);
void lk_catalog_free(lk_catalog *c);
/* (part of lk_catalog_load) Row r of the macros query (macro_id,
 * begin_snapshot, schema_id, macro_name, impl_id, sql, type, column_id,
 * parameter_name, parameter_type, default_value, default_value_type):
 * a new macro, a new implementation of the last one, and (when the
 * implementation has parameters) one parameter. */
void lk_catalog_add_macro_row(lk_catalog *c, const duck_table *t, size_t r);
/* The transaction's working model: `dst` gets its own schemas and views and
 * borrows every table of `src`, which must outlive `dst` or hand the memory
 * over with lk_catalog_take_over(). */
void lk_catalog_share(lk_catalog *dst, const lk_catalog *src);
/* `c`, a working model that replaces `from`, takes over the memory its
 * borrowed tables share with `from`: afterwards `c` owns all its tables and
 * freeing `from` frees only what `c` no longer uses. */
void lk_catalog_take_over(lk_catalog *c, lk_catalog *from);
/* Copies every borrowed table of `c` (before its lender goes away). */
void lk_catalog_unshare(lk_catalog *c);

lk_schema *lk_catalog_schema(lk_catalog *c, const char *name);
lk_schema *lk_catalog_schema_by_id(lk_catalog *c, int64_t id);
const lk_table *lk_catalog_table(const lk_catalog *c, int64_t schema_id, const char *name);
const lk_table *lk_catalog_table_by_id(const lk_catalog *c, int64_t id);
/* Table `name` of schema `schema` (both matched ignoring case, as
 * DuckDB matches identifiers); NULL when either is missing. */
const lk_table *lk_catalog_table_named(const lk_catalog *c, const char *schema, const char *name);
/* `t` (one of c's tables, or NULL) made writable: copied first when it is
 * borrowed. The one way to change a table of a working model. */
lk_table *lk_catalog_table_edit(lk_catalog *c, const lk_table *t);

/* Removes the table / schema at index i (frees it). */
void lk_catalog_remove_table(lk_catalog *c, size_t i);
void lk_catalog_remove_schema(lk_catalog *c, size_t i);
/* Appends a zeroed table/schema and returns it. */
lk_table *lk_catalog_add_table(lk_catalog *c);
lk_schema *lk_catalog_add_schema(lk_catalog *c);

lk_view *lk_catalog_view(lk_catalog *c, int64_t schema_id, const char *name);
lk_view *lk_catalog_add_view(lk_catalog *c);
void lk_catalog_remove_view(lk_catalog *c, size_t i);

/* The live macro `name` of a schema (is_table: a table macro), or NULL. */
lk_macro *lk_catalog_macro(lk_catalog *c, int64_t schema_id, const char *name, int is_table);
/* Appends a zeroed macro and returns it; removes (frees) the one at i. */
lk_macro *lk_catalog_add_macro(lk_catalog *c);
void lk_catalog_remove_macro(lk_catalog *c, size_t i);
void lk_macro_free(lk_macro *m);
void lk_macro_copy(lk_macro *dst, const lk_macro *src);

void lk_column_free(lk_column *col);
void lk_column_copy(lk_column *dst, const lk_column *src);
void lk_table_free(lk_table *t);
void lk_table_copy(lk_table *dst, const lk_table *src);
/* Replaces t's sort keys with copies of `keys` (n == 0: none). */
void lk_table_set_sorts(lk_table *t, int64_t sort_id, const lk_sortkey *keys, size_t n);

/* The top-level column with id `id`, or NULL. */
const lk_column *lk_table_column(const lk_table *t, int64_t id);

/* Highest column id in the table's column tree (0 when none). */
int64_t lk_table_max_column_id(const lk_table *t);
/* The largest key(c) over cols and their nested fields, 0 for none. */
int64_t lk_columns_max(const lk_column *cols, size_t n, int64_t (*key)(const lk_column *));

#endif

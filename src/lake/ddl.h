/*
 * ddl.h — schema and table DDL on a lake, inside the open transaction.
 *
 * Each function edits the transaction's working catalog model and appends
 * the catalog rows DuckLake writes for the same change (ids from the
 * snapshot counters, paths from the names, change tokens). Validation
 * happens before anything is recorded, so a failed call changes nothing.
 */
#ifndef TARN_LAKE_DDL_H
#define TARN_LAKE_DDL_H

#include "lake/lake.h"

int lk_create_schema(lk_lake *lake, duckdb_connection con, const char *name, int if_not_exists);
int lk_drop_schema(lk_lake *lake, duckdb_connection con, const char *name, int if_exists,
                   int cascade);

/* Creates table schema.name with the columns of DuckDB table `shape`
 * (a TEMP table whose column types, defaults and NOT NULL flags become the
 * lake table's). *table_id gets the new id. */
int lk_create_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                    const char *shape, int64_t *table_id);
int lk_drop_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                  int if_exists);

/* Before data_inlining_row_limit is set above 0 for `table` (else every
 * table of schema `schema_id`, else of the lake, when -1, in `cat`):
 * refuses when a table it turns inlining on for has a column named like an
 * inlined-data table's own columns (row_id, begin_snapshot, …). A table
 * whose own (or, for the global option, schema's) limit is 0 stays off. */
int lk_inlining_check(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                      const lk_table *table, int64_t schema_id);

/* ---- ALTER TABLE ---- */

typedef enum {
    LK_ALTER_ADD_COLUMN,  /* column from `shape` (one column) */
    LK_ALTER_DROP_COLUMN, /* column */
    LK_ALTER_RENAME_COLUMN, /* column → new_name */
    LK_ALTER_SET_TYPE,    /* column → type of `shape` */
    LK_ALTER_SET_DEFAULT, /* column → default of `shape` */
    LK_ALTER_DROP_DEFAULT,
    LK_ALTER_SET_NOT_NULL,
    LK_ALTER_DROP_NOT_NULL,
    LK_ALTER_RENAME_TABLE, /* → new_name */
    LK_ALTER_SET_PARTITION, /* keys (nkeys == 0: RESET PARTITIONED BY) */
    LK_ALTER_SET_SORT,      /* sort_keys (nsort_keys == 0: RESET SORTED BY) */
} lk_alter_kind;

typedef struct {
    lk_alter_kind kind;
    const char *column;   /* the column altered */
    const char *new_name; /* RENAME targets */
    const char *shape;    /* TEMP table holding the new column definition */
    int if_exists, if_not_exists;
    const char *const *path; /* a nested field: parent names then the field's */
    size_t npath;            /* 0: a top-level column (`column`) */
    const char *const *key_columns;    /* SET PARTITIONED BY: source columns */
    const char *const *key_transforms; /* identity, year, month, day, hour, bucket(N) */
    size_t nkeys;
    const lk_sortkey *sort_keys; /* SET SORTED BY: expressions as written */
    size_t nsort_keys;
} lk_alter;

/* Applies one ALTER TABLE action, recording DuckLake's catalog rows: the
 * old column row ends and a new one with the same column id begins; the
 * table's schema version and (with inlining) a new inlined-data table. */
int lk_alter_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                   const lk_alter *op);

/* COMMENT ON TABLE schema.name (column NULL) or COMMENT ON COLUMN
 * schema.name.column IS text (NULL text removes the comment). */
int lk_comment(lk_lake *lake, const char *schema, const char *name, const char *column,
               const char *text);

/* ---- views ---- */

/* Creates view schema.name with `sql` (DuckDB SQL with the lake's own name
 * written {DUCKLAKE_CATALOG}, as DuckLake stores it) and `aliases` (the
 * stored column alias list, "" for none). */
int lk_create_view(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                   const char *sql, const char *aliases, int or_replace, int if_not_exists);
int lk_drop_view(lk_lake *lake, const char *schema, const char *name, int if_exists);
/* ALTER VIEW schema.name RENAME TO new_name: the view keeps its id (and
 * its comment); a view this transaction wrote is renamed in place. */
int lk_rename_view(lk_lake *lake, const char *schema, const char *name, const char *new_name);
/* COMMENT ON VIEW schema.name IS text (NULL removes the comment). */
int lk_comment_view(lk_lake *lake, const char *schema, const char *name, const char *text);
/* DuckDB's error when schema.name is a view and a table statement (or a
 * table and a view statement, want_view) meets it: "Existing object v is
 * of type View, trying to <action> type Table". 0 when no such clash. */
int lk_entry_conflict(lk_lake *lake, const char *schema, const char *name, int want_view,
                      const char *action);

#endif

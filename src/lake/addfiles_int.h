/*
 * addfiles_int.h — what addfiles.c, addfiles_map.c and addfiles_stats.c
 * share: a registered file's Parquet schema as a tree and the state of
 * mapping it onto a table. Not for other files.
 */
#ifndef TARN_LAKE_ADDFILES_INT_H
#define TARN_LAKE_ADDFILES_INT_H

#include "duck/duck.h"
#include "lake/hive.h"
#include "lake/model.h"
#include "lake/namemap.h"
#include "lake/txn.h"

#include <stddef.h>
#include <stdint.h>

struct lk_add_files_opts;

/* One element of a file's Parquet schema (parquet_schema()). */
typedef struct pcol {
    char *name, *type, *converted, *logical;
    int64_t scale, precision; /* -1: not set */
    int64_t leaf;             /* leaf column index (parquet_metadata's column_id), -1 for groups */
    struct pcol *children;
    size_t nchildren;
} pcol;

/* A mapped leaf of the file and the table column it fills. */
typedef struct {
    int64_t leaf;
    const lk_column *col;
} leaf_target;

/* A value a file takes from its hive path for a partition key or column. */
typedef struct {
    int64_t column_id;
    char *value; /* canonical text of the typed value; NULL: SQL NULL */
    int bucket;  /* a bucket key: no statistics from it */
} path_value;

/* The file being mapped. */
typedef struct {
    duckdb_connection con;
    const struct lk_add_files_opts *o; /* addfiles.h */
    const lk_table *t;
    const char *filename;
    int64_t rows;
    lk_hive hive;
    leaf_target *leaves;
    size_t nleaves;
    path_value *pvs;
    size_t npvs;
} file_map;

void lk_addfiles_pcol_free(pcol *c);
void lk_addfiles_map_free(file_map *f);
/* Builds `count` children of `parent` from parquet_schema() rows starting
 * at *row (pre-order: a group is followed by its num_children subtrees);
 * *next_leaf numbers the leaves as parquet_metadata's column_id does. */
void lk_addfiles_schema_tree(pcol *parent, int64_t count, const duck_table *r, size_t *row,
                             size_t end, int64_t *next_leaf);
/* The values the file's hive path gives the table's partition keys. */
int lk_addfiles_map_partition_keys(file_map *f);
/* Maps file columns `cols` onto table columns `fields` by name (`prefix`:
 * the parent's path, "" at the top), into name-mapping entries. */
int lk_addfiles_map_columns(lk_nm_entry **out, size_t *nout, file_map *f, pcol *cols, size_t ncols,
                            const lk_column *fields, size_t nfields, const char *prefix);
/* Records the file's ducklake_file_column_stats rows from footer rows
 * [from, to) of `meta` and folds them into the table's delta. */
int lk_addfiles_record_stats(lk_lake *lake, file_map *f, int64_t file_id, const duck_table *meta,
                             size_t from, size_t to, lk_table_delta *d);

#endif

/*
 * namemap.h — DuckLake's name mappings: how the columns of a Parquet file
 * that has no field ids (one registered with ducklake_add_data_files) map
 * to a table's columns.
 *
 * A mapping is one ducklake_column_mapping row (mapping_id, table_id,
 * type 'map_by_name') and its ducklake_name_mapping rows (mapping_id,
 * column_id, source_name, target_field_id, parent_column, is_partition):
 * a tree of entries, numbered in pre-order from 0 within the mapping, each
 * naming a file column (source_name) and the table column id it holds
 * (target_field_id); is_partition entries are read from the file's hive
 * path (key = source_name) instead of the file. A data file using one has
 * ducklake_data_file.mapping_id set. Mappings are shared: a file whose
 * mapping equals an existing one of the table (same names and targets at
 * every level, in any order) reuses its id.
 */
#ifndef TARN_LAKE_NAMEMAP_H
#define TARN_LAKE_NAMEMAP_H

#include "lake/catdb.h"

#include <duckdb.h>
#include <stddef.h>
#include <stdint.h>

typedef struct lk_nm_entry {
    char *source;   /* the file's column name (or the hive key) */
    int64_t target; /* the table's column id */
    int hive;       /* read from the hive partition path */
    struct lk_nm_entry *children;
    size_t nchildren;
} lk_nm_entry;

typedef struct {
    int64_t id, table_id;
    lk_nm_entry *cols;
    size_t ncols;
} lk_namemap;

typedef struct {
    lk_namemap *maps;
    size_t n;
} lk_namemap_set;

void lk_nm_entry_free(lk_nm_entry *e);
void lk_namemap_free(lk_namemap *m);
void lk_namemap_set_free(lk_namemap_set *s);
/* Appends a deep copy of `m` to `s`. */
void lk_namemap_set_add(lk_namemap_set *s, const lk_namemap *m);
/* The mapping with id `id` in `s`, or NULL. */
const lk_namemap *lk_namemap_set_find(const lk_namemap_set *s, int64_t id);

/* 1 when `a` and `b` map the same names to the same columns at every
 * level (in any order) for the same table: DuckLake's test for reusing a
 * mapping. */
int lk_namemap_compatible(const lk_namemap *a, const lk_namemap *b);

/* Reads from catalog `meta` the mappings of table `table_id` (all of them,
 * table_id -1: those with the ids ids[0..nids)) into `out`. */
int lk_namemap_load(lk_namemap_set *out, lk_catdb *db, duckdb_connection con, int64_t table_id,
                    const int64_t *ids, size_t nids);

/* The entry of `entries` that targets column `column_id`, or NULL. */
const lk_nm_entry *lk_namemap_target(const lk_nm_entry *entries, size_t n, int64_t column_id);

#endif

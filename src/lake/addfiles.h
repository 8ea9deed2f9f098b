/*
 * addfiles.h — ducklake_add_data_files: registering Parquet files that
 * were written outside the lake as data files of a table, in the open
 * lake transaction.
 *
 * As DuckLake does: each file's columns are matched to the table's by
 * name (case-insensitively, level by level into structs, lists and maps),
 * each match type-checked, and the result kept as a name mapping
 * (namemap.h) that the file's ducklake_data_file row points at; columns
 * can also come from the file's hive path (key=value directories). The
 * statistics come from the file's footer. The file is not copied: the
 * catalog points at it where it is (relative to the table's directory
 * when it lies there), and a rollback leaves it alone.
 */
#ifndef TARN_LAKE_ADDFILES_H
#define TARN_LAKE_ADDFILES_H

#include "lake/lake.h"

typedef struct lk_add_files_opts {
    const char *schema; /* the table's schema */
    const char *table;
    char **globs; /* files or glob patterns, in order */
    size_t nglobs;
    int allow_missing;        /* table columns the file lacks read as their default */
    int ignore_extra_columns; /* file columns the table lacks are skipped */
    int hive;                 /* hive_partitioning: -1 automatic, 0 off, 1 on */
} lk_add_files_opts;

/* Registers the files (each file once, in glob order; files with no rows
 * only add their mapping) in the lake's open transaction. */
int lk_add_data_files(lk_lake *lake, duckdb_connection con, const lk_add_files_opts *o);

#endif

/*
 * filestats.h — writing a Parquet file with DuckDB's COPY … RETURN_STATS
 * and reading back what DuckDB measured while writing it: row count, file
 * and footer size, and per leaf column value/null counts, min/max and NaN.
 * These become ducklake_data_file and ducklake_file_column_stats rows, so
 * the catalog describes the file exactly as DuckLake would.
 */
#ifndef TARN_LAKE_FILESTATS_H
#define TARN_LAKE_FILESTATS_H

#include "lake/geostats.h"

#include <duckdb.h>
#include <stdint.h>

typedef struct {
    char *path; /* DuckDB's quoted dotted path: "st"."x" */
    char *min, *max; /* NULL: not recorded */
    int64_t null_count, num_values, column_size;
    int has_nan; /* -1: not recorded */
    int has_geo; /* a GEOMETRY column: geo holds its box and types */
    char *variant_type; /* a VARIANT's metadata leaf: the shredded layout, else NULL */
    lk_geo_stats geo;
} lk_column_stat;

typedef struct {
    char *filename;
    int64_t count, file_size, footer_size;
    lk_column_stat *cols;
    size_t ncols;
    /* a partitioned write's hive keys and their values (NULL: SQL NULL) */
    char **part_keys, **part_values;
    size_t nparts;
} lk_file_stats;

/* Runs a COPY … (FORMAT parquet, …, RETURN_STATS) statement and returns the
 * stats of every file it wrote (*n files, caller frees with
 * lk_file_stats_free). */
int lk_copy_with_stats(lk_file_stats **out, size_t *n, duckdb_connection con, const char *sql);
void lk_file_stats_free(lk_file_stats *files, size_t n);
/* The stats of the column with DuckDB path `path`, or NULL. */
const lk_column_stat *lk_file_stats_column(const lk_file_stats *f, const char *path);

#endif

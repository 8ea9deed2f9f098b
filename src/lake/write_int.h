/*
 * write_int.h — what write.c, write_files.c and write_part.c share: the
 * pieces of one write, below the statements of write.h.
 *
 * write.c stages rows and decides where they go (inlined or Parquet,
 * partitioned or not); write_part.c writes a partitioned table's files;
 * write_files.c writes and registers Parquet files; write_source.c, below
 * them all, builds the SQL of the rows they take. Each calls only the
 * files after it in this list. Not for other files.
 */
#ifndef TARN_LAKE_WRITE_INT_H
#define TARN_LAKE_WRITE_INT_H

#include "lake/colstats_set.h"
#include "lake/filestats.h"
#include "lake/handle.h"
#include "lake/txn.h"
#include "util/buf.h"

#include <stdint.h>

/* The partition a file belongs to: the spec id and one value per key
 * (NULL for a NULL key). */
typedef struct lk_file_partition {
    int64_t partition_id;
    char **values;
    size_t n;
} lk_file_partition;

/* The Parquet files of one write, not yet part of the transaction: one
 * file in a partition's directory, else as many as DuckLake's target file
 * size and per_thread_output cut the rows into. */
typedef struct lk_new_files {
    char *dir;            /* the table's directory */
    char **rel, **abs;    /* file i, relative to dir and as written */
    lk_file_stats *stats; /* stats[i]: what DuckDB measured of file i */
    size_t n;
    int64_t count; /* rows in all of them */
    tarn_buf made; /* directories the write created (lk_write_dirs_missing) */
} lk_new_files;

/* COPYs (source) (NULL: the stage) into new files under the table's
 * directory (`subdir`: a partition's hive directories, one file; "": as
 * many as the target file size makes); f->stats gets what DuckDB measured.
 * Registers them (an empty one is deleted) / deletes them and the
 * directories made for them / frees f. */
int lk_new_files_write(lk_new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
                       int with_rowid, const char *source, const char *subdir);
int lk_new_files_register(lk_new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
                          lk_table_delta *d, int with_rowid, const lk_file_partition *part);
void lk_new_files_discard(lk_new_files *f);
void lk_new_files_free(lk_new_files *f);

/* The stage table (lk_stage_name), as the write's SQL names it. */
#define LK_STAGE "temp.main.__tarn_stage"

/* ---- the rows a write takes (write_source.c) ---- */

/* The table's columns, quoted, comma-separated. */
void lk_write_columns(tarn_buf *b, const lk_table *t);
/* " ORDER BY [sort keys, ]rowid" over the stage: the order rows are
 * written in, the table's sort order first (SET SORTED BY, when `sorted`)
 * unless they are UPDATE images (with_rowid), which DuckLake writes as
 * they come. */
void lk_write_stage_order(tarn_buf *b, const lk_table *t, int with_rowid, int sorted);
/* The rows a write takes: `source` (in the table's sort order, if any), or
 * the stage's rows in order (__tarn_rowid as _ducklake_internal_row_id). */
void lk_write_source_sql(tarn_buf *b, const lk_table *t, int with_rowid, const char *source);
/* SELECT the stage's columns (and __tarn_rowid with_rowid) in write order. */
void lk_write_stage_rows(tarn_buf *b, const lk_table *t, int with_rowid);

/* ---- Parquet files (write_files.c) and partitions (write_part.c) ---- */

/* The end of a COPY's options: the table's writer options, FIELD_IDS,
 * GEOPARQUET_VERSION and RETURN_STATS, and the closing parenthesis. */
void lk_write_copy_options(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                           int with_rowid);
/* The directories from `dir` up that do not exist yet, deepest first, one
 * per line; lk_write_dirs_remove removes those of such a list that are empty. */
void lk_write_dirs_missing(tarn_buf *out, const char *dir);
void lk_write_dirs_remove(const char *list);
/* Makes written file `abs` (`rel` to the table's directory; fs: its stats)
 * part of the transaction: an id, its catalog rows, the table's row ids. */
int lk_write_file_register(lk_lake *lake, duckdb_connection con, const lk_table *t,
                           lk_table_delta *d, int with_rowid, const char *rel, const char *abs,
                           const lk_file_stats *fs, const lk_file_partition *part);
/* Writes the rows of `source` (NULL: the stage) into new Parquet files
 * under the table's directory (`subdir`: a partition's hive directories,
 * may be "") and registers them. An empty result writes nothing. */
int lk_write_files(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_table_delta *d,
                   int with_rowid, const char *source, const char *subdir,
                   const lk_file_partition *part);
/* Writes `source` (NULL: the stage) into a partitioned table, a file per
 * partition. */
int lk_write_partitioned(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_table_delta *d,
                         int with_rowid, const char *source);

#endif

/*
 * pqopts.h — how a table's data files are written, from DuckLake's options
 * (table, else schema, else global ducklake_metadata rows): the Parquet
 * writer's codec, level, format version and row group sizes; the size
 * inserts cut their files at (the session's ducklake_target_file_size
 * first); whether a parallel insert writes a file per thread.
 */
#ifndef TARN_LAKE_PQOPTS_H
#define TARN_LAKE_PQOPTS_H

#include "lake/handle.h"
#include "util/buf.h"

#include <duckdb.h>
#include <stdint.h>

/* DuckLake's target file size when nothing sets one: 512 MiB. */
#define LK_DEFAULT_TARGET_FILE_SIZE (INT64_C(1) << 29)

/* Appends the COPY … (FORMAT parquet, …) options the options of table t
 * ask for (COMPRESSION, COMPRESSION_LEVEL, PARQUET_VERSION, ROW_GROUP_SIZE,
 * ROW_GROUP_SIZE_BYTES), each followed by ", "; nothing when none is set
 * (DuckDB's defaults, as DuckLake leaves them). */
void lk_pqopts_sql(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t);

/* The size an insert into t cuts its files at, in bytes. */
int64_t lk_pqopts_target_file_size(lk_lake *lake, duckdb_connection con, const lk_table *t);

/* 1 when an insert into t writes one file per thread (per_thread_output). */
int lk_pqopts_per_thread(lk_lake *lake, duckdb_connection con, const lk_table *t);

#endif

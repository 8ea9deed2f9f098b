/*
 * delmask.h — deleted rows as per-file bitmaps, for scans.
 *
 * A table's reads skip the rows its delete files list. An anti-join of
 * (file, position) pairs costs a hash probe per row read; DuckLake's and
 * Iceberg's readers test a bitmap instead. tarn registers the scalar
 * function
 *
 *     __tarn_deleted(spec VARCHAR, file_index UBIGINT, pos BIGINT) → BOOLEAN
 *     __tarn_deleted(spec VARCHAR, pos BIGINT) → BOOLEAN    (file index 0)
 *
 * on the session's database. `spec` is a constant naming, per file index of
 * the read_parquet list, the delete file to apply and the snapshot to read it
 * at; the function loads each delete file once into a bitmap (shared by every
 * query that names it, kept while queries use it and a while after), and
 * tests one bit per row. Delete files never change, so a view that calls
 * it holds no state of its own: the spec says everything. The two-argument
 * form filters on one column, so DuckDB pushes it into the Parquet scan.
 */
#ifndef TARN_LAKE_DELMASK_H
#define TARN_LAKE_DELMASK_H

#include "util/buf.h"

#include <duckdb.h>
#include <stdint.h>

/* Registers __tarn_deleted on con's database unless it is there. */
int lk_delmask_register(duckdb_connection con);
/* Closes the connection the filter reads delete files with (to the parser
 * database, duck.h), before that database is closed at the process's end. */
void lk_delmask_release(void);

/* Builds a spec: lk_delmask_spec_begin, then one lk_delmask_spec_file per
 * file with a delete file, then quote the buffer as an SQL literal. */
void lk_delmask_spec_begin(tarn_buf *spec, int64_t snapshot);
void lk_delmask_spec_file(tarn_buf *spec, size_t file_index, const char *delete_path);

#endif

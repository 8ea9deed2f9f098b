/*
 * dvec.h — Iceberg v3 deletion vectors (deletion-vector-v1 blobs, Roaring
 * bitmaps of row positions), the delete files DuckLake writes with
 * WRITE_DELETION_VECTORS (format 'puffin' in ducklake_delete_file; the
 * file is the blob itself). tarn reads them (local files; the scan's
 * bitmaps in delmask.c, the SQL that merges delete files through
 * __tarn_dv_positions), and writes them for DELETEs when the lake is
 * attached with WRITE_DELETION_VECTORS (deletes.c).
 */
#ifndef TARN_LAKE_DVEC_H
#define TARN_LAKE_DVEC_H

#include "util/buf.h"

#include <duckdb.h>
#include <stddef.h>
#include <stdint.h>

/* Called once per deleted position. */
typedef void (*lk_dvec_add_fn)(void *ctx, int64_t pos);

/* Whether `data` starts as a deletion vector (its magic after the length). */
int lk_dvec_is(const unsigned char *data, size_t len);
/* The positions of the deletion vector data[0, len) into add(); fails
 * (nothing promised about what add() got) on a bad length, checksum or
 * bitmap. */
int lk_dvec_parse(const unsigned char *data, size_t len, lk_dvec_add_fn add, void *ctx);
/* Reads file `path`: *is_dv 0 when it is not a local deletion vector (a
 * Parquet delete file, or a path the process cannot open), else its
 * positions into add(). */
int lk_dvec_read_file(const char *path, int *is_dv, lk_dvec_add_fn add, void *ctx);
/* The deletion vector of positions pos[0, n) (ascending, distinct, >= 0)
 * appended to out, as DuckLake writes it (array and bitset containers). */
void lk_dvec_encode(tarn_buf *out, const int64_t *pos, size_t n);
/* CRC-32 (IEEE, as the blob's checksum). */
uint32_t lk_dvec_crc32(const unsigned char *p, size_t n);

/* dvec_fn.c: registers __tarn_dv_positions(path) (rows of pos BIGINT) in
 * con's database; whether `path` is a local deletion vector; the SQL of a
 * relation of its positions (pos, and snap_column NULL when given), where
 * SQL reads a Parquet delete file with read_parquet(…). */
int lk_dvec_register(duckdb_connection con);
int lk_dvec_file_is(const char *path);
void lk_dvec_source_sql(tarn_buf *b, const char *path, const char *snap_column);

#endif

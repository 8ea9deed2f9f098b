/*
 * bucket.h — DuckLake's bucket(N) partition transform: a file's key is
 * (murmur3_32(value) & 2147483647) % N, stored as 'bucket(N)' in
 * ducklake_partition_column, hive directory key `bucket`. tarn registers
 * murmur3_32(x) on its DuckDB connections (the function DuckLake adds) and
 * writes key expressions over it. See bucket.c.
 */
#ifndef TARN_LAKE_BUCKET_H
#define TARN_LAKE_BUCKET_H

#include "util/buf.h"

#include <duckdb.h>
#include <stdint.h>

/* How DuckLake hashes a value of a column type (murmur3.c): as a 64-bit
 * integer, as a double, as its bytes, or as the bytes of its text form
 * (CAST(x AS VARCHAR): wide integers, unsigned integers, UUID, INTERVAL,
 * DECIMAL of more than 18 digits, STRUCT, LIST, MAP). */
typedef enum { LK_HASH_LONG, LK_HASH_DOUBLE, LK_HASH_BYTES, LK_HASH_TEXT } lk_hash_form;

/* The hash form of a DuckLake column type ("int32", "decimal(20,2)", …). */
lk_hash_form lk_bucket_form(const char *lake_type);

/* 1 when `transform` is "bucket(N)" (1 <= N <= INT32_MAX), N in *n. */
int lk_bucket_parse(const char *transform, int32_t *n);

/* Checks the N of bucket(N, col) as written in SQL: an integer from 1 to
 * 2147483647; *n receives it. TARN_EINVALID with DuckLake's message otherwise. */
int lk_bucket_check_count(const char *text, int32_t *n);

/* Appends the key expression of bucket(n) over `column` (a name, quoted
 * here) of DuckLake type `lake_type`: an INTEGER from 0 to n - 1. */
void lk_bucket_key_expr(tarn_buf *b, const char *column, const char *lake_type, int32_t n);

/* The same key over an SQL expression `expr` (a value of that type). */
void lk_bucket_key_of(tarn_buf *b, const char *expr, const char *lake_type, int32_t n);

/* Registers murmur3_32(x) -> INTEGER on `con`: DuckLake's function, the
 * same value for every scalar type; a nested value (which DuckLake hashes
 * by its text) is refused with a hint to cast it to VARCHAR. */
int lk_bucket_register(duckdb_connection con);

#endif

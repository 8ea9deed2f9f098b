/*
 * hive.h — the key=value directories of a file path, read as DuckDB's
 * HivePartitioning::Parse reads them (files registered with
 * ducklake_add_data_files take partition values from their path).
 */
#ifndef TARN_LAKE_HIVE_H
#define TARN_LAKE_HIVE_H

#include "lake/model.h"
#include "util/buf.h"

#include <stddef.h>

typedef struct {
    char **keys, **values; /* values as written (still %-escaped) */
    size_t n;
} lk_hive;

/* The key=value directories of `path`, first occurrence of a key kept. */
void lk_hive_parse(lk_hive *out, const char *path);
void lk_hive_free(lk_hive *h);
/* The raw value of key `key` (exact case), or NULL when the path has none. */
const char *lk_hive_get(const lk_hive *h, const char *key);
/* 1 when raw value `v` stands for SQL NULL for a column of DuckLake type
 * `type` (NULL, __HIVE_DEFAULT_PARTITION__, empty for a non-string). */
int lk_hive_is_null(const char *v, const char *type);
/* `v` with %XX escapes decoded (malloc'd). */
char *lk_hive_unescape(const char *v);
/* Appends the value of raw `v` as a constant of column `c`'s type:
 * CAST('…' AS T) or NULL::T. */
void lk_hive_value_sql(tarn_buf *b, const char *v, const lk_column *c);

#endif

/*
 * variantstats.h — the statistics DuckLake keeps for a VARIANT column.
 *
 * DuckDB's Parquet writer shreds a VARIANT into a metadata leaf, an
 * untyped `value` leaf and, where the values agree on a type, `typed_value`
 * leaves (nested through objects and arrays), and reports statistics per
 * leaf. DuckLake keeps, per data file, the variant column's counts from
 * the metadata leaf and, for every sub-field that is *fully* shredded (its
 * untyped leaf holds nothing but NULL), the typed leaf's statistics under a
 * path: `root` for the value itself, `"name"` for an object field,
 * `element` for array elements, joined by dots (`"a".element`). Those go
 * to ducklake_file_variant_stats (one row per field) and, as a JSON array,
 * to the extra_stats of ducklake_file_column_stats and
 * ducklake_table_column_stats. The table's fields are the ones every write
 * had, with the same type; the others are dropped (DuckLake's
 * DuckLakeColumnVariantStats::Merge).
 */
#ifndef TARN_LAKE_VARIANTSTATS_H
#define TARN_LAKE_VARIANTSTATS_H

#include "lake/filestats.h"
#include "util/buf.h"

#include <stdint.h>

typedef struct {
    char *path;          /* root, "a", element, "a".element, … */
    char *type;          /* DuckLake type of the shredded values: int32, varchar, … */
    char *sql_type;      /* the same in DuckDB's spelling (for typed comparisons) */
    int has_counts;      /* null_count and num_values known */
    int64_t null_count;  /* NULL values of the field (a missing field is NULL) */
    int64_t num_values;  /* values including NULLs */
    int64_t column_size; /* bytes of the typed leaf */
    char *min, *max;     /* NULL: not recorded */
    int contains_nan;    /* -1: not recorded */
} lk_variant_field;

typedef struct {
    lk_variant_field *fields; /* sorted by path */
    size_t n;
} lk_variant_stats;

void lk_variant_free(lk_variant_stats *v);
void lk_variant_copy(lk_variant_stats *dst, const lk_variant_stats *src);

/* From the RETURN_STATS of one written file: the figures of the VARIANT
 * column at DuckDB stats path `path` ("v"): its counts (from the metadata
 * leaf; *size: the bytes of all its leaves) and its fully shredded fields. */
void lk_variant_from_file(lk_variant_stats *out, int64_t *null_count, int64_t *num_values,
                          int64_t *size, const lk_file_stats *fs, const char *path);

/* DuckLake's merge of one more write's fields into `acc`: a field both
 * have with the same type merges its counts and bounds, any other is
 * dropped; nothing is added to an empty set. */
void lk_variant_merge(lk_variant_stats *acc, const lk_variant_stats *add);

/* Appends the extra_stats JSON array (DuckLake writes it through yyjson:
 * compact, keys in its order); only call with v->n > 0. */
void lk_variant_json(tarn_buf *b, const lk_variant_stats *v);

/* Appends a SQL expression over the stored extra_stats text `col` of a
 * table's VARIANT column that is the stored fields merged with `add`
 * (NULL when no field is left). */
void lk_variant_merge_sql(tarn_buf *b, const char *col, const lk_variant_stats *add);

#endif

/*
 * colstats_set.h — the column statistics of a write (one entry per leaf
 * column), shared by colstats.c (computing and merging them) and txn.h
 * (a transaction keeps each table's running stats until its commit).
 */
#ifndef TARN_LAKE_COLSTATS_SET_H
#define TARN_LAKE_COLSTATS_SET_H

#include "lake/geostats.h"
#include "lake/model.h"
#include "lake/variantstats.h"

#include <stdint.h>

typedef struct {
    const lk_column *col; /* the leaf column (valid while the model is unchanged) */
    int64_t col_id;       /* its id and SQL type, kept for the commit */
    char *sql_type;
    int text_order;       /* bounds compare as text (see colstats.c) */
    char *path;           /* DuckDB stats path: "st"."a" */
    char *min, *max;      /* NULL: unknown */
    int64_t value_count, null_count, column_size;
    int contains_nan;  /* -1: not recorded */
    lk_geo_stats *geo; /* a GEOMETRY leaf's box and types (extra_stats), else NULL */
    lk_variant_stats *variant; /* a VARIANT leaf's shredded fields, else NULL */
} lk_leaf_stats;

typedef struct {
    lk_leaf_stats *leaves;
    size_t n;
} lk_stats_set;

/* Frees what the set holds and empties it. */
void lk_stats_free(lk_stats_set *s);
/* Keeps the leaves i with keep[i] set (in order), frees the others: a
 * write that has stats for some columns only (a registered file). */
void lk_stats_keep(lk_stats_set *s, const int *keep);

#endif

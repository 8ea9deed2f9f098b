/*
 * colstats.h — column statistics of a write, and their merge into the
 * table-level ducklake_table_column_stats rows.
 *
 * DuckLake records, per data file and per leaf column (struct/list/map
 * parents have none), value and null counts and min/max as strings; per
 * table it keeps all-time bounds, widened by every insert. The merge rule
 * DuckLake follows (measured from its output): a write with no non-NULL
 * value leaves the bounds alone; a write whose bounds are unknown (a NaN
 * column, a HUGEINT) makes them unknown; unknown bounds are replaced by
 * the next known ones; otherwise the wider bound wins, compared as typed
 * values (as strings for text-like types).
 */
#ifndef TARN_LAKE_COLSTATS_H
#define TARN_LAKE_COLSTATS_H

#include "lake/model.h"
#include "lake/txn.h"

typedef struct {
    const lk_column *col; /* the leaf column */
    char *path;           /* DuckDB stats path: "st"."a" */
    char *min, *max;      /* NULL: unknown */
    int64_t value_count, null_count, column_size;
    int contains_nan; /* -1: not recorded */
} lk_leaf_stats;

typedef struct {
    lk_leaf_stats *leaves;
    size_t n;
} lk_stats_set;

/* Lists the leaf columns of `t` (pre-order) with empty stats. */
void lk_stats_init(lk_stats_set *s, const lk_table *t);
void lk_stats_free(lk_stats_set *s);

/* Computes stats of the rows of `source` (a table or subquery whose
 * columns are the table's columns), as DuckLake does for inlined rows. */
int lk_stats_from_rows(lk_stats_set *s, duckdb_connection con, const char *source,
                       const lk_table *t);

/* Appends to the transaction the statements that merge `s` into the
 * table-level stats of table `t` (INSERT on the table's first data, UPDATE
 * after). */
void lk_stats_merge_into_table(lk_txn *txn, lk_table_delta *d, const char *meta,
                               const lk_table *t, const lk_stats_set *s);

#endif

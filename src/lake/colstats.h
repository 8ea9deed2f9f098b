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

#include "lake/colstats_set.h"
#include "lake/model.h"
#include "lake/txn.h"

/* Lists the leaf columns of `t` (pre-order) with empty stats. */
void lk_stats_init(lk_stats_set *s, const lk_table *t);

/* Computes stats of the rows of `source` (a table or subquery whose
 * columns are the table's columns), as DuckLake does for inlined rows. */
int lk_stats_from_rows(lk_stats_set *s, duckdb_connection con, const char *source,
                       const lk_table *t);
/* The same for a `source` of exactly one row, without aggregates for its
 * top-level columns (a third of the query's cost: an autocommit INSERT of
 * one row). */
int lk_stats_from_one_row(lk_stats_set *s, duckdb_connection con, const char *source,
                          const lk_table *t);
/* The select list of lk_stats_from_one_row's figures over one row's
 * columns, for an INSERT's RETURNING clause: appended to `b` when every
 * leaf of `t` is a top-level column (returns 1), else nothing (0). */
int lk_stats_one_row_list(tarn_buf *b, const lk_stats_set *s, const lk_table *t);
/* Reads the figures from `r`, the one row lk_stats_one_row_list's list
 * returned. */
int lk_stats_from_row(lk_stats_set *s, const lk_table *t, const duck_table *r);

/* Folds the stats of one more write of this commit into the commit's
 * running stats of the table: counts add, a side with unknown bounds makes
 * them unknown (how DuckDB merges the stats of the files of one commit). */
int lk_stats_accumulate(lk_stats_set *acc, const lk_stats_set *add, duckdb_connection con);

/* Records in the transaction the rows or statements that merge a commit's
 * stats `s` into the table-level stats of table `table_id` (rows on the
 * table's first data, UPDATEs after). */
void lk_stats_merge_into_table(lk_txn *txn, lk_table_delta *d, const char *meta,
                               int64_t table_id, const lk_stats_set *s);

#endif

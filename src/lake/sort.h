/*
 * sort.h — a table's sort order (ALTER TABLE … SET / RESET SORTED BY).
 *
 * DuckLake keeps the order as ducklake_sort_info (one row per order, with
 * its snapshot range) and ducklake_sort_expression (one row per key: the
 * expression as DuckDB renders it, ASC|DESC, NULLS_FIRST|NULLS_LAST). It
 * is a write-side hint: inserts, flushes of inlined rows and compactions
 * write their rows in that order; reads do not change.
 */
#ifndef TARN_LAKE_SORT_H
#define TARN_LAKE_SORT_H

#include "lake/handle.h"
#include "lake/model.h"
#include "util/buf.h"

#include <duckdb.h>

/* Renders each key's expression as DuckDB does (what DuckLake stores) and
 * checks that it names only unqualified columns of `t`. keys[i].expr is
 * replaced. */
int lk_sort_normalize(lk_sortkey *keys, size_t n, const lk_table *t);

/* 1 when one of t's sort keys refers to column `name` (case-insensitive),
 * 0 when none does, < 0 on error. */
int lk_sort_uses_column(const lk_table *t, const char *name);

/* After RENAME COLUMN old TO new: t's sort expressions refer to the new
 * name (rendered again as DuckDB does). *changed gets 1 when t has sort
 * keys. */
int lk_sort_rename_column(lk_table *t, const char *old_name, const char *new_name, int *changed);

/* Appends "e1 ASC NULLS LAST, e2 DESC NULLS FIRST, …" for t's sort keys
 * (DuckDB-dialect keys only), written over the columns of `layout` (the
 * column names of an older layout of the same table, matched by column
 * id; NULL: t's own). Returns the number of keys appended. */
size_t lk_sort_order_by(tarn_buf *b, const lk_table *t, const lk_table *layout);

/* 1 when inserts into `t` sort all their rows, the inlined ones too (the
 * sort_on_insert option, default true); 0: only the rows written to
 * Parquet are sorted. */
int lk_sort_on_insert(lk_lake *lake, duckdb_connection con, const lk_table *t);

/* The commit statements of the transaction's sort changes: for each table
 * whose order was set or reset, the live order ends and the new one
 * begins, unless it equals the committed one. */
void lk_sort_commit(lk_lake *lake);

#endif

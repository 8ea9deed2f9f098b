/*
 * maintain.h — DuckLake's maintenance functions: flushing inlined rows to
 * Parquet, merging small adjacent files, rewriting files with many deleted
 * rows, expiring snapshots and deleting the files no snapshot needs.
 *
 * They are table functions with side effects, called as
 *   SELECT * FROM ducklake_flush_inlined_data('lake' [, schema_name => …, table_name => …])
 *   SELECT * FROM ducklake_merge_adjacent_files('lake' [, 'table', schema => …])
 *   SELECT * FROM ducklake_rewrite_data_files('lake' [, 'table', delete_threshold => …])
 *   SELECT * FROM ducklake_expire_snapshots('lake', versions => […] | older_than => ts, dry_run => …)
 *   SELECT * FROM ducklake_cleanup_old_files('lake', cleanup_all => …, older_than => …, dry_run => …)
 *   SELECT * FROM ducklake_delete_orphaned_files('lake', …)
 * or with CALL. The function runs when the statement is rewritten and its
 * result rows become a VALUES subquery.
 */
#ifndef TARN_LAKE_MAINTAIN_H
#define TARN_LAKE_MAINTAIN_H

#include "lake/args.h"
#include "lake/lake.h"

#include <duckdb.h>

/* Whether `fn` names a maintenance function (case-insensitive). */
int lk_maintain_is_function(const char *fn);

/* Runs maintenance function `fn` on lake l through con; *out gets a
 * subquery over its result rows. explicit_txn: the caller is inside
 * BEGIN … COMMIT (the rewriting functions refuse to run there). Returns
 * TARN_ENOTFOUND with *out NULL (and no error message) when `fn` is not a
 * maintenance function. */
int lk_maintain_run(char **out, lk_lake *l, duckdb_connection con, int explicit_txn, const char *fn,
                    const lk_args *a);

/* CHECKPOINT of lake l: its maintenance functions in DuckLake's order, each
 * committing on its own; inside BEGIN … COMMIT (explicit_txn) the
 * rewriting ones become part of the transaction (see maintain.c). */
int lk_maintain_checkpoint(lk_lake *l, duckdb_connection con, int explicit_txn);

#endif

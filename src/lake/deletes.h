/*
 * deletes.h — turning a transaction's pending deletions into DuckLake's
 * delete records at commit.
 *
 * Per data file with newly deleted positions, DuckLake 1.0 chooses:
 *   - every row of the file is now deleted → the file is ended
 *     (end_snapshot), no delete file;
 *   - at most the inlining limit of new positions → rows in the catalog's
 *     ducklake_inlined_delete_<table> (file id, position, snapshot);
 *   - otherwise a Parquet delete file (file_path, pos), replacing any
 *     earlier one: the new file holds all positions, each with the snapshot
 *     that deleted it (_ducklake_internal_snapshot_id), so time travel to
 *     before this commit still sees the old set.
 * Deleted inlined rows are ended in their inlined-data table.
 */
#ifndef TARN_LAKE_DELETES_H
#define TARN_LAKE_DELETES_H

#include "lake/filestats.h"
#include "lake/handle.h"

/* Records that committed inlined rows of `table_id` were deleted (their
 * row ids wait in the pending inline-deletes table). */
void lk_deletes_note_inlined(lk_lake *lake, int64_t table_id);

/* Writes delete files and appends the catalog statements for every
 * pending deletion of the open transaction. */
int lk_deletes_flush(lk_lake *lake, duckdb_connection con);

/* Records the ducklake_delete_file row of new delete file `id` (Parquet,
 * stored as `path` relative to its table's directory, written with stats
 * `fs`) for data file `data_file_id` of table `table_id`, live from
 * `begin`; `partial_max` the highest snapshot its positions carry, -1 for
 * none (NULL). */
/* DuckLake writes the delete file of a data file this transaction wrote at
 * the DELETE itself: writes one for each such file of `table_id` with new
 * pending deletions (replacing the one an earlier DELETE wrote; the commit
 * registers it, a DROP of the table or a rollback removes it). */
int lk_deletes_write_local(lk_lake *lake, duckdb_connection con, int64_t table_id);

void lk_deletes_file_row(lk_txn *txn, int64_t id, int64_t table_id, int64_t begin,
                         int64_t data_file_id, const char *path, const lk_file_stats *fs,
                         int64_t partial_max);

#endif

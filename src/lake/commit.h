/*
 * commit.h — committing a lake transaction as catalog rows and one
 * snapshot (commit.c).
 */
#ifndef TARN_LAKE_COMMIT_H
#define TARN_LAKE_COMMIT_H

#include "lake/txn.h"

/* Ends lake's open transaction by committing it. On return lake->txn is
 * NULL and *done holds the ended transaction, or NULL when none was open:
 * (*done)->committed says whether it made its snapshot (a failed
 * transaction, one with no change, or a failed commit does not; its files
 * are deleted). The caller brings the lake's model, caches and views up to
 * date from it, then frees it with lk_txn_free(). */
int lk_txn_commit(lk_txn **done, lk_lake *lake, duckdb_connection con);

#endif

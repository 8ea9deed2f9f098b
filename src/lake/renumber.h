/*
 * renumber.h — at commit, gives the transaction's new catalog objects the
 * ids DuckLake would have given them (see renumber.c and idorder.c).
 */
#ifndef TARN_LAKE_RENUMBER_H
#define TARN_LAKE_RENUMBER_H

#include <stdint.h>

typedef struct lk_txn lk_txn;

/* Decides the renumbering (txn->renum_*) and rewrites the change tokens.
 * Returns 1 when ids move, 0 when the statement-time ids stand. */
int lk_renumber_plan(lk_txn *txn);
/* Appends the statements that move the ids of this transaction's catalog
 * rows; call after every other catalog statement was queued. */
void lk_renumber_sql(lk_txn *txn, const char *meta);
/* The final id of provisional id `id` (itself when it does not move). */
int64_t lk_renumber_id(const lk_txn *txn, int64_t id);

#endif

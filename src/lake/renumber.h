/*
 * renumber.h — at commit, gives the transaction's new catalog objects the
 * ids DuckLake would have given them (see renumber.c and idorder.c).
 */
#ifndef TARN_LAKE_RENUMBER_H
#define TARN_LAKE_RENUMBER_H

#include <stdint.h>

typedef struct lk_txn lk_txn;
struct lk_rebase_s;

/* Decides the renumbering (txn->renum_*) and rewrites the change tokens.
 * Returns 1 when ids move, 0 when the statement-time ids stand. */
int lk_renumber_plan(lk_txn *txn);
/* Appends the statements that move the ids of this transaction's catalog
 * rows; call after every other catalog row and statement was recorded
 * (the rows recorded before a statement are written before it: txn.c). */
void lk_renumber_sql(lk_txn *txn, const char *meta);
/* Data files and delete files: DuckLake numbers a transaction's files at
 * commit, table by table in table order (a table with only new inlined
 * rows takes a number too), and gives a table's new files row ids before
 * its new inlined rows. Decides both (before the pending rows move). */
void lk_renumber_files_plan(lk_txn *txn);
/* Appends the statements that apply lk_renumber_files_plan (rb: the
 * commit's move onto newer snapshots, or NULL; rebase.h). */
void lk_renumber_files_sql(lk_txn *txn, const char *meta, const struct lk_rebase_s *rb);

/* The final id of provisional id `id` (itself when it does not move). */
int64_t lk_renumber_id(const lk_txn *txn, int64_t id);

#endif

/*
 * renumber.h — at commit, gives the transaction's new catalog objects the
 * ids DuckLake would have given them (see renumber.c and idorder.c).
 */
#ifndef TARN_LAKE_RENUMBER_H
#define TARN_LAKE_RENUMBER_H

#include "lake/model.h"
#include "util/strlist.h"

#include <stdint.h>

typedef struct lk_txn lk_txn;
struct lk_rebase_s;

/* Decides the renumbering (txn->renum_*) and rewrites the change tokens.
 * Returns 1 when ids move, 0 when the statement-time ids stand. */
int lk_renumber_plan(lk_txn *txn);
/* Appends the statements that move the ids of this transaction's catalog
 * rows, each new id moved on by `shift` more (a commit moved onto newer
 * snapshots whose writers made catalog objects: rebase.h); call after
 * every other catalog row and statement was recorded (the rows recorded
 * before a statement are written before it: txn.c). */
void lk_renumber_sql(lk_txn *txn, const char *meta, int64_t shift);
/* The statements that rename the inlined-data tables of renumbered tables
 * (their names carry the table id and schema version; sv_shift: how far
 * a moved commit's schema versions move), to run after the commit's
 * other statements (a move's statements name them as written). */
void lk_renumber_names_sql(strlist *out, const lk_txn *txn, const char *meta, int64_t shift,
                           int64_t sv_shift);
/* Data files and delete files: DuckLake numbers a transaction's files at
 * commit, table by table in table order (a table with only new inlined
 * rows takes a number too), and gives a table's new files row ids before
 * its new inlined rows. Decides both (before the pending rows move). */
void lk_renumber_files_plan(lk_txn *txn);
/* Appends the statements that apply lk_renumber_files_plan (rb: the
 * commit's move onto newer snapshots, or NULL; rebase.h). */
void lk_renumber_files_sql(lk_txn *txn, const char *meta, const struct lk_rebase_s *rb);

/* The name inlined-data table k of table t (k == t->ninlined: its
 * inlined-delete table) has once the commit renumbered it (malloc'd;
 * shift, sv_shift as lk_renumber_names_sql's). */
char *lk_renumber_inlined_name(const lk_txn *txn, const lk_table *t, size_t k, int64_t shift,
                               int64_t sv_shift);
/* The final id of provisional id `id` (itself when it does not move). */
int64_t lk_renumber_id(const lk_txn *txn, int64_t id);

#endif

/*
 * conflict.h — DuckLake's conflict rules between a committing transaction
 * and the snapshots committed after the one it began on (conflict.c).
 * Pure logic over changes_made tokens: reads and writes no catalog rows.
 */
#ifndef TARN_LAKE_CONFLICT_H
#define TARN_LAKE_CONFLICT_H

#include <stddef.h>
#include <stdint.h>

/* What the rules need beyond the two lists of tokens. */
typedef struct {
    /* data files this transaction deleted rows from or dropped, and data
     * files the newer snapshots deleted rows from or dropped (asked only
     * when both deleted from one table) */
    const int64_t *our_files, *their_files;
    size_t n_our_files, n_their_files;
    /* the name of a schema this transaction drops (by id), and the id of
     * the schema it creates an entry in (by name, -1: a schema it creates) */
    const char *(*schema_name)(void *ctx, int64_t schema_id);
    int64_t (*schema_id)(void *ctx, const char *schema);
    void *ctx;
} lk_conflict_info;

/* Checks our change tokens (ducklake_snapshot_changes.changes_made
 * entries, e.g. "inserted_into_table:3") against `theirs` (the newer
 * snapshots' changes_made, comma-joined). Returns 1 and sets *msg
 * (malloc'd, DuckLake's message word for word, e.g. "Transaction conflict
 * - attempting to drop table with index \"3\" - but another transaction
 * has dropped it already") at the first conflict, in DuckLake's order of
 * checks; 0 when the transaction may commit on top of them. */
int lk_conflict_find(char **msg, const char *const *ours, size_t nours, const char *theirs,
                     const lk_conflict_info *info);

/* Whether our tokens and theirs both delete from one table (then the
 * file-level rule needs lk_conflict_info's file lists). */
int lk_conflict_needs_files(const char *const *ours, size_t nours, const char *theirs);

#endif

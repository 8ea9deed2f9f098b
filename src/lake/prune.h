/*
 * prune.h — skipping data files that a query's filter cannot match, from
 * their per-file column statistics.
 *
 * The caller (the session, which reads the query) hands the scan the
 * simple conjuncts of a WHERE clause that reads one lake table —
 * `col op constant`, `col BETWEEN a AND b`, `col IN (…)`, `col IS [NOT]
 * NULL`, and alternatives of those joined by OR — each constant as SQL
 * literal text. A file is left out of the scan
 * only when its ducklake_file_column_stats rows prove that no row of it can
 * satisfy one of them (every alternative of one group); DuckDB itself evaluates that proof, with
 * the column's type, so it compares as the query would. Unknown statistics (none, NULL, a cast that
 * fails, NaN possible) keep the file.
 */
#ifndef TARN_LAKE_PRUNE_H
#define TARN_LAKE_PRUNE_H

#include "lake/handle.h"
#include "lake/prune_term.h"
#include "lake/scan_input.h"

#include <stddef.h>

/* A conjunction of groups of alternatives: a row matches only when, in
 * every group, one of the terms holds. */
typedef struct {
    lk_prune_term *terms;
    size_t n;
    /* The query is ordered by this top-level column first and limited
     * (NULL: not): the committed files are read in the order of their
     * statistics (max descending for DESC, else min ascending), so a top-N
     * meets its rows in the first files and skips the rest by theirs. */
    char *order_column;
    int order_desc;
    /* The query's block ends with LIMIT or OFFSET after its WHERE: when
     * pruning leaves one file, the scan reads it alone (see scan.c). */
    int limited;
    /* With only_set, the scan keeps of the committed files only those whose
     * ids are in only_files (pending ones stay): the change feed of one
     * snapshot reads the files that snapshot touched, since every other
     * file reads the same just before it and at it. */
    const int64_t *only_files;
    size_t nonly;
    int only_set;
} lk_prune;

/* Appends a term; takes `values` (malloc'd array of malloc'd strings). */
void lk_prune_add(lk_prune *p, int group, const char *column, lk_prune_op op, char **values,
                  size_t nvalues);
/* Drops the terms from index n on. */
void lk_prune_truncate(lk_prune *p, size_t n);
void lk_prune_free(lk_prune *p);

/* Removes from `in` the committed files of table `t` at snapshot s whose
 * statistics exclude `p` (pending files stay), and orders the rest as
 * p->order_column says. Never fails: when the statistics cannot be read,
 * every file stays where it was. */
void lk_prune_files(scan_input *in, lk_lake *lake, duckdb_connection con, const lk_table *t,
                    int64_t s, const lk_prune *p);

#endif

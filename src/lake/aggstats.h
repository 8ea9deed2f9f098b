/*
 * aggstats.h — COUNT(*), MIN and MAX of a lake table answered from its
 * catalog rows instead of its files (aggstats.c), as DuckLake answers
 * them: the row count from the live files' record counts less their
 * deletions plus the live inlined rows; a column's MIN / MAX from
 * ducklake_table_column_stats, which only widen, and so are the live
 * rows' extremes only while no row was ever deleted (the table's gross
 * record_count equals the live count).
 */
#ifndef TARN_LAKE_AGGSTATS_H
#define TARN_LAKE_AGGSTATS_H

#include "lake/handle.h"

#include <duckdb.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int64_t count; /* the table's live rows */
    int exact;     /* min / max below are the live rows' extremes */
    char **min;    /* per top-level column of the table, in order: the text */
    char **max;    /* of its extreme (NULL: unknown, or not foldable) */
    size_t ncols;
} lk_aggstats;

/* Loads the statistics of table `t` of the session's catalog. Returns 1
 * when they answer the table as the session reads it now: no pinned
 * snapshot, the session at the latest snapshot, no change of the open
 * transaction; 0 otherwise (also when a catalog query fails: the caller
 * reads the files). A column's extremes are kept only for the types whose
 * statistics are exact (numbers but floats, DATE, TIME, TIMESTAMP):
 * strings may be stored truncated. */
int lk_aggstats_load(lk_aggstats *out, lk_lake *lake, duckdb_connection con, const lk_table *t);

void lk_aggstats_free(lk_aggstats *a);

#endif

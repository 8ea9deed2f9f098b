/*
 * feed.h — DuckLake's change feed: the rows inserted into and deleted from
 * a table between two snapshots, with updates paired by row id as
 * update_preimage / update_postimage.
 *
 * tarn derives the feed from the table's identity scans: for every
 * snapshot s in the range that changed the table, a row whose identity
 * (data file and position, or inlined row id and begin snapshot) is in the
 * scan at s but not at s-1 was inserted at s, and the reverse was deleted.
 */
#ifndef TARN_LAKE_FEED_H
#define TARN_LAKE_FEED_H

#include "lake/lake.h"

#include <duckdb.h>

enum { LK_FEED_CHANGES, LK_FEED_INSERTIONS, LK_FEED_DELETIONS };
/* Or'ed into an insertions or deletions kind: the rows also carry DuckLake's
 * virtual column rowid / snapshot_id (the snapshot of the change). */
#define LK_FEED_ROWID 16
#define LK_FEED_SNAPSHOT 32

int lk_feed_sql(char **out, duckdb_connection con, lk_lake *l, const char *schema,
                const char *table, int64_t from, int64_t to, int kind);

#endif

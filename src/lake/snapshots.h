/*
 * snapshots.h — the SQL of the lake's snapshot list, as DuckLake's
 * ducklake_snapshots() returns it (snapshot_id, snapshot_time,
 * schema_version, changes, author, commit_message, commit_extra_info).
 */
#ifndef TARN_LAKE_SNAPSHOTS_H
#define TARN_LAKE_SNAPSHOTS_H

#include "lake/handle.h"

#include <duckdb.h>

/* *out gets a SELECT over the lake's catalog (malloc'd). */
int lk_snapshots_sql(char **out, lk_lake *l, duckdb_connection con);

#endif

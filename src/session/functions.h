/*
 * functions.h — DuckLake's table functions (ducklake_snapshots,
 * ducklake_table_info, ducklake_current_snapshot,
 * ducklake_last_committed_snapshot, ducklake_options, ducklake_list_files,
 * and the change feed ducklake_table_changes / _insertions / _deletions),
 * each produced as a subquery over the lake's catalog and data.
 */
#ifndef TARN_SESSION_FUNCTIONS_H
#define TARN_SESSION_FUNCTIONS_H

#include "lake/args.h"
#include "session/session_int.h"

/* *out gets the subquery for function `fn`; TARN_ENOTFOUND with *out NULL
 * when `fn` is not a DuckLake function. `virt`: the statement names
 * virtual columns (rowid, snapshot_id), which the insertions and deletions
 * feeds then carry. */
int session_function_sql(char **out, tarn_session *s, const char *fn, const lk_args *a,
                         int virt);

/* Runs maintenance function `fn` on the lake its first argument names;
 * TARN_ENOTFOUND with *out NULL (and no message) when `fn` is not one. */
int session_maintain(char **out, tarn_session *s, const char *fn, const lk_args *a);

#endif

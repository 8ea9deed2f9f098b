/*
 * functions.h — DuckLake's table functions (ducklake_snapshots,
 * ducklake_table_info, ducklake_current_snapshot,
 * ducklake_last_committed_snapshot, ducklake_options, ducklake_list_files,
 * and the change feed ducklake_table_changes / _insertions / _deletions),
 * each produced as a subquery over the lake's catalog and data.
 */
#ifndef TARN_LAKE_FUNCTIONS_H
#define TARN_LAKE_FUNCTIONS_H

#include "lake/session_int.h"

/* A call's arguments: positional values, then name => value pairs. Values
 * are constants evaluated by DuckDB, as text (NULL for SQL NULL). */
typedef struct {
    char **pos;
    size_t npos;
    char **names, **values;
    size_t nnamed;
} lk_args;

/* Parses the arguments between tokens [from, to) (exclusive of parens). */
int lk_args_parse(lk_args *a, tarn_session *s, const sql_tokens *tk, const char *sql, size_t from,
                  size_t to);
void lk_args_free(lk_args *a);
/* The named argument `name`, or NULL. */
const char *lk_args_named(const lk_args *a, const char *name);

/* *out gets the subquery for function `fn`; TARN_ENOTFOUND with *out NULL
 * when `fn` is not a DuckLake function. */
int lk_function_sql(char **out, tarn_session *s, const char *fn, const lk_args *a);

#endif

/*
 * rewrite.h — the read rewrites that let plain DuckDB run lake queries:
 *   - `lake.s.t AT (VERSION => n | TIMESTAMP => t)` becomes a subquery
 *     reading the table as it was at that snapshot;
 *   - in a statement that mentions `rowid`, lake tables become subqueries
 *     that carry DuckLake's row ids;
 *   - ducklake_snapshots(), ducklake_table_info(), … and the change feed
 *     functions become subqueries over the lake's catalog;
 *   - in a query that runs now, a lake table filtered by its WHERE clause
 *     becomes a subquery reading only the files that can match.
 * Everything else in the statement is left byte for byte as written.
 */
#ifndef TARN_SESSION_REWRITE_H
#define TARN_SESSION_REWRITE_H

#include "lake/args.h"
#include "session/session_int.h"
#include "tarn/session.h"

/* *out (malloc'd) gets `sql` with the rewrites applied. */
int rewrite_reads(char **out, tarn_session *s, const char *sql);
/* The same for a query that runs now, once (not a view, macro or prepared
 * statement): a lake table that is the only source of a query block with
 * a WHERE clause is read from the files that clause can match
 * (lk_scan_sql_pruned). */
int rewrite_reads_now(char **out, tarn_session *s, const char *sql);

/* The lake's view rewriter (lk_view_rewriter, lake/handle.h): a lake view
 * whose query reads a table AT (…) gets that read rewritten, its
 * unqualified names resolved in the view's schema; *out NULL for one
 * without AT. */
int session_view_rewrite(void *ctx, char **out, lk_lake *l, const char *schema, const char *sql);

/* Parses the arguments of a DuckLake function call between tokens [from, to) (exclusive of parens).
 */
int session_args_parse(lk_args *a, tarn_session *s, const sql_tokens *tk, const char *sql,
                       size_t from, size_t to);

#endif

/*
 * views.h — the alias database's schemas and views of an attached lake,
 * kept in step with the catalog model (views.c).
 */
#ifndef TARN_LAKE_VIEWS_H
#define TARN_LAKE_VIEWS_H

#include "lake/handle.h"

#include <duckdb.h>

/* The one column of the DuckDB view of a lake view that does not bind (a
 * view it reads was dropped, or lost a column): reading it fails with the
 * binding's error, and listings of columns leave it out. */
#define LK_UNBOUND_COLUMN "__tarn_unbound"

/* Rebuilds the alias database's schemas and views from `cat` (the
 * committed catalog or a transaction's working one). */
int lk_lake_refresh_views(lk_lake *lake, duckdb_connection con);

/* After a commit whose change tokens are `tokens`, brings the alias
 * database's views from catalog `old` to lake->cat, touching only the
 * tables the commit changed and the `touched` ones (whose views showed
 * the transaction's pending rows), each once; a full rebuild when schemas
 * or lake views changed. */
int lk_lake_sync_views(lk_lake *lake, duckdb_connection con, const lk_catalog *old,
                       char *const *tokens, size_t n, const int64_t *touched, size_t ntouched);

/* Sets the rewriter of lake views' queries (see handle.h) and rebuilds the
 * views it changes (they did not bind without it). */
void lk_lake_set_view_rewriter(lk_lake *lake, duckdb_connection con, lk_view_rewriter fn,
                               void *ctx);

/* Forgets which statements built the views (after anything that may have
 * changed or dropped views otherwise: a rollback, a DROP). */
void lk_lake_views_forget(lk_lake *lake);

/* Whether table `table_id`'s view is the one that fails when read (one of
 * its data files could not be read when the view was built): a read of
 * its files (a pruned one) would fail with DuckDB's bare error instead of
 * the view's, or not at all when the broken file is pruned. */
int lk_lake_view_broken(const lk_lake *lake, int64_t table_id);

/* Rebuilds the view of one table (its data changed, its definition not). */
int lk_lake_refresh_table_view(lk_lake *lake, duckdb_connection con, int64_t table_id);

/* After a rollback of a transaction whose working catalog was `working`:
 * brings back the committed views of the tables it created, dropped,
 * renamed or touched (`touched`: views that showed its pending rows). */
int lk_lake_restore_views(lk_lake *lake, duckdb_connection con, const lk_catalog *working,
                          const int64_t *touched, size_t ntouched);

/* Inside BEGIN … COMMIT, after a statement: rebuilds the views the
 * statement changed (txn->dirty, dropped, views_all), so reads see the
 * pending state without a rebuild of every view of the lake. */
int lk_lake_sync_statement_views(lk_lake *lake, duckdb_connection con);

#endif

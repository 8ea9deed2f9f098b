/*
 * query.h — running SQL through a tarn session and reading small results,
 * for the project and build layers (which talk to DuckDB and the lake
 * only through tarn_session, never through duck/ or lake/ directly).
 */
#ifndef TARN_PROJECT_QUERY_H
#define TARN_PROJECT_QUERY_H

#include "tarn/session.h"

#include <stddef.h>
#include <stdint.h>

/* A fully read result, cells as text (NULL for SQL NULL), row-major. */
typedef struct {
    size_t ncols, nrows;
    char **names;
    char **cells;
} qrows;

int query_rows(qrows *out, tarn_session *s, const char *sql);
static inline const char *qrows_get(const qrows *r, size_t row, size_t col)
{
    return r->cells[row * r->ncols + col];
}
/* A copy of a cell (caller frees); of `if_null` when the cell is NULL
 * (NULL when if_null is NULL too). */
char *qrows_dup(const qrows *r, size_t row, size_t col, const char *if_null);
void qrows_free(qrows *r);

/* Runs a statement; *count (optional) gets its changed-row count, or -1
 * when the statement reports none. */
int query_exec(tarn_session *s, const char *sql, int64_t *count);

/* The first cell of the first row (caller frees; NULL for SQL NULL or no
 * row). */
int query_string(char **out, tarn_session *s, const char *sql);
/* The same as an integer; TARN_ENOTFOUND when NULL or no row. */
int query_int64(int64_t *out, tarn_session *s, const char *sql);

/* The rows of a query over tarn's tables in lake `alias`'s catalog, run by
 * the catalog database itself (tarn_session_catalog_query: SQL that DuckDB
 * and PostgreSQL both run). */
int catalog_rows(qrows *out, tarn_session *s, const char *alias, const char *sql);

/* The same over a link to a catalog (tarn_catlink_exec): rows of a query,
 * or a statement's changed-row count. */
int link_rows(qrows *out, tarn_catlink *l, const char *sql);
int link_exec(tarn_catlink *l, const char *sql, int64_t *count);

/* How many columns table `table` of catalog database `cat` has (named
 * `name`, when not NULL); 0 when the table does not exist (a lake no run
 * recorded into yet, or one an older tarn wrote) or cannot be read. The
 * catalog database is hidden from duckdb_tables(): its columns are asked
 * for. */
int64_t query_catalog_columns(tarn_session *s, const char *cat, const char *table,
                              const char *name);

#endif

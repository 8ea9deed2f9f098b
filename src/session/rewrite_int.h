/*
 * rewrite_int.h — the parts of the read rewriter (rewrite.c) that its
 * catalog-listing rewrites (rewrite_catalog.c) share. Internal to
 * session/.
 */
#ifndef TARN_SESSION_REWRITE_INT_H
#define TARN_SESSION_REWRITE_INT_H

#include "session/session_int.h"
#include "sql/lexer.h"
#include "util/buf.h"

#include <stddef.h>

/* Appends a FROM item __tarn_o(cat, sch, tbl, col, dflt, nul): a VALUES
 * row per top-level column of every lake table, with the default and
 * nullability DuckDB's views of the tables cannot carry; returns the
 * number of rows. */
int rewrite_column_facts(tarn_buf *b, tarn_session *s);

/* Rewrites the catalog view or function that starts at token i
 * (information_schema.tables, duckdb_tables(), …) into *b, *next past it;
 * *next stays i when none starts there. */
int rewrite_catalog(size_t *next, tarn_buf *b, tarn_session *s, const sql_tokens *tk, size_t i);

#endif

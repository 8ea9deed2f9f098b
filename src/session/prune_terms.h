/*
 * prune_terms.h — the conjuncts of a WHERE clause that file pruning can
 * use (lake/prune.h), read from the statement's tokens.
 */
#ifndef TARN_SESSION_PRUNE_TERMS_H
#define TARN_SESSION_PRUNE_TERMS_H

#include "lake/prune.h"
#include "sql/lexer.h"

/* Appends to *out the terms of the WHERE clause whose keyword is token
 * `where`, in a query block that reads one table, named `qualifier` (its
 * alias, or its name) in qualified column references. Only conjuncts of
 * the whole clause are taken, and of those only the plain forms: `col op
 * literal` (= < <= > >=, either way round), `col BETWEEN a AND b`, `col IN
 * (a, …)`, `col IS [NOT] NULL`; a clause with OR at its top level gives
 * none. Leaving a conjunct out only keeps more files. */
void session_prune_terms(lk_prune *out, const sql_tokens *tk, size_t where, const char *qualifier);

/* When the block of the table reference ending before token `at` (its
 * WHERE clause, if any, at `at`) is ordered by one of the table's columns
 * first (ORDER BY [qualifier.]col [ASC | DESC] [NULLS LAST] …) and
 * limited (LIMIT), out->order_column / order_desc get that order: the
 * scan then reads the files whose statistics put them first first, so a
 * top-N finds its rows early and skips the rest by their statistics. */
void session_prune_order(lk_prune *out, const sql_tokens *tk, size_t at, const char *qualifier);

/* Sets out->limited when the WHERE clause at token `where` is followed by
 * LIMIT or OFFSET in its block. */
void session_prune_limit(lk_prune *out, const sql_tokens *tk, size_t where);

#endif

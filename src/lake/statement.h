/*
 * statement.h — one writing statement on a lake, as a unit: it opens the
 * lake transaction when none is open, and ends by committing it (outside
 * BEGIN … COMMIT, an autocommit write is one snapshot) or, inside an
 * explicit transaction, by refreshing the views so that later reads see
 * the pending state. On failure the statement's staged rows are dropped
 * and, outside BEGIN … COMMIT, the transaction is rolled back.
 *
 * Both the session's statement handlers and the lake's own operations
 * (maintenance) use it, so the rule lives in the lake and nothing in the
 * lake calls up into the session.
 */
#ifndef TARN_LAKE_STATEMENT_H
#define TARN_LAKE_STATEMENT_H

#include "lake/lake.h"

#include <duckdb.h>

/* Opens l's transaction unless one is open. explicit_txn: the caller is
 * inside BEGIN … COMMIT. */
int lk_statement_begin(lk_lake *l, duckdb_connection con, int explicit_txn);
/* Ends the statement whose result is rc; returns rc, or the commit's
 * error. The error message of a failed statement is kept. */
int lk_statement_end(lk_lake *l, duckdb_connection con, int explicit_txn, int rc);

#endif

/*
 * session_reader.c — readers: more DuckDB connections to a session's
 * database, for reads on other threads (see include/tarn/session.h).
 *
 * Everything a lake read needs outside the session's own connection is
 * already shared by the DuckDB instance: the lake's views live in an
 * in-memory database named after the alias, its catalog is an attached
 * database, tarn's scalar functions are in the system catalog, and a view
 * names its snapshot as a literal (no per-connection variable). What is
 * per connection is handed over as text: the rewrite of the statement (AT
 * clauses and ducklake_* functions become scans built from the session's C
 * state of the lake).
 */
#include "duck/duck.h"
#include "lake/lake.h"
#include "session/rewrite.h"
#include "session/session_int.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

struct tarn_reader {
    duckdb_connection con;
};

int tarn_reader_open(tarn_reader **out, tarn_session *s)
{
    tarn_reader *r = xcalloc(1, sizeof(*r));
    if (duckdb_connect(s->db, &r->con) != DuckDBSuccess) {
        free(r);
        return tarn_error_set(TARN_ERROR, "cannot open a second DuckDB connection");
    }
    *out = r;
    return 0;
}

void tarn_reader_close(tarn_reader *r)
{
    if (!r)
        return;
    duckdb_disconnect(&r->con);
    free(r);
}

int tarn_reader_exec(tarn_reader *r, const char *sql)
{
    return duck_exec(r->con, sql);
}

void tarn_reader_interrupt(tarn_reader *r)
{
    duckdb_interrupt(r->con);
}

/* The statements a reader can run as the session would: everything the
 * session hands to DuckDB unchanged but for its read rewrites. */
static int readable(tarn_session *s, const sql_tokens *tk, const char *kw)
{
    static const char *const reads[] = {"SELECT",   "WITH",    "FROM",     "VALUES", "TABLE",
                                        "DESCRIBE", "EXPLAIN", "SHOW",     "SET",    "RESET",
                                        "USE",      "PRAGMA",  "SUMMARIZE"};
    for (size_t i = 0; i < sizeof(reads) / sizeof(reads[0]); i++)
        if (strcmp(kw, reads[i]) == 0)
            return 1;
    if (strcmp(kw, "CREATE") == 0 || strcmp(kw, "DROP") == 0)
        return !session_ddl_targets_lake(s, tk, kw);
    return 0;
}

int tarn_session_reader_sql(tarn_session *s, const char *sql, char **out)
{
    if (s->explicit_txn)
        return tarn_error_set(TARN_EINVALID,
                              "a reader cannot see the session's open transaction: run it after "
                              "COMMIT or ROLLBACK");
    sql_tokens tk;
    char kw[32];
    int rc = sql_tokenize_kw(&tk, sql, kw, sizeof(kw));
    if (rc)
        return rc;
    if (!readable(s, &tk, kw)) {
        sql_tokens_free(&tk);
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "%s is carried out by the session's lake, not by a reader", kw);
    }
    sql_tokens_free(&tk);
    char *rewritten = NULL;
    rc = rewrite_reads(&rewritten, s, sql);
    if (rc)
        return rc;
    *out = rewritten;
    return 0;
}

/*
 * session.c — placeholder passthrough session (replaced by the lake-aware
 * session as the lake core lands).
 */
#include "tarn/session.h"

#include "duck/duck.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>

struct tarn_session {
    duckdb_database db;
    duckdb_connection con;
};

int tarn_session_open(tarn_session **out)
{
    tarn_session *s = xcalloc(1, sizeof(*s));
    if (duckdb_open(NULL, &s->db) != DuckDBSuccess) {
        free(s);
        return tarn_error_set(TARN_ERROR, "cannot open DuckDB");
    }
    duckdb_connect(s->db, &s->con);
    *out = s;
    return 0;
}

void tarn_session_close(tarn_session *s)
{
    if (!s)
        return;
    duckdb_disconnect(&s->con);
    duckdb_close(&s->db);
    free(s);
}

static void deliver_table(const duck_table *t, const tarn_sink *sink)
{
    if (sink->begin)
        sink->begin(sink->ctx, t->ncols, (const char *const *)t->names);
    for (size_t r = 0; r < t->nrows; r++)
        if (sink->row)
            sink->row(sink->ctx, (const char *const *)t->cells + r * t->ncols);
    if (sink->end)
        sink->end(sink->ctx);
}

int tarn_session_exec(tarn_session *s, const char *sql, const tarn_sink *sink)
{
    tarn_output_kind kind = sql_output_kind(sql);
    if (kind == TARN_OUTPUT_ROWS) {
        duck_table t;
        int rc = duck_table_query(&t, s->con, sql);
        if (rc)
            return rc;
        if (sink)
            deliver_table(&t, sink);
        duck_table_free(&t);
        return 0;
    }
    int64_t n = 0;
    int rc = duck_exec_count(s->con, sql, &n);
    if (rc)
        return rc;
    if (kind == TARN_OUTPUT_COUNT && sink && sink->count)
        sink->count(sink->ctx, n);
    return 0;
}

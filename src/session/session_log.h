/*
 * session_log.h — DuckLake's DuckLakeMetadata log of catalog queries,
 * kept by the session (see session_log.c).
 */
#ifndef TARN_SESSION_LOG_H
#define TARN_SESSION_LOG_H

#define SESSION_LOG_TYPE "DuckLakeMetadata"

#include "session/session_int.h"
#include "util/buf.h"

/* CALL enable_logging / disable_logging / truncate_duckdb_logs: run, and
 * the log turned on, off or emptied (*handled = 1); other CALLs untouched. */
int session_log_call(tarn_session *s, const sql_tokens *tk, const char *sql, int *handled);
/* A lake's catalog logs its queries while the log is on (call on ATTACH). */
void session_log_lake(tarn_session *s, lk_lake *l);
/* Whether the log holds entries; the subquery that replaces
 * duckdb_logs_parsed('DuckLakeMetadata') / duckdb_logs (rewrite.c). */
int session_log_has_entries(const tarn_session *s);
void session_log_parsed_sql(tarn_buf *b, const tarn_session *s);
void session_log_logs_sql(tarn_buf *b, const tarn_session *s);
void session_log_free(tarn_session *s);

#endif

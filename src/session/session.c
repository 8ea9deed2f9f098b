/*
 * session.c — a tarn SQL session: routes each statement either to DuckDB
 * as is, or to the DuckLake implementation (see include/tarn/session.h).
 *
 * Routing is by the statement's leading keywords and its target name,
 * read with tarn's lexer:
 *   ATTACH 'ducklake:…' / DETACH           → lake.c
 *   BEGIN / COMMIT / ROLLBACK              → lake transactions (txn.c)
 *   CREATE/DROP SCHEMA|TABLE on a lake     → ddl.c
 *   INSERT / DELETE / UPDATE on a lake     → write.c
 *   CALL ducklake_set_commit_message / ducklake_set_option
 *   anything else                          → DuckDB, after the read
 *                                            rewrites of rewrite.c (AT
 *                                            clauses, rowid, ducklake_*
 *                                            table functions)
 * A statement that targets a lake in a way tarn does not implement fails
 * with an error that says so, never with a silently different result.
 */
#include "tarn/session.h"

#include "duck/duck.h"
#include "lake/delmask.h"
#include "lake/bucket.h"
#include "lake/ddl.h"
#include "lake/lake.h"
#include "session/rewrite.h"
#include "lake/scan.h"
#include "lake/settings.h"
#include "lake/statement.h"
#include "session/session_int.h"
#include "session/session_log.h"
#include "lake/txn.h"
#include "lake/write.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/textmap.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int tarn_session_open(tarn_session **out)
{
    tarn_session *s = xcalloc(1, sizeof(*s));
    int rc = duck_open(&s->db);
    if (rc) {
        free(s);
        return rc;
    }
    rc = duckdb_connect(s->db, &s->con) == DuckDBSuccess
             ? lk_bucket_register(s->con)
             : tarn_error_set(TARN_ERROR, "cannot connect to DuckDB");
    if (!rc)
        rc = lk_settings_register(s->con);
    if (rc) {
        duckdb_disconnect(&s->con);
        duckdb_close(&s->db);
        free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void tarn_session_set_json_cells(tarn_session *s, int on)
{
    s->json_cells = on;
}

void tarn_session_close(tarn_session *s)
{
    if (!s)
        return;
    while (s->lakes) {
        lk_lake *l = s->lakes;
        s->lakes = l->next;
        lk_lake_detach(l, s->con);
    }
    free(s->use_lake);
    free(s->use_schema);
    session_secrets_free(s);
    session_prepared_free(s);
    session_log_free(s);
    duckdb_disconnect(&s->con);
    duckdb_close(&s->db);
    free(s);
}

/* ---- result delivery ---- */

static void deliver_table(const duck_table *t, const tarn_sink *sink)
{
    if (!sink)
        return;
    if (sink->begin)
        sink->begin(sink->ctx, t->ncols, (const char *const *)t->names);
    for (size_t r = 0; r < t->nrows; r++)
        if (sink->row)
            sink->row(sink->ctx, (const char *const *)t->cells + r * t->ncols);
    if (sink->end)
        sink->end(sink->ctx);
}

static void deliver_count(const tarn_sink *sink, int64_t n)
{
    if (sink && sink->count)
        sink->count(sink->ctx, n);
}

/* EXPLAIN and MERGE … RETURNING cannot be subqueries, so they run as they
 * are. */
static int run_unwrapped(tarn_session *s, const char *sql, const tarn_sink *sink)
{
    duck_table t;
    int rc = duck_table_query_stmt(&t, s->con, sql);
    if (rc)
        return rc;
    deliver_table(&t, sink);
    duck_table_free(&t);
    return 0;
}

static int run_plain(tarn_session *s, const char *sql, tarn_output_kind kind, const tarn_sink *sink)
{
    char kw[32];
    sql_first_keyword(sql, kw, sizeof(kw));
    if (kind == TARN_OUTPUT_ROWS && (strcmp(kw, "EXPLAIN") == 0 || strcmp(kw, "MERGE") == 0))
        return run_unwrapped(s, sql, sink);
    if (kind == TARN_OUTPUT_ROWS) {
        duck_table t;
        int rc = s->json_cells ? duck_table_query_json(&t, s->con, sql)
                               : duck_table_query_shown(&t, s->con, sql);
        if (rc)
            return rc;
        deliver_table(&t, sink);
        duck_table_free(&t);
        return 0;
    }
    int64_t n = 0;
    int rc = duck_exec_count(s->con, sql, &n);
    if (!rc && kind == TARN_OUTPUT_COUNT)
        deliver_count(sink, n);
    return rc;
}

static int commit_all(tarn_session *s)
{
    int rc = 0;
    for (lk_lake *l = s->lakes; l; l = l->next) {
        if (!l->txn)
            continue;
        if (s->txn_failed)
            lk_lake_rollback(l, s->con);
        else if (!rc)
            rc = lk_lake_commit(l, s->con);
        else
            lk_lake_rollback(l, s->con);
    }
    return rc;
}

static void rollback_all(tarn_session *s)
{
    for (lk_lake *l = s->lakes; l; l = l->next)
        if (l->txn)
            lk_lake_rollback(l, s->con);
}

static int stmt_transaction(tarn_session *s, const char *kw)
{
    if (strcmp(kw, "BEGIN") == 0 || strcmp(kw, "START") == 0) {
        if (s->explicit_txn)
            return tarn_error_set(TARN_EINVALID, "cannot start a transaction within a transaction");
        /* The session's DuckDB transaction holds the plain DuckDB writes and
         * the lake views rebuilt after each lake write, so DuckDB's own rule
         * applies: one transaction writes one database (a second lake, or a
         * plain table after a lake write, is refused). The lake catalogs
         * commit after it, each in its own catalog transaction. */
        int rc = duck_exec(s->con, "BEGIN TRANSACTION");
        if (rc)
            return rc;
        s->explicit_txn = 1;
        s->txn_failed = 0;
        return 0;
    }
    if (!s->explicit_txn)
        return tarn_error_set(TARN_EINVALID, "cannot %s - no transaction is active",
                              strcmp(kw, "COMMIT") == 0 || strcmp(kw, "END") == 0 ? "commit"
                                                                                  : "rollback");
    int rc = 0;
    s->explicit_txn = 0;
    if (strcmp(kw, "COMMIT") == 0 || strcmp(kw, "END") == 0) {
        rc = s->txn_failed ? duck_exec(s->con, "ROLLBACK") : duck_exec(s->con, "COMMIT");
        if (rc)
            s->txn_failed = 1;
        rc = commit_all(s) ? tarn_error_code() : rc;
    } else {
        duck_exec(s->con, "ROLLBACK");
        rollback_all(s);
    }
    s->txn_failed = 0;
    return rc;
}

/* ---- USE ---- */

static int stmt_use(tarn_session *s, const sql_tokens *tk, const char *sql)
{
    int rc = duck_exec(s->con, sql);
    if (rc)
        return rc;
    qname q;
    free(s->use_lake);
    free(s->use_schema);
    s->use_lake = s->use_schema = NULL;
    if (tk->n >= 2 && session_qname(tk, 1, &q)) {
        lk_lake *l = session_lake(s, q.parts[0]);
        if (l) {
            s->use_lake = xstrdup(l->alias);
            if (q.n == 2)
                s->use_schema = xstrdup(q.parts[1]);
        }
    }
    return 0;
}

/* ---- SET / RESET ---- */

/* SET [SESSION|GLOBAL|LOCAL] name = value: DuckLake's settings are checked
 * as DuckLake checks them before DuckDB stores them, and a changed
 * setting is read again by the lakes (RESET too). */
static int stmt_set(tarn_session *s, const sql_tokens *tk, const char *sql, tarn_output_kind kind,
                    const tarn_sink *sink)
{
    size_t i = 1;
    if (i < tk->n &&
        (sql_tok_is_kw(&tk->toks[i], "SESSION") || sql_tok_is_kw(&tk->toks[i], "GLOBAL") ||
         sql_tok_is_kw(&tk->toks[i], "LOCAL")))
        i++;
    if (i + 2 < tk->n && tk->toks[i].type == SQL_TOK_IDENT &&
        (sql_tok_is_kw(&tk->toks[i + 1], "TO") ||
         (tk->toks[i + 1].type == SQL_TOK_OP && strcmp(tk->toks[i + 1].text, "=") == 0))) {
        const sql_token *v = &tk->toks[i + 2];
        int constant = v->type == SQL_TOK_STRING || v->type == SQL_TOK_NUMBER;
        int rc = lk_setting_check(tk->toks[i].text, constant ? v->text : NULL);
        if (rc)
            return rc;
    }
    char *rewritten = NULL; /* SET VARIABLE x = (a query of the lake) */
    int rc = rewrite_reads(&rewritten, s, sql);
    if (!rc)
        rc = run_plain(s, rewritten, kind, sink);
    free(rewritten);
    lk_settings_changed();
    return rc;
}

static int is_transaction_kw(const char *kw)
{
    return strcmp(kw, "BEGIN") == 0 || strcmp(kw, "START") == 0 || strcmp(kw, "COMMIT") == 0 ||
           strcmp(kw, "END") == 0 || strcmp(kw, "ROLLBACK") == 0 || strcmp(kw, "ABORT") == 0;
}

/* Errors that DuckDB lets a transaction survive (name resolution, syntax);
 * anything else aborts it, as DuckDB does. */
static int aborts_transaction(void)
{
    const char *m = tarn_error_last();
    int code = tarn_error_code();
    if (code == TARN_ENOTFOUND || code == TARN_EUNSUPPORTED)
        return 0;
    return !(strstr(m, "Binder Error") || strstr(m, "Catalog Error") || strstr(m, "Parser Error") ||
             strstr(m, "does not exist"));
}

/* Whether a statement that starts with `kw` is a query run once, now:
 * not one that keeps its SQL (CREATE VIEW, PREPARE, CREATE MACRO), whose
 * lake reads must see the files of later commits. */
static int runs_now(const char *kw)
{
    return strcmp(kw, "SELECT") == 0 || strcmp(kw, "WITH") == 0 || strcmp(kw, "FROM") == 0 ||
           strcmp(kw, "EXPLAIN") == 0;
}

static int dispatch(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                    tarn_output_kind kind, const tarn_sink *sink);

/* PREPARE / EXECUTE / DEALLOCATE: a kept statement runs as any statement
 * would, with its values in place; DuckDB's own prints what it prepared. */
static int prepared_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                         const tarn_sink *sink, int *handled)
{
    session_run run;
    int rc = session_prepare_stmt(s, tk, sql, kw, &run);
    *handled = run.handled;
    if (rc || !run.sql)
        return rc;
    if (strcmp(kw, "EXECUTE") == 0 && sink && sink->kind)
        sink->kind(sink->ctx, run.kind);
    if (run.plain && run.kind == TARN_OUTPUT_ROWS) {
        rc = run_unwrapped(s, run.sql, sink);
    } else if (run.plain) {
        rc = run_plain(s, run.sql, run.kind, sink);
    } else {
        sql_tokens rt;
        char rkw[32];
        rc = sql_tokenize_kw(&rt, run.sql, rkw, sizeof(rkw));
        if (!rc) {
            if (strcmp(rkw, "PREPARE") == 0 || strcmp(rkw, "EXECUTE") == 0)
                rc = tarn_error_set(TARN_EINVALID, "a prepared statement cannot be %s", rkw);
            else
                rc = dispatch(s, &rt, run.sql, rkw, run.kind, sink);
            sql_tokens_free(&rt);
        }
    }
    free(run.sql);
    return rc;
}

static int dispatch(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                    tarn_output_kind kind, const tarn_sink *sink)
{
    int handled = 0;
    int rc = 0;
    if (strcmp(kw, "PREPARE") == 0 || strcmp(kw, "EXECUTE") == 0 || strcmp(kw, "DEALLOCATE") == 0) {
        rc = prepared_stmt(s, tk, sql, kw, sink, &handled);
        if (handled || rc)
            return rc;
    }
    if (strcmp(kw, "ATTACH") == 0 || strcmp(kw, "DETACH") == 0)
        rc = session_attach_stmt(s, tk, sql, kw, &handled);
    else if (strcmp(kw, "USE") == 0)
        return stmt_use(s, tk, sql);
    else if (strcmp(kw, "CREATE") == 0 || strcmp(kw, "DROP") == 0 || strcmp(kw, "ALTER") == 0 ||
             strcmp(kw, "COMMENT") == 0) {
        rc = session_secret_stmt(s, tk, kw, &handled);
        if (!handled && !rc)
            rc = session_ddl_stmt(s, tk, sql, kw, sink, &handled);
    } else if (strcmp(kw, "INSERT") == 0 || strcmp(kw, "DELETE") == 0 ||
               strcmp(kw, "UPDATE") == 0 || strcmp(kw, "TRUNCATE") == 0 ||
               strcmp(kw, "COPY") == 0 || strcmp(kw, "MERGE") == 0)
        rc = session_dml_stmt(s, tk, sql, kw, sink, &handled);
    else if (strcmp(kw, "CALL") == 0)
        rc = session_call_stmt(s, tk, sql, &handled);
    else if (strcmp(kw, "CHECKPOINT") == 0 || strcmp(kw, "FORCE") == 0)
        rc = session_checkpoint_stmt(s, tk, &handled);
    else if (strcmp(kw, "SET") == 0 || strcmp(kw, "RESET") == 0)
        return stmt_set(s, tk, sql, kind, sink);
    if (handled || rc)
        return rc;
    rc = session_catalog_stmt(s, tk, sql, kw, &handled);
    if (handled || rc)
        return rc;
    char *rewritten = NULL;
    rc = runs_now(kw) ? rewrite_reads_now(&rewritten, s, sql) : rewrite_reads(&rewritten, s, sql);
    if (rc)
        return rc;
    rc = run_plain(s, rewritten, kind, sink);
    free(rewritten);
    return rc;
}

/* Whether a line of DuckDB's message suggests something tarn keeps to
 * itself (a catalog table, a scratch table, a scan's row-id column). */
static int suggests_internal(const char *line, size_t len)
{
    static const char *const HINTS[] = {"Did you mean", "Candidate bindings", "Candidate tables"};
    static const char *const INTERNAL[] = {"__tarn",           "_tarn_stage", "__ducklake_metadata",
                                           "ducklake_inlined", "\"row_id\"",  "\"rowid\""};
    int hint = 0;
    for (size_t i = 0; i < sizeof(HINTS) / sizeof(HINTS[0]) && !hint; i++)
        hint = len >= strlen(HINTS[i]) && strncmp(line, HINTS[i], strlen(HINTS[i])) == 0;
    for (size_t i = 0; hint && i < sizeof(INTERNAL) / sizeof(INTERNAL[0]); i++)
        if (memmem(line, len, INTERNAL[i], strlen(INTERNAL[i])))
            return 1;
    return 0;
}

/* The error of a failed statement, told about `sql` as the user wrote it:
 * DuckDB's position (in the SQL tarn ran) mapped back into `sql`, or
 * dropped when it lies in text tarn added; suggestions of internal objects
 * left out. */
/* A lake view that does not bind fails, when read, with its binding's
 * error raised by error(): shown as that error, not as DuckDB's
 * "Invalid Input Error" of error(). */
static void unwrap_view_error(void)
{
    static const char *const WRAP = "Invalid Input Error: ";
    static const char *const KINDS[] = {"Catalog Error: ", "Binder Error: "};
    const char *m = tarn_error_last();
    if (strncmp(m, WRAP, strlen(WRAP)) != 0)
        return;
    for (size_t k = 0; k < sizeof(KINDS) / sizeof(KINDS[0]); k++) {
        if (strncmp(m + strlen(WRAP), KINDS[k], strlen(KINDS[k])) == 0) {
            tarn_error_saved err = tarn_error_save();
            tarn_error_set(err.code, "%s", err.msg + strlen(WRAP));
            free(err.msg);
            free(err.sql);
            return;
        }
    }
}

static void error_about_statement(const char *sql)
{
    unwrap_view_error();
    const char *ran = NULL;
    long pos = tarn_error_position(&ran);
    if (pos >= 0 && ran != NULL && strcmp(ran, sql) != 0) {
        long at = textmap_locate(sql, ran, pos);
        tarn_error_set_position(sql, at);
    }
    const char *msg = tarn_error_last();
    if (!strstr(msg, "Did you mean") && !strstr(msg, "Candidate "))
        return;
    tarn_buf out = {0};
    for (const char *p = msg; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        if (!suggests_internal(p, len)) {
            buf_append(&out, p, len);
            if (nl)
                buf_putc(&out, '\n');
        }
        p += len + (nl != NULL);
    }
    while (out.len > 0 && out.ptr[out.len - 1] == '\n')
        out.ptr[--out.len] = 0;
    tarn_error_saved err = tarn_error_save();
    tarn_error_set(err.code, "%s", buf_cstr(&out));
    if (err.sql)
        tarn_error_set_position(err.sql, err.pos);
    free(err.msg);
    free(err.sql);
    buf_free(&out);
}

int tarn_session_exec(tarn_session *s, const char *sql, const tarn_sink *sink)
{
    sql_tokens tk;
    char kw[32];
    int rc = sql_tokenize_kw(&tk, sql, kw, sizeof(kw));
    if (rc)
        return rc;
    if (s->explicit_txn && s->txn_failed && !is_transaction_kw(kw)) {
        sql_tokens_free(&tk);
        return tarn_error_set(TARN_EINVALID, "Current transaction is aborted (please ROLLBACK)");
    }
    tarn_error_clear();
    if (is_transaction_kw(kw))
        rc = stmt_transaction(s, kw);
    else
        rc = dispatch(s, &tk, sql, kw, sql_output_kind(sql), sink);
    if (rc && s->explicit_txn && aborts_transaction())
        s->txn_failed = 1;
    if (rc)
        error_about_statement(sql);
    sql_tokens_free(&tk);
    return rc;
}

void tarn_process_end(void)
{
    lk_delmask_release();
    duck_parser_close();
}

const char *tarn_session_catalog_name(tarn_session *s, const char *alias)
{
    lk_lake *l = session_lake(s, alias);
    return l ? l->meta_name : NULL;
}

const char *tarn_session_catalog_prefix(tarn_session *s, const char *alias)
{
    lk_lake *l = session_lake(s, alias);
    return l ? lk_catdb_name(&l->db) : NULL;
}

int tarn_session_commit_sql(tarn_session *s, const char *alias, const char *sql)
{
    lk_lake *l = session_lake(s, alias);
    if (!l)
        return tarn_error_set(TARN_ENOTFOUND, "no lake is attached as \"%s\"", alias);
    if (!l->txn) {
        if (!s->explicit_txn)
            return tarn_error_set(TARN_EINVALID,
                                  "lake \"%s\" has no open transaction to commit with", alias);
        int rc = session_write_begin(s, l);
        if (rc)
            return rc;
    }
    lk_txn_sql(l->txn, "%s", sql);
    return 0;
}

int tarn_session_snapshot(tarn_session *s, const char *alias, int64_t *out)
{
    lk_lake *l = session_lake(s, alias);
    if (!l)
        return tarn_error_set(TARN_ENOTFOUND, "no lake is attached as \"%s\"", alias);
    *out = lk_txn_catalog(l)->snapshot_id;
    return 0;
}

int tarn_session_pending_snapshot(tarn_session *s, const char *alias, int64_t *out)
{
    lk_lake *l = session_lake(s, alias);
    if (!l || !l->txn)
        return tarn_error_set(TARN_EINVALID, "lake \"%s\" has no open transaction", alias);
    *out = lk_txn_makes_snapshot(l->txn) ? l->txn->snapshot_id : l->txn->cat.snapshot_id;
    return 0;
}

void tarn_session_interrupt(tarn_session *s)
{
    duckdb_interrupt(s->con);
}

int tarn_session_pending_changes(tarn_session *s, const char *alias, char ***out, size_t *n)
{
    *out = NULL;
    *n = 0;
    lk_lake *l = session_lake(s, alias);
    if (!l || !l->txn)
        return tarn_error_set(TARN_EINVALID, "lake \"%s\" has no open transaction", alias);
    *out = xcalloc(l->txn->nchange_tokens ? l->txn->nchange_tokens : 1, sizeof(char *));
    for (size_t i = 0; i < l->txn->nchange_tokens; i++)
        (*out)[i] = xstrdup(l->txn->change_tokens[i]);
    *n = l->txn->nchange_tokens;
    return 0;
}

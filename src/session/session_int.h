/*
 * session_int.h — what the statement handlers of a session share
 * (session.c routes; session_attach.c, session_ddl.c, session_dml.c and
 * rewrite.c handle). Not part of libtarn's public API.
 */
#ifndef TARN_SESSION_SESSION_INT_H
#define TARN_SESSION_SESSION_INT_H

#include "lake/lake.h"
#include "sql/lexer.h"
#include "tarn/session.h"

#include <duckdb.h>

typedef struct session_secret session_secret;
typedef struct session_log session_log;

struct tarn_session {
    duckdb_database db;
    duckdb_connection con;
    lk_lake *lakes;   /* attached lakes, most recent first */
    int explicit_txn; /* inside BEGIN … COMMIT */
    int txn_failed;   /* a statement failed inside it: only ROLLBACK/COMMIT work */
    char *use_lake;   /* USE lake[.schema]: the lake of unqualified names */
    char *use_schema;
    session_secret *secrets;           /* CREATE SECRET … (TYPE ducklake), newest first */
    struct session_prepared *prepared; /* PREPAREd statements (session_prepare.c) */
    int json_cells;   /* rows delivered as JSON text (tarn_session_set_json_cells) */
    session_log *log; /* DuckLake's DuckLakeMetadata log (session_log.c); NULL until enabled */
};

/* A possibly qualified name read from the token stream: 1 to 3 parts,
 * covering tokens [start, end). Parts point into the tokens. */
typedef struct {
    const char *parts[4];
    int n;
    size_t start, end;
} qname;

/* Reads a qualified name starting at token i; 0 when there is none. */
int session_qname(const sql_tokens *tk, size_t i, qname *q);
lk_lake *session_lake(tarn_session *s, const char *alias);
/* Resolves a table name (or, with schema_only, a schema name) to a lake
 * and its schema/table parts; NULL when the name is not in a lake. */
lk_lake *session_resolve(tarn_session *s, const qname *q, const char **schema, const char **name,
                         int schema_only);

/* Opens the lake transaction for a write (if none is open), and ends it:
 * commit outside BEGIN, view refresh inside. */
int session_write_begin(tarn_session *s, lk_lake *l);
int session_write_end(tarn_session *s, lk_lake *l, int rc);

/* Statement handlers: *handled = 1 when the statement was the lake's. */
/* A write of tarn's own tables in a lake's catalog database that is not
 * DuckDB's (PostgreSQL): run there (session_catstmt.c). */
int session_catalog_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                         int *handled);
int session_attach_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                        int *handled);
int session_ddl_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                     const tarn_sink *sink, int *handled);
int session_dml_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                     const tarn_sink *sink, int *handled);
/* Whether DDL statement tk (first keyword kw) creates, drops or alters
 * something in a lake (not TEMP, resolving to an attached lake). */
int session_ddl_targets_lake(tarn_session *s, const sql_tokens *tk, const char *kw);
/* CREATE / DROP MACRO (or FUNCTION), `i` the token after the object
 * keyword and IF [NOT] EXISTS. */
int session_macro_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                       size_t i, int or_replace, int if_not_exists, int if_exists, int *handled);
/* MERGE INTO lake table t (q: its name in the statement; session_merge.c). */
int session_merge_stmt(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                       const qname *q, const lk_table *t, const tarn_sink *sink);
/* [FORCE] CHECKPOINT [name] of a lake (session_call.c). */
int session_checkpoint_stmt(tarn_session *s, const sql_tokens *tk, int *handled);
int session_call_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, int *handled);

/* CREATE SECRET / DROP SECRET of a DuckLake secret (session_secret.c);
 * other secrets are DuckDB's (*handled stays 0). */
int session_secret_stmt(tarn_session *s, const sql_tokens *tk, const char *kw, int *handled);
/* ATTACH 'ducklake:' (the default secret) or 'ducklake:name' (a path of
 * letters, digits and '_'): the secret's options into o (strings owned by
 * the secret), its METADATA_PARAMETERS TYPE into *meta_type; a missing
 * secret is an error. Other paths leave o alone. */
int session_secret_attach(tarn_session *s, lk_attach_opts *o, const char **meta_type);
void session_secrets_free(tarn_session *s);
/* What PREPARE / EXECUTE / DEALLOCATE leave to run (session_prepare.c):
 * nothing when !handled (DuckDB runs the statement as it is); else `sql`
 * when set, printing `kind`: as tarn runs any statement, or (plain) as
 * DuckDB's own prepared statement. */
typedef struct {
    int handled, plain;
    char *sql;
    tarn_output_kind kind;
} session_run;
int session_prepare_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                         session_run *run);
void session_prepared_free(tarn_session *s);

/* The source text of tokens [from, to) of `sql`. */
char *session_token_text(const sql_tokens *tk, const char *sql, size_t from, size_t to);

/* Whether an alias follows token i (AS x, or a bare name that is not a
 * clause keyword). */
int session_alias_follows(const sql_tokens *tk, size_t i);

/* Evaluates SQL expression `sql` (a string, or a list of strings) in the
 * session's DuckDB and appends its strings to *out; *had_null tells that
 * the value or one of its elements was NULL (left out). */
int session_eval_strings(strlist *out, int *had_null, tarn_session *s, const char *sql);

#endif

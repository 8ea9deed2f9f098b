/*
 * lexer.h — tarn's SQL lexer and script splitter.
 *
 * tarn never parses full SQL (DuckDB does that); it only needs to cut a
 * script into statements, find the first keyword of a statement, and pick
 * out the few parts of DDL/DML it rewrites (target names, AT clauses, SET
 * lists). The lexer knows DuckDB's token rules: '…' strings with ''
 * escapes (and E'…' with backslash escapes), "…" identifiers with ""
 * escapes, -- line and nested block comments, $tag$…$tag$ dollar quotes,
 * numbers, $1 / ? parameters and operators.
 */
#ifndef TARN_SQL_LEXER_H
#define TARN_SQL_LEXER_H

#include "tarn/output.h"

#include <stddef.h>

typedef enum {
    SQL_TOK_EOF = 0,
    SQL_TOK_IDENT,  /* bare word: keyword or identifier; text as written */
    SQL_TOK_QIDENT, /* "quoted identifier"; text unescaped */
    SQL_TOK_STRING, /* string literal; text unescaped */
    SQL_TOK_NUMBER,
    SQL_TOK_PARAM, /* $1, ?, $name */
    SQL_TOK_OP,    /* operator or punctuation: ( ) , . = <> :: => etc. */
    SQL_TOK_SEMI,  /* ; */
} sql_tok_type;

typedef struct {
    sql_tok_type type;
    size_t start, len; /* byte range of the token in the source text */
    char *text;        /* decoded text (owned by the sql_tokens) */
    int line;          /* 1-based line of the token's first byte */
} sql_token;

typedef struct {
    sql_token *toks; /* n tokens, then one SQL_TOK_EOF token */
    size_t n;
} sql_tokens;

/* Tokenizes `sql` (comments and whitespace are dropped). Fails with a
 * message naming the line on an unterminated string, identifier or comment. */
int sql_tokenize(sql_tokens *out, const char *sql);
void sql_tokens_free(sql_tokens *t);

/* 1 when `t` is a bare identifier equal to `kw`, ignoring ASCII case. */
int sql_tok_is_kw(const sql_token *t, const char *kw);
/* 1 when `t` is the operator or punctuation `op` ("(", ",", "=>", …). */
int sql_tok_is_op(const sql_token *t, const char *op);
/* The same for token i of `tk`; 0 past the end. */
int sql_tokens_is_op(const sql_tokens *tk, size_t i, const char *op);
/* The end of the comma-separated item starting at token i, before `to`:
 * the index of the next ',' outside brackets, or `to`. */
size_t sql_tokens_item_end(const sql_tokens *tk, size_t i, size_t to);
/* The index of the ')' closing the '(' at token i, or tk->n when it is
 * not closed. */
size_t sql_tokens_close_paren(const sql_tokens *tk, size_t i);

typedef struct {
    char *text; /* the statement without its terminating ';', leading and
                   trailing whitespace trimmed; comments inside are kept */
    int line;   /* 1-based line where the statement starts in the script */
} sql_stmt;

typedef struct {
    sql_stmt *items;
    size_t n;
} sql_script;

/* Splits a script at top-level ';' (never inside strings, quoted names,
 * comments or dollar quotes). Empty statements (only whitespace/comments)
 * are skipped. A final statement without ';' is kept. */
int sql_split(sql_script *out, const char *text);
void sql_script_free(sql_script *s);

/* The first keyword of a statement, upper-cased, after leading whitespace,
 * comments and '(' — into buf (size n); "" when none. */
void sql_first_keyword(const char *stmt, char *buf, size_t n);

/* sql_tokenize, then the statement's first keyword (sql_first_keyword)
 * into kw (size n): what routing a statement starts from. On failure
 * nothing is left to free and kw is not set. */
int sql_tokenize_kw(sql_tokens *out, const char *sql, char *kw, size_t n);

/* What a statement prints, by the rules of the golden README:
 * SELECT FROM WITH VALUES TABLE DESCRIBE SHOW SUMMARIZE (and PIVOT,
 * UNPIVOT, EXPLAIN) → ROWS; INSERT UPDATE DELETE and
 * CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name AS … → COUNT;
 * everything else → NONE. */
tarn_output_kind sql_output_kind(const char *stmt);

#endif

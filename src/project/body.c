/*
 * body.c — a model's statements (see body.h).
 */
#include "project/body.h"

#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/strdist.h"

#include <stdlib.h>
#include <string.h>

static int is_query_kw(const sql_token *t)
{
    return sql_tok_is_kw(t, "SELECT") || sql_tok_is_kw(t, "WITH") || sql_tok_is_kw(t, "FROM") ||
           sql_tok_is_kw(t, "VALUES");
}

/* Where the query part of a non-query statement starts: the first
 * top-level SELECT/WITH/FROM/VALUES after the first word (INSERT … SELECT,
 * CREATE … AS SELECT, UPDATE … FROM), or a '(' that opens
 * one. A heuristic: it only feeds dependency analysis and reference
 * pinning, and DuckDB still runs the whole statement. */
static size_t find_query_part(const sql_tokens *tk)
{
    /* DELETE FROM t …: the FROM names the table written, not one read. */
    if (tk->n && sql_tok_is_kw(&tk->toks[0], "DELETE"))
        return REF_NO_OFFSET;
    int depth = 0;
    for (size_t i = 1; i < tk->n; i++) {
        const sql_token *t = &tk->toks[i];
        if (sql_tok_is_op(t, "(")) {
            if (depth == 0 && i + 1 < tk->n && is_query_kw(&tk->toks[i + 1]) &&
                !sql_tok_is_kw(&tk->toks[i + 1], "VALUES"))
                return t->start;
            depth++;
        } else if (sql_tok_is_op(t, ")")) {
            depth--;
        } else if (depth == 0 && is_query_kw(t)) {
            return t->start;
        }
    }
    return REF_NO_OFFSET;
}

static void push_offset(size_t **offs, size_t *n, size_t off)
{
    *offs = xrealloc(*offs, (*n + 1) * sizeof(size_t));
    (*offs)[(*n)++] = off;
}

static void find_placeholders(model_stmt *st, const sql_tokens *tk)
{
    for (size_t i = 0; i + 2 < tk->n; i++) {
        const sql_token *a = &tk->toks[i], *b = &tk->toks[i + 1], *c = &tk->toks[i + 2];
        if (!sql_tok_is_op(a, "{") || b->type != SQL_TOK_IDENT || !sql_tok_is_op(c, "}") ||
            b->start != a->start + 1 || c->start != b->start + b->len)
            continue;
        if (strcmp(b->text, "partition") == 0)
            push_offset(&st->part_offs, &st->npart, a->start);
        else if (strcmp(b->text, "watermark") == 0)
            push_offset(&st->wm_offs, &st->nwm, a->start);
    }
}

/* Setup statements a managed model may run before its query: session
 * settings and scratch objects that never touch the lake. */
static int setup_allowed(const sql_tokens *tk)
{
    const sql_token *t = tk->toks;
    if (sql_tok_is_kw(t, "SET") || sql_tok_is_kw(t, "RESET") || sql_tok_is_kw(t, "PRAGMA") ||
        sql_tok_is_kw(t, "LOAD"))
        return 1;
    if (!sql_tok_is_kw(t, "CREATE"))
        return 0;
    size_t i = 1;
    if (i + 1 < tk->n && sql_tok_is_kw(&tk->toks[i], "OR") &&
        sql_tok_is_kw(&tk->toks[i + 1], "REPLACE"))
        i += 2;
    if (i >= tk->n)
        return 0;
    const sql_token *u = &tk->toks[i];
    return sql_tok_is_kw(u, "TEMP") || sql_tok_is_kw(u, "TEMPORARY") || sql_tok_is_kw(u, "MACRO") ||
           sql_tok_is_kw(u, "FUNCTION");
}

/* The keywords a DuckDB statement can start with. A model statement that
 * starts with anything else does not parse: a typo, reported as the
 * syntax error it is rather than as a statement tarn does not allow. */
static const char *const STATEMENT_KW[] = {
    "ABORT",   "ALTER",     "ANALYZE", "ATTACH",   "BEGIN",      "CALL",   "CHECKPOINT",
    "COMMENT", "COMMIT",    "COPY",    "CREATE",   "DEALLOCATE", "DELETE", "DESCRIBE",
    "DETACH",  "DROP",      "END",     "EXECUTE",  "EXPLAIN",    "EXPORT", "FORCE",
    "FROM",    "IMPORT",    "INSERT",  "INSTALL",  "LOAD",       "MERGE",  "PIVOT",
    "PRAGMA",  "PREPARE",   "RESET",   "ROLLBACK", "SELECT",     "SET",    "SHOW",
    "START",   "SUMMARIZE", "TABLE",   "TRUNCATE", "UNPIVOT",    "UPDATE", "USE",
    "VACUUM",  "VALUES",    "WITH"};
#define NSTATEMENT_KW (sizeof(STATEMENT_KW) / sizeof(STATEMENT_KW[0]))

/* 1 when `kw` starts a DuckDB statement; else *near is the statement
 * keyword it is a typo of (NULL when none is close). */
static int statement_kw(const char *kw, const char **near)
{
    int best = 3; /* at most two edits away */
    *near = NULL;
    for (size_t i = 0; i < NSTATEMENT_KW; i++) {
        if (strcmp(kw, STATEMENT_KW[i]) == 0)
            return 1;
        int e = (int)str_distance(kw, STATEMENT_KW[i]);
        if (e < best) {
            best = e;
            *near = STATEMENT_KW[i];
        }
    }
    return 0;
}

static const char *manual_fix =
    "a managed model is setup statements (SET, CREATE TEMP …) and one trailing SELECT whose rows "
    "tarn writes; to run your own SQL against the lake, put '-- materialize manual' in the "
    "header";

/* A statement whose first word starts no DuckDB statement: the syntax
 * error DuckDB would give, with the keyword it is likely a typo of. */
static void report_unknown_keyword(diag_list *d, const char *path, const model_stmt *st,
                                   const sql_tokens *tk, const char *near)
{
    char *fix = near ? xasprintf("did you mean %s?", near)
                     : xstrdup("fix the SQL (DuckDB's parser rejects it)");
    size_t w = 0;
    while (w + 1 < tk->n && tk->toks[w].type != SQL_TOK_IDENT)
        w++; /* past any '(' */
    diag_add(d, path, body_line_of(st, tk->toks[w].start), fix, "syntax error at or near \"%s\"",
             tk->toks[w].text);
    free(fix);
}

/* A manual model's statement: transaction control, USE and ATTACH are
 * tarn's, anything else runs as written. */
static void check_manual_stmt(model_stmt *st, diag_list *d, const char *path, const sql_tokens *tk,
                              int query)
{
    if (!strcmp(st->kw, "BEGIN") || !strcmp(st->kw, "START") || !strcmp(st->kw, "COMMIT") ||
        !strcmp(st->kw, "END") || !strcmp(st->kw, "ROLLBACK") || !strcmp(st->kw, "ABORT"))
        diag_add(d, path, st->line,
                 "remove it: tarn runs a manual model inside its own transaction, so "
                 "that the build is one snapshot",
                 "%s in a manual model", st->kw);
    else if (!strcmp(st->kw, "USE")) /* it would change what later names mean */
        diag_add(d, path, st->line,
                 "remove it and name tables in full (lake.schema.table); the run's "
                 "default database is set in config/",
                 "USE in a manual model");
    else if (!strcmp(st->kw, "ATTACH") || !strcmp(st->kw, "DETACH"))
        diag_add(d, path, st->line,
                 "attach databases in config/catalog.sql (or another config/ file)",
                 "%s in a manual model", st->kw);
    st->query_off = query ? 0 : find_query_part(tk);
}

/* A managed model's statement: setup statements, then exactly one query,
 * the last. */
static void check_managed_stmt(model_stmt *st, diag_list *d, const char *path, const sql_tokens *tk,
                               int query, int last, int last_is_query)
{
    if (last) {
        if (!query)
            diag_add(d, path, st->line, manual_fix,
                     "the model's last statement is %s, not a query (SELECT, WITH, FROM or "
                     "VALUES)",
                     *st->kw ? st->kw : "not a statement tarn knows");
        st->is_query = 1;
        st->query_off = 0;
    } else if (query && last_is_query) {
        diag_add(d, path, st->line,
                 "keep one query, the last statement; turn earlier ones into CREATE TEMP "
                 "TABLE … AS or CTEs",
                 "a second query: only the last statement of a managed model may be a query");
    } else if (query) {
        /* reported with the last statement */
    } else if (!setup_allowed(tk)) {
        diag_add(d, path, st->line, manual_fix, "%s is not allowed in a managed model",
                 *st->kw ? st->kw : "this statement");
    } else {
        st->query_off = find_query_part(tk);
    }
}

/* Statement st (taken from the split script's item) with its keyword,
 * placeholders and query part, and its problems in d. */
static void body_stmt(model_stmt *st, diag_list *d, const char *path, sql_stmt *item, int manual,
                      int last, int last_is_query)
{
    st->text = item->text;
    item->text = NULL;
    st->line = item->line;
    st->query_off = REF_NO_OFFSET;
    sql_first_keyword(st->text, st->kw, sizeof(st->kw));
    sql_tokens tk;
    if (sql_tokenize(&tk, st->text) != 0) { /* cannot happen after a split */
        tarn_error_clear();
        return;
    }
    find_placeholders(st, &tk);
    const char *near = NULL;
    if (*st->kw && !statement_kw(st->kw, &near)) {
        report_unknown_keyword(d, path, st, &tk, near);
        if (last && !manual)
            st->is_query = 1; /* the one error of this statement */
    } else {
        int query = is_query_kw(&tk.toks[0]) || strcmp(st->kw, "SELECT") == 0 ||
                    strcmp(st->kw, "WITH") == 0 || strcmp(st->kw, "FROM") == 0 ||
                    strcmp(st->kw, "VALUES") == 0;
        if (manual)
            check_manual_stmt(st, d, path, &tk, query);
        else
            check_managed_stmt(st, d, path, &tk, query, last, last_is_query);
    }
    sql_tokens_free(&tk);
}

int body_parse(model_body *out, diag_list *d, const char *path, const char *text, int manual)
{
    memset(out, 0, sizeof(*out));
    size_t before = d->n;
    sql_script sc;
    if (sql_split(&sc, text) != 0) {
        diag_add(d, path, 0, "close the string, quoted name or comment", "%s", tarn_error_last());
        tarn_error_clear();
        return 1;
    }
    if (sc.n == 0) {
        diag_add(d, path, 0, "write a SELECT whose rows become the table",
                 "the model has no SQL statement");
        sql_script_free(&sc);
        return 1;
    }
    /* When the last statement is not a query, that is the one error to
     * report: earlier queries are then not "second" ones. */
    char lastkw[24];
    sql_first_keyword(sc.items[sc.n - 1].text, lastkw, sizeof(lastkw));
    int last_is_query = !strcmp(lastkw, "SELECT") || !strcmp(lastkw, "WITH") ||
                        !strcmp(lastkw, "FROM") || !strcmp(lastkw, "VALUES");
    out->items = xcalloc(sc.n, sizeof(model_stmt));
    out->n = sc.n;
    for (size_t i = 0; i < sc.n; i++)
        body_stmt(&out->items[i], d, path, &sc.items[i], manual, i + 1 == sc.n, last_is_query);
    sql_script_free(&sc);
    return (int)(d->n - before);
}

int body_line_of(const model_stmt *st, size_t off)
{
    int line = st->line;
    for (size_t i = 0; i < off && st->text[i]; i++)
        if (st->text[i] == '\n')
            line++;
    return line;
}

char *body_query_for_parse(const model_stmt *st)
{
    if (st->query_off == REF_NO_OFFSET)
        return NULL;
    char *q = xstrdup(st->text + st->query_off);
    for (size_t i = 0; i < st->npart; i++)
        if (st->part_offs[i] >= st->query_off)
            memcpy(q + st->part_offs[i] - st->query_off, BODY_PARTITION_DUMMY, BODY_PARTITION_LEN);
    for (size_t i = 0; i < st->nwm; i++)
        if (st->wm_offs[i] >= st->query_off)
            memcpy(q + st->wm_offs[i] - st->query_off, BODY_PARTITION_DUMMY, BODY_PARTITION_LEN);
    return q;
}

void body_free(model_body *b)
{
    for (size_t i = 0; i < b->n; i++) {
        free(b->items[i].text);
        refs_free(&b->items[i].refs);
        free(b->items[i].part_offs);
        free(b->items[i].wm_offs);
    }
    free(b->items);
    memset(b, 0, sizeof(*b));
}

/*
 * session_prepare.c — PREPARE name AS statement, EXECUTE name[(values)],
 * DEALLOCATE [PREPARE] name.
 *
 * With a lake attached, a prepared statement is kept by the session as
 * text, not handed to DuckDB: tarn's rewrites (ducklake_* calls, AT
 * clauses, rowid) evaluate their arguments when they rewrite, and those
 * may be the statement's parameters ($1, ?, $name), which only EXECUTE
 * gives; and a write to a lake table is tarn's, not DuckDB's. EXECUTE puts
 * each value, as the SQL expression the user wrote, in place of its
 * parameter and runs the statement as if typed then, so it reads the lake
 * as it is at that time (as DuckDB rebinds a prepared statement after a
 * catalog change). Without a lake, DuckDB prepares the statement; the
 * session remembers what it prints (rows or a count), which EXECUTE then
 * prints too.
 */
#include "session/session_int.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct session_prepared {
    char *name;
    char *body;            /* the statement after AS (kept text), or NULL: DuckDB's */
    tarn_output_kind kind; /* what EXECUTE prints */
    struct session_prepared *next;
};

static struct session_prepared **find(tarn_session *s, const char *name)
{
    struct session_prepared **pp = &s->prepared;
    while (*pp && strcasecmp((*pp)->name, name) != 0)
        pp = &(*pp)->next;
    return pp;
}

static void forget(tarn_session *s, const char *name)
{
    struct session_prepared **pp = find(s, name);
    struct session_prepared *p = *pp;
    if (!p)
        return;
    *pp = p->next;
    free(p->name);
    free(p->body);
    free(p);
}

void session_prepared_free(tarn_session *s)
{
    while (s->prepared)
        forget(s, s->prepared->name);
}

/* The index after the parenthesized group that opens at token i. */
static size_t skip_group(const sql_tokens *tk, size_t i)
{
    int depth = 0;
    for (; i < tk->n; i++) {
        if (sql_tok_is_op(&tk->toks[i], "("))
            depth++;
        else if (sql_tok_is_op(&tk->toks[i], ")") && --depth == 0)
            return i + 1;
    }
    return i;
}

static int prepare(tarn_session *s, const sql_tokens *tk, const char *sql, session_run *run)
{
    /* PREPARE name [(types)] AS statement */
    if (tk->n < 4 || (tk->toks[1].type != SQL_TOK_IDENT && tk->toks[1].type != SQL_TOK_QIDENT))
        return 0;
    size_t i = 2;
    if (sql_tok_is_op(&tk->toks[i], "("))
        i = skip_group(tk, i);
    if (i + 1 >= tk->n || !sql_tok_is_kw(&tk->toks[i], "AS"))
        return 0;
    const char *body = sql + tk->toks[i + 1].start;
    const char *name = tk->toks[1].text;
    forget(s, name);
    struct session_prepared *p = xcalloc(1, sizeof(*p));
    p->name = xstrdup(name);
    p->kind = sql_output_kind(body);
    p->body = s->lakes ? xstrdup(body) : NULL;
    p->next = s->prepared;
    s->prepared = p;
    if (!p->body) { /* DuckDB's: the statement as written */
        run->sql = xstrdup(sql);
        run->kind = TARN_OUTPUT_NONE;
        run->plain = 1;
    }
    run->handled = 1;
    return 0;
}

/* The values of EXECUTE name(v1, v2, k := v3): each as source text, with
 * its name or NULL, tokens [from, to) inside the parentheses. */
typedef struct {
    char **vals, **names;
    size_t n;
} exec_args;

static void args_free(exec_args *a)
{
    for (size_t i = 0; i < a->n; i++) {
        free(a->vals[i]);
        free(a->names[i]);
    }
    free(a->vals);
    free(a->names);
}

static void args_read(exec_args *a, const sql_tokens *tk, const char *sql, size_t from, size_t to)
{
    memset(a, 0, sizeof(*a));
    size_t i = from;
    while (i < to) {
        size_t start = i;
        i = sql_tokens_item_end(tk, i, to);
        char *name = NULL;
        size_t vstart = start;
        if (i - start >= 3 && tk->toks[start].type == SQL_TOK_IDENT &&
            (sql_tok_is_op(&tk->toks[start + 1], ":=") ||
             sql_tok_is_op(&tk->toks[start + 1], "="))) {
            name = xstrdup(tk->toks[start].text);
            vstart = start + 2;
        }
        a->vals = xrealloc(a->vals, (a->n + 1) * sizeof(char *));
        a->names = xrealloc(a->names, (a->n + 1) * sizeof(char *));
        a->vals[a->n] = session_token_text(tk, sql, vstart, i);
        a->names[a->n++] = name;
        if (i < to)
            i++;
    }
}

/* The value for parameter token `t` (`$3`, `?` the *next-th, `$name`). */
static const char *arg_for(const exec_args *a, const sql_token *t, size_t *next)
{
    const char *p = t->text;
    size_t k;
    if (strcmp(p, "?") == 0) {
        k = (*next)++;
    } else if (p[0] == '$' && p[1] >= '0' && p[1] <= '9') {
        k = strtoul(p + 1, NULL, 10) - 1;
    } else {
        for (size_t i = 0; i < a->n; i++)
            if (a->names[i] && strcasecmp(a->names[i], p + 1) == 0)
                return a->vals[i];
        return NULL;
    }
    return k < a->n && !a->names[k] ? a->vals[k] : NULL;
}

/* `body` with each parameter replaced by its value, in parentheses. */
static int substitute(char **out, const char *body, const exec_args *a)
{
    sql_tokens tk;
    int rc = sql_tokenize(&tk, body);
    if (rc)
        return rc;
    tarn_buf b = {0};
    size_t from = 0, next = 0, nparams = 0, missing = 0;
    for (size_t i = 0; i < tk.n; i++) {
        const sql_token *t = &tk.toks[i];
        if (t->type != SQL_TOK_PARAM)
            continue;
        nparams++;
        const char *v = arg_for(a, t, &next);
        if (!v) {
            missing++;
            continue;
        }
        buf_append(&b, body + from, t->start - from);
        buf_printf(&b, "(%s)", v);
        from = t->start + t->len;
    }
    buf_puts(&b, body + from);
    sql_tokens_free(&tk);
    if (missing) {
        buf_free(&b);
        if (a->n == 0)
            return tarn_error_set(TARN_EINVALID,
                                  "Invalid Input Error: Expected %zu parameters, but none were "
                                  "supplied",
                                  nparams);
        return tarn_error_set(TARN_EINVALID,
                              "Invalid Input Error: Values were not provided for %zu of the "
                              "prepared statement's parameters",
                              missing);
    }
    *out = buf_detach(&b);
    return 0;
}

static int execute(tarn_session *s, const sql_tokens *tk, const char *sql, session_run *run)
{
    if (tk->n < 2)
        return 0;
    struct session_prepared *p = *find(s, tk->toks[1].text);
    if (!p)
        return 0; /* DuckDB's error */
    run->handled = 1;
    run->kind = p->kind;
    if (!p->body) {
        run->sql = xstrdup(sql);
        run->plain = 1;
        return 0;
    }
    exec_args a = {0};
    if (tk->n > 2 && sql_tok_is_op(&tk->toks[2], "(")) {
        size_t close = skip_group(tk, 2);
        args_read(&a, tk, sql, 3, close - 1);
    }
    int rc = substitute(&run->sql, p->body, &a);
    args_free(&a);
    return rc;
}

int session_prepare_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                         session_run *run)
{
    memset(run, 0, sizeof(*run));
    if (strcmp(kw, "PREPARE") == 0)
        return prepare(s, tk, sql, run);
    if (strcmp(kw, "EXECUTE") == 0)
        return execute(s, tk, sql, run);
    /* DEALLOCATE [PREPARE] name */
    size_t i = tk->n > 2 && sql_tok_is_kw(&tk->toks[1], "PREPARE") ? 2 : 1;
    if (i >= tk->n)
        return 0;
    struct session_prepared *p = *find(s, tk->toks[i].text);
    if (!p)
        return 0;
    int kept = p->body != NULL;
    forget(s, tk->toks[i].text);
    run->handled = kept; /* DuckDB's own goes to DuckDB */
    return 0;
}

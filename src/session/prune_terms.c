/*
 * prune_terms.c — the WHERE conjuncts that can prune a lake table's files
 * (see prune_terms.h). The clause is cut at its top-level ANDs (those of
 * BETWEEN excepted); each piece must be exactly one of the plain forms, or
 * it is left out. Depth counts parentheses and CASE … END, whose ANDs are
 * not the clause's.
 */
#include "session/prune_terms.h"

#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The index of the ')' closing the '(' at token i, before `to`; `to`
 * when there is none. */
static size_t matching(const sql_tokens *tk, size_t i, size_t to)
{
    int depth = 0;
    for (size_t k = i; k < to; k++) {
        if (sql_tok_is_op(&tk->toks[k], "("))
            depth++;
        else if (sql_tok_is_op(&tk->toks[k], ")") && --depth == 0)
            return k;
    }
    return to;
}

/* Keywords that end a WHERE clause at its own depth. */
static int ends_clause(const sql_token *t)
{
    static const char *const END[] = {"GROUP",  "ORDER",     "LIMIT", "OFFSET", "HAVING",
                                      "WINDOW", "QUALIFY",   "UNION", "EXCEPT", "INTERSECT",
                                      "USING",  "RETURNING", "FETCH", "ON"};
    if (t->type == SQL_TOK_SEMI || t->type == SQL_TOK_EOF)
        return 1;
    for (size_t k = 0; k < sizeof(END) / sizeof(END[0]); k++)
        if (sql_tok_is_kw(t, END[k]))
            return 1;
    return 0;
}

/* A column reference [qualifier.]name at tokens [i, *end): its name. */
static const char *column_ref(const sql_tokens *tk, size_t i, size_t to, const char *qualifier,
                              size_t *end)
{
    const sql_token *a = &tk->toks[i];
    if (i >= to || (a->type != SQL_TOK_IDENT && a->type != SQL_TOK_QIDENT))
        return NULL;
    if (i + 2 < to && sql_tok_is_op(&tk->toks[i + 1], ".")) {
        const sql_token *b = &tk->toks[i + 2];
        if ((b->type != SQL_TOK_IDENT && b->type != SQL_TOK_QIDENT) ||
            strcasecmp(a->text, qualifier) != 0)
            return NULL;
        *end = i + 3;
        return b->text;
    }
    *end = i + 1;
    return a->text;
}

/* A literal at tokens [i, *end) as SQL text (malloc'd): a number, a
 * signed number, a string, or DATE / TIME / TIMESTAMP 'text'. */
static char *literal(const sql_tokens *tk, size_t i, size_t to, size_t *end)
{
    if (i >= to)
        return NULL;
    const sql_token *t = &tk->toks[i];
    tarn_buf b = {0};
    if ((sql_tok_is_op(t, "-") || sql_tok_is_op(t, "+")) && i + 1 < to &&
        tk->toks[i + 1].type == SQL_TOK_NUMBER) {
        buf_puts(&b, t->text);
        t = &tk->toks[++i];
    }
    if (t->type == SQL_TOK_NUMBER) {
        if (strspn(t->text, "0123456789.eE+-_") != strlen(t->text))
            return NULL;
        buf_puts(&b, t->text);
    } else if (b.len) {
        buf_free(&b);
        return NULL;
    } else if (t->type == SQL_TOK_STRING) {
        quote_literal(&b, t->text);
    } else if ((sql_tok_is_kw(t, "DATE") || sql_tok_is_kw(t, "TIME") ||
                sql_tok_is_kw(t, "TIMESTAMP")) &&
               i + 1 < to && tk->toks[i + 1].type == SQL_TOK_STRING) {
        buf_printf(&b, "%s ",
                   sql_tok_is_kw(t, "DATE")   ? "DATE"
                   : sql_tok_is_kw(t, "TIME") ? "TIME"
                                              : "TIMESTAMP");
        quote_literal(&b, tk->toks[++i].text);
    } else {
        return NULL;
    }
    *end = i + 1;
    return buf_detach(&b);
}

static const struct {
    const char *op;
    lk_prune_op is, flipped;
} CMP[] = {{"=", LK_PRUNE_EQ, LK_PRUNE_EQ},  {"==", LK_PRUNE_EQ, LK_PRUNE_EQ},
           {"!=", LK_PRUNE_NE, LK_PRUNE_NE}, {"<>", LK_PRUNE_NE, LK_PRUNE_NE},
           {"<", LK_PRUNE_LT, LK_PRUNE_GT},  {"<=", LK_PRUNE_LE, LK_PRUNE_GE},
           {">", LK_PRUNE_GT, LK_PRUNE_LT},  {">=", LK_PRUNE_GE, LK_PRUNE_LE}};

static int comparison(const sql_token *t, lk_prune_op *op, int flip)
{
    for (size_t k = 0; k < sizeof(CMP) / sizeof(CMP[0]); k++)
        if (sql_tok_is_op(t, CMP[k].op)) {
            *op = flip ? CMP[k].flipped : CMP[k].is;
            return 1;
        }
    return 0;
}

static char **values_take(char **v, size_t n)
{
    char **out = xcalloc(n ? n : 1, sizeof(char *));
    memcpy(out, v, n * sizeof(char *));
    return out;
}

/* `literal op col` */
static int reversed_term(lk_prune *out, int group, const sql_tokens *tk, size_t i, size_t to,
                         const char *qualifier)
{
    size_t e = 0, ce = 0;
    lk_prune_op op;
    char *v = literal(tk, i, to, &e);
    const char *col = v && e < to && comparison(&tk->toks[e], &op, 1)
                          ? column_ref(tk, e + 1, to, qualifier, &ce)
                          : NULL;
    if (col && ce == to) {
        lk_prune_add(out, group, col, op, values_take(&v, 1), 1);
        return 1;
    }
    free(v);
    return 0;
}

/* The IN list after `col IN` at token i ('('): its literals, or 0. */
static size_t in_list(char ***vals, const sql_tokens *tk, size_t i, size_t to)
{
    size_t n = 0, e = 0;
    if (i >= to || !sql_tok_is_op(&tk->toks[i], "("))
        return 0;
    for (i++; i < to; i = e + 1) {
        char *v = literal(tk, i, to, &e);
        if (!v || e >= to ||
            (!sql_tok_is_op(&tk->toks[e], ",") && !sql_tok_is_op(&tk->toks[e], ")"))) {
            free(v);
            break;
        }
        *vals = xrealloc(*vals, (n + 1) * sizeof(char *));
        (*vals)[n++] = v;
        if (sql_tok_is_op(&tk->toks[e], ")")) {
            if (e + 1 == to) /* the list must end the conjunct */
                return n;
            break;
        }
    }
    for (size_t k = 0; k < n; k++)
        free((*vals)[k]);
    free(*vals);
    *vals = NULL;
    return 0;
}

/* One comparison, tokens [i, to), as a term of `group`; 0 when it is
 * none of the plain forms. */
static int atom(lk_prune *out, int group, const sql_tokens *tk, size_t i, size_t to,
                const char *qualifier)
{
    size_t e = 0, le = 0;
    if (i + 2 < to && sql_tok_is_op(&tk->toks[i], "(") && matching(tk, i, to) == to - 1)
        return atom(out, group, tk, i + 1, to - 1, qualifier);
    const char *col = column_ref(tk, i, to, qualifier, &e);
    lk_prune_op op;
    if (!col || e >= to)
        return reversed_term(out, group, tk, i, to, qualifier);
    const sql_token *t = &tk->toks[e];
    if (comparison(t, &op, 0)) {
        char *v = literal(tk, e + 1, to, &le);
        if (v && le == to) {
            lk_prune_add(out, group, col, op, values_take(&v, 1), 1);
            return 1;
        }
        free(v);
    } else if (sql_tok_is_kw(t, "IS") && e + 2 == to && sql_tok_is_kw(&tk->toks[e + 1], "NULL")) {
        lk_prune_add(out, group, col, LK_PRUNE_IS_NULL, NULL, 0);
        return 1;
    } else if (sql_tok_is_kw(t, "IS") && e + 3 == to && sql_tok_is_kw(&tk->toks[e + 1], "NOT") &&
               sql_tok_is_kw(&tk->toks[e + 2], "NULL")) {
        lk_prune_add(out, group, col, LK_PRUNE_NOT_NULL, NULL, 0);
        return 1;
    } else if (sql_tok_is_kw(t, "BETWEEN")) {
        size_t ae = 0, be = 0;
        char *a = literal(tk, e + 1, to, &ae), *b = NULL;
        if (a && ae < to && sql_tok_is_kw(&tk->toks[ae], "AND"))
            b = literal(tk, ae + 1, to, &be);
        if (a && b && be == to) {
            char *v[2] = {a, b};
            lk_prune_add(out, group, col, LK_PRUNE_BETWEEN, values_take(v, 2), 2);
            return 1;
        }
        free(a);
        free(b);
    } else if (sql_tok_is_kw(t, "IN")) {
        char **vals = NULL;
        size_t n = in_list(&vals, tk, e + 1, to);
        if (n) {
            lk_prune_add(out, group, col, LK_PRUNE_IN, vals, n);
            return 1;
        }
    }
    return 0;
}

/* Tokens [i, to) as alternatives joined by top-level ORs, each one plain
 * comparison: terms of one group. All or nothing: a group missing one
 * alternative would exclude files that alternative matches. */
static void alternatives(lk_prune *out, int group, const sql_tokens *tk, size_t i, size_t to,
                         const char *qualifier)
{
    size_t first = out->n, from = i;
    int depth = 0, ok = 1;
    for (size_t k = i; k <= to && ok; k++) {
        const sql_token *t = &tk->toks[k];
        if (k < to && (sql_tok_is_op(t, "(") || sql_tok_is_kw(t, "CASE")))
            depth++;
        else if (k < to && (sql_tok_is_op(t, ")") || sql_tok_is_kw(t, "END")))
            depth--;
        else if (k == to || (depth == 0 && sql_tok_is_kw(t, "OR"))) {
            ok = k > from && atom(out, group, tk, from, k, qualifier);
            from = k + 1;
        }
    }
    if (!ok)
        lk_prune_truncate(out, first);
}

/* One conjunct, tokens [i, to): a comparison, or alternatives in
 * parentheses. */
static void conjunct(lk_prune *out, int group, const sql_tokens *tk, size_t i, size_t to,
                     const char *qualifier)
{
    if (sql_tok_is_op(&tk->toks[i], "(") && matching(tk, i, to) == to - 1)
        alternatives(out, group, tk, i + 1, to - 1, qualifier);
    else
        atom(out, group, tk, i, to, qualifier);
}

/* The end of the clause whose keyword is token `kw` (ends_clause at its
 * depth, or the block's closing parenthesis); *any_or when it has a
 * top-level OR. */
static size_t clause_end(const sql_tokens *tk, size_t kw, int *any_or)
{
    size_t end = kw + 1;
    int depth = 0;
    for (; end < tk->n; end++) {
        const sql_token *t = &tk->toks[end];
        if (sql_tok_is_op(t, "(") || sql_tok_is_kw(t, "CASE"))
            depth++;
        else if (sql_tok_is_op(t, ")") || sql_tok_is_kw(t, "END"))
            depth--;
        if (depth < 0 || (depth == 0 && ends_clause(t)))
            break;
        *any_or |= depth == 0 && sql_tok_is_kw(t, "OR");
    }
    return end;
}

void session_prune_order(lk_prune *out, const sql_tokens *tk, size_t at, const char *qualifier)
{
    int any_or = 0;
    if (at < tk->n && sql_tok_is_kw(&tk->toks[at], "WHERE"))
        at = clause_end(tk, at, &any_or);
    if (at + 2 >= tk->n || !sql_tok_is_kw(&tk->toks[at], "ORDER") ||
        !sql_tok_is_kw(&tk->toks[at + 1], "BY"))
        return;
    size_t e = 0;
    const char *col = column_ref(tk, at + 2, tk->n, qualifier, &e);
    if (!col)
        return;
    int desc = 0;
    if (e < tk->n && (sql_tok_is_kw(&tk->toks[e], "ASC") || sql_tok_is_kw(&tk->toks[e], "DESC")))
        desc = sql_tok_is_kw(&tk->toks[e++], "DESC");
    /* NULLS FIRST: the first rows may be a file's NULLs, which its
     * min / max do not tell */
    if (e + 1 < tk->n && sql_tok_is_kw(&tk->toks[e], "NULLS") &&
        !sql_tok_is_kw(&tk->toks[e + 1], "LAST"))
        return;
    if (e < tk->n && !sql_tok_is_op(&tk->toks[e], ",") && !sql_tok_is_kw(&tk->toks[e], "NULLS") &&
        !sql_tok_is_kw(&tk->toks[e], "LIMIT"))
        return; /* an expression over the column (ORDER BY col + 1) */
    size_t end = clause_end(tk, at + 1, &any_or);
    if (end < tk->n && sql_tok_is_kw(&tk->toks[end], "LIMIT")) {
        free(out->order_column);
        out->order_column = xstrdup(col);
        out->order_desc = desc;
    }
}

void session_prune_limit(lk_prune *out, const sql_tokens *tk, size_t where)
{
    int any_or = 0;
    size_t end = clause_end(tk, where, &any_or);
    out->limited = end < tk->n && (sql_tok_is_kw(&tk->toks[end], "LIMIT") ||
                                   sql_tok_is_kw(&tk->toks[end], "OFFSET"));
}

void session_prune_terms(lk_prune *out, const sql_tokens *tk, size_t where, const char *qualifier)
{
    int any_or = 0;
    size_t end = clause_end(tk, where, &any_or);
    if (end <= where + 1)
        return;
    if (any_or) { /* AND binds tighter: the clause is its alternatives */
        alternatives(out, 0, tk, where + 1, end, qualifier);
        return;
    }
    size_t from = where + 1;
    int between = 0, group = 0;
    int depth = 0;
    for (size_t i = where + 1; i <= end; i++) {
        const sql_token *t = &tk->toks[i];
        if (i < end && (sql_tok_is_op(t, "(") || sql_tok_is_kw(t, "CASE")))
            depth++;
        else if (i < end && (sql_tok_is_op(t, ")") || sql_tok_is_kw(t, "END")))
            depth--;
        else if (i < end && depth == 0 && sql_tok_is_kw(t, "BETWEEN"))
            between = 1;
        else if (i == end || (depth == 0 && sql_tok_is_kw(t, "AND"))) {
            if (i < end && between) {
                between = 0; /* BETWEEN's own AND */
                continue;
            }
            if (i > from)
                conjunct(out, group++, tk, from, i, qualifier);
            from = i + 1;
        }
    }
}

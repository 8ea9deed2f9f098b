/*
 * names.c — what every statement handler of a session shares, below them
 * all: reading a possibly qualified name from the tokens, resolving it to
 * an attached lake and its schema and table, the source text of a token
 * range, whether an alias follows a name, the strings an argument
 * expression evaluates to, and one writing statement's begin/end on a
 * lake.
 */
#include "session/session_int.h"

#include "duck/duck.h"
#include "lake/statement.h"
#include "lake/txn.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

char *session_token_text(const sql_tokens *tk, const char *sql, size_t from, size_t to)
{
    if (from >= to || from >= tk->n)
        return xstrdup("");
    size_t a = tk->toks[from].start;
    size_t b = tk->toks[to - 1].start + tk->toks[to - 1].len;
    return xstrndup(sql + a, b - a);
}

lk_lake *session_lake(tarn_session *s, const char *alias)
{
    for (lk_lake *l = s->lakes; l; l = l->next)
        if (strcasecmp(l->alias, alias) == 0)
            return l;
    return NULL;
}

/* ---- qualified names ---- */

int session_qname(const sql_tokens *tk, size_t i, qname *q)
{
    memset(q, 0, sizeof(*q));
    q->start = i;
    while (i < tk->n && q->n < 4) {
        const sql_token *t = &tk->toks[i];
        if (t->type != SQL_TOK_IDENT && t->type != SQL_TOK_QIDENT)
            break;
        q->parts[q->n++] = t->text;
        i++;
        if (i < tk->n && tk->toks[i].type == SQL_TOK_OP && strcmp(tk->toks[i].text, ".") == 0 &&
            i + 1 < tk->n &&
            (tk->toks[i + 1].type == SQL_TOK_IDENT || tk->toks[i + 1].type == SQL_TOK_QIDENT)) {
            i++;
            continue;
        }
        break;
    }
    q->end = i;
    return q->n > 0 && q->n <= 3;
}

/* After USE lake, `a.b` names schema a of the lake, as DuckDB reads it,
 * unless the lake has no schema a and a is another database attached to
 * the session (`memory.t`): DuckDB then takes a as that database. */
static int names_other_database(tarn_session *s, lk_lake *l, const char *name)
{
    if (lk_catalog_schema((lk_catalog *)lk_txn_catalog(l), name))
        return 0;
    tarn_buf q = {0};
    buf_puts(&q, "SELECT count(*) FROM duckdb_databases() WHERE database_name = ");
    quote_literal(&q, name);
    int64_t n = 0;
    int rc = duck_query_int64(&n, NULL, s->con, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        tarn_error_clear();
    return !rc && n > 0;
}

lk_lake *session_resolve(tarn_session *s, const qname *q, const char **schema, const char **name,
                         int schema_only)
{
    lk_lake *l;
    int n = q->n;
    if (schema_only) {
        if (n == 2 && (l = session_lake(s, q->parts[0]))) {
            *schema = q->parts[1];
            return l;
        }
        if (n == 1 && s->use_lake && (l = session_lake(s, s->use_lake))) {
            *schema = q->parts[0];
            return l;
        }
        return NULL;
    }
    if (n == 3 && (l = session_lake(s, q->parts[0]))) {
        *schema = q->parts[1];
        *name = q->parts[2];
        return l;
    }
    if (n == 2 && (l = session_lake(s, q->parts[0]))) {
        *schema = "main";
        *name = q->parts[1];
        return l;
    }
    if (s->use_lake && (l = session_lake(s, s->use_lake))) {
        if (n == 2 && names_other_database(s, l, q->parts[0]))
            return NULL;
        if (n == 2) {
            *schema = q->parts[0];
            *name = q->parts[1];
            return l;
        }
        if (n == 1) {
            *schema = s->use_schema ? s->use_schema : "main";
            *name = q->parts[0];
            return l;
        }
    }
    return NULL;
}

/* ---- lake transactions around one statement ---- */

int session_write_begin(tarn_session *s, lk_lake *l)
{
    return lk_statement_begin(l, s->con, s->explicit_txn);
}

int session_write_end(tarn_session *s, lk_lake *l, int rc)
{
    return lk_statement_end(l, s->con, s->explicit_txn, rc);
}

/* Whether an alias follows token i (AS x, or a bare name that is not a
 * clause keyword). */
int session_alias_follows(const sql_tokens *tk, size_t i)
{
    static const char *const CLAUSES[] = {
        "WHERE",     "GROUP",   "ORDER",     "LIMIT",   "OFFSET",  "JOIN",   "LEFT",  "RIGHT",
        "INNER",     "OUTER",   "FULL",      "CROSS",   "ON",      "USING",  "UNION", "EXCEPT",
        "INTERSECT", "HAVING",  "WINDOW",    "QUALIFY", "NATURAL", "ANTI",   "SEMI",  "POSITIONAL",
        "ASOF",      "LATERAL", "RETURNING", "SET",     "PIVOT",   "UNPIVOT"};
    if (i >= tk->n)
        return 0;
    const sql_token *t = &tk->toks[i];
    if (sql_tok_is_kw(t, "AS"))
        return 1;
    if (t->type != SQL_TOK_IDENT && t->type != SQL_TOK_QIDENT)
        return 0;
    for (size_t k = 0; k < sizeof(CLAUSES) / sizeof(CLAUSES[0]); k++)
        if (sql_tok_is_kw(t, CLAUSES[k]))
            return 0;
    return 1;
}

int session_eval_strings(strlist *out, int *had_null, tarn_session *s, const char *sql)
{
    *had_null = 0;
    char *q = xasprintf("SELECT typeof((%s))", sql);
    char *type = NULL;
    int rc = duck_query_string(&type, s->con, q);
    free(q);
    if (rc)
        return rc;
    int is_list = type && strcmp(type, "VARCHAR[]") == 0;
    int is_null = !type || strcmp(type, "\"NULL\"") == 0;
    free(type);
    if (is_null) {
        *had_null = 1;
        return 0;
    }
    q = is_list ? xasprintf("SELECT unnest((%s))", sql) : xasprintf("SELECT (%s)::VARCHAR", sql);
    duck_table r;
    rc = duck_table_query(&r, s->con, q);
    free(q);
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows; i++) {
        if (duck_table_get(&r, i, 0))
            strlist_push(out, duck_table_get(&r, i, 0));
        else
            *had_null = 1;
    }
    duck_table_free(&r);
    return 0;
}

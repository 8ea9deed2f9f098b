/*
 * fold.c — a query that only asks a lake table for COUNT(*), MIN(col) and
 * MAX(col) is answered from the catalog's statistics, without reading a
 * file, as DuckLake answers it (see fold.h, lake/aggstats.h).
 *
 * The statement must be exactly `[EXPLAIN [ANALYZE]] SELECT item, … FROM
 * lake.table [[AS] alias]`, each item one of those aggregates over a
 * top-level column, with an optional alias. It becomes a SELECT of
 * constants under the names and types DuckDB gives the original
 * (DuckDB prepares the original statement over the table's view to tell
 * them). Anything else, or statistics that cannot answer it, and the
 * statement reads the files as before.
 */
#include "session/fold.h"

#include "lake/aggstats.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "lake/views.h"
#include "session/session_int.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { AGG_COUNT, AGG_MIN, AGG_MAX } agg_kind;

typedef struct {
    agg_kind kind;
    const char *column; /* NULL for COUNT(*) */
} agg_item;

static int is_name(const sql_token *t)
{
    return t->type == SQL_TOK_IDENT || t->type == SQL_TOK_QIDENT;
}

/* One item at token *i: MIN(col), MAX(col) or COUNT(*), then an optional
 * [AS] alias. 0 when it is anything else. */
static int read_item(agg_item *it, const sql_tokens *tk, size_t *i)
{
    size_t k = *i;
    if (k + 3 >= tk->n || tk->toks[k].type != SQL_TOK_IDENT ||
        !sql_tok_is_op(&tk->toks[k + 1], "(") || !sql_tok_is_op(&tk->toks[k + 3], ")"))
        return 0;
    const sql_token *arg = &tk->toks[k + 2];
    if (strcasecmp(tk->toks[k].text, "count") == 0 && sql_tok_is_op(arg, "*")) {
        *it = (agg_item){AGG_COUNT, NULL};
    } else if (is_name(arg) && (strcasecmp(tk->toks[k].text, "min") == 0 ||
                                strcasecmp(tk->toks[k].text, "max") == 0)) {
        *it = (agg_item){strcasecmp(tk->toks[k].text, "min") == 0 ? AGG_MIN : AGG_MAX, arg->text};
    } else {
        return 0;
    }
    k += 4;
    if (k + 1 < tk->n && sql_tok_is_kw(&tk->toks[k], "AS") && is_name(&tk->toks[k + 1]))
        k += 2;
    else if (k < tk->n && is_name(&tk->toks[k]) && !sql_tok_is_kw(&tk->toks[k], "FROM"))
        k++;
    *i = k;
    return 1;
}

/* The index of the first column of `t` named `name`, or -1. */
static long column_index(const lk_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcasecmp(t->cols[i].name, name) == 0)
            return (long)i;
    return -1;
}

/* The SELECT of constants answering `items` (names from DuckDB's prepared
 * original `select`), or NULL when the statistics cannot answer one. */
static char *constants(tarn_session *s, const char *select, const agg_item *items, size_t n,
                       const lk_table *t, const lk_aggstats *a)
{
    duckdb_prepared_statement ps = NULL;
    if (duckdb_prepare(s->con, select, &ps) != DuckDBSuccess ||
        duckdb_prepared_statement_column_count(ps) != n) {
        duckdb_destroy_prepare(&ps);
        return NULL;
    }
    tarn_buf b = {0};
    buf_puts(&b, "SELECT ");
    int ok = 1;
    for (size_t i = 0; i < n && ok; i++) {
        if (i)
            buf_puts(&b, ", ");
        if (items[i].kind == AGG_COUNT) {
            buf_printf(&b, "%lld::BIGINT", (long long)a->count);
        } else {
            long c = column_index(t, items[i].column);
            const char *v = c < 0 || !a->exact         ? NULL
                            : items[i].kind == AGG_MIN ? a->min[c]
                                                       : a->max[c];
            ok = v != NULL && a->count > 0;
            if (ok) {
                buf_puts(&b, "CAST(");
                quote_literal(&b, v);
                buf_puts(&b, " AS ");
                lk_type_to_sql(&b, &t->cols[c]);
                buf_putc(&b, ')');
            }
        }
        const char *name = duckdb_prepared_statement_column_name(ps, (idx_t)i);
        buf_puts(&b, " AS ");
        quote_ident(&b, name ? name : "");
        duckdb_free((void *)name);
    }
    duckdb_destroy_prepare(&ps);
    if (!ok) {
        buf_free(&b);
        return NULL;
    }
    return buf_detach(&b);
}

int session_fold_aggregates(char **out, tarn_session *s, const sql_tokens *tk, const char *sql)
{
    *out = NULL;
    size_t i = 0;
    if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "EXPLAIN")) {
        i++;
        if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "ANALYZE"))
            i++;
    }
    if (i >= tk->n || !sql_tok_is_kw(&tk->toks[i], "SELECT"))
        return 0;
    size_t select_at = i++;
    agg_item items[16];
    size_t n = 0;
    while (n < sizeof(items) / sizeof(items[0]) && read_item(&items[n], tk, &i)) {
        n++;
        if (i < tk->n && sql_tok_is_op(&tk->toks[i], ","))
            i++;
        else
            break;
    }
    if (!n || i >= tk->n || !sql_tok_is_kw(&tk->toks[i], "FROM"))
        return 0;
    qname q;
    if (!session_qname(tk, i + 1, &q))
        return 0;
    size_t e = q.end;
    if (e + 1 < tk->n && sql_tok_is_kw(&tk->toks[e], "AS") && is_name(&tk->toks[e + 1]))
        e += 2;
    else if (e < tk->n && tk->toks[e].type == SQL_TOK_IDENT)
        e++;
    if (e < tk->n && tk->toks[e].type == SQL_TOK_SEMI)
        e++;
    if (e < tk->n && tk->toks[e].type != SQL_TOK_EOF)
        return 0;
    const char *schema = NULL, *name = NULL;
    lk_lake *l = session_resolve(s, &q, &schema, &name, 0);
    if (!l)
        return 0;
    const lk_catalog *cat = lk_txn_catalog(l);
    lk_schema *sc = lk_catalog_schema((lk_catalog *)cat, schema);
    const lk_table *t = sc ? lk_catalog_table(cat, sc->id, name) : NULL;
    lk_aggstats a;
    /* a table whose view fails (a file missing) fails as it, not answered */
    if (!t || lk_lake_view_broken(l, t->id) || !lk_aggstats_load(&a, l, s->con, t))
        return 0;
    char *select = session_token_text(tk, sql, select_at, tk->n);
    char *folded = constants(s, select, items, n, t, &a);
    free(select);
    lk_aggstats_free(&a);
    tarn_error_clear();
    if (!folded)
        return 0;
    char *prefix = session_token_text(tk, sql, 0, select_at);
    *out = xasprintf("%s%s%s", prefix, *prefix ? " " : "", folded);
    free(prefix);
    free(folded);
    return 1;
}

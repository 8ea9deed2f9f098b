/*
 * sort.c — a table's sort order: rendering and checking SET SORTED BY
 * keys, the ORDER BY that writes use, and the commit's catalog rows
 * (reads ducklake_metadata's sort_on_insert option; writes
 * ducklake_sort_info and ducklake_sort_expression).
 *
 * DuckLake stores each key as DuckDB's rendering of the parsed expression
 * (`(id + 0)`, `concat(a, ', ', b)`); tarn gets the same text from DuckDB
 * itself by a round trip through json_serialize_sql (on duck_parser_con,
 * never the user's connection), whose parse tree also names the columns a
 * key refers to.
 */
#include "lake/sort.h"

#include "duck/duck.h"
#include "lake/txn.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The parse tree of "SELECT expr" as JSON text, in a CTE named j. */
static void parsed_cte(tarn_buf *b, const char *expr)
{
    tarn_buf sel = {0};
    buf_printf(&sel, "SELECT %s", expr);
    buf_puts(b, "WITH j AS (SELECT json_serialize_sql(");
    quote_literal(b, buf_cstr(&sel));
    buf_puts(b, ") AS j) ");
    buf_free(&sel);
}

/* Fails with DuckDB's parser message when `expr` does not parse. */
static int check_parses(const char *expr)
{
    duckdb_connection con = duck_parser_con();
    if (!con)
        return TARN_ERROR;
    tarn_buf b = {0};
    parsed_cte(&b, expr);
    buf_puts(&b, "SELECT CASE WHEN (j::JSON->>'error')::BOOLEAN THEN j::JSON->>'error_message' "
                 "END FROM j");
    char *msg = NULL;
    int rc = duck_query_string(&msg, con, buf_cstr(&b));
    buf_free(&b);
    if (!rc && msg)
        rc = tarn_error_set(TARN_EINVALID, "Parser Error: %s in sort key \"%s\"", msg, expr);
    free(msg);
    return rc;
}

/* DuckDB's rendering of `expr` (*out malloc'd). */
static int expr_render(char **out, const char *expr)
{
    *out = NULL;
    int rc = check_parses(expr);
    if (rc)
        return rc;
    tarn_buf b = {0};
    parsed_cte(&b, expr);
    buf_puts(&b, "SELECT substr(json_deserialize_sql(j::JSON), 8) FROM j");
    rc = duck_query_string(out, duck_parser_con(), buf_cstr(&b));
    buf_free(&b);
    return rc;
}

/* The column references of `expr`: their first name, and the number of
 * names (2 and more: qualified, a.b). */
static int column_refs(duck_table *out, const char *expr)
{
    duckdb_connection con = duck_parser_con();
    if (!con)
        return TARN_ERROR;
    tarn_buf b = {0};
    parsed_cte(&b, expr);
    buf_puts(&b, "SELECT c->>'$[0]', json_array_length(c) FROM (SELECT unnest("
                 "regexp_extract_all(j, '\"column_names\":(\\[[^\\]]*\\])', 1))::JSON AS c FROM "
                 "j)");
    int rc = duck_table_query(out, con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static int table_has_column(const lk_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcasecmp(t->cols[i].name, name) == 0)
            return 1;
    return 0;
}

/* Adds the columns of `expr` that t lacks to `missing` (once each); fails
 * on a qualified reference. */
static int missing_columns(strlist *missing, const lk_table *t, const char *expr)
{
    duck_table refs;
    int rc = column_refs(&refs, expr);
    if (rc)
        return rc;
    for (size_t r = 0; r < refs.nrows && !rc; r++) {
        const char *name = duck_table_get(&refs, r, 0);
        const char *parts = duck_table_get(&refs, r, 1);
        if (parts && strcmp(parts, "1") != 0) {
            rc = tarn_error_set(TARN_EINVALID, "Invalid Input Error: Unexpected qualified column "
                                               "reference - only unqualified columns are "
                                               "supported");
            break;
        }
        if (!name || table_has_column(t, name))
            continue;
        if (strlist_find(missing, name) < 0)
            strlist_push(missing, name);
    }
    duck_table_free(&refs);
    return rc;
}

int lk_sort_normalize(lk_sortkey *keys, size_t n, const lk_table *t)
{
    strlist missing = {0};
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char *text = NULL;
        rc = expr_render(&text, keys[i].expr);
        if (!rc)
            rc = missing_columns(&missing, t, text);
        if (!rc) {
            free(keys[i].expr);
            keys[i].expr = text;
        } else {
            free(text);
        }
    }
    if (!rc && missing.n) {
        char *list = strlist_join(&missing, ", ");
        rc = tarn_error_set(TARN_EINVALID,
                            "Binder Error: Columns in the SET SORTED BY statement were not found "
                            "in the DuckLake table. Unmatched columns were: %s",
                            list);
        free(list);
    }
    strlist_free(&missing);
    return rc;
}

int lk_sort_uses_column(const lk_table *t, const char *name)
{
    for (size_t i = 0; i < t->nsorts; i++) {
        if (strcmp(t->sorts[i].dialect, "duckdb") != 0)
            continue;
        duck_table refs;
        int rc = column_refs(&refs, t->sorts[i].expr);
        if (rc)
            return rc;
        int used = 0;
        for (size_t r = 0; r < refs.nrows && !used; r++) {
            const char *ref = duck_table_get(&refs, r, 0);
            used = ref && strcasecmp(ref, name) == 0;
        }
        duck_table_free(&refs);
        if (used)
            return 1;
    }
    return 0;
}

/* 1 when token i of `tk` is a column reference: a name that is not a
 * function call, and not a part of a dotted name. */
static int is_column_token(const sql_tokens *tk, size_t i)
{
    const sql_token *t = &tk->toks[i];
    if (t->type != SQL_TOK_IDENT && t->type != SQL_TOK_QIDENT)
        return 0;
    const sql_token *next = &tk->toks[i + 1]; /* the EOF token ends the list */
    if (next->type == SQL_TOK_OP && (strcmp(next->text, "(") == 0 || strcmp(next->text, ".") == 0))
        return 0;
    if (i > 0 && tk->toks[i - 1].type == SQL_TOK_OP && strcmp(tk->toks[i - 1].text, ".") == 0)
        return 0;
    return 1;
}

/* `expr` with every column reference named from[k] (ignoring case)
 * written as to[k]; NULL when it does not tokenize. */
static char *renamed_expr(const char *expr, const char *const *from, const char *const *to,
                          size_t n)
{
    sql_tokens tk;
    if (sql_tokenize(&tk, expr)) {
        tarn_error_clear();
        return NULL;
    }
    tarn_buf b = {0};
    size_t at = 0;
    for (size_t i = 0; i < tk.n; i++) {
        if (!is_column_token(&tk, i))
            continue;
        for (size_t k = 0; k < n; k++) {
            if (strcasecmp(tk.toks[i].text, from[k]) != 0)
                continue;
            buf_append(&b, expr + at, tk.toks[i].start - at);
            quote_ident(&b, to[k]);
            at = tk.toks[i].start + tk.toks[i].len;
            break;
        }
    }
    buf_puts(&b, expr + at);
    sql_tokens_free(&tk);
    return buf_detach(&b);
}

int lk_sort_rename_column(lk_table *t, const char *old_name, const char *new_name, int *changed)
{
    *changed = t->nsorts > 0;
    for (size_t i = 0; i < t->nsorts; i++) {
        lk_sortkey *k = &t->sorts[i];
        if (strcmp(k->dialect, "duckdb") != 0)
            continue;
        char *text = renamed_expr(k->expr, &old_name, &new_name, 1), *out = NULL;
        if (!text)
            continue;
        int rc = expr_render(&out, text);
        free(text);
        if (rc)
            return rc;
        free(k->expr);
        k->expr = out;
    }
    return 0;
}

/* Column names of `t` that `layout` (the same table in an older layout)
 * spells otherwise, by column id. */
static size_t layout_renames(const lk_table *t, const lk_table *layout, const char ***from,
                             const char ***to)
{
    size_t n = 0;
    *from = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
    *to = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
    for (size_t i = 0; layout && i < t->ncols; i++) {
        const lk_column *old = lk_table_column(layout, t->cols[i].id);
        if (old && strcmp(old->name, t->cols[i].name) != 0) {
            (*from)[n] = t->cols[i].name;
            (*to)[n++] = old->name;
        }
    }
    return n;
}

size_t lk_sort_order_by(tarn_buf *b, const lk_table *t, const lk_table *layout)
{
    const char **from, **to;
    size_t nren = layout_renames(t, layout, &from, &to), used = 0;
    for (size_t i = 0; i < t->nsorts; i++) {
        const lk_sortkey *k = &t->sorts[i];
        if (strcmp(k->dialect, "duckdb") != 0)
            continue;
        char *text = nren ? renamed_expr(k->expr, from, to, nren) : NULL;
        buf_puts(b, used++ ? ", " : "");
        buf_puts(b, text ? text : k->expr);
        buf_puts(b, k->desc ? " DESC" : " ASC");
        buf_puts(b, k->nulls_first == 1 ? " NULLS FIRST" : " NULLS LAST");
        free(text);
    }
    free(from);
    free(to);
    return used;
}

int lk_sort_on_insert(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    const char *v = lk_lake_option(lake, con, "sort_on_insert", t);
    return !v || strcasecmp(v, "true") == 0;
}

/* DuckLake's equality of two orders: the same keys, a key given without
 * NULLS FIRST|LAST differing from one stored with NULLS_LAST. */
static int same_order(const lk_table *a, const lk_table *b)
{
    size_t na = a ? a->nsorts : 0, nb = b ? b->nsorts : 0;
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        const lk_sortkey *x = &a->sorts[i], *y = &b->sorts[i];
        if (strcmp(x->expr, y->expr) != 0 || strcmp(x->dialect, y->dialect) != 0 ||
            x->desc != y->desc || x->nulls_first != y->nulls_first)
            return 0;
    }
    return 1;
}

static void order_rows(lk_txn *txn, const lk_table *t)
{
    lk_txn_row(txn, "ducklake_sort_info", "(%lld, %lld, %lld, NULL)", (long long)t->sort_id,
               (long long)t->id, (long long)txn->snapshot_id);
    for (size_t i = 0; i < t->nsorts; i++) {
        const lk_sortkey *k = &t->sorts[i];
        tarn_buf b = {0};
        buf_printf(&b, "(%lld, %lld, %zu, ", (long long)t->sort_id, (long long)t->id, i);
        quote_literal(&b, k->expr);
        buf_puts(&b, ", ");
        quote_literal(&b, k->dialect);
        buf_printf(&b, ", '%s', '%s')", k->desc ? "DESC" : "ASC",
                   k->nulls_first == 1 ? "NULLS_FIRST" : "NULLS_LAST");
        lk_txn_row(txn, "ducklake_sort_expression", "%s", buf_cstr(&b));
        buf_free(&b);
    }
}

void lk_sort_commit(lk_lake *lake)
{
    lk_txn *txn = lake->txn;
    for (size_t i = 0; i < txn->nsort_changed; i++) {
        const lk_table *now = lk_catalog_table_by_id(&txn->cat, txn->sort_changed[i]);
        const lk_table *was = lk_catalog_table_by_id(&lake->cat, txn->sort_changed[i]);
        if (!now || same_order(now, was))
            continue; /* dropped since, or the order it had */
        if (was && was->nsorts)
            lk_txn_sql(txn,
                       "UPDATE %s.ducklake_sort_info SET end_snapshot = %lld WHERE table_id = "
                       "%lld AND end_snapshot IS NULL",
                       lake->meta, (long long)txn->snapshot_id, (long long)now->id);
        if (now->nsorts)
            order_rows(txn, now);
    }
}

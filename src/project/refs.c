/*
 * refs.c — table references through json_serialize_sql (see refs.h).
 */
#include "project/refs.h"

#include "project/query.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void ref_push(ref_list *r, const table_ref *t)
{
    r->items = xrealloc(r->items, (r->n + 1) * sizeof(*r->items));
    r->items[r->n++] = *t;
}

void refs_free(ref_list *r)
{
    for (size_t i = 0; i < r->n; i++) {
        free(r->items[i].catalog);
        free(r->items[i].schema);
        free(r->items[i].table);
    }
    free(r->items);
    r->items = NULL;
    r->n = 0;
    strlist_free(&r->columns);
    r->columns_known = 0;
}

static const char *jstr(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? json_string_value(v) : NULL;
}

static char *nonempty_dup(const char *s)
{
    return s && *s ? xstrdup(s) : NULL;
}

/* How far the (possibly qualified) name starting at byte `off` reaches:
 * name tokens joined by '.'. */
static void name_extent(table_ref *t, const sql_tokens *tk)
{
    size_t i = 0;
    while (i < tk->n && tk->toks[i].start < t->offset)
        i++;
    if (i >= tk->n || tk->toks[i].start != t->offset)
        return;
    if (tk->toks[i].type == SQL_TOK_STRING)
        t->is_file = 1;
    size_t end = tk->toks[i].start + tk->toks[i].len;
    while (i + 2 < tk->n && tk->toks[i + 1].type == SQL_TOK_OP &&
           strcmp(tk->toks[i + 1].text, ".") == 0 &&
           (tk->toks[i + 2].type == SQL_TOK_IDENT || tk->toks[i + 2].type == SQL_TOK_QIDENT)) {
        i += 2;
        end = tk->toks[i].start + tk->toks[i].len;
    }
    t->len = end - t->offset;
}

/* Walks the parse tree. `scope` holds the CTE names visible here. */
static void walk(ref_list *out, json_t *v, strlist *scope, const sql_tokens *tk)
{
    if (json_is_array(v)) {
        size_t i;
        json_t *e;
        json_array_foreach(v, i, e) walk(out, e, scope, tk);
        return;
    }
    if (!json_is_object(v))
        return;
    size_t pushed = 0;
    json_t *cte = json_object_get(v, "cte_map");
    json_t *map = cte ? json_object_get(cte, "map") : NULL;
    if (json_is_array(map)) {
        size_t i;
        json_t *e;
        json_array_foreach(map, i, e)
        {
            const char *k = jstr(e, "key");
            if (k) {
                strlist_push(scope, k);
                pushed++;
            }
        }
    }
    const char *type = jstr(v, "type");
    const char *table = jstr(v, "table_name");
    if (type && table && strcmp(type, "BASE_TABLE") == 0) {
        const char *schema = jstr(v, "schema_name"), *catalog = jstr(v, "catalog_name");
        int bare = (!schema || !*schema) && (!catalog || !*catalog);
        int is_cte = 0;
        for (size_t i = 0; bare && i < scope->n && !is_cte; i++)
            is_cte = strcasecmp(scope->items[i], table) == 0;
        if (!is_cte) {
            table_ref t = {.catalog = nonempty_dup(catalog),
                           .schema = nonempty_dup(schema),
                           .table = xstrdup(table),
                           .offset = REF_NO_OFFSET};
            json_t *loc = json_object_get(v, "query_location");
            /* Integers are read as reals: DuckDB writes "no location" as
             * 2^64-1, which jansson's integers cannot hold. */
            if (json_is_number(loc) && json_number_value(loc) >= 0 &&
                json_number_value(loc) < 281474976710656.0) {
                t.offset = (size_t)json_number_value(loc);
                name_extent(&t, tk);
            }
            json_t *at = json_object_get(v, "at_clause");
            t.has_at = at && !json_is_null(at);
            ref_push(out, &t);
        }
    }
    const char *key;
    json_t *child;
    json_object_foreach(v, key, child) walk(out, child, scope, tk);
    while (pushed--) {
        free(scope->items[--scope->n]);
    }
}

/* The output column names of query node `node` into `out`; 1 when each
 * is known from the text (a column reference or an alias), 0 when DuckDB's
 * binder decides (a star, an unnamed expression, UNION BY NAME, VALUES). */
static int output_columns(json_t *node, strlist *out)
{
    const char *type = jstr(node, "type");
    if (type && strcmp(type, "SET_OPERATION_NODE") == 0) {
        const char *op = jstr(node, "setop_type");
        if (op && strstr(op, "BY_NAME"))
            return 0;
        return output_columns(json_object_get(node, "left"), out);
    }
    json_t *list = json_object_get(node, "select_list");
    if (!type || strcmp(type, "SELECT_NODE") != 0 || !json_is_array(list))
        return 0;
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        const char *alias = jstr(e, "alias"), *cls = jstr(e, "class");
        json_t *names = json_object_get(e, "column_names");
        size_t nn = json_array_size(names);
        json_t *last = nn ? json_array_get(names, nn - 1) : NULL; /* t.c is named c */
        if (alias && *alias)
            strlist_push(out, alias);
        else if (cls && strcmp(cls, "COLUMN_REF") == 0 && json_is_string(last))
            strlist_push(out, json_string_value(last));
        else
            return 0;
    }
    return 1;
}

int refs_from_json(ref_list *out, size_t *err_offset, const char *json, const char *sql)
{
    memset(out, 0, sizeof(*out));
    if (err_offset)
        *err_offset = REF_NO_OFFSET;
    json_error_t jerr;
    json_t *root = json_loads(json, JSON_DECODE_INT_AS_REAL, &jerr);
    if (!root)
        return tarn_error_set(TARN_ERROR, "cannot read DuckDB's parse tree: %s", jerr.text);
    if (json_is_true(json_object_get(root, "error"))) {
        const char *msg = jstr(root, "error_message");
        const char *pos = jstr(root, "position");
        if (pos && err_offset)
            *err_offset = (size_t)strtoull(pos, NULL, 10);
        int rc = tarn_error_set(TARN_EINVALID, "%s", msg ? msg : "the query does not parse");
        json_decref(root);
        return rc;
    }
    sql_tokens tk = {0};
    if (sql_tokenize(&tk, sql) != 0) {
        tarn_error_clear();
        memset(&tk, 0, sizeof(tk));
    }
    strlist scope = {0};
    walk(out, json_object_get(root, "statements"), &scope, &tk);
    strlist_free(&scope);
    json_t *first = json_array_get(json_object_get(root, "statements"), 0);
    out->columns_known = output_columns(json_object_get(first, "node"), &out->columns);
    if (!out->columns_known)
        strlist_free(&out->columns);
    if (tk.toks)
        sql_tokens_free(&tk);
    json_decref(root);
    return 0;
}

int refs_extract(ref_list *out, size_t *err_offset, tarn_session *s, const char *sql)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT json_serialize_sql(");
    quote_literal(&q, sql);
    buf_puts(&q, ")");
    char *json = NULL;
    int rc = query_string(&json, s, buf_cstr(&q));
    buf_free(&q);
    memset(out, 0, sizeof(*out));
    if (rc)
        return rc;
    if (!json)
        return tarn_error_set(TARN_ERROR, "json_serialize_sql returned NULL");
    rc = refs_from_json(out, err_offset, json, sql);
    free(json);
    return rc;
}

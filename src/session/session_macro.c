/*
 * session_macro.c — CREATE MACRO / DROP MACRO statements on a lake.
 *
 * DuckLake stores a macro as DuckDB renders it, so DuckDB parses it here:
 * the statement's definition is created as a TEMP macro under a scratch
 * name, and duckdb_functions() gives each implementation's kind, body
 * text, parameter names and parameter types. DuckDB does not list default
 * values; those are read from the statement's own parameter lists (each
 * `name [type] := value`) and evaluated, giving the value's text and
 * type that DuckLake stores. Then lake/macro.c records the macro.
 */
#include "duck/duck.h"
#include "lake/macro.h"
#include "session/session_int.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SCRATCH "__tarn_macro"

static int kw_at(const sql_tokens *tk, size_t i, const char *kw)
{
    return i < tk->n && sql_tok_is_kw(&tk->toks[i], kw);
}

/* One parameter list "(…)" of the statement: each parameter's name and
 * the token range of its default value (from == to: none). */
typedef struct {
    const char *name;
    size_t from, to;
} param_src;

typedef struct {
    param_src *p;
    size_t n;
} group_src;

/* Reads the parameter list opening at token *i; *i moves past ")". */
static int read_group(const sql_tokens *tk, size_t *i, group_src *g)
{
    if (!sql_tokens_is_op(tk, *i, "("))
        return -1;
    size_t k = *i + 1, item = k;
    int depth = 0;
    for (; k < tk->n; k++) {
        int close = depth == 0 && sql_tokens_is_op(tk, k, ")");
        if (close || (depth == 0 && sql_tokens_is_op(tk, k, ","))) {
            if (k > item) {
                g->p = xrealloc(g->p, (g->n + 1) * sizeof(param_src));
                param_src *p = &g->p[g->n++];
                p->name = tk->toks[item].text;
                p->from = p->to = item;
                for (size_t j = item; j < k; j++)
                    if (sql_tokens_is_op(tk, j, ":=")) {
                        p->from = j + 1;
                        p->to = k;
                    }
            }
            item = k + 1;
            if (close)
                break;
            continue;
        }
        depth += sql_tokens_is_op(tk, k, "(") - sql_tokens_is_op(tk, k, ")");
    }
    if (k >= tk->n)
        return -1;
    *i = k + 1;
    return 0;
}

/* Whether a new implementation "(…) AS" starts at token i (after a comma
 * at depth 0; a table macro's next one reads "(…) AS TABLE"). */
static int impl_starts(const sql_tokens *tk, size_t i, int is_table)
{
    if (!sql_tokens_is_op(tk, i, "("))
        return 0;
    int depth = 0;
    size_t k = i;
    for (; k < tk->n; k++) {
        depth += sql_tokens_is_op(tk, k, "(") - sql_tokens_is_op(tk, k, ")");
        if (depth == 0)
            break;
    }
    return kw_at(tk, k + 1, "AS") && (!is_table || kw_at(tk, k + 2, "TABLE"));
}

/* The parameter lists of every implementation, from token i (just after
 * the macro's name). */
static size_t read_groups(const sql_tokens *tk, size_t i, int is_table, group_src **out)
{
    size_t n = 0;
    *out = NULL;
    while (i < tk->n) {
        *out = xrealloc(*out, (n + 1) * sizeof(group_src));
        memset(&(*out)[n], 0, sizeof(group_src));
        if (read_group(tk, &i, &(*out)[n++]))
            break;
        int depth = 0;
        for (; i < tk->n; i++) {
            depth += sql_tokens_is_op(tk, i, "(") - sql_tokens_is_op(tk, i, ")");
            if (depth == 0 && sql_tokens_is_op(tk, i, ",") && impl_starts(tk, i + 1, is_table))
                break;
        }
        i++;
    }
    return n;
}

static void groups_free(group_src *g, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(g[i].p);
    free(g);
}

/* The DuckLake type name of the single column of `sql`'s result. */
static int result_type(char **type, char **text, duckdb_connection con, const char *sql)
{
    duckdb_result res;
    if (duckdb_query(con, sql, &res) != DuckDBSuccess) {
        int rc = duck_error_from_result(&res, sql);
        duckdb_destroy_result(&res);
        return rc;
    }
    duckdb_logical_type lt = duckdb_column_logical_type(&res, 0);
    lk_column c = {0};
    int64_t next = 0;
    int rc = lk_type_from_logical(&c, "p", lt, &next);
    duckdb_destroy_logical_type(&lt);
    if (!rc && lk_type_is_nested(c.type))
        rc = tarn_error_set(TARN_EUNSUPPORTED,
                            "CREATE MACRO: DuckLake stores macro parameters of scalar types "
                            "only, not %s",
                            c.type);
    if (!rc) {
        *type = xstrdup(c.type);
        if (text) {
            char *v = duckdb_value_varchar(&res, 1, 0);
            *text = xstrdup(v ? v : "NULL");
            duckdb_free(v);
        }
    }
    lk_column_free(&c);
    duckdb_destroy_result(&res);
    return rc;
}

/* A parameter's type as DuckLake stores it ("unknown" when not given). */
static int param_type(char **out, duckdb_connection con, const char *duck_type)
{
    if (!duck_type) {
        *out = xstrdup("unknown");
        return 0;
    }
    char *sql = xasprintf("SELECT CAST(NULL AS %s)", duck_type);
    int rc = result_type(out, NULL, con, sql);
    free(sql);
    return rc;
}

/* A default value: its text and its type ("NULL" and "unknown": none). */
static int param_default(lk_macro_param *p, duckdb_connection con, const sql_tokens *tk,
                         const char *sql, const param_src *src)
{
    if (!src || src->from == src->to) {
        p->default_value = xstrdup("NULL");
        p->default_type = xstrdup("unknown");
        return 0;
    }
    char *expr = session_token_text(tk, sql, src->from, src->to);
    char *q = xasprintf("SELECT (%s), CAST((%s) AS VARCHAR)", expr, expr);
    free(expr);
    int rc = result_type(&p->default_type, &p->default_value, con, q);
    free(q);
    return rc;
}

static const param_src *find_src(const group_src *g, const char *name)
{
    for (size_t i = 0; g && i < g->n; i++)
        if (strcasecmp(g->p[i].name, name) == 0)
            return &g->p[i];
    return NULL;
}

/* One row of duckdb_functions() for the scratch macro → an implementation. */
static int read_impl(lk_macro_impl *im, duckdb_connection con, const duck_table *t, size_t r,
                     const group_src *g, const sql_tokens *tk, const char *sql)
{
    int is_table = strcmp(duck_table_get(t, r, 0), "table_macro") == 0;
    im->type = xstrdup(is_table ? "table" : "scalar");
    im->sql = xstrdup(duck_table_get(t, r, 1) ? duck_table_get(t, r, 1) : "");
    json_t *names = json_loads(duck_table_get(t, r, 2), 0, NULL);
    json_t *types = json_loads(duck_table_get(t, r, 3), 0, NULL);
    size_t n = json_array_size(names);
    im->params = xcalloc(n ? n : 1, sizeof(lk_macro_param));
    int rc = 0;
    for (size_t k = 0; k < n && !rc; k++) {
        lk_macro_param *p = &im->params[im->nparams++];
        const char *name = json_string_value(json_array_get(names, k));
        p->name = xstrdup(name ? name : "");
        rc = param_type(&p->type, con, json_string_value(json_array_get(types, k)));
        if (!rc)
            rc = param_default(p, con, tk, sql, find_src(g, p->name));
    }
    json_decref(names);
    json_decref(types);
    return rc;
}

/* DuckDB's reading of the scratch macro → def's implementations. */
static int read_definition(lk_macro *def, tarn_session *s, const sql_tokens *tk, const char *sql,
                           size_t after_name)
{
    duck_table t;
    int rc = duck_table_query(&t, s->con,
                              "SELECT function_type, macro_definition, to_json(parameters), "
                              "to_json(parameter_types) FROM duckdb_functions() WHERE "
                              "database_name = 'temp' AND function_name = '" SCRATCH "'");
    if (rc)
        return rc;
    def->is_table = t.nrows && strcmp(duck_table_get(&t, 0, 0), "table_macro") == 0;
    group_src *g = NULL;
    size_t ng = read_groups(tk, after_name, def->is_table, &g);
    def->impls = xcalloc(t.nrows ? t.nrows : 1, sizeof(lk_macro_impl));
    for (size_t r = 0; r < t.nrows && !rc; r++)
        rc = read_impl(&def->impls[def->nimpls++], s->con, &t, r, r < ng ? &g[r] : NULL, tk, sql);
    groups_free(g, ng);
    duck_table_free(&t);
    return rc;
}

/* DuckDB's error about the scratch statement, said of the user's macro:
 * its name, and no quoted line of tarn's statement. */
static int scratch_error(int rc, const char *name)
{
    tarn_buf b = {0};
    const char *m = tarn_error_last(), *cut = strstr(m, "\n\nLINE ");
    size_t n = cut ? (size_t)(cut - m) : strlen(m);
    for (size_t i = 0; i < n; i++) {
        if (strncmp(m + i, SCRATCH, strlen(SCRATCH)) == 0) {
            buf_puts(&b, name);
            i += strlen(SCRATCH) - 1;
        } else {
            buf_putc(&b, m[i]);
        }
    }
    tarn_error_set(tarn_error_code(), "%s", buf_cstr(&b));
    buf_free(&b);
    return rc;
}

/* Has DuckDB parse the definition (the text after the name). */
static int parse_definition(lk_macro *def, tarn_session *s, const sql_tokens *tk, const char *sql,
                            const qname *q)
{
    char *rest = session_token_text(tk, sql, q->end, tk->n);
    char *ddl = xasprintf("CREATE OR REPLACE TEMP MACRO " SCRATCH " %s", rest);
    free(rest);
    int rc = duck_exec(s->con, ddl);
    free(ddl);
    if (rc)
        return scratch_error(rc, def->name);
    rc = read_definition(def, s, tk, sql, q->end);
    char *drop = xasprintf("DROP MACRO %stemp.main." SCRATCH, def->is_table ? "TABLE " : "");
    if (duck_exec(s->con, drop) && !rc)
        rc = tarn_error_code();
    free(drop);
    return rc;
}

/* The lake of the macro named at token i (its schema and name in *schema,
 * *name, its tokens in *q), setting *handled; NULL when the name is not a
 * lake's (DuckDB's own macro). */
static lk_lake *macro_lake(tarn_session *s, const sql_tokens *tk, size_t i, qname *q,
                           const char **schema, const char **name, int *handled)
{
    if (!session_qname(tk, i, q))
        return NULL;
    lk_lake *l = session_resolve(s, q, schema, name, 0);
    if (l)
        *handled = 1;
    return l;
}

static int create_macro(tarn_session *s, const sql_tokens *tk, const char *sql, size_t i,
                        int or_replace, int if_not_exists, int *handled)
{
    qname q;
    const char *schema = NULL, *name = NULL;
    lk_lake *l = macro_lake(s, tk, i, &q, &schema, &name, handled);
    if (!l)
        return 0;
    lk_macro def = {0};
    def.name = xstrdup(name);
    int rc = parse_definition(&def, s, tk, sql, &q);
    if (!rc)
        rc = session_write_begin(s, l);
    if (!rc)
        rc = lk_create_macro(l, schema, &def, or_replace, if_not_exists);
    lk_macro_free(&def);
    return session_write_end(s, l, rc);
}

static int drop_macro(tarn_session *s, const sql_tokens *tk, size_t i, int if_exists, int *handled)
{
    int is_table = kw_at(tk, i, "TABLE");
    i += is_table;
    if (kw_at(tk, i, "IF") && kw_at(tk, i + 1, "EXISTS")) {
        if_exists = 1;
        i += 2;
    }
    qname q;
    const char *schema = NULL, *name = NULL;
    lk_lake *l = macro_lake(s, tk, i, &q, &schema, &name, handled);
    if (!l)
        return 0;
    int rc = session_write_begin(s, l);
    if (!rc)
        rc = lk_drop_macro(l, schema, name, is_table, if_exists);
    return session_write_end(s, l, rc);
}

int session_macro_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                       size_t i, int or_replace, int if_not_exists, int if_exists, int *handled)
{
    if (strcmp(kw, "CREATE") == 0)
        return create_macro(s, tk, sql, i, or_replace, if_not_exists, handled);
    if (strcmp(kw, "DROP") == 0)
        return drop_macro(s, tk, i, if_exists, handled);
    return 0;
}

/*
 * functions.c — DuckLake's table functions as subqueries (see functions.h).
 */
#include "lake/functions.h"

#include "duck/duck.h"
#include "lake/feed.h"
#include "lake/maintain.h"
#include "lake/rewrite.h"
#include "lake/txn.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_op(const sql_token *t, const char *op)
{
    return t->type == SQL_TOK_OP && strcmp(t->text, op) == 0;
}

static void push(char ***arr, size_t *n, char *v)
{
    *arr = xrealloc(*arr, (*n + 1) * sizeof(char *));
    (*arr)[(*n)++] = v;
}

static int eval_text(char **out, tarn_session *s, const char *expr)
{
    if (quote_unliteral(out, expr))
        return 0; /* a plain string: no query */
    char *q = xasprintf("SELECT (%s)::VARCHAR", expr);
    int rc = duck_query_string(out, s->con, q);
    free(q);
    return rc;
}

int lk_args_parse(lk_args *a, tarn_session *s, const sql_tokens *tk, const char *sql, size_t from,
                  size_t to)
{
    memset(a, 0, sizeof(*a));
    size_t i = from;
    while (i < to) {
        size_t start = i;
        int depth = 0;
        while (i < to) {
            const sql_token *t = &tk->toks[i];
            if (is_op(t, "(") || is_op(t, "[") || is_op(t, "{"))
                depth++;
            else if (is_op(t, ")") || is_op(t, "]") || is_op(t, "}"))
                depth--;
            else if (depth == 0 && is_op(t, ","))
                break;
            i++;
        }
        const char *name = NULL;
        size_t vstart = start;
        if (i - start >= 3 && is_op(&tk->toks[start + 1], "=>")) {
            name = tk->toks[start].text;
            vstart = start + 2;
        }
        char *expr = session_token_text(tk, sql, vstart, i);
        char *rewritten = NULL, *val = NULL;
        /* an argument may itself read the lake: (SELECT max(snapshot_id)
         * FROM ducklake_snapshots('lake')) */
        int rc = rewrite_reads(&rewritten, s, expr);
        if (!rc)
            rc = eval_text(&val, s, rewritten);
        free(rewritten);
        free(expr);
        if (rc) {
            lk_args_free(a);
            return rc;
        }
        if (name) {
            push(&a->names, &a->nnamed, xstrdup(name));
            a->values = xrealloc(a->values, a->nnamed * sizeof(char *));
            a->values[a->nnamed - 1] = val;
        } else {
            push(&a->pos, &a->npos, val);
        }
        if (i < to)
            i++; /* the comma */
    }
    return 0;
}

void lk_args_free(lk_args *a)
{
    for (size_t i = 0; i < a->npos; i++)
        free(a->pos[i]);
    for (size_t i = 0; i < a->nnamed; i++) {
        free(a->names[i]);
        free(a->values[i]);
    }
    free(a->pos);
    free(a->names);
    free(a->values);
    memset(a, 0, sizeof(*a));
}

const char *lk_args_named(const lk_args *a, const char *name)
{
    for (size_t i = 0; i < a->nnamed; i++)
        if (strcasecmp(a->names[i], name) == 0)
            return a->values[i];
    return NULL;
}

/* ---- ducklake_snapshots: changes_made → MAP(VARCHAR, VARCHAR[]) ---- */

static const char *change_key(const char *kind)
{
    static const char *const MAP[][2] = {
        {"created_schema", "schemas_created"},   {"dropped_schema", "schemas_dropped"},
        {"created_table", "tables_created"},     {"dropped_table", "tables_dropped"},
        {"created_view", "views_created"},       {"dropped_view", "views_dropped"},
        {"inserted_into_table", "tables_inserted_into"},
        {"deleted_from_table", "tables_deleted_from"},
        {"altered_table", "tables_altered"},     {"altered_view", "views_altered"},
        {"created_scalar_macro", "scalar_macros_created"},
        {"created_table_macro", "table_macros_created"},
        {"dropped_scalar_macro", "scalar_macros_dropped"},
        {"dropped_table_macro", "table_macros_dropped"},
        {"inline_flush", "flushed_inlined"},     {"flushed_inlined", "flushed_inlined"},
    };
    for (size_t i = 0; i < sizeof(MAP) / sizeof(MAP[0]); i++)
        if (strcmp(MAP[i][0], kind) == 0)
            return MAP[i][1];
    return kind;
}

/* "main"."t" → main.t */
static char *unquote_value(const char *v, size_t n)
{
    tarn_buf b = {0};
    int inq = 0;
    for (size_t i = 0; i < n; i++) {
        char c = v[i];
        if (c == '"') {
            if (inq && i + 1 < n && v[i + 1] == '"') {
                buf_putc(&b, '"');
                i++;
            } else {
                inq = !inq;
            }
            continue;
        }
        buf_putc(&b, c);
    }
    return buf_detach(&b);
}

typedef struct {
    char *key;
    char **vals;
    size_t n;
} change_group;

/* ducklake_snapshots() lists the kinds of change in this fixed order,
 * whatever the order of the tokens in changes_made. */
static int key_rank(const char *key)
{
    static const char *const ORDER[] = {
        "schemas_created",       "schemas_dropped",      "tables_created",
        "tables_dropped",        "views_created",        "views_dropped",
        "scalar_macros_created", "scalar_macros_dropped", "table_macros_created",
        "table_macros_dropped",  "tables_altered",       "views_altered",
        "tables_inserted_into",  "tables_deleted_from",  "inlined_insert",
        "inlined_delete",        "flushed_inlined",      "merge_adjacent",
        "rewrite_delete",
    };
    for (size_t i = 0; i < sizeof(ORDER) / sizeof(ORDER[0]); i++)
        if (strcmp(ORDER[i], key) == 0)
            return (int)i;
    return 100;
}

static int cmp_group(const void *a, const void *b)
{
    return key_rank(((const change_group *)a)->key) - key_rank(((const change_group *)b)->key);
}

static void add_change(change_group **g, size_t *ng, const char *key, char *val)
{
    for (size_t i = 0; i < *ng; i++) {
        if (strcmp((*g)[i].key, key) == 0) {
            push(&(*g)[i].vals, &(*g)[i].n, val);
            return;
        }
    }
    *g = xrealloc(*g, (*ng + 1) * sizeof(change_group));
    change_group *c = &(*g)[(*ng)++];
    memset(c, 0, sizeof(*c));
    c->key = xstrdup(key);
    push(&c->vals, &c->n, val);
}

static void changes_map(tarn_buf *b, const char *changes)
{
    change_group *g = NULL;
    size_t ng = 0;
    const char *p = changes ? changes : "";
    while (*p) {
        const char *start = p;
        int inq = 0;
        while (*p && (inq || *p != ',')) {
            if (*p == '"')
                inq = !inq;
            p++;
        }
        const char *colon = memchr(start, ':', (size_t)(p - start));
        if (colon) {
            char *kind = xstrndup(start, (size_t)(colon - start));
            add_change(&g, &ng, change_key(kind),
                       unquote_value(colon + 1, (size_t)(p - colon - 1)));
            free(kind);
        }
        if (*p == ',')
            p++;
    }
    if (ng > 1)
        qsort(g, ng, sizeof(change_group), cmp_group);
    buf_puts(b, "MAP {");
    for (size_t i = 0; i < ng; i++) {
        if (i)
            buf_puts(b, ", ");
        quote_literal(b, g[i].key);
        buf_puts(b, ": [");
        for (size_t k = 0; k < g[i].n; k++) {
            if (k)
                buf_puts(b, ", ");
            quote_literal(b, g[i].vals[k]);
            free(g[i].vals[k]);
        }
        buf_puts(b, "]::VARCHAR[]");
        free(g[i].vals);
        free(g[i].key);
    }
    free(g);
    buf_puts(b, "}::MAP(VARCHAR, VARCHAR[])");
}

static int fn_snapshots(char **out, tarn_session *s, lk_lake *l)
{
    char *q = xasprintf("SELECT snapshot_id, changes_made FROM %s.ducklake_snapshot_changes "
                        "ORDER BY snapshot_id",
                        l->meta);
    duck_table t;
    int rc = duck_table_query(&t, s->con, q);
    free(q);
    if (rc)
        return rc;
    tarn_buf b = {0};
    buf_printf(&b,
               "SELECT s.snapshot_id, s.snapshot_time, s.schema_version, "
               "COALESCE(c.changes, MAP {}::MAP(VARCHAR, VARCHAR[])) AS changes, x.author, "
               "x.commit_message, x.commit_extra_info FROM %s.ducklake_snapshot s LEFT JOIN "
               "%s.ducklake_snapshot_changes x ON x.snapshot_id = s.snapshot_id",
               l->meta, l->meta);
    if (t.nrows) {
        buf_puts(&b, " LEFT JOIN (VALUES ");
        for (size_t r = 0; r < t.nrows; r++) {
            if (r)
                buf_puts(&b, ", ");
            buf_printf(&b, "(%s::BIGINT, ", duck_table_get(&t, r, 0));
            changes_map(&b, duck_table_get(&t, r, 1));
            buf_putc(&b, ')');
        }
        buf_puts(&b, ") c(snapshot_id, changes) ON c.snapshot_id = s.snapshot_id");
    } else {
        buf_puts(&b, " LEFT JOIN (SELECT NULL::BIGINT AS snapshot_id, NULL::MAP(VARCHAR, "
                     "VARCHAR[]) AS changes) c ON false");
    }
    duck_table_free(&t);
    *out = buf_detach(&b);
    return 0;
}

static int64_t view_snapshot(lk_lake *l)
{
    return lk_txn_catalog(l)->snapshot_id;
}

static int fn_table_info(char **out, lk_lake *l)
{
    long long sn = (long long)view_snapshot(l);
    const char *m = l->meta;
    *out = xasprintf(
        "SELECT t.table_name, t.schema_id, t.table_id, t.table_uuid, "
        "(SELECT count(*) FROM %s.ducklake_data_file d WHERE d.table_id = t.table_id AND %lld >= "
        "d.begin_snapshot AND (%lld < d.end_snapshot OR d.end_snapshot IS NULL)) AS file_count, "
        "(SELECT COALESCE(sum(file_size_bytes), 0)::BIGINT FROM %s.ducklake_data_file d WHERE "
        "d.table_id = t.table_id AND %lld >= d.begin_snapshot AND (%lld < d.end_snapshot OR "
        "d.end_snapshot IS NULL)) AS file_size_bytes, "
        "(SELECT count(*) FROM %s.ducklake_delete_file d WHERE d.table_id = t.table_id AND %lld "
        ">= d.begin_snapshot AND (%lld < d.end_snapshot OR d.end_snapshot IS NULL)) AS "
        "delete_file_count, "
        "(SELECT COALESCE(sum(file_size_bytes), 0)::BIGINT FROM %s.ducklake_delete_file d WHERE "
        "d.table_id = t.table_id AND %lld >= d.begin_snapshot AND (%lld < d.end_snapshot OR "
        "d.end_snapshot IS NULL)) AS delete_file_size_bytes "
        "FROM %s.ducklake_table t WHERE %lld >= t.begin_snapshot AND (%lld < t.end_snapshot OR "
        "t.end_snapshot IS NULL)",
        m, sn, sn, m, sn, sn, m, sn, sn, m, sn, sn, m, sn, sn);
    return 0;
}

static int fn_options(char **out, lk_lake *l)
{
    const char *m = l->meta;
    *out = xasprintf(
        "SELECT o.\"key\" AS option_name, NULL::VARCHAR AS description, o.\"value\" AS value, "
        "upper(COALESCE(o.\"scope\", 'global')) AS scope, CASE o.\"scope\" WHEN 'table' THEN "
        "(SELECT s.schema_name || '.' || t.table_name FROM %s.ducklake_table t JOIN "
        "%s.ducklake_schema s USING (schema_id) WHERE t.table_id = o.scope_id AND t.end_snapshot "
        "IS NULL LIMIT 1) WHEN 'schema' THEN (SELECT s.schema_name FROM %s.ducklake_schema s "
        "WHERE s.schema_id = o.scope_id LIMIT 1) END AS scope_entry FROM %s.ducklake_metadata o",
        m, m, m, m);
    return 0;
}

static int fn_list_files(char **out, tarn_session *s, lk_lake *l, const lk_args *a)
{
    if (a->npos < 2)
        return tarn_error_set(TARN_EINVALID, "ducklake_list_files(catalog, table [, schema => "
                                             "…]) needs a table name");
    const char *schema = lk_args_named(a, "schema");
    lk_catalog *cat = (lk_catalog *)lk_txn_catalog(l);
    lk_schema *sc = lk_catalog_schema(cat, schema ? schema : "main");
    const lk_table *t = sc ? lk_catalog_table(cat, sc->id, a->pos[1]) : NULL;
    if (!t)
        return tarn_error_set(TARN_ENOTFOUND, "Table with name %s does not exist", a->pos[1]);
    long long sn = (long long)cat->snapshot_id;
    const char *ver = lk_args_named(a, "snapshot_version");
    if (ver)
        sn = strtoll(ver, NULL, 10);
    char *dir = lk_lake_table_dir(l, cat, t);
    tarn_buf b = {0};
    buf_puts(&b, "SELECT CASE WHEN d.path_is_relative THEN ");
    quote_literal(&b, dir);
    buf_puts(&b, " || d.path ELSE d.path END AS data_file, d.file_size_bytes AS "
                 "data_file_size_bytes, d.footer_size AS data_file_footer_size, d.encryption_key "
                 "AS data_file_encryption_key, CASE WHEN x.path IS NULL THEN NULL WHEN "
                 "x.path_is_relative THEN ");
    quote_literal(&b, dir);
    buf_printf(&b,
               " || x.path ELSE x.path END AS delete_file, x.file_size_bytes AS "
               "delete_file_size_bytes, x.footer_size AS delete_file_footer_size, "
               "x.encryption_key AS delete_file_encryption_key FROM %s.ducklake_data_file d LEFT "
               "JOIN (SELECT * FROM %s.ducklake_delete_file WHERE %lld >= begin_snapshot AND "
               "(%lld < end_snapshot OR end_snapshot IS NULL)) x ON x.data_file_id = "
               "d.data_file_id WHERE d.table_id = %lld AND %lld >= d.begin_snapshot AND (%lld < "
               "d.end_snapshot OR d.end_snapshot IS NULL)",
               l->meta, l->meta, sn, sn, (long long)t->id, sn, sn);
    free(dir);
    (void)s;
    *out = buf_detach(&b);
    return 0;
}

static int feed(char **out, tarn_session *s, lk_lake *l, const lk_args *a, int kind)
{
    if (a->npos < 5)
        return tarn_error_set(TARN_EINVALID,
                              "the change feed takes (catalog, schema, table, start, end)");
    int64_t from = strtoll(a->pos[3] ? a->pos[3] : "0", NULL, 10);
    int64_t to = strtoll(a->pos[4] ? a->pos[4] : "0", NULL, 10);
    return lk_feed_sql(out, s, l, a->pos[1], a->pos[2], from, to, kind);
}

int lk_function_sql(char **out, tarn_session *s, const char *fn, const lk_args *a)
{
    static const char *const KNOWN[] = {
        "ducklake_snapshots",         "ducklake_table_info",
        "ducklake_current_snapshot",  "ducklake_last_committed_snapshot",
        "ducklake_options",           "ducklake_list_files",
        "ducklake_table_changes",     "ducklake_table_insertions",
        "ducklake_table_deletions",
    };
    *out = NULL;
    size_t k = 0;
    while (k < sizeof(KNOWN) / sizeof(KNOWN[0]) && strcasecmp(KNOWN[k], fn) != 0)
        k++;
    if (k == sizeof(KNOWN) / sizeof(KNOWN[0]))
        return lk_maintain_function(out, s, fn, a);
    if (a->npos < 1 || !a->pos[0])
        return tarn_error_set(TARN_EINVALID, "%s: the first argument is the lake's name", fn);
    lk_lake *l = session_lake(s, a->pos[0]);
    if (!l)
        return tarn_error_set(TARN_EINVALID, "%s: no DuckLake lake is attached as \"%s\"", fn,
                              a->pos[0]);
    switch (k) {
    case 0:
        return fn_snapshots(out, s, l);
    case 1:
        return fn_table_info(out, l);
    case 2:
        *out = xasprintf("SELECT %lld::BIGINT AS id", (long long)view_snapshot(l));
        return 0;
    case 3:
        *out = xasprintf("SELECT max(snapshot_id) AS id FROM %s.ducklake_snapshot", l->meta);
        return 0;
    case 4:
        return fn_options(out, l);
    case 5:
        return fn_list_files(out, s, l, a);
    case 6:
        return feed(out, s, l, a, LK_FEED_CHANGES);
    case 7:
        return feed(out, s, l, a, LK_FEED_INSERTIONS);
    default:
        return feed(out, s, l, a, LK_FEED_DELETIONS);
    }
}

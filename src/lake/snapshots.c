/*
 * snapshots.c — the lake's snapshots as DuckLake's ducklake_snapshots()
 * shows them (see snapshots.h).
 *
 * Reads ducklake_snapshot (id, time, schema version) and
 * ducklake_snapshot_changes (changes_made, author, commit message, extra
 * info). changes_made is DuckLake's comma-separated list of
 * `kind:value` tokens (`created_table:"main"."t"`, `inserted_into_table:3`,
 * …); the function shows it as a MAP from DuckLake's plural keys
 * (tables_created, tables_inserted_into, …) to their values, unquoted, the
 * keys in DuckLake's fixed order.
 */
#include "lake/snapshots.h"

#include "duck/duck.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdlib.h>
#include <string.h>

static void push(char ***arr, size_t *n, char *v)
{
    *arr = xrealloc(*arr, (*n + 1) * sizeof(char *));
    (*arr)[(*n)++] = v;
}

static const char *change_key(const char *kind)
{
    static const char *const MAP[][2] = {
        {"created_schema", "schemas_created"},
        {"dropped_schema", "schemas_dropped"},
        {"created_table", "tables_created"},
        {"dropped_table", "tables_dropped"},
        {"created_view", "views_created"},
        {"dropped_view", "views_dropped"},
        {"inserted_into_table", "tables_inserted_into"},
        {"deleted_from_table", "tables_deleted_from"},
        {"altered_table", "tables_altered"},
        {"altered_view", "views_altered"},
        {"created_scalar_macro", "scalar_macros_created"},
        {"created_table_macro", "table_macros_created"},
        {"dropped_scalar_macro", "scalar_macros_dropped"},
        {"dropped_table_macro", "table_macros_dropped"},
        {"inline_flush", "flushed_inlined"},
        {"flushed_inlined", "flushed_inlined"},
    };
    for (size_t i = 0; i < sizeof(MAP) / sizeof(MAP[0]); i++)
        if (strcmp(MAP[i][0], kind) == 0)
            return MAP[i][1];
    return kind;
}

/* Appends the SQL that writes name `part` as DuckDB's
 * KeywordHelper::WriteOptionallyQuoted does (DuckLake lists names so):
 * bare when it is a plain identifier and not a keyword, else quoted. */
static void optionally_quoted_sql(tarn_buf *b, const char *part)
{
    tarn_buf q = {0};
    quote_ident(&q, part);
    buf_puts(b, "(CASE WHEN regexp_full_match(");
    quote_literal(b, part);
    buf_puts(b, ", '[A-Za-z_][A-Za-z0-9_]*') AND lower(");
    quote_literal(b, part);
    buf_puts(b, ") NOT IN (SELECT keyword_name FROM duckdb_keywords()) THEN ");
    quote_literal(b, part);
    buf_puts(b, " ELSE ");
    quote_literal(b, buf_cstr(&q));
    buf_puts(b, " END)");
    buf_free(&q);
}

/* A change's value as SQL: "main"."t" → main.t, each name optionally
 * quoted (DuckLake's CatalogListToValue); a schema ("s") and an id as they
 * are. */
static char *value_sql(const char *v, size_t n)
{
    strlist parts = {0};
    tarn_buf part = {0};
    int inq = 0;
    for (size_t i = 0; i <= n; i++) {
        char c = i < n ? v[i] : '.';
        if (c == '"' && inq && i + 1 < n && v[i + 1] == '"') {
            buf_putc(&part, '"');
            i++;
        } else if (c == '"') {
            inq = !inq;
        } else if (c == '.' && !inq) {
            strlist_push(&parts, buf_cstr(&part));
            buf_clear(&part);
        } else {
            buf_putc(&part, c);
        }
    }
    buf_free(&part);
    tarn_buf b = {0};
    for (size_t i = 0; i < parts.n; i++) {
        if (i)
            buf_puts(&b, " || '.' || ");
        if (parts.n > 1)
            optionally_quoted_sql(&b, parts.items[i]);
        else
            quote_literal(&b, parts.items[i]);
    }
    strlist_free(&parts);
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
        "schemas_created",       "schemas_dropped",       "tables_created",
        "tables_dropped",        "views_created",         "views_dropped",
        "scalar_macros_created", "scalar_macros_dropped", "table_macros_created",
        "table_macros_dropped",  "tables_altered",        "views_altered",
        "tables_inserted_into",  "tables_deleted_from",   "inlined_insert",
        "inlined_delete",        "flushed_inlined",       "merge_adjacent",
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
            add_change(&g, &ng, change_key(kind), value_sql(colon + 1, (size_t)(p - colon - 1)));
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
            buf_puts(b, g[i].vals[k]);
            free(g[i].vals[k]);
        }
        buf_puts(b, "]::VARCHAR[]");
        free(g[i].vals);
        free(g[i].key);
    }
    free(g);
    buf_puts(b, "}::MAP(VARCHAR, VARCHAR[])");
}

int lk_snapshots_sql(char **out, lk_lake *l, duckdb_connection con)
{
    duck_table t;
    int rc = lk_catdb_queryf(&t, &l->db, con,
                             "SELECT snapshot_id, changes_made FROM %s.ducklake_snapshot_changes "
                             "ORDER BY snapshot_id",
                             lk_catdb_name(&l->db));
    if (rc)
        return rc;
    tarn_buf b = {0};
    buf_printf(&b,
               "SELECT s.snapshot_id, s.snapshot_time, s.schema_version, "
               "COALESCE(c.changes, MAP {}::MAP(VARCHAR, VARCHAR[])) AS changes, x.author, "
               "x.commit_message, x.commit_extra_info FROM %s.ducklake_snapshot s LEFT JOIN "
               "%s.ducklake_snapshot_changes x ON x.snapshot_id = s.snapshot_id",
               lk_catdb_name(&l->db), lk_catdb_name(&l->db));
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

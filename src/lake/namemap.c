/*
 * namemap.c — name mappings of files without field ids (see namemap.h):
 * reads ducklake_column_mapping / ducklake_name_mapping rows into trees,
 * and compares trees as DuckLake does to reuse a mapping (addfiles.c
 * records new ones).
 */
#include "lake/namemap.h"

#include "lake/catdb.h"

#include "duck/duck.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

void lk_nm_entry_free(lk_nm_entry *e)
{
    free(e->source);
    for (size_t i = 0; i < e->nchildren; i++)
        lk_nm_entry_free(&e->children[i]);
    free(e->children);
    memset(e, 0, sizeof(*e));
}

void lk_namemap_free(lk_namemap *m)
{
    for (size_t i = 0; i < m->ncols; i++)
        lk_nm_entry_free(&m->cols[i]);
    free(m->cols);
    memset(m, 0, sizeof(*m));
}

void lk_namemap_set_free(lk_namemap_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        lk_namemap_free(&s->maps[i]);
    free(s->maps);
    memset(s, 0, sizeof(*s));
}

static void copy_entries(lk_nm_entry **dst, size_t *ndst, const lk_nm_entry *src, size_t n)
{
    *dst = n ? xcalloc(n, sizeof(lk_nm_entry)) : NULL;
    *ndst = n;
    for (size_t i = 0; i < n; i++) {
        (*dst)[i].source = xstrdup(src[i].source);
        (*dst)[i].target = src[i].target;
        (*dst)[i].hive = src[i].hive;
        copy_entries(&(*dst)[i].children, &(*dst)[i].nchildren, src[i].children, src[i].nchildren);
    }
}

void lk_namemap_set_add(lk_namemap_set *s, const lk_namemap *m)
{
    s->maps = xrealloc(s->maps, (s->n + 1) * sizeof(lk_namemap));
    lk_namemap *d = &s->maps[s->n++];
    d->id = m->id;
    d->table_id = m->table_id;
    copy_entries(&d->cols, &d->ncols, m->cols, m->ncols);
}

const lk_namemap *lk_namemap_set_find(const lk_namemap_set *s, int64_t id)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->maps[i].id == id)
            return &s->maps[i];
    return NULL;
}

static int entry_compatible(const lk_nm_entry *a, const lk_nm_entry *b);

/* DuckLake's ListIsCompatible: the same number of entries, and for each
 * entry of `a` one of `b` with its (exact) source name that is compatible. */
static int list_compatible(const lk_nm_entry *a, size_t na, const lk_nm_entry *b, size_t nb)
{
    if (na != nb)
        return 0;
    for (size_t i = 0; i < na; i++) {
        const lk_nm_entry *match = NULL;
        for (size_t k = 0; k < nb && !match; k++)
            if (strcmp(a[i].source, b[k].source) == 0)
                match = &b[k];
        if (!match || !entry_compatible(&a[i], match))
            return 0;
    }
    return 1;
}

static int entry_compatible(const lk_nm_entry *a, const lk_nm_entry *b)
{
    return strcmp(a->source, b->source) == 0 && a->target == b->target && a->hive == b->hive &&
           list_compatible(a->children, a->nchildren, b->children, b->nchildren);
}

int lk_namemap_compatible(const lk_namemap *a, const lk_namemap *b)
{
    return a->table_id == b->table_id && list_compatible(a->cols, a->ncols, b->cols, b->ncols);
}

const lk_nm_entry *lk_namemap_target(const lk_nm_entry *entries, size_t n, int64_t column_id)
{
    for (size_t i = 0; i < n; i++)
        if (entries[i].target == column_id)
            return &entries[i];
    return NULL;
}

/* One ducklake_name_mapping row while a mapping is rebuilt from them. */
typedef struct {
    int64_t column_id, parent; /* parent -1: top level */
    const char *source;
    int64_t target;
    int hive;
} nm_row;

/* The entries whose parent is `parent` among rows[0..n), in column_id
 * order (the rows are sorted by it). */
static void build_level(lk_nm_entry **out, size_t *nout, const nm_row *rows, size_t n,
                        int64_t parent)
{
    *out = NULL;
    *nout = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].parent != parent)
            continue;
        *out = xrealloc(*out, (*nout + 1) * sizeof(lk_nm_entry));
        lk_nm_entry *e = &(*out)[(*nout)++];
        memset(e, 0, sizeof(*e));
        e->source = xstrdup(rows[i].source ? rows[i].source : "");
        e->target = rows[i].target;
        e->hive = rows[i].hive;
        build_level(&e->children, &e->nchildren, rows, n, rows[i].column_id);
    }
}

/* Adds the mapping made of result rows [from, to) (one mapping_id). */
static void add_from_rows(lk_namemap_set *out, const duck_table *r, size_t from, size_t to)
{
    nm_row *rows = xcalloc(to - from + 1, sizeof(nm_row));
    size_t n = 0;
    for (size_t i = from; i < to; i++) {
        if (!duck_table_get(r, i, 2))
            continue; /* a mapping without name rows */
        nm_row *w = &rows[n++];
        w->column_id = duck_table_int64(r, i, 2);
        const char *p = duck_table_get(r, i, 5);
        w->parent = p ? strtoll(p, NULL, 10) : -1;
        w->source = duck_table_get(r, i, 3);
        const char *t = duck_table_get(r, i, 4);
        w->target = t ? strtoll(t, NULL, 10) : -1;
        const char *h = duck_table_get(r, i, 6);
        w->hive = h && strcmp(h, "true") == 0;
    }
    out->maps = xrealloc(out->maps, (out->n + 1) * sizeof(lk_namemap));
    lk_namemap *m = &out->maps[out->n++];
    m->id = duck_table_int64(r, from, 0);
    m->table_id = duck_table_int64(r, from, 1);
    build_level(&m->cols, &m->ncols, rows, n, -1);
    free(rows);
}

int lk_namemap_load(lk_namemap_set *out, lk_catdb *db, duckdb_connection con, int64_t table_id,
                    const int64_t *ids, size_t nids)
{
    memset(out, 0, sizeof(*out));
    tarn_buf w = {0};
    if (table_id >= 0) {
        buf_printf(&w, "m.table_id = %lld", (long long)table_id);
    } else {
        buf_puts(&w, "m.mapping_id IN (");
        for (size_t i = 0; i < nids; i++)
            buf_printf(&w, "%s%lld", i ? ", " : "", (long long)ids[i]);
        buf_puts(&w, nids ? ")" : "NULL)");
    }
    duck_table r;
    int rc = lk_catdb_queryf(&r, db, con,
                             "SELECT m.mapping_id, m.table_id, n.column_id, n.source_name, "
                             "n.target_field_id, n.parent_column, n.is_partition FROM "
                             "%s.ducklake_column_mapping m LEFT JOIN %s.ducklake_name_mapping n "
                             "USING (mapping_id) WHERE %s ORDER BY m.mapping_id, n.column_id",
                             lk_catdb_name(db), lk_catdb_name(db), buf_cstr(&w));
    buf_free(&w);
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows;) {
        size_t k = i + 1;
        while (k < r.nrows && strcmp(duck_table_get(&r, k, 0), duck_table_get(&r, i, 0)) == 0)
            k++;
        add_from_rows(out, &r, i, k);
        i = k;
    }
    duck_table_free(&r);
    return 0;
}

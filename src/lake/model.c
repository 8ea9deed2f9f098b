/*
 * model.c — copying, sharing and editing the catalog model (see model.h).
 *
 * The model is plain memory: load.c fills it from the catalog rows of one
 * snapshot, a transaction edits a shared copy of it, and the commit writes
 * what changed. Nothing here touches the catalog database.
 */
#include "lake/model.h"

#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

void lk_column_free(lk_column *col)
{
    for (size_t i = 0; i < col->nchildren; i++)
        lk_column_free(&col->children[i]);
    free(col->children);
    free(col->name);
    free(col->type);
    free(col->initial_default);
    free(col->default_value);
    free(col->default_value_type);
    free(col->comment);
    memset(col, 0, sizeof(*col));
}

void lk_column_copy(lk_column *dst, const lk_column *src)
{
    *dst = *src;
    dst->name = dup_or_null(src->name);
    dst->type = dup_or_null(src->type);
    dst->initial_default = dup_or_null(src->initial_default);
    dst->default_value = dup_or_null(src->default_value);
    dst->default_value_type = dup_or_null(src->default_value_type);
    dst->comment = dup_or_null(src->comment);
    dst->children = src->nchildren ? xcalloc(src->nchildren, sizeof(lk_column)) : NULL;
    for (size_t i = 0; i < src->nchildren; i++)
        lk_column_copy(&dst->children[i], &src->children[i]);
}

void lk_table_free(lk_table *t)
{
    if (t->borrowed) { /* its lender frees the memory */
        memset(t, 0, sizeof(*t));
        return;
    }
    for (size_t i = 0; i < t->ncols; i++)
        lk_column_free(&t->cols[i]);
    free(t->cols);
    for (size_t i = 0; i < t->ninlined; i++)
        free(t->inlined[i].name);
    free(t->inlined);
    for (size_t i = 0; i < t->nkeys; i++)
        free(t->keys[i].transform);
    free(t->keys);
    lk_table_set_sorts(t, -1, NULL, 0);
    free(t->uuid);
    free(t->name);
    free(t->path);
    free(t->comment);
    memset(t, 0, sizeof(*t));
}

void lk_table_copy(lk_table *dst, const lk_table *src)
{
    *dst = *src;
    dst->borrowed = 0;
    dst->uuid = dup_or_null(src->uuid);
    dst->name = dup_or_null(src->name);
    dst->path = dup_or_null(src->path);
    dst->comment = dup_or_null(src->comment);
    dst->cols = src->ncols ? xcalloc(src->ncols, sizeof(lk_column)) : NULL;
    for (size_t i = 0; i < src->ncols; i++)
        lk_column_copy(&dst->cols[i], &src->cols[i]);
    dst->keys = src->nkeys ? xcalloc(src->nkeys, sizeof(lk_partkey)) : NULL;
    for (size_t i = 0; i < src->nkeys; i++) {
        dst->keys[i].column_id = src->keys[i].column_id;
        dst->keys[i].transform = xstrdup(src->keys[i].transform);
    }
    dst->sorts = NULL;
    dst->nsorts = 0;
    lk_table_set_sorts(dst, src->sort_id, src->sorts, src->nsorts);
    dst->inlined = src->ninlined ? xcalloc(src->ninlined, sizeof(lk_inlined)) : NULL;
    for (size_t i = 0; i < src->ninlined; i++) {
        dst->inlined[i].name = xstrdup(src->inlined[i].name);
        dst->inlined[i].schema_version = src->inlined[i].schema_version;
    }
}

void lk_table_set_sorts(lk_table *t, int64_t sort_id, const lk_sortkey *keys, size_t n)
{
    for (size_t i = 0; i < t->nsorts; i++) {
        free(t->sorts[i].expr);
        free(t->sorts[i].dialect);
    }
    free(t->sorts);
    t->sorts = n ? xcalloc(n, sizeof(lk_sortkey)) : NULL;
    t->nsorts = n;
    t->sort_id = n ? sort_id : -1;
    for (size_t i = 0; i < n; i++) {
        t->sorts[i] = keys[i];
        t->sorts[i].expr = xstrdup(keys[i].expr);
        t->sorts[i].dialect = xstrdup(keys[i].dialect ? keys[i].dialect : "duckdb");
    }
}

static void schema_free(lk_schema *s)
{
    free(s->uuid);
    free(s->name);
    free(s->path);
    memset(s, 0, sizeof(*s));
}

static void view_free(lk_view *v)
{
    free(v->uuid);
    free(v->name);
    free(v->sql);
    free(v->aliases);
    free(v->comment);
    memset(v, 0, sizeof(*v));
}

lk_view *lk_catalog_view(lk_catalog *c, int64_t schema_id, const char *name)
{
    for (size_t i = 0; i < c->nviews; i++)
        if (c->views[i].schema_id == schema_id && strcasecmp(c->views[i].name, name) == 0)
            return &c->views[i];
    return NULL;
}

lk_view *lk_catalog_add_view(lk_catalog *c)
{
    c->views = xrealloc(c->views, (c->nviews + 1) * sizeof(lk_view));
    memset(&c->views[c->nviews], 0, sizeof(lk_view));
    return &c->views[c->nviews++];
}

void lk_catalog_remove_view(lk_catalog *c, size_t i)
{
    view_free(&c->views[i]);
    memmove(&c->views[i], &c->views[i + 1], (c->nviews - i - 1) * sizeof(lk_view));
    c->nviews--;
}

void lk_catalog_free(lk_catalog *c)
{
    for (size_t i = 0; i < c->nmacros; i++)
        lk_macro_free(&c->macros[i]);
    free(c->macros);
    for (size_t i = 0; i < c->nviews; i++)
        view_free(&c->views[i]);
    free(c->views);
    for (size_t i = 0; i < c->nschemas; i++)
        schema_free(&c->schemas[i]);
    for (size_t i = 0; i < c->ntables; i++)
        lk_table_free(&c->tables[i]);
    free(c->schemas);
    free(c->tables);
    memset(c, 0, sizeof(*c));
}

void lk_catalog_share(lk_catalog *dst, const lk_catalog *src)
{
    *dst = *src;
    dst->schemas = xcalloc(src->nschemas, sizeof(lk_schema));
    for (size_t i = 0; i < src->nschemas; i++) {
        dst->schemas[i] = src->schemas[i];
        dst->schemas[i].uuid = dup_or_null(src->schemas[i].uuid);
        dst->schemas[i].name = dup_or_null(src->schemas[i].name);
        dst->schemas[i].path = dup_or_null(src->schemas[i].path);
    }
    dst->views = xcalloc(src->nviews, sizeof(lk_view));
    for (size_t i = 0; i < src->nviews; i++) {
        dst->views[i] = src->views[i];
        dst->views[i].uuid = dup_or_null(src->views[i].uuid);
        dst->views[i].name = dup_or_null(src->views[i].name);
        dst->views[i].sql = dup_or_null(src->views[i].sql);
        dst->views[i].aliases = dup_or_null(src->views[i].aliases);
        dst->views[i].comment = dup_or_null(src->views[i].comment);
    }
    dst->macros = xcalloc(src->nmacros ? src->nmacros : 1, sizeof(lk_macro));
    for (size_t i = 0; i < src->nmacros; i++)
        lk_macro_copy(&dst->macros[i], &src->macros[i]);
    dst->tables = xcalloc(src->ntables, sizeof(lk_table));
    if (src->ntables)
        memcpy(dst->tables, src->tables, src->ntables * sizeof(lk_table));
    for (size_t i = 0; i < src->ntables; i++)
        dst->tables[i].borrowed = 1;
}

lk_table *lk_catalog_table_edit(lk_catalog *c, const lk_table *t)
{
    if (!t)
        return NULL;
    lk_table *own = &c->tables[t - c->tables];
    if (own->borrowed) {
        lk_table copy;
        lk_table_copy(&copy, own);
        *own = copy;
    }
    return own;
}

void lk_catalog_unshare(lk_catalog *c)
{
    for (size_t i = 0; i < c->ntables; i++)
        lk_catalog_table_edit(c, &c->tables[i]);
}

/* A borrowed table shares its name string with its lender: pointer identity
 * finds the lender even when ids were renumbered. Both arrays keep their
 * order (tables are appended, removal keeps the rest in place), so one
 * forward walk finds them all. */
void lk_catalog_take_over(lk_catalog *c, lk_catalog *from)
{
    size_t j = 0;
    for (size_t i = 0; i < c->ntables; i++) {
        lk_table *t = &c->tables[i];
        if (!t->borrowed)
            continue;
        size_t k = j;
        while (k < from->ntables && from->tables[k].name != t->name)
            k++;
        if (k == from->ntables) /* out of order: look from the start */
            for (k = 0; k < from->ntables && from->tables[k].name != t->name; k++)
                ;
        if (k == from->ntables || from->tables[k].borrowed) {
            lk_catalog_table_edit(c, t); /* the lender is elsewhere: a copy is safe */
            continue;
        }
        from->tables[k].borrowed = 1;
        t->borrowed = 0;
        j = k + 1;
    }
}

lk_schema *lk_catalog_schema(lk_catalog *c, const char *name)
{
    for (size_t i = 0; i < c->nschemas; i++)
        if (strcasecmp(c->schemas[i].name, name) == 0)
            return &c->schemas[i];
    return NULL;
}

lk_schema *lk_catalog_schema_by_id(lk_catalog *c, int64_t id)
{
    for (size_t i = 0; i < c->nschemas; i++)
        if (c->schemas[i].id == id)
            return &c->schemas[i];
    return NULL;
}

const lk_table *lk_catalog_table(const lk_catalog *c, int64_t schema_id, const char *name)
{
    for (size_t i = 0; i < c->ntables; i++)
        if (c->tables[i].schema_id == schema_id && strcasecmp(c->tables[i].name, name) == 0)
            return &c->tables[i];
    return NULL;
}

const lk_table *lk_catalog_table_named(const lk_catalog *c, const char *schema, const char *name)
{
    const lk_schema *sc = lk_catalog_schema((lk_catalog *)c, schema);
    return sc ? lk_catalog_table(c, sc->id, name) : NULL;
}

const lk_table *lk_catalog_table_by_id(const lk_catalog *c, int64_t id)
{
    for (size_t i = 0; i < c->ntables; i++)
        if (c->tables[i].id == id)
            return &c->tables[i];
    return NULL;
}

void lk_catalog_remove_table(lk_catalog *c, size_t i)
{
    lk_table_free(&c->tables[i]);
    memmove(&c->tables[i], &c->tables[i + 1], (c->ntables - i - 1) * sizeof(lk_table));
    c->ntables--;
}

void lk_catalog_remove_schema(lk_catalog *c, size_t i)
{
    schema_free(&c->schemas[i]);
    memmove(&c->schemas[i], &c->schemas[i + 1], (c->nschemas - i - 1) * sizeof(lk_schema));
    c->nschemas--;
}

lk_table *lk_catalog_add_table(lk_catalog *c)
{
    c->tables = xrealloc(c->tables, (c->ntables + 1) * sizeof(lk_table));
    memset(&c->tables[c->ntables], 0, sizeof(lk_table));
    return &c->tables[c->ntables++];
}

lk_schema *lk_catalog_add_schema(lk_catalog *c)
{
    c->schemas = xrealloc(c->schemas, (c->nschemas + 1) * sizeof(lk_schema));
    memset(&c->schemas[c->nschemas], 0, sizeof(lk_schema));
    return &c->schemas[c->nschemas++];
}

int64_t lk_columns_max(const lk_column *cols, size_t n, int64_t (*key)(const lk_column *))
{
    int64_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (key(&cols[i]) > m)
            m = key(&cols[i]);
        int64_t c = lk_columns_max(cols[i].children, cols[i].nchildren, key);
        if (c > m)
            m = c;
    }
    return m;
}

static int64_t column_id(const lk_column *c)
{
    return c->id;
}

const lk_column *lk_table_column(const lk_table *t, int64_t id)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (t->cols[i].id == id)
            return &t->cols[i];
    return NULL;
}

int64_t lk_table_max_column_id(const lk_table *t)
{
    return lk_columns_max(t->cols, t->ncols, column_id);
}

/*
 * model.c — loading, copying and editing the catalog model (see model.h).
 *
 * Loading runs three flat queries against the metadata database (schemas,
 * tables, columns) filtered to the rows live at the snapshot, plus one for
 * the inlined-data tables, and stitches nested columns to their parents.
 */
#include "lake/model.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static int64_t to_i64(const char *s, int64_t dflt)
{
    return s ? strtoll(s, NULL, 10) : dflt;
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

static int64_t max_id(const lk_column *cols, size_t n)
{
    int64_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (cols[i].id > m)
            m = cols[i].id;
        int64_t c = max_id(cols[i].children, cols[i].nchildren);
        if (c > m)
            m = c;
    }
    return m;
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
    return max_id(t->cols, t->ncols);
}

/* ---- loading ---- */

/* The table a loaded row (table_id in column 0) belongs to. */
static lk_table *table_for_row(lk_catalog *c, const duck_table *t, size_t r)
{
    int64_t id = to_i64(duck_table_get(t, r, 0), -1);
    return lk_catalog_table_edit(c, lk_catalog_table_by_id(c, id));
}

#define VISIBLE "%lld >= begin_snapshot AND (%lld < end_snapshot OR end_snapshot IS NULL)"

static int load_snapshot(lk_catalog *c, lk_catdb *db, duckdb_connection con, int64_t snap)
{
    const char *meta = lk_catdb_name(db);
    char *sql;
    if (snap < 0)
        sql = xasprintf("SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM "
                        "%s.ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1",
                        meta);
    else
        sql = xasprintf("SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM "
                        "%s.ducklake_snapshot WHERE snapshot_id = %lld",
                        meta, (long long)snap);
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    if (t.nrows == 0) {
        duck_table_free(&t);
        /* invalid input, as DuckLake says: it aborts a transaction */
        return tarn_error_set(TARN_EINVALID, "No snapshot found at version %lld", (long long)snap);
    }
    c->snapshot_id = to_i64(duck_table_get(&t, 0, 0), 0);
    c->schema_version = to_i64(duck_table_get(&t, 0, 1), 0);
    c->next_catalog_id = to_i64(duck_table_get(&t, 0, 2), 0);
    c->next_file_id = to_i64(duck_table_get(&t, 0, 3), 0);
    duck_table_free(&t);
    return 0;
}

static int load_schemas(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *meta = lk_catdb_name(db);
    long long s = (long long)c->snapshot_id;
    char *sql =
        xasprintf("SELECT schema_id, begin_snapshot, schema_uuid, schema_name, path, "
                  "path_is_relative FROM %s.ducklake_schema WHERE " VISIBLE " ORDER BY schema_id",
                  meta, s, s);
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t r = 0; r < t.nrows; r++) {
        lk_schema *sc = lk_catalog_add_schema(c);
        sc->id = to_i64(duck_table_get(&t, r, 0), 0);
        sc->begin = to_i64(duck_table_get(&t, r, 1), 0);
        sc->uuid = dup_or_null(duck_table_get(&t, r, 2));
        sc->name = xstrdup(duck_table_get(&t, r, 3));
        sc->path = dup_or_null(duck_table_get(&t, r, 4));
        const char *rel = duck_table_get(&t, r, 5);
        sc->path_rel = !rel || strcmp(rel, "true") == 0;
    }
    duck_table_free(&t);
    return 0;
}

static int load_tables(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *meta = lk_catdb_name(db);
    long long s = (long long)c->snapshot_id;
    char *sql = xasprintf("SELECT table_id, begin_snapshot, schema_id, table_uuid, table_name, "
                          "path, path_is_relative FROM %s.ducklake_table WHERE " VISIBLE
                          " ORDER BY table_id",
                          meta, s, s);
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t r = 0; r < t.nrows; r++) {
        lk_table *tb = lk_catalog_add_table(c);
        tb->id = to_i64(duck_table_get(&t, r, 0), 0);
        tb->begin = to_i64(duck_table_get(&t, r, 1), 0);
        tb->schema_id = to_i64(duck_table_get(&t, r, 2), 0);
        tb->uuid = dup_or_null(duck_table_get(&t, r, 3));
        tb->name = xstrdup(duck_table_get(&t, r, 4));
        tb->path = dup_or_null(duck_table_get(&t, r, 5));
        const char *rel = duck_table_get(&t, r, 6);
        tb->path_rel = !rel || strcmp(rel, "true") == 0;
        tb->partition_id = -1;
        tb->sort_id = -1;
    }
    duck_table_free(&t);
    return 0;
}

static lk_column *find_column(lk_column *cols, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++) {
        if (cols[i].id == id)
            return &cols[i];
        lk_column *c = find_column(cols[i].children, cols[i].nchildren, id);
        if (c)
            return c;
    }
    return NULL;
}

static lk_column *push_column(lk_column **arr, size_t *n)
{
    *arr = xrealloc(*arr, (*n + 1) * sizeof(lk_column));
    memset(&(*arr)[*n], 0, sizeof(lk_column));
    return &(*arr)[(*n)++];
}

static int load_columns(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *meta = lk_catdb_name(db);
    long long s = (long long)c->snapshot_id;
    /* Parents sort before children (NULLS FIRST, and a parent's id is
     * always lower than its children's), so each child finds its parent. */
    char *sql = xasprintf(
        "SELECT table_id, column_id, begin_snapshot, column_name, column_type, initial_default, "
        "default_value, nulls_allowed, parent_column, default_value_type FROM "
        "%s.ducklake_column WHERE " VISIBLE
        " ORDER BY table_id, parent_column NULLS FIRST, column_order, column_id",
        meta, s, s);
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t r = 0; r < t.nrows; r++) {
        lk_table *tb = table_for_row(c, &t, r);
        if (!tb)
            continue;
        int64_t parent = to_i64(duck_table_get(&t, r, 8), -1);
        lk_column *col;
        if (parent < 0) {
            col = push_column(&tb->cols, &tb->ncols);
        } else {
            lk_column *p = find_column(tb->cols, tb->ncols, parent);
            if (!p)
                continue;
            col = push_column(&p->children, &p->nchildren);
        }
        col->id = to_i64(duck_table_get(&t, r, 1), 0);
        col->begin = to_i64(duck_table_get(&t, r, 2), 0);
        col->name = xstrdup(duck_table_get(&t, r, 3));
        col->type = xstrdup(duck_table_get(&t, r, 4));
        col->initial_default = dup_or_null(duck_table_get(&t, r, 5));
        col->default_value = dup_or_null(duck_table_get(&t, r, 6));
        const char *na = duck_table_get(&t, r, 7);
        col->nulls_allowed = !na || strcmp(na, "true") == 0;
        col->parent = parent;
        col->default_value_type = dup_or_null(duck_table_get(&t, r, 9));
    }
    duck_table_free(&t);
    return 0;
}

static int load_inlined(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *meta = lk_catdb_name(db);
    char *sql = xasprintf("SELECT table_id, table_name, schema_version FROM "
                          "%s.ducklake_inlined_data_tables ORDER BY table_id, schema_version",
                          meta);
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t r = 0; r < t.nrows; r++) {
        lk_table *tb = table_for_row(c, &t, r);
        if (!tb)
            continue;
        tb->inlined = xrealloc(tb->inlined, (tb->ninlined + 1) * sizeof(lk_inlined));
        tb->inlined[tb->ninlined].name = xstrdup(duck_table_get(&t, r, 1));
        tb->inlined[tb->ninlined].schema_version = to_i64(duck_table_get(&t, r, 2), 0);
        tb->ninlined++;
    }
    duck_table_free(&t);
    return 0;
}

/* The live partition spec of each table. A spec with no key rows (what
 * RESET PARTITIONED BY writes) leaves the table unpartitioned. */
static int load_partitions(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *meta = lk_catdb_name(db);
    long long s = (long long)c->snapshot_id;
    char *sql = xasprintf("SELECT p.table_id, p.partition_id, k.column_id, k.\"transform\" FROM "
                          "%s.ducklake_partition_info p JOIN %s.ducklake_partition_column k USING "
                          "(partition_id) WHERE %lld >= p.begin_snapshot AND (%lld < "
                          "p.end_snapshot OR p.end_snapshot IS NULL) ORDER BY p.table_id, "
                          "k.partition_key_index",
                          meta, meta, s, s);
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t r = 0; r < t.nrows; r++) {
        lk_table *tb = table_for_row(c, &t, r);
        if (!tb)
            continue;
        tb->partition_id = to_i64(duck_table_get(&t, r, 1), -1);
        tb->keys = xrealloc(tb->keys, (tb->nkeys + 1) * sizeof(lk_partkey));
        tb->keys[tb->nkeys].column_id = to_i64(duck_table_get(&t, r, 2), 0);
        tb->keys[tb->nkeys].transform = xstrdup(duck_table_get(&t, r, 3));
        tb->nkeys++;
    }
    duck_table_free(&t);
    return 0;
}

/* The live sort order of each table (SET SORTED BY). RESET SORTED BY only
 * ends the live row, so a table without one is unsorted. */
static int load_sorts(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *meta = lk_catdb_name(db);
    long long s = (long long)c->snapshot_id;
    char *sql =
        xasprintf("SELECT i.table_id, i.sort_id, e.expression, e.dialect, e.sort_direction, "
                  "e.null_order FROM %s.ducklake_sort_info i JOIN %s.ducklake_sort_expression "
                  "e USING (sort_id) WHERE %lld >= i.begin_snapshot AND (%lld < "
                  "i.end_snapshot OR i.end_snapshot IS NULL) ORDER BY i.table_id, "
                  "i.sort_id, e.sort_key_index",
                  meta, meta, s, s);
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t r = 0; r < t.nrows; r++) {
        lk_table *tb = table_for_row(c, &t, r);
        if (!tb || !duck_table_get(&t, r, 2))
            continue;
        const char *dir = duck_table_get(&t, r, 4), *nulls = duck_table_get(&t, r, 5);
        const char *dialect = duck_table_get(&t, r, 3);
        tb->sort_id = to_i64(duck_table_get(&t, r, 1), -1);
        tb->sorts = xrealloc(tb->sorts, (tb->nsorts + 1) * sizeof(lk_sortkey));
        lk_sortkey *k = &tb->sorts[tb->nsorts++];
        k->expr = xstrdup(duck_table_get(&t, r, 2));
        k->dialect = xstrdup(dialect ? dialect : "duckdb");
        k->desc = dir && strcasecmp(dir, "DESC") == 0;
        k->nulls_first = nulls && strcasecmp(nulls, "NULLS_FIRST") == 0;
    }
    duck_table_free(&t);
    return 0;
}

/* COMMENT ON TABLE / VIEW / COLUMN, stored as 'comment' tags. */
static int load_comments(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *meta = lk_catdb_name(db);
    long long s = (long long)c->snapshot_id;
    char *sql = xasprintf("SELECT object_id, NULL::BIGINT, \"value\" FROM %s.ducklake_tag WHERE "
                          "\"key\" = 'comment' AND " VISIBLE " UNION ALL SELECT table_id, "
                          "column_id, \"value\" FROM %s.ducklake_column_tag WHERE \"key\" = "
                          "'comment' AND " VISIBLE,
                          meta, s, s, meta, s, s);
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t r = 0; r < t.nrows; r++) {
        lk_table *tb = table_for_row(c, &t, r);
        const char *v = duck_table_get(&t, r, 2);
        if (!tb && v && !duck_table_get(&t, r, 1)) { /* COMMENT ON VIEW */
            int64_t id = to_i64(duck_table_get(&t, r, 0), -1);
            for (size_t k = 0; k < c->nviews; k++)
                if (c->views[k].id == id) {
                    free(c->views[k].comment);
                    c->views[k].comment = xstrdup(v);
                }
        }
        if (!tb || !v)
            continue;
        if (!duck_table_get(&t, r, 1)) {
            free(tb->comment);
            tb->comment = xstrdup(v);
            continue;
        }
        lk_column *col = find_column(tb->cols, tb->ncols, to_i64(duck_table_get(&t, r, 1), -1));
        if (col) {
            free(col->comment);
            col->comment = xstrdup(v);
        }
    }
    duck_table_free(&t);
    return 0;
}

static int load_views(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *meta = lk_catdb_name(db);
    long long s = (long long)c->snapshot_id;
    char *sql =
        xasprintf("SELECT view_id, begin_snapshot, schema_id, view_uuid, view_name, \"sql\", "
                  "column_aliases FROM %s.ducklake_view WHERE " VISIBLE " ORDER BY view_id",
                  meta, s, s);
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t r = 0; r < t.nrows; r++) {
        lk_view *v = lk_catalog_add_view(c);
        v->id = to_i64(duck_table_get(&t, r, 0), 0);
        v->begin = to_i64(duck_table_get(&t, r, 1), 0);
        v->schema_id = to_i64(duck_table_get(&t, r, 2), 0);
        v->uuid = dup_or_null(duck_table_get(&t, r, 3));
        v->name = xstrdup(duck_table_get(&t, r, 4));
        v->sql = xstrdup(duck_table_get(&t, r, 5) ? duck_table_get(&t, r, 5) : "");
        v->aliases = xstrdup(duck_table_get(&t, r, 6) ? duck_table_get(&t, r, 6) : "");
    }
    duck_table_free(&t);
    return 0;
}

int lk_catalog_load(lk_catalog *out, lk_catdb *db, duckdb_connection con, int64_t snapshot)
{
    memset(out, 0, sizeof(*out));
    int rc = load_snapshot(out, db, con, snapshot);
    if (!rc)
        rc = load_schemas(out, db, con);
    if (!rc)
        rc = load_tables(out, db, con);
    if (!rc)
        rc = load_columns(out, db, con);
    if (!rc)
        rc = load_inlined(out, db, con);
    if (!rc)
        rc = load_views(out, db, con);
    if (!rc)
        rc = lk_catalog_load_macros(out, db, con);
    if (!rc)
        rc = load_partitions(out, db, con);
    if (!rc)
        rc = load_sorts(out, db, con);
    if (!rc)
        rc = load_comments(out, db, con);
    if (rc)
        lk_catalog_free(out);
    return rc;
}

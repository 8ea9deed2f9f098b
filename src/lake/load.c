/*
 * load.c — the catalog model of one snapshot, read from the catalog rows.
 *
 * Reads, for snapshot S (the latest when none is asked for), the rows live
 * at S — begin_snapshot <= S and (end_snapshot IS NULL or S < end_snapshot):
 *   ducklake_snapshot         the snapshot's schema_version and id counters;
 *   ducklake_schema           schemas (id, uuid, name, path);
 *   ducklake_table            tables of those schemas;
 *   ducklake_column           columns, nested ones under their parent_column;
 *   ducklake_inlined_data_tables  every inlined-data table of a table, one per
 *                             schema version (these rows carry no range);
 *   ducklake_view             views;
 *   ducklake_macro (+ _impl, _parameters)  macros, their implementations and
 *                             parameters (model_macro.c turns rows into structs);
 *   ducklake_partition_info / _column      the live partition spec;
 *   ducklake_sort_info / _expression       the live sort order;
 *   ducklake_tag / ducklake_column_tag     'comment' tags.
 * It writes nothing. Each query orders its rows so that one pass builds the
 * model: columns sort parents first (NULLS FIRST, and a parent's id is
 * always lower than its children's), so every child finds its parent.
 * Rows of a table not live at S (a dangling tag, say) are skipped.
 */
#include "lake/model.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define VISIBLE "%lld >= begin_snapshot AND (%lld < end_snapshot OR end_snapshot IS NULL)"

typedef void (*row_fn)(lk_catalog *c, const duck_table *t, size_t r);

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static int64_t to_i64(const char *s, int64_t dflt)
{
    return s ? strtoll(s, NULL, 10) : dflt;
}

static int is_true_or_null(const char *s)
{
    return !s || strcmp(s, "true") == 0;
}

/* Runs `sql` (owned: freed here) on the catalog and hands each row to `fn`. */
static int load_rows(lk_catalog *c, lk_catdb *db, duckdb_connection con, char *sql, row_fn fn)
{
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t r = 0; r < t.nrows; r++)
        fn(c, &t, r);
    duck_table_free(&t);
    return 0;
}

/* The table a loaded row (table_id in column 0) belongs to. */
static lk_table *table_for_row(lk_catalog *c, const duck_table *t, size_t r)
{
    int64_t id = to_i64(duck_table_get(t, r, 0), -1);
    return lk_catalog_table_edit(c, lk_catalog_table_by_id(c, id));
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

static int load_snapshot(lk_catalog *c, lk_catdb *db, duckdb_connection con, int64_t snap)
{
    duck_table t;
    int rc = snap < 0 ? lk_catdb_queryf(&t, db, con,
                                        "SELECT snapshot_id, schema_version, next_catalog_id, "
                                        "next_file_id FROM %s.ducklake_snapshot ORDER BY "
                                        "snapshot_id DESC LIMIT 1",
                                        lk_catdb_name(db))
                      : lk_catdb_queryf(&t, db, con,
                                        "SELECT snapshot_id, schema_version, next_catalog_id, "
                                        "next_file_id FROM %s.ducklake_snapshot WHERE "
                                        "snapshot_id = %lld",
                                        lk_catdb_name(db), (long long)snap);
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

/* How one result column fills one field of a model struct. */
typedef enum {
    F_I64,          /* int64_t, 0 for NULL */
    F_STR,          /* char *, never NULL in the catalog */
    F_STR_OR_EMPTY, /* char *, "" for NULL */
    F_STR_OR_NULL,  /* char *, NULL for NULL */
    F_TRUE_OR_NULL, /* int: 'true' or NULL (DuckLake's default) is 1 */
} field_kind;

typedef struct {
    size_t col; /* the column of the row */
    size_t off; /* offsetof the field */
    field_kind kind;
} field;

#define FIELD(col, type, member, kind)                                                             \
    {                                                                                              \
        col, offsetof(type, member), kind                                                          \
    }

/* Fills obj's fields from row r, one column each. */
static void read_fields(void *obj, const field *f, size_t n, const duck_table *t, size_t r)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = duck_table_get(t, r, f[i].col);
        void *slot = (char *)obj + f[i].off;
        switch (f[i].kind) {
        case F_I64:
            *(int64_t *)slot = to_i64(v, 0);
            break;
        case F_STR:
            *(char **)slot = xstrdup(v);
            break;
        case F_STR_OR_EMPTY:
            *(char **)slot = xstrdup(v ? v : "");
            break;
        case F_STR_OR_NULL:
            *(char **)slot = dup_or_null(v);
            break;
        case F_TRUE_OR_NULL:
            *(int *)slot = is_true_or_null(v);
            break;
        }
    }
}

/* The columns of each query below, in its SELECT order. */
static const field SCHEMA_FIELDS[] = {
    FIELD(0, lk_schema, id, F_I64),           FIELD(1, lk_schema, begin, F_I64),
    FIELD(2, lk_schema, uuid, F_STR_OR_NULL), FIELD(3, lk_schema, name, F_STR),
    FIELD(4, lk_schema, path, F_STR_OR_NULL), FIELD(5, lk_schema, path_rel, F_TRUE_OR_NULL),
};
static const field TABLE_FIELDS[] = {
    FIELD(0, lk_table, id, F_I64),
    FIELD(1, lk_table, begin, F_I64),
    FIELD(2, lk_table, schema_id, F_I64),
    FIELD(3, lk_table, uuid, F_STR_OR_NULL),
    FIELD(4, lk_table, name, F_STR),
    FIELD(5, lk_table, path, F_STR_OR_NULL),
    FIELD(6, lk_table, path_rel, F_TRUE_OR_NULL),
};
static const field VIEW_FIELDS[] = {
    FIELD(0, lk_view, id, F_I64),
    FIELD(1, lk_view, begin, F_I64),
    FIELD(2, lk_view, schema_id, F_I64),
    FIELD(3, lk_view, uuid, F_STR_OR_NULL),
    FIELD(4, lk_view, name, F_STR),
    FIELD(5, lk_view, sql, F_STR_OR_EMPTY),
    FIELD(6, lk_view, aliases, F_STR_OR_EMPTY),
};
/* column 0 is the table, column 8 the parent (column_row reads both) */
static const field COLUMN_FIELDS[] = {
    FIELD(1, lk_column, id, F_I64),
    FIELD(2, lk_column, begin, F_I64),
    FIELD(3, lk_column, name, F_STR),
    FIELD(4, lk_column, type, F_STR),
    FIELD(5, lk_column, initial_default, F_STR_OR_NULL),
    FIELD(6, lk_column, default_value, F_STR_OR_NULL),
    FIELD(7, lk_column, nulls_allowed, F_TRUE_OR_NULL),
    FIELD(9, lk_column, default_value_type, F_STR_OR_NULL),
};
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static void schema_row(lk_catalog *c, const duck_table *t, size_t r)
{
    read_fields(lk_catalog_add_schema(c), SCHEMA_FIELDS, COUNT_OF(SCHEMA_FIELDS), t, r);
}

static void table_row(lk_catalog *c, const duck_table *t, size_t r)
{
    lk_table *tb = lk_catalog_add_table(c);
    read_fields(tb, TABLE_FIELDS, COUNT_OF(TABLE_FIELDS), t, r);
    tb->partition_id = -1;
    tb->sort_id = -1;
}

static void column_row(lk_catalog *c, const duck_table *t, size_t r)
{
    lk_table *tb = table_for_row(c, t, r);
    if (!tb)
        return;
    int64_t parent = to_i64(duck_table_get(t, r, 8), -1);
    lk_column *col;
    if (parent < 0) {
        col = push_column(&tb->cols, &tb->ncols);
    } else {
        lk_column *p = find_column(tb->cols, tb->ncols, parent);
        if (!p)
            return;
        col = push_column(&p->children, &p->nchildren);
    }
    read_fields(col, COLUMN_FIELDS, COUNT_OF(COLUMN_FIELDS), t, r);
    col->parent = parent;
}

static void inlined_row(lk_catalog *c, const duck_table *t, size_t r)
{
    lk_table *tb = table_for_row(c, t, r);
    if (!tb)
        return;
    tb->inlined = xrealloc(tb->inlined, (tb->ninlined + 1) * sizeof(lk_inlined));
    tb->inlined[tb->ninlined].name = xstrdup(duck_table_get(t, r, 1));
    tb->inlined[tb->ninlined].schema_version = to_i64(duck_table_get(t, r, 2), 0);
    tb->ninlined++;
}

static void view_row(lk_catalog *c, const duck_table *t, size_t r)
{
    read_fields(lk_catalog_add_view(c), VIEW_FIELDS, COUNT_OF(VIEW_FIELDS), t, r);
}

/* A spec with no key rows (what RESET PARTITIONED BY writes) joins to no
 * row here, so the table stays unpartitioned. */
static void partition_row(lk_catalog *c, const duck_table *t, size_t r)
{
    lk_table *tb = table_for_row(c, t, r);
    if (!tb)
        return;
    tb->partition_id = to_i64(duck_table_get(t, r, 1), -1);
    tb->keys = xrealloc(tb->keys, (tb->nkeys + 1) * sizeof(lk_partkey));
    tb->keys[tb->nkeys].column_id = to_i64(duck_table_get(t, r, 2), 0);
    tb->keys[tb->nkeys].transform = xstrdup(duck_table_get(t, r, 3));
    tb->nkeys++;
}

/* RESET SORTED BY only ends the live row, so a table without one is
 * unsorted. */
static void sort_row(lk_catalog *c, const duck_table *t, size_t r)
{
    lk_table *tb = table_for_row(c, t, r);
    if (!tb || !duck_table_get(t, r, 2))
        return;
    const char *dir = duck_table_get(t, r, 4), *nulls = duck_table_get(t, r, 5);
    const char *dialect = duck_table_get(t, r, 3);
    tb->sort_id = to_i64(duck_table_get(t, r, 1), -1);
    tb->sorts = xrealloc(tb->sorts, (tb->nsorts + 1) * sizeof(lk_sortkey));
    lk_sortkey *k = &tb->sorts[tb->nsorts++];
    k->expr = xstrdup(duck_table_get(t, r, 2));
    k->dialect = xstrdup(dialect ? dialect : "duckdb");
    k->desc = dir && strcasecmp(dir, "DESC") == 0;
    k->nulls_first = nulls && strcasecmp(nulls, "NULLS_FIRST") == 0;
}

static void replace_comment(char **slot, const char *v)
{
    free(*slot);
    *slot = xstrdup(v);
}

/* COMMENT ON TABLE / VIEW / COLUMN: (object id, column id or NULL, text). */
static void comment_row(lk_catalog *c, const duck_table *t, size_t r)
{
    lk_table *tb = table_for_row(c, t, r);
    const char *v = duck_table_get(t, r, 2);
    if (!v)
        return;
    if (!tb) {
        int64_t id = to_i64(duck_table_get(t, r, 0), -1);
        for (size_t k = 0; k < c->nviews && !duck_table_get(t, r, 1); k++)
            if (c->views[k].id == id)
                replace_comment(&c->views[k].comment, v);
        return;
    }
    if (!duck_table_get(t, r, 1)) {
        replace_comment(&tb->comment, v);
        return;
    }
    lk_column *col = find_column(tb->cols, tb->ncols, to_i64(duck_table_get(t, r, 1), -1));
    if (col)
        replace_comment(&col->comment, v);
}

/* A query (owned) and what reads its rows. */
typedef struct {
    char *sql;
    row_fn fn;
} row_query;

/* Runs q[0..n) in their order (each builds on the rows before it), up to
 * the first failure; frees every query. */
static int load_queries(lk_catalog *c, lk_catdb *db, duckdb_connection con, row_query *q, size_t n)
{
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (!rc)
            rc = load_rows(c, db, con, q[i].sql, q[i].fn);
        else
            free(q[i].sql);
    }
    return rc;
}

static int load_live_rows(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *m = lk_catdb_name(db);
    long long s = (long long)c->snapshot_id;
    row_query q[] = {
        {xasprintf("SELECT schema_id, begin_snapshot, schema_uuid, schema_name, path, "
                   "path_is_relative FROM %s.ducklake_schema WHERE " VISIBLE " ORDER BY schema_id",
                   m, s, s),
         schema_row},
        {xasprintf("SELECT table_id, begin_snapshot, schema_id, table_uuid, "
                   "table_name, path, path_is_relative FROM %s.ducklake_table "
                   "WHERE " VISIBLE " ORDER BY table_id",
                   m, s, s),
         table_row},
        {xasprintf("SELECT table_id, column_id, begin_snapshot, column_name, "
                   "column_type, initial_default, default_value, nulls_allowed, "
                   "parent_column, default_value_type FROM %s.ducklake_column "
                   "WHERE " VISIBLE " ORDER BY table_id, parent_column NULLS "
                   "FIRST, column_order, column_id",
                   m, s, s),
         column_row},
        {xasprintf("SELECT table_id, table_name, schema_version FROM "
                   "%s.ducklake_inlined_data_tables ORDER BY table_id, "
                   "schema_version",
                   m),
         inlined_row},
        {xasprintf("SELECT view_id, begin_snapshot, schema_id, view_uuid, view_name, "
                   "\"sql\", column_aliases FROM %s.ducklake_view WHERE " VISIBLE
                   " ORDER BY view_id",
                   m, s, s),
         view_row},
    };
    return load_queries(c, db, con, q, COUNT_OF(q));
}

static int load_table_extras(lk_catalog *c, lk_catdb *db, duckdb_connection con)
{
    const char *m = lk_catdb_name(db);
    long long s = (long long)c->snapshot_id;
    row_query q[] = {
        {xasprintf("SELECT m.macro_id, m.begin_snapshot, m.schema_id, m.macro_name, i.impl_id, "
                   "i.\"sql\", i.\"type\", p.column_id, p.parameter_name, p.parameter_type, "
                   "p.default_value, p.default_value_type FROM %s.ducklake_macro m JOIN "
                   "%s.ducklake_macro_impl i ON i.macro_id = m.macro_id LEFT JOIN "
                   "%s.ducklake_macro_parameters p ON p.macro_id = i.macro_id AND p.impl_id = "
                   "i.impl_id WHERE %lld >= m.begin_snapshot AND (%lld < m.end_snapshot OR "
                   "m.end_snapshot IS NULL) ORDER BY m.macro_id, i.impl_id, p.column_id",
                   m, m, m, s, s),
         lk_catalog_add_macro_row},
        {xasprintf("SELECT p.table_id, p.partition_id, k.column_id, k.\"transform\" "
                   "FROM %s.ducklake_partition_info p JOIN "
                   "%s.ducklake_partition_column k USING (partition_id) WHERE %lld "
                   ">= p.begin_snapshot AND (%lld < p.end_snapshot OR "
                   "p.end_snapshot IS NULL) ORDER BY p.table_id, "
                   "k.partition_key_index",
                   m, m, s, s),
         partition_row},
        {xasprintf("SELECT i.table_id, i.sort_id, e.expression, e.dialect, "
                   "e.sort_direction, e.null_order FROM %s.ducklake_sort_info i "
                   "JOIN %s.ducklake_sort_expression e USING (sort_id) WHERE %lld "
                   ">= i.begin_snapshot AND (%lld < i.end_snapshot OR "
                   "i.end_snapshot IS NULL) ORDER BY i.table_id, i.sort_id, "
                   "e.sort_key_index",
                   m, m, s, s),
         sort_row},
        {xasprintf("SELECT object_id, NULL::BIGINT, \"value\" FROM %s.ducklake_tag "
                   "WHERE \"key\" = 'comment' AND " VISIBLE " UNION ALL SELECT "
                   "table_id, column_id, \"value\" FROM %s.ducklake_column_tag "
                   "WHERE \"key\" = 'comment' AND " VISIBLE,
                   m, s, s, m, s, s),
         comment_row},
    };
    return load_queries(c, db, con, q, COUNT_OF(q));
}

int lk_catalog_load(lk_catalog *out, lk_catdb *db, duckdb_connection con, int64_t snapshot)
{
    memset(out, 0, sizeof(*out));
    int rc = load_snapshot(out, db, con, snapshot);
    if (!rc)
        rc = load_live_rows(out, db, con);
    if (!rc)
        rc = load_table_extras(out, db, con);
    if (rc)
        lk_catalog_free(out);
    return rc;
}

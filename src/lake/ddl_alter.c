/*
 * ddl_alter.c — ALTER TABLE as DuckLake catalog rows (see ddl.h).
 *
 * A column change ends the column's live ducklake_column rows and writes
 * new ones at the transaction's snapshot: ADD COLUMN (new column ids from
 * next_catalog_id, with initial_default for older rows), DROP / RENAME
 * COLUMN, SET / DROP DEFAULT, SET / DROP NOT NULL, SET DATA TYPE (a
 * widening keeps the column id in a new row; a struct evolves field by
 * field, matched by name). The changes of the table itself — RENAME TO,
 * SET / RESET PARTITIONED BY and SORTED BY — are ddl_alter_table.c's;
 * lk_alter_table here routes every ALTER. Every change bumps the schema
 * version (an altered_table:<id> change token) and checks what DuckLake
 * refuses before anything is recorded, so a refused ALTER leaves no row.
 */
#include "lake/ddl_alter_int.h"
#include "lake/ddl_int.h"
#include "lake/idorder.h"
#include "lake/macro.h"
#include "lake/sort.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/colstats.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/uuid.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- ALTER TABLE ---- */

/* A new column named `name` in `t` (ADD COLUMN, RENAME COLUMN … TO):
 * refused when it is reserved and the table's inlining limit is not 0. */
static int check_new_name(lk_lake *lake, duckdb_connection con, const lk_table *t, const char *name)
{
    if (lk_column_name_reserved(name) && lk_lake_inline_limit(lake, con, t) > 0)
        return ddl_reserved_error(name);
    return 0;
}

/* ---- turning inlining on ---- */

static int names_inlinable(const lk_table *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (lk_column_name_reserved(t->cols[i].name))
            return tarn_error_set(TARN_EINVALID,
                                  "Binder Error: Cannot enable data inlining for table \"%s\". "
                                  "Column \"%s\" conflicts with a reserved DuckLake internal "
                                  "column name used for inlining. To enable inlining for this "
                                  "table, rename or drop column \"%s\".",
                                  t->name, t->cols[i].name, t->cols[i].name);
    return 0;
}

/* Whether a narrower option than the one being set keeps `t`'s inlining
 * off: its table's (and, for a global option, its schema's) limit of 0. */
static int kept_off(lk_lake *lake, duckdb_connection con, const lk_table *t, int global)
{
    const char *v = lk_lake_option_at(lake, con, "data_inlining_row_limit", 0, t->id);
    if (!v && global)
        v = lk_lake_option_at(lake, con, "data_inlining_row_limit", 1, t->schema_id);
    return v && strtoll(v, NULL, 10) == 0;
}

int lk_inlining_check(lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                      const lk_table *table, int64_t schema_id)
{
    if (table)
        return names_inlinable(table);
    for (size_t i = 0; i < cat->ntables; i++) {
        const lk_table *t = &cat->tables[i];
        if (schema_id >= 0 && t->schema_id != schema_id)
            continue;
        if (!kept_off(lake, con, t, schema_id < 0) && names_inlinable(t))
            return tarn_error_code();
    }
    return 0;
}

static void end_column_rows(lk_lake *lake, const lk_table *t, const lk_column *c, int recursive)
{
    lk_txn_sql(lake->txn,
               "UPDATE %s.ducklake_column SET end_snapshot = %lld WHERE table_id = %lld AND "
               "column_id = %lld AND end_snapshot IS NULL",
               lake->meta, (long long)lake->txn->snapshot_id, (long long)t->id, (long long)c->id);
    for (size_t i = 0; recursive && i < c->nchildren; i++)
        end_column_rows(lake, t, &c->children[i], 1);
}

/* Ends the column's live row and writes its new version (same id). */
static void rewrite_column_row(lk_lake *lake, const lk_table *t, lk_column *c)
{
    end_column_rows(lake, t, c, 0);
    lk_column copy = *c;
    copy.nchildren = 0; /* children rows stay as they are */
    c->begin = lake->txn->snapshot_id;
    ddl_column_rows(lake, t, &copy);
}

static int64_t next_column_id(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    int64_t m = 0;
    if (lk_catdb_query_int64f(&m, NULL, &lake->db, con,
                              "SELECT COALESCE(max(column_id), 0) FROM %s.ducklake_column WHERE "
                              "table_id = %lld",
                              lake->meta, (long long)t->id) != 0)
        tarn_error_clear();
    int64_t model = lk_table_max_column_id(t);
    return (m > model ? m : model) + 1;
}

/* DuckLake allows a type change when the new type is what DuckDB would
 * combine the two into (LogicalType::TryGetMaxLogicalType): TINYINT →
 * HUGEINT, INTEGER → DOUBLE, TIMESTAMP → TIMESTAMPTZ, … but not INTEGER →
 * VARCHAR or DOUBLE → FLOAT. DuckDB answers through a list of both. */
static int widening_ok(duckdb_connection con, const lk_column *from, const lk_column *to)
{
    if (strcmp(from->type, to->type) == 0)
        return 1;
    tarn_buf a = {0}, b = {0};
    lk_type_to_sql(&a, from);
    lk_type_to_sql(&b, to);
    char *q = xasprintf("SELECT typeof([NULL::%s, NULL::%s][1]) = typeof(NULL::%s)", buf_cstr(&a),
                        buf_cstr(&b), buf_cstr(&b));
    char *ok = NULL;
    if (duck_query_string(&ok, con, q) != 0)
        tarn_error_clear(); /* no common type: not a promotion */
    int yes = ok && strcmp(ok, "true") == 0;
    free(ok);
    free(q);
    buf_free(&a);
    buf_free(&b);
    return yes;
}

static int shape_column(lk_column *out, duckdb_connection con, const char *shape)
{
    lk_table tmp = {0};
    int rc = ddl_read_shape(&tmp, con, shape);
    if (!rc)
        rc = ddl_read_constraints(&tmp, con, "__tarn_shape");
    if (!rc && tmp.ncols != 1)
        rc = tarn_error_set(TARN_EINVALID, "expected one column definition");
    if (!rc)
        lk_column_copy(out, &tmp.cols[0]);
    lk_table_free(&tmp);
    return rc;
}

static void renumber(lk_column *c, int64_t *next, int64_t parent)
{
    c->id = (*next)++;
    c->parent = parent;
    for (size_t i = 0; i < c->nchildren; i++)
        renumber(&c->children[i], next, c->id);
}

/* The column at `path` (names from the top level down), or NULL. */
static lk_column *column_at(lk_table *t, const char *const *path, size_t n)
{
    lk_column *cols = t->cols;
    size_t ncols = t->ncols;
    lk_column *c = NULL;
    for (size_t i = 0; i < n; i++) {
        c = NULL;
        for (size_t k = 0; k < ncols; k++)
            if (strcasecmp(cols[k].name, path[i]) == 0)
                c = &cols[k];
        if (!c)
            return NULL;
        cols = c->children;
        ncols = c->nchildren;
    }
    return c;
}

static void mark_added_field(lk_column *c)
{
    /* DuckLake records fields added to a struct as NOT NULL (measured) */
    c->nulls_allowed = 0;
    for (size_t i = 0; i < c->nchildren; i++)
        mark_added_field(&c->children[i]);
}

/* ADD COLUMN s.f / DROP COLUMN s.f / RENAME COLUMN s.f TO g on a field of
 * a STRUCT (through list elements and map values: ls.element.f). */
static int alter_nested(lk_lake *lake, duckdb_connection con, lk_table *t, const lk_alter *op)
{
    lk_column *parent = column_at(t, op->path, op->npath - 1);
    const char *field = op->path[op->npath - 1];
    if (!parent || strcmp(parent->type, "struct") != 0)
        return tarn_error_set(TARN_EINVALID,
                              "Binder Error: \"%s\" is not a STRUCT column of table %s: cannot "
                              "alter its field \"%s\"",
                              op->path[op->npath - 2], t->name, field);
    lk_column *c = column_at(t, op->path, op->npath);
    if (op->kind == LK_ALTER_ADD_COLUMN) {
        if (c)
            return op->if_not_exists
                       ? 0
                       : tarn_error_set(TARN_EINVALID, "Catalog Error: field %s already exists",
                                        field);
        lk_column nc;
        int rc = shape_column(&nc, con, op->shape);
        if (rc)
            return rc;
        int64_t next = next_column_id(lake, con, t);
        renumber(&nc, &next, parent->id);
        mark_added_field(&nc);
        ddl_set_begin(&nc, lake->txn->snapshot_id);
        parent->children = xrealloc(parent->children, (parent->nchildren + 1) * sizeof(lk_column));
        parent->children[parent->nchildren++] = nc;
        ddl_column_rows(lake, t, &parent->children[parent->nchildren - 1]);
        return 0;
    }
    if (!c)
        return op->if_exists ? 0
                             : tarn_error_set(TARN_EINVALID,
                                              "Binder Error: field \"%s\" does not exist", field);
    if (op->kind == LK_ALTER_DROP_COLUMN) {
        if (parent->nchildren == 1)
            return tarn_error_set(TARN_EINVALID, "cannot drop the last field of a STRUCT");
        end_column_rows(lake, t, c, 1);
        size_t idx = (size_t)(c - parent->children);
        lk_column_free(c);
        memmove(c, c + 1, (parent->nchildren - idx - 1) * sizeof(lk_column));
        parent->nchildren--;
        return 0;
    }
    if (op->kind == LK_ALTER_RENAME_COLUMN) {
        free(c->name);
        c->name = xstrdup(op->new_name);
        /* … and a renamed field's new row is NOT NULL without a default
         * type (measured) */
        c->nulls_allowed = 0;
        free(c->default_value_type);
        c->default_value_type = xstrdup("");
        rewrite_column_row(lake, t, c);
        return 0;
    }
    return tarn_error_set(TARN_EUNSUPPORTED, "this change of a STRUCT field is not supported");
}

/* Applies an ALTER to the transaction's pending inlined rows of `t` too,
 * so they follow the table's new layout. */
static int alter_pending(lk_lake *lake, duckdb_connection con, const lk_table *t,
                         const char *action)
{
    if (!lk_write_pending_exists(lake, con, t->id))
        return 0;
    char *pins = lk_txn_pending_inserts(lake, t->id);
    char *sql = xasprintf("ALTER TABLE %s %s", pins, action);
    int rc = duck_exec(con, sql);
    free(sql);
    free(pins);
    return rc;
}

/* The pending rows of `t` take column c's new type (SET DATA TYPE). */
static int pending_set_type(lk_lake *lake, duckdb_connection con, const lk_table *t,
                            const lk_column *c)
{
    tarn_buf a = {0};
    buf_puts(&a, "ALTER COLUMN ");
    quote_ident(&a, c->name);
    buf_puts(&a, " SET DATA TYPE ");
    lk_type_to_sql(&a, c);
    int rc = alter_pending(lake, con, t, buf_cstr(&a));
    buf_free(&a);
    return rc;
}

/* The rows this transaction inserted before an ADD COLUMN … DEFAULT now
 * hold the default: DuckLake's table statistics count it (its pending
 * rows are altered in place), so fold the pending rows' stats in again
 * (table-level stats keep bounds and null flags, not counts). */
static int pending_default_stats(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    lk_table_delta *d = lk_txn_delta(lake, con, t->id);
    char *pins = lk_txn_pending_inserts(lake, t->id);
    /* no pending rows left (all deleted): no values of the default */
    char *q = xasprintf("SELECT count(*) FROM %s", pins);
    int64_t n = 0;
    int rc = duck_query_int64(&n, NULL, con, q);
    free(q);
    if (rc || n == 0) {
        free(pins);
        return rc;
    }
    lk_stats_set st;
    lk_stats_init(&st, t);
    rc = lk_stats_from_rows(&st, con, pins, t);
    if (!rc)
        rc = lk_stats_accumulate(&d->stats, &st, con);
    lk_stats_free(&st);
    free(pins);
    return rc;
}

static int alter_add(lk_lake *lake, duckdb_connection con, lk_table *t, const lk_alter *op)
{
    lk_column nc;
    int rc = shape_column(&nc, con, op->shape);
    if (rc)
        return rc;
    if (!ddl_top_column(t, nc.name, NULL) && check_new_name(lake, con, t, nc.name)) {
        lk_column_free(&nc);
        return tarn_error_code();
    }
    if (ddl_top_column(t, nc.name, NULL)) {
        lk_column_free(&nc);
        if (op->if_not_exists)
            return 0;
        return tarn_error_set(TARN_EINVALID,
                              "Catalog Error: Column with name %s already exists in table %s",
                              op->column ? op->column : "", t->name);
    }
    if (nc.default_value_type && strcmp(nc.default_value_type, "expression") == 0) {
        lk_column_free(&nc);
        /* the rows already there would need the expression's value */
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "Not implemented Error: We cannot add a column with a non-literal "
                              "default value. Add the column and then explicitly set the default "
                              "for new values using \"ALTER ... SET DEFAULT\"");
    }
    int64_t next = next_column_id(lake, con, t);
    renumber(&nc, &next, -1);
    ddl_set_begin(&nc, lake->txn->snapshot_id);
    t->cols = xrealloc(t->cols, (t->ncols + 1) * sizeof(lk_column));
    t->cols[t->ncols++] = nc;
    ddl_column_rows(lake, t, &t->cols[t->ncols - 1]);
    lk_column *c = &t->cols[t->ncols - 1];
    tarn_buf a = {0};
    buf_puts(&a, "ADD COLUMN ");
    quote_ident(&a, c->name);
    buf_putc(&a, ' ');
    lk_type_to_sql(&a, c);
    if (c->initial_default) {
        buf_puts(&a, " DEFAULT ");
        quote_literal(&a, c->initial_default);
    }
    int rc2 = alter_pending(lake, con, t, buf_cstr(&a));
    buf_free(&a);
    if (!rc2 && c->initial_default && lk_write_pending_exists(lake, con, t->id))
        rc2 = pending_default_stats(lake, con, t);
    return rc2;
}

/* A sort order names columns: after a rename it names the new one, and
 * DuckLake writes it again under a new sort id. */
static int sort_renamed(lk_lake *lake, lk_table *t, const char *old_name, const char *new_name)
{
    int changed = 0;
    int rc = lk_sort_rename_column(t, old_name, new_name, &changed);
    if (rc || !changed)
        return rc;
    lk_txn *txn = lake->txn;
    t->sort_id = lk_txn_new_catalog_id(txn);
    lk_schema *sc = lk_catalog_schema_by_id(&txn->cat, t->schema_id);
    lk_idorder_entry_id(txn->ids, sc ? sc->name : "main", t->name, t->sort_id);
    lk_ids_add(&txn->sort_changed, &txn->nsort_changed, t->id);
    return 0;
}

/* The type error of a change DuckLake does not allow. */
static int not_widening(const char *name, const lk_column *from, const lk_column *to)
{
    tarn_buf a = {0}, b = {0};
    lk_type_to_sql(&a, from);
    lk_type_to_sql(&b, to);
    int rc = tarn_error_set(TARN_EINVALID,
                            "Catalog Error: Cannot change type of column %s from %s to %s - only "
                            "widening type promotions are allowed",
                            name, buf_cstr(&a), buf_cstr(&b));
    buf_free(&a);
    buf_free(&b);
    return rc;
}

static int evolve(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_column *src,
                  const lk_column *target, int64_t *next);

static int kind_error(const lk_column *src, const lk_column *target)
{
    tarn_buf a = {0}, b = {0};
    lk_type_to_sql(&a, src);
    lk_type_to_sql(&b, target);
    int rc = tarn_error_set(TARN_EUNSUPPORTED,
                            "Not implemented Error: Type evolution is not supported from type %s "
                            "to type %s",
                            buf_cstr(&a), buf_cstr(&b));
    buf_free(&a);
    buf_free(&b);
    return rc;
}

/* The errors evolve() would meet, found before it writes anything. */
static int evolve_check(duckdb_connection con, const lk_column *src, const lk_column *target)
{
    if (strcmp(src->type, target->type) != 0)
        return kind_error(src, target);
    for (size_t i = 0; i < target->nchildren; i++) {
        const lk_column *tc = &target->children[i];
        for (size_t k = 0; k < src->nchildren; k++) {
            const lk_column *sc = &src->children[k];
            if (strcasecmp(sc->name, tc->name) != 0)
                continue;
            int rc = 0;
            if (sc->nchildren)
                rc = evolve_check(con, sc, tc);
            else if (strcmp(sc->type, tc->type) != 0 &&
                     (lk_type_is_nested(tc->type) || !widening_ok(con, sc, tc)))
                rc = not_widening(sc->name, sc, tc);
            if (rc)
                return rc;
            break;
        }
    }
    return 0;
}

/* A field of the new type that the old one has under the same name:
 * DuckLake's TypePromotion. A nested field evolves in turn; a leaf of
 * another type is promoted (widening only) under its id, its new row NOT
 * NULL without a default type, as DuckLake writes a promoted field. */
static int promote(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_column *src,
                   const lk_column *target, int64_t *next)
{
    if (src->nchildren)
        return evolve(lake, con, t, src, target, next);
    if (strcmp(src->type, target->type) == 0)
        return 0;
    if (lk_type_is_nested(target->type) || !widening_ok(con, src, target))
        return not_widening(src->name, src, target);
    free(src->type);
    src->type = xstrdup(target->type);
    src->nulls_allowed = 0;
    free(src->default_value_type);
    src->default_value_type = xstrdup("");
    free(src->initial_default);
    src->initial_default = NULL;
    rewrite_column_row(lake, t, src);
    return 0;
}

/* SET DATA TYPE from one nested type to another of the same kind
 * (DuckLake's GetNestedEvolution): children are matched by name; a new one
 * gets new column ids (and rows, nullable), a missing one's rows end, a
 * matched one is promoted. The parent's own row stays. */
static int evolve(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_column *src,
                  const lk_column *target, int64_t *next)
{
    if (strcmp(src->type, target->type) != 0)
        return kind_error(src, target);
    lk_column *kids = xcalloc(target->nchildren + 1, sizeof(lk_column));
    int *used = xcalloc(src->nchildren + 1, sizeof(int));
    int rc = 0;
    size_t n = 0;
    for (size_t i = 0; i < target->nchildren && !rc; i++) {
        const lk_column *tc = &target->children[i];
        size_t k = 0;
        while (k < src->nchildren && (used[k] || strcasecmp(src->children[k].name, tc->name) != 0))
            k++;
        if (k < src->nchildren) {
            used[k] = 1;
            rc = promote(lake, con, t, &src->children[k], tc, next);
            kids[n++] = src->children[k];
            continue;
        }
        lk_column_copy(&kids[n], tc);
        renumber(&kids[n], next, src->id);
        ddl_set_begin(&kids[n], lake->txn->snapshot_id);
        ddl_column_rows(lake, t, &kids[n]);
        n++;
    }
    for (size_t k = 0; k < src->nchildren; k++) {
        if (used[k])
            continue;
        if (!rc)
            end_column_rows(lake, t, &src->children[k], 1);
        lk_column_free(&src->children[k]);
    }
    free(used);
    free(src->children);
    src->children = kids;
    src->nchildren = n;
    return rc;
}

/* SET DATA TYPE of a nested column to another nested type: its fields
 * evolve (evolve()), the pending rows of this transaction follow. */
static int evolve_column(lk_lake *lake, duckdb_connection con, lk_table *t, lk_column *c,
                         lk_column *target)
{
    int rc = evolve_check(con, c, target);
    int64_t next = next_column_id(lake, con, t);
    if (!rc)
        rc = evolve(lake, con, t, c, target, &next);
    lk_column_free(target);
    if (rc)
        return rc;
    return pending_set_type(lake, con, t, c);
}

/* DROP COLUMN: refused for the last column and a partition or sort key. */
static int drop_column(lk_lake *lake, duckdb_connection con, lk_table *t, lk_column *c, size_t idx)
{
    if (t->ncols == 1)
        return tarn_error_set(TARN_EINVALID,
                              "Catalog Error: Cannot drop column: table only has one column "
                              "remaining!");
    for (size_t k = 0; k < t->nkeys; k++)
        if (t->keys[k].column_id == c->id)
            return tarn_error_set(TARN_EINVALID,
                                  "Catalog Error: Cannot drop column \"%s\" - the table is "
                                  "partitioned by this column. Reset or change the "
                                  "partitioning on this table in order to drop this column",
                                  c->name);
    int rc = lk_sort_uses_column(t, c->name);
    if (rc)
        return rc < 0 ? rc
                      : tarn_error_set(TARN_EINVALID,
                                       "Catalog Error: Cannot drop column \"%s\" - the table "
                                       "is sorted by this column. Reset or change the sort "
                                       "order on this table in order to drop this column",
                                       c->name);
    end_column_rows(lake, t, c, 1);
    tarn_buf a = {0};
    buf_puts(&a, "DROP COLUMN ");
    quote_ident(&a, c->name);
    rc = alter_pending(lake, con, t, buf_cstr(&a));
    buf_free(&a);
    if (rc)
        return rc;
    lk_column_free(c);
    memmove(c, c + 1, (t->ncols - idx - 1) * sizeof(lk_column));
    t->ncols--;
    return 0;
}

/* RENAME COLUMN … TO: the pending rows and the sort order follow. */
static int rename_column(lk_lake *lake, duckdb_connection con, lk_table *t, lk_column *c,
                         const char *new_name)
{
    if (ddl_top_column(t, new_name, NULL))
        return tarn_error_set(TARN_EINVALID, "Catalog Error: Column with name %s already exists",
                              new_name);
    if (check_new_name(lake, con, t, new_name))
        return tarn_error_code();
    tarn_buf a = {0};
    buf_puts(&a, "RENAME COLUMN ");
    quote_ident(&a, c->name);
    buf_puts(&a, " TO ");
    quote_ident(&a, new_name);
    int rc = alter_pending(lake, con, t, buf_cstr(&a));
    buf_free(&a);
    if (!rc)
        rc = sort_renamed(lake, t, c->name, new_name);
    if (rc)
        return rc;
    free(c->name);
    c->name = xstrdup(new_name);
    return 0;
}

/* SET DATA TYPE: a struct evolves field by field (its own rows); any
 * other type only widens. 1 when the change wrote its rows itself. */
static int set_type(lk_lake *lake, duckdb_connection con, lk_table *t, lk_column *c,
                    const char *shape)
{
    lk_column nc;
    int rc = shape_column(&nc, con, shape);
    if (rc)
        return rc;
    if (lk_type_is_nested(c->type) && lk_type_is_nested(nc.type)) {
        rc = evolve_column(lake, con, t, c, &nc);
        return rc ? rc : 1;
    }
    if (lk_type_is_nested(c->type) || lk_type_is_nested(nc.type) || !widening_ok(con, c, &nc)) {
        tarn_buf a = {0}, b = {0};
        lk_type_to_sql(&a, c);
        lk_type_to_sql(&b, &nc);
        rc = tarn_error_set(TARN_EINVALID,
                            "Catalog Error: Cannot change type of column %s from %s to %s - "
                            "only widening type promotions are allowed",
                            c->name, buf_cstr(&a), buf_cstr(&b));
        buf_free(&a);
        buf_free(&b);
        lk_column_free(&nc);
        return rc;
    }
    free(c->type);
    c->type = xstrdup(nc.type);
    lk_column_free(&nc);
    return pending_set_type(lake, con, t, c);
}

/* SET DEFAULT: an expression (round(pi()), now()) is kept as one: new
 * rows evaluate it, old rows keep what they have. DuckLake takes one only
 * for a column whose live committed row began with the table's (made with
 * the table, not altered since); for any other it refuses as for ADD
 * COLUMN. */
static int set_default(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_column *c,
                       const char *shape)
{
    lk_column nc;
    int rc = shape_column(&nc, con, shape);
    if (rc)
        return rc;
    if (nc.default_value_type && strcmp(nc.default_value_type, "expression") == 0 &&
        (c->begin != t->begin || t->begin >= lake->txn->snapshot_id)) {
        lk_column_free(&nc);
        return tarn_error_set(TARN_EUNSUPPORTED,
                              "Not implemented Error: We cannot add a column with a "
                              "non-literal default value. Add the column and then explicitly "
                              "set the default for new values using \"ALTER ... SET DEFAULT\"");
    }
    free(c->default_value);
    free(c->default_value_type);
    c->default_value = nc.default_value ? xstrdup(nc.default_value) : xstrdup("NULL");
    c->default_value_type = xstrdup(nc.default_value_type ? nc.default_value_type : "literal");
    lk_column_free(&nc);
    return 0;
}

/* SET / DROP NOT NULL: refused when the column already is so. */
static int set_nulls(lk_column *c, int allowed)
{
    if (!allowed == !c->nulls_allowed)
        return tarn_error_set(TARN_EINVALID,
                              allowed ? "Catalog Error: Cannot DROP NULL on column %s - it has "
                                        "no NOT NULL constraint defined"
                                      : "Catalog Error: Cannot SET NOT NULL on column %s - it "
                                        "already has a NOT NULL constraint",
                              c->name);
    c->nulls_allowed = allowed;
    return 0;
}

static int alter_column(lk_lake *lake, duckdb_connection con, lk_table *t, const lk_alter *op)
{
    size_t idx = 0;
    lk_column *c = ddl_top_column(t, op->column, &idx);
    if (!c) {
        if (op->if_exists)
            return 0;
        return tarn_error_set(TARN_EINVALID,
                              "Binder Error: Table \"%s\" does not have a column with name \"%s\"",
                              t->name, op->column);
    }
    int rc = 0;
    switch (op->kind) {
    case LK_ALTER_DROP_COLUMN:
        return drop_column(lake, con, t, c, idx);
    case LK_ALTER_RENAME_COLUMN:
        rc = rename_column(lake, con, t, c, op->new_name);
        break;
    case LK_ALTER_SET_TYPE:
        rc = set_type(lake, con, t, c, op->shape);
        if (rc > 0)
            return 0; /* the struct's evolution wrote its rows */
        break;
    case LK_ALTER_SET_DEFAULT:
        rc = set_default(lake, con, t, c, op->shape);
        break;
    case LK_ALTER_DROP_DEFAULT:
        free(c->default_value);
        free(c->default_value_type);
        c->default_value = xstrdup("NULL");
        c->default_value_type = xstrdup("literal");
        break;
    case LK_ALTER_SET_NOT_NULL:
    case LK_ALTER_DROP_NOT_NULL:
        rc = set_nulls(c, op->kind == LK_ALTER_DROP_NOT_NULL);
        break;
    default:
        break;
    }
    if (rc)
        return rc;
    rewrite_column_row(lake, t, c);
    return 0;
}

static int check_not_null(lk_lake *lake, duckdb_connection con, const lk_table *t,
                          const char *column)
{
    lk_schema *sc = lk_catalog_schema_by_id(&lake->txn->cat, t->schema_id);
    tarn_buf b = {0};
    buf_puts(&b, "SELECT count(*) FROM ");
    quote_qualified(&b, lake->alias, sc ? sc->name : "main", t->name);
    buf_puts(&b, " WHERE ");
    quote_ident(&b, column);
    buf_puts(&b, " IS NULL");
    int64_t n = 0;
    int rc = duck_query_int64(&n, NULL, con, buf_cstr(&b));
    buf_free(&b);
    if (!rc && n > 0)
        rc = tarn_error_set(TARN_EINVALID,
                            "Constraint Error: cannot SET NOT NULL on column \"%s\": it has %lld "
                            "NULL values",
                            column, (long long)n);
    return rc;
}

int lk_alter_table(lk_lake *lake, duckdb_connection con, const char *schema, const char *name,
                   const lk_alter *op)
{
    lk_txn *txn = lake->txn;
    lk_table *t = lk_catalog_table_edit(&txn->cat, lk_catalog_table_named(&txn->cat, schema, name));
    if (!t)
        return tarn_error_set(TARN_ENOTFOUND,
                              "Catalog Error: Table with name %s does not exist in schema \"%s\" "
                              "of lake \"%s\"",
                              name, schema, lake->alias);
    if (op->kind == LK_ALTER_RENAME_TABLE) {
        int rc = ddl_rename_table(lake, t, op->new_name);
        if (!rc) {
            lk_idorder_entry_renamed(txn->ids, schema, name, op->new_name);
            lk_txn_views_all(txn);
        }
        return rc;
    }
    lk_idorder_entry_touched(txn->ids, schema, name);
    lk_txn_view_dirty(txn, t->id);
    if (op->kind == LK_ALTER_SET_SORT) {
        int rc = ddl_set_sort(lake, t, op);
        if (!rc)
            ddl_altered(lake, t);
        return rc;
    }
    if (op->kind == LK_ALTER_SET_PARTITION) {
        int rc = ddl_set_partition(lake, t, op);
        if (rc)
            return rc < 0 ? rc : 0;
        ddl_layout_changed(lake, t, 1);
        ddl_altered(lake, t);
        return 0;
    }
    int rc = 0;
    if (op->kind == LK_ALTER_SET_NOT_NULL)
        rc = check_not_null(lake, con, t, op->column);
    if (!rc && op->npath > 1)
        rc = alter_nested(lake, con, t, op);
    else if (!rc)
        rc = op->kind == LK_ALTER_ADD_COLUMN ? alter_add(lake, con, t, op)
                                             : alter_column(lake, con, t, op);
    if (rc)
        return rc;
    int columns_changed = op->kind == LK_ALTER_ADD_COLUMN || op->kind == LK_ALTER_DROP_COLUMN ||
                          op->kind == LK_ALTER_RENAME_COLUMN || op->kind == LK_ALTER_SET_TYPE;
    ddl_layout_changed(lake, t, columns_changed);
    ddl_altered(lake, t);
    return 0;
}

/*
 * colstats.c — leaf column statistics and their table-level merge (see
 * colstats.h).
 *
 * Catalog rows: reads and, in the commit's batch, updates or inserts the
 * table's ducklake_table_column_stats rows (contains_null, contains_nan,
 * min_value, max_value per column); the per-file rows
 * (ducklake_file_column_stats) are computed here and written by write.c.
 */
#include "lake/colstats.h"

#include "duck/duck.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* DuckLake orders BLOB and INTERVAL bounds by their text, not their value
 * (measured: an INTERVAL column's max is '36:00:00' over '1 year …'). */
static int compares_as_text(const char *type)
{
    return strcmp(type, "varchar") == 0 || strcmp(type, "blob") == 0 ||
           strcmp(type, "json") == 0 || strcmp(type, "uuid") == 0 ||
           strcmp(type, "interval") == 0;
}

static void push_leaf(lk_stats_set *s, const lk_column *c, const char *path)
{
    s->leaves = xrealloc(s->leaves, (s->n + 1) * sizeof(lk_leaf_stats));
    lk_leaf_stats *l = &s->leaves[s->n++];
    memset(l, 0, sizeof(*l));
    l->col = c;
    l->col_id = c->id;
    tarn_buf ty = {0};
    lk_type_to_sql(&ty, c);
    l->sql_type = buf_detach(&ty);
    l->text_order = compares_as_text(c->type);
    l->path = xstrdup(path);
    l->contains_nan = -1;
    if (strcmp(c->type, "geometry") == 0) {
        l->geo = xmalloc(sizeof(lk_geo_stats));
        lk_geo_init(l->geo);
    }
    if (strcmp(c->type, "variant") == 0)
        l->variant = xcalloc(1, sizeof(lk_variant_stats));
}

static void walk(lk_stats_set *s, const lk_column *c, const char *prefix)
{
    tarn_buf p = {0};
    if (prefix) {
        buf_puts(&p, prefix);
        buf_putc(&p, '.');
    }
    quote_ident(&p, c->name);
    if (c->nchildren == 0)
        push_leaf(s, c, buf_cstr(&p));
    for (size_t i = 0; i < c->nchildren; i++)
        walk(s, &c->children[i], buf_cstr(&p));
    buf_free(&p);
}

void lk_stats_init(lk_stats_set *s, const lk_table *t)
{
    memset(s, 0, sizeof(*s));
    for (size_t i = 0; i < t->ncols; i++)
        walk(s, &t->cols[i], NULL);
}

/* A query yielding one column `v` with every value of the leaf at the end
 * of `chain` (top-level column first): struct fields are selected, list
 * elements and map keys/values unnested. */
static void leaf_query(tarn_buf *b, const lk_column *const *chain, size_t depth,
                       const char *source)
{
    if (depth == 1) {
        buf_puts(b, "SELECT ");
        quote_ident(b, chain[0]->name);
        buf_printf(b, " AS v FROM %s", source);
        return;
    }
    const lk_column *parent = chain[depth - 2], *c = chain[depth - 1];
    tarn_buf inner = {0};
    leaf_query(&inner, chain, depth - 1, source);
    if (strcmp(parent->type, "struct") == 0) {
        buf_puts(b, "SELECT v.");
        quote_ident(b, c->name);
        buf_puts(b, " AS v");
    } else if (strcmp(parent->type, "list") == 0) {
        buf_puts(b, "SELECT unnest(v) AS v");
    } else {
        buf_printf(b, "SELECT unnest(map_%s(v)) AS v",
                   strcmp(c->name, "key") == 0 ? "keys" : "values");
    }
    buf_printf(b, " FROM (%s)", buf_cstr(&inner));
    buf_free(&inner);
}

static int chain_to(const lk_column *cols, size_t n, const lk_column *target,
                    const lk_column **chain, size_t depth, size_t *out_depth)
{
    for (size_t i = 0; i < n; i++) {
        chain[depth] = &cols[i];
        if (&cols[i] == target) {
            *out_depth = depth + 1;
            return 1;
        }
        if (chain_to(cols[i].children, cols[i].nchildren, target, chain, depth + 1, out_depth))
            return 1;
    }
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

/* The four figures of one leaf, as columns of the stats query: a top-level
 * leaf reads the aggregates of the one pass over the rows (alias f), a
 * nested one its own scalar subqueries (its values are a struct field, list
 * elements or map entries, not one per row). */
static void leaf_figures(tarn_buf *q, tarn_buf *flat, size_t i, const lk_leaf_stats *l,
                         const lk_column *const *chain, size_t depth, const char *source,
                         int one_row)
{
    if (depth == 1) {
        tarn_buf v = {0};
        quote_ident(&v, chain[0]->name);
        const char *cast = l->text_order ? "::VARCHAR" : "";
        /* GEOMETRY and VARIANT values have no order: no bounds */
        const char *bound = l->geo || l->variant ? "NULL::VARCHAR" : buf_cstr(&v);
        if (one_row) /* the row's value is its own min and max: no aggregate */
            buf_printf(flat,
                       "%s(%s%s)::VARCHAR AS n%zu, (%s%s)::VARCHAR AS x%zu, (%s IS NOT "
                       "NULL)::BIGINT AS c%zu, (%s IS NULL)::BIGINT AS z%zu",
                       flat->len ? ", " : "", bound, cast, i, bound, cast, i, buf_cstr(&v), i,
                       buf_cstr(&v), i);
        else
            buf_printf(flat,
                       "%smin(%s%s)::VARCHAR AS n%zu, max(%s%s)::VARCHAR AS x%zu, count(%s) AS "
                       "c%zu, count(*) - count(%s) AS z%zu",
                       flat->len ? ", " : "", bound, cast, i, bound, cast, i, buf_cstr(&v), i,
                       buf_cstr(&v), i);
        buf_printf(q, "f.n%zu, f.x%zu, f.c%zu, f.z%zu", i, i, i, i);
        buf_free(&v);
        return;
    }
    tarn_buf leaf = {0};
    leaf_query(&leaf, chain, depth, source);
    const char *agg = l->geo || l->variant ? "NULL::VARCHAR" : l->text_order ? "v::VARCHAR" : "v";
    const char *lq = buf_cstr(&leaf);
    buf_printf(q,
               "(SELECT min(%s)::VARCHAR FROM (%s)), (SELECT max(%s)::VARCHAR FROM (%s)), "
               "(SELECT count(v) FROM (%s)), (SELECT count(*) - count(v) FROM (%s))",
               agg, lq, agg, lq, lq, lq);
    buf_free(&leaf);
}

/* Reads the four figures of each leaf, in leaf order, from the first row
 * of `r` (the stats query's or an INSERT's RETURNING row). */
static void read_figures(lk_stats_set *s, const lk_table *t, const duck_table *r)
{
    size_t col = 0;
    for (size_t i = 0; i < s->n && r->nrows; i++) {
        lk_leaf_stats *l = &s->leaves[i];
        const lk_column *chain[64];
        size_t depth = 0;
        if (!chain_to(t->cols, t->ncols, l->col, chain, 0, &depth))
            continue;
        l->min = dup_or_null(duck_table_get(r, 0, col));
        l->max = dup_or_null(duck_table_get(r, 0, col + 1));
        l->value_count = duck_table_int64(r, 0, col + 2);
        l->null_count = duck_table_int64(r, 0, col + 3);
        col += 4;
    }
}

static int stats_from(lk_stats_set *s, duckdb_connection con, const char *source, const lk_table *t,
                      int one_row)
{
    /* one round trip for every leaf, and one pass over the rows for the
     * top-level ones (a subquery per figure cost 55 ms on 40 columns) */
    tarn_buf q = {0}, flat = {0};
    buf_puts(&q, "SELECT ");
    size_t nq = 0;
    for (size_t i = 0; i < s->n; i++) {
        lk_leaf_stats *l = &s->leaves[i];
        const lk_column *chain[64];
        size_t depth = 0;
        if (!chain_to(t->cols, t->ncols, l->col, chain, 0, &depth))
            continue;
        if (nq++)
            buf_puts(&q, ", ");
        leaf_figures(&q, &flat, i, l, chain, depth, source, one_row);
    }
    if (!nq) {
        buf_free(&q);
        buf_free(&flat);
        return 0;
    }
    if (flat.len)
        buf_printf(&q, " FROM (SELECT %s FROM %s) AS f", buf_cstr(&flat), source);
    buf_free(&flat);
    duck_table r;
    int rc = duck_table_query(&r, con, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    read_figures(s, t, &r);
    duck_table_free(&r);
    return 0;
}

int lk_stats_from_rows(lk_stats_set *s, duckdb_connection con, const char *source,
                       const lk_table *t)
{
    return stats_from(s, con, source, t, 0);
}

int lk_stats_from_one_row(lk_stats_set *s, duckdb_connection con, const char *source,
                          const lk_table *t)
{
    return stats_from(s, con, source, t, 1);
}

int lk_stats_one_row_list(tarn_buf *b, const lk_stats_set *s, const lk_table *t)
{
    tarn_buf q = {0}, flat = {0};
    for (size_t i = 0; i < s->n; i++) {
        const lk_column *chain[64];
        size_t depth = 0;
        if (!chain_to(t->cols, t->ncols, s->leaves[i].col, chain, 0, &depth))
            continue;
        if (depth != 1) { /* a nested leaf needs its own subqueries */
            buf_free(&q);
            buf_free(&flat);
            return 0;
        }
        leaf_figures(&q, &flat, i, &s->leaves[i], chain, depth, NULL, 1);
    }
    buf_free(&q);
    if (!flat.len) {
        buf_free(&flat);
        return 0;
    }
    buf_puts(b, buf_cstr(&flat));
    buf_free(&flat);
    return 1;
}

int lk_stats_from_row(lk_stats_set *s, const lk_table *t, const duck_table *r)
{
    if (r->nrows != 1)
        return tarn_error_set(TARN_ERROR, "statistics of one row: %zu rows", r->nrows);
    read_figures(s, t, r);
    return 0;
}

/* CASE expression choosing between the stored bound `col` and `val`. */
static void bound_merge(tarn_buf *b, const lk_leaf_stats *l, const char *col, const char *val,
                        const char *op)
{
    if (l->value_count == 0) {
        buf_puts(b, col);
        return;
    }
    if (!val) {
        buf_puts(b, "NULL");
        return;
    }
    buf_printf(b, "CASE WHEN %s IS NULL THEN ", col);
    quote_literal(b, val);
    buf_puts(b, " WHEN ");
    if (l->text_order) {
        quote_literal(b, val);
        buf_printf(b, " %s %s", op, col);
    } else {
        buf_puts(b, "TRY_CAST(");
        quote_literal(b, val);
        buf_printf(b, " AS %s) %s TRY_CAST(%s AS %s)", l->sql_type, op, col, l->sql_type);
    }
    buf_puts(b, " THEN ");
    quote_literal(b, val);
    buf_printf(b, " ELSE %s END", col);
}

static const char *nan_literal(int v)
{
    return v < 0 ? "NULL" : v ? "true" : "false";
}

/* The SET value for one leaf, by `part`: 0 contains_null, 1 contains_nan,
 * 2 min_value, 3 max_value. */
static void stats_set_value(tarn_buf *b, const lk_leaf_stats *l, int part)
{
    if (part == 0)
        buf_puts(b, l->null_count > 0 ? "true" : "contains_null");
    else if (part == 1 && l->contains_nan < 0)
        buf_puts(b, "contains_nan");
    else if (part == 1)
        buf_printf(b, "COALESCE(contains_nan, false) OR %s", nan_literal(l->contains_nan));
    else if (part == 2)
        bound_merge(b, l, "min_value", l->min, "<");
    else
        bound_merge(b, l, "max_value", l->max, ">");
}

/* The extra_stats text of a leaf: a GEOMETRY leaf's JSON, else NULL. */
static void extra_literal(tarn_buf *b, const lk_leaf_stats *l)
{
    if (!l->geo && !(l->variant && l->variant->n)) {
        buf_puts(b, "NULL");
        return;
    }
    tarn_buf j = {0};
    if (l->geo)
        lk_geo_json(&j, l->geo);
    else
        lk_variant_json(&j, l->variant);
    quote_literal(b, buf_cstr(&j));
    buf_free(&j);
}

/* extra_stats' new value: GEOMETRY leaves with values widen the stored
 * box, VARIANT leaves with values keep the stored fields they share; 0
 * when the set has neither, so the update leaves the column alone. */
static int extra_update(tarn_buf *b, const lk_stats_set *s)
{
    int any = 0;
    for (size_t i = 0; i < s->n; i++) {
        const lk_leaf_stats *l = &s->leaves[i];
        if ((!l->geo && !l->variant) || l->value_count == 0)
            continue;
        buf_printf(b, "%s WHEN %lld THEN ", any++ ? "" : "CASE column_id", (long long)l->col_id);
        if (l->geo)
            lk_geo_merge_sql(b, "extra_stats", l->geo);
        else
            lk_variant_merge_sql(b, "extra_stats", l->variant);
    }
    if (any)
        buf_puts(b, " ELSE extra_stats END");
    return any;
}

/* 1 when `part` of leaf l leaves the stored value as it is: no nulls, no
 * NaN information, or no values for the bounds. */
static int stats_part_same(const lk_leaf_stats *l, int part)
{
    if (part == 0)
        return l->null_count == 0;
    if (part == 1)
        return l->contains_nan < 0;
    return l->value_count == 0;
}

/* One UPDATE merges the new stats of all the table's leaves into its
 * stored ones, each column a CASE on column_id: DuckDB costs ~0.3 ms per
 * statement, and a statement per column made a wide table's append slow.
 * A column no leaf changes is left out (the usual append has no nulls and
 * no NaN information: half the CASEs DuckDB would bind and evaluate for
 * nothing), and so is a leaf that keeps a column's value (ELSE). The
 * bounds compare as the column's type (TRY_CAST), which only DuckDB
 * knows: a mixed write. */
static void stats_update(lk_txn *txn, int64_t table_id, const lk_stats_set *s)
{
    static const char *const ALL_COLS[] = {"contains_null", "contains_nan", "min_value",
                                           "max_value", "extra_stats"};
    const char *cols[5];
    tarn_buf e[5] = {{0}};
    size_t n = 0;
    for (int part = 0; part < 4; part++) {
        size_t arms = 0;
        for (size_t i = 0; i < s->n; i++) {
            if (stats_part_same(&s->leaves[i], part))
                continue;
            buf_printf(&e[n], "%s WHEN %lld THEN ", arms++ ? "" : "CASE column_id",
                       (long long)s->leaves[i].col_id);
            stats_set_value(&e[n], &s->leaves[i], part);
        }
        if (!arms)
            continue;
        buf_printf(&e[n], " ELSE %s END", ALL_COLS[part]);
        cols[n++] = ALL_COLS[part];
    }
    if (extra_update(&e[n], s))
        cols[n++] = ALL_COLS[4];
    if (n > 0) {
        tarn_buf w = {0};
        buf_printf(&w, "table_id = %lld AND column_id IN (", (long long)table_id);
        for (size_t i = 0; i < s->n; i++)
            buf_printf(&w, "%s%lld", i ? ", " : "", (long long)s->leaves[i].col_id);
        buf_putc(&w, ')');
        const char *exprs[5];
        for (size_t i = 0; i < n; i++)
            exprs[i] = buf_cstr(&e[i]);
        lk_txn_update_mixed(txn, "ducklake_table_column_stats", cols, exprs, n, buf_cstr(&w));
        buf_free(&w);
    }
    for (size_t i = 0; i < 5; i++)
        buf_free(&e[i]);
}

void lk_stats_merge_into_table(lk_txn *txn, lk_table_delta *d, const char *meta, int64_t table_id,
                               const lk_stats_set *s)
{
    if (!d->had_stats_row && !d->stats_inserted) {
        d->stats_inserted = 1;
        for (size_t i = 0; i < s->n; i++) {
            const lk_leaf_stats *l = &s->leaves[i];
            tarn_buf b = {0};
            buf_printf(&b, "(%lld, %lld, %s, %s, ", (long long)table_id, (long long)l->col_id,
                       l->null_count > 0 ? "true" : "false", nan_literal(l->contains_nan));
            quote_literal(&b, l->value_count ? l->min : NULL);
            buf_puts(&b, ", ");
            quote_literal(&b, l->value_count ? l->max : NULL);
            buf_puts(&b, ", ");
            extra_literal(&b, l);
            buf_putc(&b, ')');
            lk_txn_row(txn, "ducklake_table_column_stats", "%s", buf_cstr(&b));
            buf_free(&b);
        }
        return;
    }
    if (s->n == 0)
        return;
    stats_update(txn, table_id, s);
}

/* The smaller (want_min) or larger of two known bounds, by the leaf's
 * order; *out is malloc'd. */
static int pick_bound(char **out, const lk_leaf_stats *l, const char *a, const char *b,
                      int want_min, duckdb_connection con)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT CASE WHEN ");
    if (l->text_order) {
        quote_literal(&q, b);
        buf_puts(&q, want_min ? " < " : " > ");
        quote_literal(&q, a);
    } else {
        buf_puts(&q, "TRY_CAST(");
        quote_literal(&q, b);
        buf_printf(&q, " AS %s) %s TRY_CAST(", l->sql_type, want_min ? "<" : ">");
        quote_literal(&q, a);
        buf_printf(&q, " AS %s)", l->sql_type);
    }
    buf_puts(&q, " THEN ");
    quote_literal(&q, b);
    buf_puts(&q, " ELSE ");
    quote_literal(&q, a);
    buf_puts(&q, " END");
    int rc = duck_query_string(out, con, buf_cstr(&q));
    buf_free(&q);
    return rc;
}

static int merge_bound(char **acc, const char *add, const lk_leaf_stats *l, int want_min,
                       duckdb_connection con)
{
    if (!*acc)
        return 0; /* unknown stays unknown */
    if (!add) {
        free(*acc);
        *acc = NULL;
        return 0;
    }
    char *picked = NULL;
    int rc = pick_bound(&picked, l, *acc, add, want_min, con);
    if (rc)
        return rc;
    free(*acc);
    *acc = picked;
    return 0;
}

static void copy_leaf(lk_leaf_stats *dst, const lk_leaf_stats *src)
{
    *dst = *src;
    dst->col = NULL;
    dst->path = xstrdup(src->path);
    dst->sql_type = xstrdup(src->sql_type);
    dst->min = dup_or_null(src->min);
    dst->max = dup_or_null(src->max);
    if (src->geo) {
        dst->geo = xmalloc(sizeof(lk_geo_stats));
        lk_geo_copy(dst->geo, src->geo);
    }
    if (src->variant) {
        dst->variant = xmalloc(sizeof(lk_variant_stats));
        lk_variant_copy(dst->variant, src->variant);
    }
}

int lk_stats_accumulate(lk_stats_set *acc, const lk_stats_set *add, duckdb_connection con)
{
    for (size_t i = 0; i < add->n; i++) {
        const lk_leaf_stats *a = &add->leaves[i];
        lk_leaf_stats *l = NULL;
        for (size_t k = 0; k < acc->n; k++)
            if (acc->leaves[k].col_id == a->col_id)
                l = &acc->leaves[k];
        if (!l) {
            acc->leaves = xrealloc(acc->leaves, (acc->n + 1) * sizeof(lk_leaf_stats));
            copy_leaf(&acc->leaves[acc->n++], a);
            continue;
        }
        /* a write with no value leaves the bounds alone; the commit's first
         * write fixes whether they are known at all (DuckDB's merge order) */
        int rc = 0;
        if (a->value_count > 0)
            rc = merge_bound(&l->min, a->min, l, 1, con);
        if (!rc && a->value_count > 0)
            rc = merge_bound(&l->max, a->max, l, 0, con);
        if (rc)
            return rc;
        /* DuckLake widens the box only when both sides had values: a
         * commit whose first write was all NULL keeps that write's empty
         * box (its merge copies the bounds and returns) */
        if (l->geo && a->geo && a->value_count > 0 && l->value_count > 0)
            lk_geo_merge(l->geo, a->geo);
        if (l->variant && a->variant && a->value_count > 0 && l->value_count > 0)
            lk_variant_merge(l->variant, a->variant);
        l->value_count += a->value_count;
        l->null_count += a->null_count;
        if (a->contains_nan >= 0)
            l->contains_nan = l->contains_nan > 0 || a->contains_nan > 0;
    }
    return 0;
}

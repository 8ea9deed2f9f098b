/*
 * colstats.c — leaf column statistics and their table-level merge (see
 * colstats.h).
 */
#include "lake/colstats.h"

#include "duck/duck.h"
#include "lake/types.h"
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

void lk_stats_free(lk_stats_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->leaves[i].path);
        free(s->leaves[i].sql_type);
        free(s->leaves[i].min);
        free(s->leaves[i].max);
    }
    free(s->leaves);
    memset(s, 0, sizeof(*s));
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

int lk_stats_from_rows(lk_stats_set *s, duckdb_connection con, const char *source,
                             const lk_table *t)
{
    /* one round trip for every leaf: four scalar subqueries per leaf */
    tarn_buf q = {0};
    buf_puts(&q, "SELECT ");
    size_t nq = 0;
    for (size_t i = 0; i < s->n; i++) {
        lk_leaf_stats *l = &s->leaves[i];
        const lk_column *chain[64];
        size_t depth = 0;
        if (!chain_to(t->cols, t->ncols, l->col, chain, 0, &depth))
            continue;
        tarn_buf leaf = {0};
        leaf_query(&leaf, chain, depth, source);
        const char *agg = l->text_order ? "v::VARCHAR" : "v";
        buf_printf(&q,
                   "%s(SELECT min(%s)::VARCHAR FROM (%s)), (SELECT max(%s)::VARCHAR FROM (%s)), "
                   "(SELECT count(v) FROM (%s)), (SELECT count(*) - count(v) FROM (%s))",
                   nq++ ? ", " : "", agg, buf_cstr(&leaf), agg, buf_cstr(&leaf), buf_cstr(&leaf),
                   buf_cstr(&leaf));
        buf_free(&leaf);
    }
    if (!nq) {
        buf_free(&q);
        return 0;
    }
    duck_table r;
    int rc = duck_table_query(&r, con, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    size_t col = 0;
    for (size_t i = 0; i < s->n && r.nrows; i++) {
        lk_leaf_stats *l = &s->leaves[i];
        const lk_column *chain[64];
        size_t depth = 0;
        if (!chain_to(t->cols, t->ncols, l->col, chain, 0, &depth))
            continue;
        l->min = dup_or_null(duck_table_get(&r, 0, col));
        l->max = dup_or_null(duck_table_get(&r, 0, col + 1));
        l->value_count = strtoll(duck_table_get(&r, 0, col + 2), NULL, 10);
        l->null_count = strtoll(duck_table_get(&r, 0, col + 3), NULL, 10);
        col += 4;
    }
    duck_table_free(&r);
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

void lk_stats_merge_into_table(lk_txn *txn, lk_table_delta *d, const char *meta,
                               int64_t table_id, const lk_stats_set *s)
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
            buf_puts(&b, ", NULL)");
            lk_txn_row(txn, "ducklake_table_column_stats", "%s", buf_cstr(&b));
            buf_free(&b);
        }
        return;
    }
    for (size_t i = 0; i < s->n; i++) {
        const lk_leaf_stats *l = &s->leaves[i];
        tarn_buf b = {0};
        buf_printf(&b, "UPDATE %s.ducklake_table_column_stats SET contains_null = %s, ", meta,
                   l->null_count > 0 ? "true" : "contains_null");
        if (l->contains_nan < 0)
            buf_puts(&b, "contains_nan = contains_nan, ");
        else
            buf_printf(&b, "contains_nan = COALESCE(contains_nan, false) OR %s, ",
                       nan_literal(l->contains_nan));
        buf_puts(&b, "min_value = ");
        bound_merge(&b, l, "min_value", l->min, "<");
        buf_puts(&b, ", max_value = ");
        bound_merge(&b, l, "max_value", l->max, ">");
        buf_printf(&b, " WHERE table_id = %lld AND column_id = %lld", (long long)table_id,
                   (long long)l->col_id);
        lk_txn_sql(txn, "%s", buf_cstr(&b));
        buf_free(&b);
    }
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
        l->value_count += a->value_count;
        l->null_count += a->null_count;
        if (a->contains_nan >= 0)
            l->contains_nan = l->contains_nan > 0 || a->contains_nan > 0;
    }
    return 0;
}

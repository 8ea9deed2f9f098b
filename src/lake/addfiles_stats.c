/*
 * addfiles_stats.c — the column statistics of a registered Parquet file,
 * from its footer (parquet_metadata(): per row group and leaf, min, max,
 * null_count, num_values, total_compressed_size, and the geometry boxes),
 * aggregated per mapped leaf as DuckLake aggregates them, and per hive
 * column from its path value. Records the file's
 * ducklake_file_column_stats rows (in column id order) in the transaction
 * and folds them into the table's stats of the commit (the delta's
 * lk_stats_set, written as ducklake_table_column_stats). Invariant: a
 * bound is recorded only when every row group gave one (a leaf with none
 * gets NULL min/max, as in DuckLake).
 */
#include "lake/addfiles.h"

#include "duck/duck.h"
#include "lake/addfiles_int.h"
#include "lake/colstats.h"
#include "lake/hive.h"
#include "lake/namemap.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- statistics ---- */

static int numeric_type(const char *t)
{
    return strncmp(t, "int", 3) == 0 || strncmp(t, "uint", 4) == 0 || strncmp(t, "float", 5) == 0 ||
           strncmp(t, "decimal", 7) == 0;
}

/* One leaf's statistics over its row groups (rows [from, to) of the
 * parquet_metadata result: column_id, min, max, null_count, num_values,
 * total_compressed_size), as DuckLake aggregates them. */
typedef struct {
    int have_nulls, have_values;
    int64_t nulls, values, size;
    char *min, *max;
    int has_geo; /* a GEOMETRY leaf: its box and types over the row groups */
    lk_geo_stats geo;
} leaf_stats;

/* The names of the geometry figures of the parquet_metadata result, in
 * its column order after total_compressed_size. */
static const char *const GEO_KEYS[] = {"bbox_xmin", "bbox_xmax", "bbox_ymin",
                                       "bbox_ymax", "bbox_zmin", "bbox_zmax",
                                       "bbox_mmin", "bbox_mmax", "geo_types"};
#define NGEO_KEYS (sizeof(GEO_KEYS) / sizeof(GEO_KEYS[0]))

/* Widens s->geo by the row group in row k of the metadata result. */
static void geo_row_group(leaf_stats *s, const duck_table *r, size_t k)
{
    lk_geo_stats g;
    lk_geo_init(&g);
    for (size_t i = 0; i < NGEO_KEYS; i++)
        lk_geo_set(&g, GEO_KEYS[i], duck_table_get(r, k, 7 + i));
    lk_geo_merge(&s->geo, &g);
    lk_geo_free(&g);
}

static int typed_bound(char **out, file_map *f, const lk_column *col, const duck_table *r,
                       const size_t *rows, size_t n, size_t cell, int want_min)
{
    tarn_buf b = {0};
    buf_printf(&b, "SELECT %s(v, CAST(v AS ", want_min ? "arg_min" : "arg_max");
    lk_type_to_sql(&b, col);
    buf_puts(&b, ")) FROM (VALUES ");
    for (size_t i = 0; i < n; i++) {
        buf_puts(&b, i ? ", (" : "(");
        quote_literal(&b, duck_table_get(r, rows[i], cell));
        buf_putc(&b, ')');
    }
    buf_puts(&b, ") x(v)");
    int rc = duck_query_string(out, f->con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static int leaf_aggregate(leaf_stats *s, file_map *f, const lk_column *col, const duck_table *r,
                          const size_t *rows, size_t n)
{
    memset(s, 0, sizeof(*s));
    s->have_nulls = s->have_values = 1;
    lk_geo_init(&s->geo);
    s->has_geo = strcmp(col->type, "geometry") == 0;
    int all_min = 1, all_max = 1;
    for (size_t i = 0; i < n; i++) {
        size_t k = rows[i];
        int64_t nulls = duck_table_int64(r, k, 4), values = duck_table_int64(r, k, 5),
                size = duck_table_int64(r, k, 6);
        s->have_nulls &= nulls >= 0;
        s->nulls += nulls;
        s->have_values &= values >= 0;
        s->values += values;
        s->size += size > 0 ? size : 0;
        all_min &= duck_table_get(r, k, 2) != NULL;
        all_max &= duck_table_get(r, k, 3) != NULL;
        if (s->has_geo)
            geo_row_group(s, r, k);
    }
    int rc = 0;
    if (n == 1 || !numeric_type(col->type)) {
        for (size_t i = 0; i < n; i++) {
            const char *mn = duck_table_get(r, rows[i], 2), *mx = duck_table_get(r, rows[i], 3);
            if (all_min && (!s->min || strcmp(mn, s->min) < 0)) {
                free(s->min);
                s->min = xstrdup(mn);
            }
            if (all_max && (!s->max || strcmp(mx, s->max) > 0)) {
                free(s->max);
                s->max = xstrdup(mx);
            }
        }
    } else {
        if (all_min)
            rc = typed_bound(&s->min, f, col, r, rows, n, 2, 1);
        if (!rc && all_max)
            rc = typed_bound(&s->max, f, col, r, rows, n, 3, 0);
    }
    return rc;
}

/* One ducklake_file_column_stats row and the leaf's table-level share. */
static void stats_row(lk_txn *txn, int64_t file_id, int64_t table_id, int64_t column_id,
                      const leaf_stats *s, lk_leaf_stats *l)
{
    int counts = s->have_nulls && s->have_values && s->nulls <= s->values;
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, %lld, %lld, %lld, ", (long long)file_id, (long long)table_id,
               (long long)column_id, (long long)s->size);
    if (counts)
        buf_printf(&b, "%lld, %lld, ", (long long)(s->values - s->nulls), (long long)s->nulls);
    else
        buf_puts(&b, "NULL, NULL, ");
    quote_literal(&b, s->min);
    buf_puts(&b, ", ");
    quote_literal(&b, s->max);
    buf_puts(&b, ", NULL, ");
    if (s->has_geo) {
        tarn_buf j = {0};
        lk_geo_json(&j, &s->geo);
        quote_literal(&b, buf_cstr(&j));
        buf_free(&j);
    } else {
        buf_puts(&b, "NULL");
    }
    buf_putc(&b, ')');
    lk_txn_row(txn, "ducklake_file_column_stats", "%s", buf_cstr(&b));
    buf_free(&b);
    if (l && l->geo && s->has_geo) {
        lk_geo_free(l->geo);
        lk_geo_copy(l->geo, &s->geo);
    }
    if (l) {
        l->null_count = counts ? s->nulls : 0;
        l->value_count = counts ? s->values - s->nulls : 0;
        l->column_size = s->size;
        l->contains_nan = -1;
        l->min = s->min ? xstrdup(s->min) : NULL;
        l->max = s->max ? xstrdup(s->max) : NULL;
    }
}

static lk_leaf_stats *leaf_of(lk_stats_set *st, int64_t column_id, int *keep)
{
    for (size_t i = 0; i < st->n; i++)
        if (st->leaves[i].col_id == column_id) {
            keep[i] = 1;
            return &st->leaves[i];
        }
    return NULL;
}

/* The file's column stats rows, in column id order, and their fold into
 * the table's stats of this commit. */
int lk_addfiles_record_stats(lk_lake *lake, file_map *f, int64_t file_id, const duck_table *meta,
                             size_t from, size_t to, lk_table_delta *d)
{
    lk_txn *txn = lake->txn;
    lk_stats_set st;
    lk_stats_init(&st, f->t);
    int *keep = xcalloc(st.n + 1, sizeof(int));
    size_t *rows = xcalloc(to - from + 1, sizeof(size_t));
    int64_t max_id = lk_table_max_column_id(f->t);
    int rc = 0;
    for (int64_t id = 0; id <= max_id && !rc; id++) {
        for (size_t i = 0; i < f->nleaves && !rc; i++) {
            if (f->leaves[i].col->id != id || f->leaves[i].col->nchildren)
                continue;
            size_t n = 0;
            for (size_t k = from; k < to; k++)
                if (duck_table_int64(meta, k, 1) == f->leaves[i].leaf)
                    rows[n++] = k;
            if (!n)
                continue;
            leaf_stats s;
            rc = leaf_aggregate(&s, f, f->leaves[i].col, meta, rows, n);
            if (!rc)
                stats_row(txn, file_id, f->t->id, id, &s, leaf_of(&st, id, keep));
            free(s.min);
            free(s.max);
            lk_geo_free(&s.geo);
        }
        for (size_t i = 0; i < f->npvs && !rc; i++) {
            if (f->pvs[i].column_id != id || f->pvs[i].bucket)
                continue;
            leaf_stats s = {.have_nulls = 1,
                            .have_values = 1,
                            .nulls = f->pvs[i].value ? 0 : f->rows,
                            .values = f->rows,
                            .min = f->pvs[i].value,
                            .max = f->pvs[i].value};
            stats_row(txn, file_id, f->t->id, id, &s, leaf_of(&st, id, keep));
        }
    }
    lk_stats_keep(&st, keep);
    if (!rc)
        rc = lk_stats_accumulate(&d->stats, &st, f->con);
    lk_stats_free(&st);
    free(keep);
    free(rows);
    return rc;
}

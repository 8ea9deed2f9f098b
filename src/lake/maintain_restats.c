/*
 * maintain_restats.c — exact table statistics after
 * ducklake_rewrite_data_files, as DuckLake recomputes them.
 *
 * ducklake_table_stats and ducklake_table_column_stats only widen, so
 * once a row was deleted they are bounds, not the live rows' figures, and
 * MIN / MAX are read from the files (lake/aggstats.c). A rewrite that
 * leaves the table without deletions makes them exact again: its commit
 * then sets record_count and file_size_bytes from the live data files plus
 * the live inlined rows, and each leaf column's min, max and contains_null
 * from the live files' ducklake_file_column_stats and the inlined rows.
 * The statements are appended to the commit batch after the rewrite's own
 * rows (the new file and its column stats), and each carries the
 * "no deletion left" condition, so a partial rewrite changes nothing.
 * Reads the table's inlined data tables (now); writes (at commit)
 * ducklake_table_stats and ducklake_table_column_stats rows that exist.
 */
#include "lake/colstats.h"
#include "lake/maintain_int.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* The live rows of the table's inlined data tables that exist, as a FROM
 * item with the table's columns; NULL when it has none. */
static char *inlined_source(const mt_call *c, const lk_table *t, long long s)
{
    tarn_buf b = {0};
    for (size_t i = 0; i < t->ninlined; i++) {
        if (!lk_lake_meta_table_exists(c->lake, c->con, t->inlined[i].name))
            continue;
        buf_puts(&b, b.len ? " UNION ALL SELECT " : "(SELECT ");
        for (size_t k = 0; k < t->ncols; k++) {
            if (k)
                buf_puts(&b, ", ");
            quote_ident(&b, t->cols[k].name);
        }
        buf_printf(&b, " FROM %s.", c->lake->meta);
        quote_ident(&b, t->inlined[i].name);
        buf_printf(&b, " r WHERE " LK_LIVE("r"), s, s);
    }
    if (!b.len)
        return NULL;
    buf_puts(&b, ") AS inl");
    return buf_detach(&b);
}

/* The condition that no live data file of the table has a deletion left
 * at the commit's snapshot s. */
static void delete_free_sql(tarn_buf *b, const mt_call *c, const lk_table *t, long long s)
{
    const char *m = c->lake->meta;
    long long id = (long long)t->id;
    buf_printf(b,
               "NOT EXISTS (SELECT 1 FROM %s.ducklake_delete_file x JOIN %s.ducklake_data_file d "
               "ON d.data_file_id = x.data_file_id WHERE d.table_id = %lld AND " LK_LIVE(
                   "d") " AND " LK_LIVE("x") ")",
               m, m, id, s, s, s, s);
    tarn_buf del = {0};
    if (lk_lake_inlined_deletes_from(&del, c->lake, c->con, t->id, s))
        buf_printf(b, " AND NOT EXISTS (SELECT 1 %s)", buf_cstr(&del));
    buf_free(&del);
}

/* The live data files' rows of leaf `l` in ducklake_file_column_stats,
 * plus one row of the inlined rows' figures (`in`, or none), as a FROM
 * item with columns v_min, v_max, nvals, nnulls. */
static void leaf_rows_sql(tarn_buf *b, const mt_call *c, const lk_table *t, long long s,
                          const lk_leaf_stats *l, const lk_leaf_stats *in)
{
    const char *m = c->lake->meta;
    buf_printf(b,
               "(SELECT f.min_value AS v_min, f.max_value AS v_max, f.value_count AS nvals, "
               "f.null_count AS nnulls FROM %s.ducklake_file_column_stats f JOIN "
               "%s.ducklake_data_file d ON d.data_file_id = f.data_file_id WHERE d.table_id = "
               "%lld AND f.column_id = %lld AND " LK_LIVE("d"),
               m, m, (long long)t->id, (long long)l->col_id, s, s);
    if (in && in->value_count + in->null_count > 0) {
        buf_puts(b, " UNION ALL SELECT ");
        quote_literal(b, in->value_count ? in->min : NULL);
        buf_puts(b, ", ");
        quote_literal(b, in->value_count ? in->max : NULL);
        buf_printf(b, ", %lld, %lld", (long long)in->value_count, (long long)in->null_count);
    }
    buf_puts(b, ") AS v");
}

/* The smaller (want_min) or larger bound of the rows, by the leaf's order;
 * unknown (NULL) when a row with values has none. */
static void bound_sql(tarn_buf *b, const lk_leaf_stats *l, int want_min, const char *rows)
{
    const char *col = want_min ? "v_min" : "v_max";
    buf_printf(b, "(SELECT CASE WHEN bool_or(%s IS NULL AND coalesce(nvals, 1) > 0) THEN NULL ",
               col);
    if (l->text_order)
        buf_printf(b, "ELSE %s(%s) END", want_min ? "min" : "max", col);
    else
        buf_printf(b, "ELSE %s(%s, TRY_CAST(%s AS %s)) END", want_min ? "arg_min" : "arg_max", col,
                   col, l->sql_type);
    buf_printf(b, " FROM %s)", rows);
}

/* Leaf l's bounds and contains_null from the live files and, with `in`,
 * the inlined rows' figures (l itself, computed from them). A mixed write
 * (txn.h): DuckDB evaluates the bounds (arg_min over TRY_CAST, which a
 * PostgreSQL catalog has not) at commit, over the batch's rows. */
static void column_update(const mt_call *c, const lk_table *t, long long s, const char *cond,
                          const lk_leaf_stats *l, const lk_leaf_stats *in)
{
    tarn_buf rows = {0}, lo = {0}, hi = {0}, nul = {0}, where = {0};
    leaf_rows_sql(&rows, c, t, s, l, in);
    bound_sql(&lo, l, 1, buf_cstr(&rows));
    bound_sql(&hi, l, 0, buf_cstr(&rows));
    buf_printf(&nul, "(SELECT coalesce(bool_or(nnulls > 0), false) FROM %s)", buf_cstr(&rows));
    buf_printf(&where, "table_id = %lld AND column_id = %lld AND %s", (long long)t->id,
               (long long)l->col_id, cond);
    const char *cols[] = {"min_value", "max_value", "contains_null"};
    const char *exprs[] = {buf_cstr(&lo), buf_cstr(&hi), buf_cstr(&nul)};
    lk_txn_update_mixed(c->lake->txn, "ducklake_table_column_stats", cols, exprs, 3,
                        buf_cstr(&where));
    buf_free(&rows);
    buf_free(&lo);
    buf_free(&hi);
    buf_free(&nul);
    buf_free(&where);
}

static void count_update(const mt_call *c, const lk_table *t, long long s, const char *cond,
                         const char *inl)
{
    const char *m = c->lake->meta;
    tarn_buf b = {0};
    buf_printf(&b,
               "UPDATE %s.ducklake_table_stats SET record_count = (SELECT "
               "coalesce(sum(d.record_count), 0) FROM %s.ducklake_data_file d WHERE d.table_id = "
               "%lld AND " LK_LIVE("d") ")",
               m, m, (long long)t->id, s, s);
    if (inl)
        buf_printf(&b, " + (SELECT count(*) FROM %s)", inl);
    buf_printf(&b,
               ", file_size_bytes = (SELECT coalesce(sum(d.file_size_bytes), 0) FROM "
               "%s.ducklake_data_file d WHERE d.table_id = %lld AND " LK_LIVE("d") ")",
               m, (long long)t->id, s, s);
    buf_printf(&b, " WHERE table_id = %lld AND %s", (long long)t->id, cond);
    lk_txn_sql(c->lake->txn, "%s", buf_cstr(&b));
    buf_free(&b);
}

int mt_restats(const mt_call *c, const lk_table *t)
{
    lk_txn *txn = c->lake->txn;
    /* rows this transaction wrote to the table are merged into its stats
     * at commit, after this batch: their figures are not known here */
    if (lk_txn_find_delta(txn, t->id))
        return 0;
    long long s = (long long)txn->snapshot_id;
    /* the rewrite leaves inlined rows alone: their figures are read now */
    char *inl = inlined_source(c, t, s);
    lk_stats_set st = {0};
    lk_stats_init(&st, t);
    if (inl && lk_stats_from_rows(&st, c->con, inl, t) != 0) {
        /* an inlined table of an older layout: keep the bounds */
        tarn_error_clear();
        lk_stats_free(&st);
        free(inl);
        return 0;
    }
    tarn_buf cond = {0};
    delete_free_sql(&cond, c, t, s);
    count_update(c, t, s, buf_cstr(&cond), inl);
    for (size_t i = 0; i < st.n; i++) {
        const lk_leaf_stats *l = &st.leaves[i];
        if (l->geo || l->variant)
            continue; /* no order; their extra_stats are not recomputed */
        column_update(c, t, s, buf_cstr(&cond), l, inl ? l : NULL);
    }
    buf_free(&cond);
    lk_stats_free(&st);
    free(inl);
    return 0;
}

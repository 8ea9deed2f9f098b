/*
 * prune.c — data files left out of a scan by their column statistics (see
 * prune.h).
 *
 * Reads ducklake_file_column_stats (min_value, max_value, null_count,
 * contains_nan of the files' top-level columns) and, for an equality on a
 * partition key's column, ducklake_file_partition_value of the files
 * written under the table's partition spec (ducklake_data_file's
 * partition_id). Writes nothing.
 *
 * One catalog query per pruned scan lists the files some term excludes:
 * each term becomes a condition on a file's statistics that is TRUE only
 * when no row of the file can satisfy it. SQL's three-valued logic keeps
 * a file whenever a statistic is NULL: a NULL comparison is never TRUE.
 */
#include "lake/prune.h"

#include "lake/bucket.h"
#include "lake/prune_fast.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void lk_prune_add(lk_prune *p, int group, const char *column, lk_prune_op op, char **values,
                  size_t nvalues)
{
    p->terms = xrealloc(p->terms, (p->n + 1) * sizeof(lk_prune_term));
    p->terms[p->n++] = (lk_prune_term){group, xstrdup(column), op, values, nvalues};
}

void lk_prune_truncate(lk_prune *p, size_t n)
{
    for (size_t i = n; i < p->n; i++) {
        free(p->terms[i].column);
        for (size_t k = 0; k < p->terms[i].nvalues; k++)
            free(p->terms[i].values[k]);
        free(p->terms[i].values);
    }
    if (n < p->n)
        p->n = n;
}

void lk_prune_free(lk_prune *p)
{
    lk_prune_truncate(p, 0);
    free(p->terms);
    free(p->order_column);
    memset(p, 0, sizeof(*p));
}

/* Types whose min/max statistics are the exact extremes of the values, in
 * the order DuckDB compares them (floats only without NaN: see below). */
static int ordered_type(const char *type)
{
    static const char *const OK[] = {
        "int8",    "int16",     "int32",       "int64",        "int128",      "uint8", "uint16",
        "uint32",  "uint64",    "uint128",     "float32",      "float64",     "date",  "time",
        "varchar", "timestamp", "timestamp_s", "timestamp_ms", "timestamp_ns"};
    for (size_t i = 0; i < sizeof(OK) / sizeof(OK[0]); i++)
        if (strcmp(type, OK[i]) == 0)
            return 1;
    return strncmp(type, "decimal", 7) == 0;
}

static const lk_column *top_column(const lk_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcasecmp(t->cols[i].name, name) == 0)
            return &t->cols[i];
    return NULL;
}

/* The condition, on stats row s of a file with f.n rows, that no row of
 * the file satisfies term `x` on column `c`; 0 when none can be said. */
static int excluded_sql(tarn_buf *b, const lk_prune_term *x, const lk_column *c)
{
    if (x->op == LK_PRUNE_IS_NULL) {
        buf_printf(b, "(s.column_id = %lld AND s.null_count = 0)", (long long)c->id);
        return 1;
    }
    if (x->op == LK_PRUNE_NOT_NULL) {
        buf_printf(b, "(s.column_id = %lld AND s.null_count = f.n)", (long long)c->id);
        return 1;
    }
    if (!ordered_type(c->type))
        return 0;
    /* a string column compared with anything but a string is cast to the
     * other type, in an order its min/max do not bound ('10' < '9') */
    for (size_t k = 0; strcmp(c->type, "varchar") == 0 && k < x->nvalues; k++)
        if (x->values[k][0] != '\'')
            return 0;
    tarn_buf mn = {0}, mx = {0};
    buf_puts(&mn, "TRY_CAST(s.min_value AS ");
    lk_type_to_sql(&mn, c);
    buf_putc(&mn, ')');
    buf_puts(&mx, "TRY_CAST(s.max_value AS ");
    lk_type_to_sql(&mx, c);
    buf_putc(&mx, ')');
    const char *lo = buf_cstr(&mn), *hi = buf_cstr(&mx), *const *v = (const char *const *)x->values;
    buf_printf(b, "(s.column_id = %lld", (long long)c->id);
    /* NaN sorts above every number in DuckDB, and Parquet's max leaves it
     * out: a float file is pruned only when it is known to have none */
    if (strncmp(c->type, "float", 5) == 0)
        buf_puts(b, " AND s.contains_nan = false");
    buf_puts(b, " AND ");
    switch (x->op) {
    case LK_PRUNE_EQ:
        buf_printf(b, "(%s > %s OR %s < %s)", lo, v[0], hi, v[0]);
        break;
    case LK_PRUNE_NE: /* every value is v (NULLs match no comparison) */
        buf_printf(b, "(%s = %s AND %s = %s)", lo, v[0], hi, v[0]);
        break;
    case LK_PRUNE_LT:
        buf_printf(b, "%s >= %s", lo, v[0]);
        break;
    case LK_PRUNE_LE:
        buf_printf(b, "%s > %s", lo, v[0]);
        break;
    case LK_PRUNE_GT:
        buf_printf(b, "%s <= %s", hi, v[0]);
        break;
    case LK_PRUNE_GE:
        buf_printf(b, "%s < %s", hi, v[0]);
        break;
    case LK_PRUNE_BETWEEN:
        buf_printf(b, "(%s < %s OR %s > %s)", hi, v[0], lo, v[1]);
        break;
    default: /* LK_PRUNE_IN */
        buf_puts(b, "NOT (");
        for (size_t k = 0; k < x->nvalues; k++)
            buf_printf(b, "%s(%s <= %s AND %s <= %s)", k ? " OR " : "", lo, v[k], v[k], hi);
        buf_putc(b, ')');
        break;
    }
    buf_putc(b, ')');
    buf_free(&mn);
    buf_free(&mx);
    return 1;
}

/* The condition, on a partition row s (s.pkey, s.pvalue) of a file of the
 * table's partition spec, that no row of the file satisfies equality
 * term `x` on column `c`: an identity key's value, or a bucket key's
 * bucket, is none of the values'. 0 when no key of the spec is on `c`.
 * A value that does not cast to the column's type excludes nothing. */
static int partition_excluded_sql(tarn_buf *b, const lk_prune_term *x, const lk_column *c,
                                  const lk_table *t)
{
    if ((x->op != LK_PRUNE_EQ && x->op != LK_PRUNE_IN) || !ordered_type(c->type) ||
        strncmp(c->type, "float", 5) == 0)
        return 0;
    for (size_t k = 0; strcmp(c->type, "varchar") == 0 && k < x->nvalues; k++)
        if (x->values[k][0] != '\'') /* compared as the other type (see excluded_sql) */
            return 0;
    tarn_buf type = {0};
    lk_type_to_sql(&type, c);
    int any = 0;
    for (size_t k = 0; k < t->nkeys; k++) {
        int32_t n = 0;
        int identity = strcmp(t->keys[k].transform, "identity") == 0;
        if (t->keys[k].column_id != c->id ||
            (!identity && !lk_bucket_parse(t->keys[k].transform, &n)))
            continue;
        /* compared as values: a hive path's text may be written otherwise */
        buf_printf(b, "%s(s.pkey = %zu AND TRY_CAST(s.pvalue AS %s) NOT IN (", any++ ? " OR " : "",
                   k, identity ? buf_cstr(&type) : "INTEGER");
        for (size_t i = 0; i < x->nvalues; i++) {
            char *v = xasprintf("TRY_CAST(%s AS %s)", x->values[i], buf_cstr(&type));
            if (i)
                buf_puts(b, ", ");
            if (identity)
                buf_puts(b, v);
            else
                lk_bucket_key_of(b, v, c->type, n);
            free(v);
        }
        buf_puts(b, "))");
    }
    buf_free(&type);
    return any;
}

static int is_excluded(const duck_table *r, int64_t id)
{
    for (size_t i = 0; i < r->nrows; i++) {
        const char *v = duck_table_get(r, i, 0);
        if (v && strtoll(v, NULL, 10) == id)
            return 1;
    }
    return 0;
}

/* Drops the files listed in r (data_file_id) from `in`. */
static void drop_files(scan_input *in, const duck_table *r)
{
    size_t kept = 0;
    for (size_t i = 0; i < in->n; i++) {
        scan_file *f = &in->files[i];
        if (!f->pending && is_excluded(r, f->id)) {
            scan_file_free(f);
            continue;
        }
        in->files[kept++] = *f;
    }
    in->n = kept;
}

/* The condition that term `x` on column `c` excludes a file: by its
 * statistics row, or by its partition row; 0 when neither can tell.
 * *partition is set when the partition rows are needed. */
static int term_sql(tarn_buf *b, const lk_prune_term *x, const lk_column *c, const lk_table *t,
                    int *partition)
{
    tarn_buf st = {0}, pt = {0};
    int by_stats = excluded_sql(&st, x, c), by_part = partition_excluded_sql(&pt, x, c, t);
    if (by_stats && by_part)
        buf_printf(b, "(%s OR %s)", buf_cstr(&st), buf_cstr(&pt));
    else if (by_stats || by_part)
        buf_puts(b, by_stats ? buf_cstr(&st) : buf_cstr(&pt));
    *partition |= by_part;
    buf_free(&st);
    buf_free(&pt);
    return by_stats || by_part;
}

/* The HAVING condition, over the stats (and partition) rows of one file,
 * that some group of `p` excludes the file: every term of the group is
 * excluded by its column's row. A group with a term that cannot be
 * decided excludes nothing. */
static void groups_sql(tarn_buf *b, const lk_table *t, const lk_prune *p, int *partition)
{
    int ngroups = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->terms[i].group >= ngroups)
            ngroups = p->terms[i].group + 1;
    for (int g = 0; g < ngroups; g++) {
        tarn_buf one = {0};
        int ok = 1, terms = 0;
        for (size_t i = 0; i < p->n && ok; i++) {
            if (p->terms[i].group != g)
                continue;
            const lk_column *c = top_column(t, p->terms[i].column);
            tarn_buf x = {0};
            ok = c && !c->nchildren && term_sql(&x, &p->terms[i], c, t, partition);
            if (ok)
                buf_printf(&one, "%sbool_or(%s)", terms++ ? " AND " : "", buf_cstr(&x));
            buf_free(&x);
        }
        if (ok && terms)
            buf_printf(b, "%s(%s)", b->len ? " OR " : "", buf_cstr(&one));
        buf_free(&one);
    }
}

/* The place of file `id` in the ordered result r (its row), or r->nrows. */
static size_t order_rank(const duck_table *r, int64_t id)
{
    for (size_t i = 0; i < r->nrows; i++) {
        const char *v = duck_table_get(r, i, 0);
        if (v && strtoll(v, NULL, 10) == id)
            return i;
    }
    return r->nrows;
}

/* Orders the committed files of `in` by their statistics of column
 * p->order_column (files without them after, in their order; pending
 * files stay last). Only the order of reading changes: a query that
 * orders its rows itself sees the same rows. */
static void order_files(scan_input *in, lk_lake *lake, duckdb_connection con, const lk_table *t,
                        const lk_prune *p)
{
    const lk_column *c = top_column(t, p->order_column);
    if (!c || c->nchildren || !ordered_type(c->type) || in->n < 2)
        return;
    tarn_buf type = {0};
    lk_type_to_sql(&type, c);
    duck_table r;
    int rc = lk_catdb_queryf(&r, &lake->db, con,
                             "SELECT data_file_id FROM %s.ducklake_file_column_stats WHERE "
                             "table_id = %lld AND column_id = %lld ORDER BY TRY_CAST(%s AS %s) %s "
                             "NULLS LAST, data_file_id",
                             lk_catdb_name(&lake->db), (long long)t->id, (long long)c->id,
                             p->order_desc ? "max_value" : "min_value", buf_cstr(&type),
                             p->order_desc ? "DESC" : "ASC");
    buf_free(&type);
    if (rc == 0) {
        size_t *rank = xcalloc(in->n, sizeof(size_t));
        for (size_t i = 0; i < in->n; i++)
            rank[i] = in->files[i].pending ? (size_t)-1 : order_rank(&r, in->files[i].id);
        for (size_t i = 1; i < in->n; i++) { /* stable insertion sort: few files */
            scan_file f = in->files[i];
            size_t rk = rank[i], k = i;
            for (; k > 0 && rank[k - 1] > rk; k--) {
                in->files[k] = in->files[k - 1];
                rank[k] = rank[k - 1];
            }
            in->files[k] = f;
            rank[k] = rk;
        }
        free(rank);
        duck_table_free(&r);
    }
    tarn_error_clear();
}

static int group_count(const lk_prune *p)
{
    int n = 0;
    for (size_t i = 0; i < p->n; i++)
        if (p->terms[i].group >= n)
            n = p->terms[i].group + 1;
    return n;
}

/* The cached statistics of each term's column (stats[i]; NULL: its group
 * cannot exclude a file, as groups_sql leaves it out). 0 when some term
 * needs the catalog query: partition values, a type or constant C does
 * not compare, statistics the cache does not have. */
static int cached_term_stats(const scan_colstats **stats, lk_lake *lake, duckdb_connection con,
                             const lk_table *t, int64_t s, const lk_prune *p)
{
    int ngroups = group_count(p);
    for (int g = 0; g < ngroups; g++) {
        int decided = 1;
        for (size_t i = 0; i < p->n && decided; i++) {
            const lk_prune_term *x = &p->terms[i];
            const lk_column *c = x->group == g ? top_column(t, x->column) : NULL;
            if (x->group != g)
                continue;
            tarn_buf st = {0}, pt = {0};
            int by_stats = c && !c->nchildren && excluded_sql(&st, x, c);
            int by_part = c && !c->nchildren && partition_excluded_sql(&pt, x, c, t);
            buf_free(&st);
            buf_free(&pt);
            if (by_part || (by_stats && !pf_term_supported(x, c)))
                return 0;
            decided = by_stats;
            if (decided && !(stats[i] = scan_cache_colstats(lake, con, t->id, c->id, s)))
                return 0;
        }
        for (size_t i = 0; !decided && i < p->n; i++)
            if (p->terms[i].group == g)
                stats[i] = NULL;
    }
    return 1;
}

/* Whether the terms of `p` exclude file f: every term of some group. */
static int cached_excludes(const scan_file *f, const lk_table *t, const lk_prune *p,
                           const scan_colstats *const *stats)
{
    int ngroups = group_count(p);
    for (int g = 0; g < ngroups; g++) {
        int all = 0;
        for (size_t i = 0; i < p->n; i++) {
            if (p->terms[i].group != g)
                continue;
            all = stats[i] && pf_term_excludes(&p->terms[i], top_column(t, p->terms[i].column),
                                               stats[i], f->id, f->record_count);
            if (!all)
                break;
        }
        if (all)
            return 1;
    }
    return 0;
}

/* Prunes `in` from the statistics the scan cache keeps for the table at
 * snapshot s, without a catalog query; 0 when that cannot be done. */
static int prune_cached(scan_input *in, lk_lake *lake, duckdb_connection con, const lk_table *t,
                        int64_t s, const lk_prune *p)
{
    const scan_colstats **stats = xcalloc(p->n, sizeof(*stats));
    if (!cached_term_stats(stats, lake, con, t, s, p)) {
        free(stats);
        return 0;
    }
    size_t kept = 0;
    for (size_t i = 0; i < in->n; i++) {
        scan_file *f = &in->files[i];
        if (!f->pending && f->id >= 0 && cached_excludes(f, t, p, stats)) {
            scan_file_free(f);
            continue;
        }
        in->files[kept++] = *f;
    }
    in->n = kept;
    free(stats);
    return 1;
}

/* Keeps of the committed files of `in` those in p->only_files. */
static void keep_only(scan_input *in, const lk_prune *p)
{
    size_t kept = 0;
    for (size_t i = 0; i < in->n; i++) {
        scan_file *f = &in->files[i];
        int keep = f->pending;
        for (size_t k = 0; k < p->nonly && !keep; k++)
            keep = p->only_files[k] == f->id;
        if (!keep) {
            scan_file_free(f);
            continue;
        }
        in->files[kept++] = *f;
    }
    in->n = kept;
}

void lk_prune_files(scan_input *in, lk_lake *lake, duckdb_connection con, const lk_table *t,
                    int64_t s, const lk_prune *p)
{
    if (p && p->only_set)
        keep_only(in, p);
    if (p && p->order_column)
        order_files(in, lake, con, t, p);
    if (!p || !p->n || prune_cached(in, lake, con, t, s, p))
        return;
    tarn_buf cond = {0}, files = {0}, rows = {0};
    int partition = 0;
    groups_sql(&cond, t, p, &partition);
    const char *meta = lk_catdb_name(&lake->db);
    if (partition)
        buf_printf(&rows,
                   "(SELECT data_file_id, table_id, column_id, min_value, max_value, null_count, "
                   "contains_nan, NULL::BIGINT AS pkey, NULL::VARCHAR AS pvalue FROM "
                   "%s.ducklake_file_column_stats UNION ALL SELECT v.data_file_id, v.table_id, "
                   "NULL, NULL, NULL, NULL, NULL, v.partition_key_index, v.partition_value FROM "
                   "%s.ducklake_file_partition_value v JOIN %s.ducklake_data_file d ON "
                   "d.data_file_id = v.data_file_id WHERE d.partition_id = %lld)",
                   meta, meta, meta, (long long)t->partition_id);
    else
        buf_printf(&rows, "%s.ducklake_file_column_stats", meta);
    for (size_t i = 0; i < in->n; i++)
        if (!in->files[i].pending && in->files[i].id >= 0)
            buf_printf(&files, "%s(%lld, %lld)", files.len ? ", " : "", (long long)in->files[i].id,
                       (long long)in->files[i].record_count);
    if (cond.len && files.len) {
        duck_table r;
        if (lk_catdb_queryf(&r, &lake->db, con,
                            "SELECT s.data_file_id FROM %s s JOIN (VALUES %s) f(i, n) ON "
                            "s.data_file_id = f.i WHERE s.table_id = %lld GROUP BY "
                            "s.data_file_id HAVING %s",
                            buf_cstr(&rows), buf_cstr(&files), (long long)t->id,
                            buf_cstr(&cond)) == 0) {
            drop_files(in, &r);
            duck_table_free(&r);
        }
        tarn_error_clear(); /* a constant that does not cast: the query says so itself */
    }
    buf_free(&cond);
    buf_free(&files);
    buf_free(&rows);
}

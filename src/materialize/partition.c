/*
 * partition.c — the partitioned strategy: a table laid out by DuckLake by
 * the model's _tarn_partition column, built one slice at a time. A slice
 * build replaces only its own slice's rows (a DELETE of the slice and an
 * INSERT of the slice's SELECT, in the build's one transaction), or with
 * key= merges by key inside the slice, or with append adds to it; a run
 * without --partition builds every slice the query yields (dynamic). Sets
 * the table's PARTITIONED BY on its first build. Part of model_build.c's
 * build (model_int.h).
 */
#include "materialize/codegen.h"
#include "materialize/model_int.h"

#include "tarn/error.h"
#include "tarn/session.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

static const char *const partition_column[] = {CG_PARTITION_COLUMN};

/* Whether DuckLake already lays the table out by _tarn_partition (its
 * committed partition spec; set_partitioned adds one in the build). */
static int table_is_partitioned(build_state *b)
{
    int yes = 0;
    if (tarn_session_table_partitioned(b->c->s, b->c->lake, b->m->schema, b->m->table, &yes))
        tarn_error_clear();
    return yes;
}

/* Asks DuckLake to lay the table out by _tarn_partition. Until the lake
 * supports ALTER TABLE … SET PARTITIONED BY, slices are still exact (the
 * DELETE + INSERT by _tarn_partition), only not physically separated;
 * the build records which. */
static void set_partitioned(build_state *b)
{
    tarn_buf sql = {0};
    buf_printf(&sql, "ALTER TABLE %s SET PARTITIONED BY (", b->target);
    quote_ident(&sql, CG_PARTITION_COLUMN);
    buf_puts(&sql, ")");
    b->r->physical_partitions = mb_run(b, buf_cstr(&sql), NULL, 0) == 0;
    b->altered |= b->r->physical_partitions;
    if (!b->r->physical_partitions)
        tarn_error_clear();
    buf_free(&sql);
}

/* A table that replace built (guard.h lets only that through) becomes
 * partitioned without losing a row: every row gets the slice its
 * partition column puts it in, and the slices this build makes replace
 * theirs as usual. */
static int add_partition_column(build_state *b)
{
    strlist have = {0};
    int rc = mb_target_columns(b, &have);
    int has = !rc && strlist_find_nocase(&have, CG_PARTITION_COLUMN) >= 0;
    strlist_free(&have);
    if (rc || has)
        return rc;
    tarn_buf sql = {0};
    buf_printf(&sql, "ALTER TABLE %s ADD COLUMN ", b->target);
    quote_ident(&sql, CG_PARTITION_COLUMN);
    buf_puts(&sql, " VARCHAR");
    rc = mb_run(b, buf_cstr(&sql), NULL, 0);
    buf_free(&sql);
    if (!rc) {
        char *expr = cg_partition_expr(b->m->annot.grain, b->m->annot.partition_column);
        buf_printf(&sql, "UPDATE %s SET ", b->target);
        quote_ident(&sql, CG_PARTITION_COLUMN);
        buf_printf(&sql, " = %s", expr);
        free(expr);
        rc = mb_run(b, buf_cstr(&sql), NULL, 1);
        buf_free(&sql);
    }
    if (rc)
        return tarn_error_prefix(rc, "assigning the rows of %s to their slices by %s", b->m->name,
                                 b->m->annot.partition_column);
    b->altered = 1;
    return 0;
}

/* The partition column must be a column of the query: checked at load
 * when the query's text names its columns, here on its rows otherwise
 * (before tarn's own statements would fail on it). */
static int check_partition_column(build_state *b, const strlist *cols)
{
    const model_annot *a = &b->m->annot;
    if (strlist_find_nocase(cols, a->partition_column) >= 0)
        return 0;
    char *have = strlist_join(cols, ", ");
    int rc = tarn_error_set(TARN_EINVALID,
                            "partition column %s is not a column of the query (it returns %s); "
                            "select it, or fix column= on line %d",
                            a->partition_column, have, a->partitioned_line);
    free(have);
    return rc;
}

/* Before a partitioned build writes its slices: the target created
 * (empty, partitioned) when it does not exist yet, else the staged
 * columns checked against it. */
static int partitioned_target(build_state *b, strlist *cols)
{
    if (b->exists)
        return mb_check_columns(b, cols, partition_column, 1);
    char *sql = cg_create_from_stage(b->target, "CAST(NULL AS VARCHAR)", 1);
    int rc = mb_run(b, sql, NULL, 1);
    free(sql);
    if (!rc) {
        b->exists = 1;
        set_partitioned(b);
    }
    return rc;
}

/* How this build writes a slice: replaced (a partitioned replace), merged
 * by key= inside it, or appended to it. A slice rebuilt because other SQL
 * built it, or with --full-refresh, is replaced whatever the strategy: its
 * rows are the new query's, none left from before, none twice. */
static model_strategy slice_mode(build_state *b)
{
    model_strategy k = b->m->annot.strategy;
    const char *why = b->r->run_reason;
    if ((k != STRAT_MERGE && k != STRAT_APPEND) || b->c->o->full_refresh ||
        (why && strcmp(why, REASON_FULL_REBUILD) == 0))
        return STRAT_REPLACE;
    return k;
}

/* key= inside slice `part`: its rows whose key the stage holds with other
 * values are replaced by the staged ones, new keys inserted; the slice's
 * other rows, and every other slice, are left alone. */
static int merge_slice(build_state *b, const char *part, int64_t *rows, const strlist *cols)
{
    const strlist *key = &b->m->annot.key;
    char *in = cg_slice_rows(b->target, part);
    char *sql = cg_changed_keys(in, cols, key);
    free(in);
    int rc = mb_run(b, sql, NULL, 1);
    free(sql);
    int64_t del = 0;
    sql = rc ? NULL : cg_delete_keys_in(b->target, key, part);
    if (sql)
        rc = mb_run(b, sql, &del, 1);
    free(sql);
    if (del > 0)
        b->r->rows_deleted += del;
    sql = rc ? NULL : cg_insert_keys_in(b->target, key, part);
    if (sql)
        rc = mb_run(b, sql, rows, 1);
    free(sql);
    return rc;
}

static int build_partition_slice(build_state *b, const char *part, int64_t *rows, strlist *cols)
{
    const model_annot *a = &b->m->annot;
    int rc = mb_run_setup(b, part);
    if (!rc)
        rc = mb_stage(b, part);
    if (!rc && !cols->n)
        rc = mb_stage_columns(b, cols);
    if (!rc)
        rc = check_partition_column(b, cols);
    if (rc)
        return rc;
    char *sql = cg_outside_partition(a->grain, a->partition_column, part);
    qrows q;
    rc = mb_run_rows(b, &q, sql);
    free(sql);
    if (rc)
        return rc;
    const char *n = qrows_get(&q, 0, 0);
    if (n && strcmp(n, "0") != 0) {
        const char *nulls = qrows_get(&q, 0, 2), *first = qrows_get(&q, 0, 1);
        const char *col = a->partition_column;
        char *filter = a->grain == GRAIN_DYNAMIC
                           ? xasprintf("%s = {partition}", col)
                           : xasprintf("tarn_partition(%s) = {partition}", col);
        char *example = nulls && strcmp(nulls, "0")
                            ? xasprintf("%s with NULL %s", nulls, col)
                            : xasprintf("the first has %s = %s", col, first ? first : "?");
        rc = tarn_error_set(TARN_EINVALID,
                            "partition %s: the SELECT returned %s row%s outside the partition "
                            "(%s); filter with WHERE %s",
                            part, n, strcmp(n, "1") ? "s" : "", example, filter);
        free(filter);
        free(example);
    }
    qrows_free(&q);
    if (rc)
        return rc;
    model_strategy mode = slice_mode(b);
    if (mode == STRAT_MERGE)
        rc = mb_check_keys(b, cols);
    if (!rc)
        rc = partitioned_target(b, cols);
    if (rc)
        return rc;
    if (mode == STRAT_MERGE)
        return merge_slice(b, part, rows, cols);
    tarn_buf lit = {0};
    quote_literal(&lit, part);
    strlist one = {0};
    strlist_push(&one, part);
    if (mode == STRAT_REPLACE) {
        int64_t del = 0;
        sql = cg_delete_partitions(b->target, &one);
        rc = mb_run(b, sql, &del, 1);
        free(sql);
        if (del > 0)
            b->r->rows_deleted += del;
    }
    if (!rc) {
        sql = cg_insert_from_stage(b->target, buf_cstr(&lit));
        rc = mb_run(b, sql, rows, 1);
        free(sql);
    }
    strlist_free(&one);
    buf_free(&lit);
    return rc;
}

/* A dynamic model without --partition: every value of the column the
 * SELECT yields is a slice, replaced as a whole. */
static int build_dynamic_all(build_state *b, strlist *cols)
{
    const model_annot *a = &b->m->annot;
    int rc = mb_run_setup(b, NULL);
    if (!rc)
        rc = mb_stage(b, NULL);
    if (!rc)
        rc = mb_stage_columns(b, cols);
    if (!rc)
        rc = check_partition_column(b, cols);
    if (rc)
        return rc;
    char *expr = cg_partition_expr(a->grain, a->partition_column);
    char *sql = xasprintf("SELECT %s AS p, count(*) FROM " CG_STAGE " GROUP BY 1 ORDER BY 1", expr);
    qrows q;
    rc = mb_run_rows(b, &q, sql);
    free(sql);
    if (rc) {
        free(expr);
        return rc;
    }
    model_result *r = b->r;
    const strlist *stale = &b->c->chg.stale[b->mi];
    r->partition_rows = xcalloc(q.nrows + stale->n + 1, sizeof(int64_t));
    for (size_t i = 0; i < q.nrows && !rc; i++) {
        if (!qrows_get(&q, i, 0))
            rc = tarn_error_set(TARN_EINVALID,
                                "%s rows have a NULL %s, which names no partition; filter them "
                                "out or give them a value",
                                qrows_get(&q, i, 1), a->partition_column);
        else {
            strlist_push(&r->partitions, qrows_get(&q, i, 0));
            r->partition_rows[i] = strtoll(qrows_get(&q, i, 1), NULL, 10);
        }
    }
    qrows_free(&q);
    /* Changed SQL: the slices other SQL built that this one no longer
     * yields are rebuilt too — as empty. */
    for (size_t i = 0; !rc && i < stale->n; i++)
        if (strlist_find(&r->partitions, stale->items[i]) < 0)
            strlist_push(&r->partitions, stale->items[i]);
    if (!rc)
        rc = partitioned_target(b, cols);
    if (!rc && r->partitions.n) {
        sql = cg_delete_partitions(b->target, &r->partitions);
        rc = mb_run(b, sql, &r->rows_deleted, 1);
        free(sql);
        if (r->rows_deleted < 0)
            r->rows_deleted = 0;
    }
    if (!rc) {
        sql = cg_insert_from_stage(b->target, expr);
        rc = mb_run(b, sql, &r->rows_written, 1);
        free(sql);
    }
    free(expr);
    return rc;
}

int build_partitioned(build_state *b)
{
    model_result *r = b->r;
    const strlist *parts = &b->c->partitions[b->mi];
    strlist cols = {0};
    int rc = 0;
    if (!b->exists || !table_is_partitioned(b))
        r->physical_partitions = 0;
    else
        r->physical_partitions = 1;
    if (b->exists && !r->physical_partitions)
        rc = add_partition_column(b);
    if (!rc && b->exists && !r->physical_partitions)
        set_partitioned(b);
    if (rc)
        return rc;
    if (parts->n == 0) {
        rc = build_dynamic_all(b, &cols);
    } else {
        r->partition_rows = xcalloc(parts->n, sizeof(int64_t));
        for (size_t i = 0; i < parts->n && !rc; i++) {
            strlist_push(&r->partitions, parts->items[i]);
            rc = build_partition_slice(b, parts->items[i], &r->partition_rows[i], &cols);
            if (!rc)
                r->rows_written += r->partition_rows[i];
        }
    }
    strlist_free(&cols);
    return rc;
}
/*
 * compile.c — `tarn compile MODEL`: the SQL a build of one model would run
 * now, as dbt compile and SQLMesh render print it. The text comes from the
 * pieces the build itself uses (pin.c for the reads pinned to snapshots,
 * codegen.c for each strategy's statements), in the order model_build.c,
 * history.c, incremental.c and partition.c run them; nothing is written
 * (the lake is read for its tables, the snapshot and an incremental
 * model's watermark). The build's own checks (duplicate keys, rows outside
 * a slice, columns against the table) are printed as the queries they are.
 */
#include "materialize/build.h"
#include "materialize/codegen.h"
#include "materialize/datatest.h"
#include "materialize/model_int.h"

#include "project/annot.h"
#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    run_ctx *c;
    size_t mi;
    const tarn_model *m;
    char *target;
    int exists; /* the model's table is in the lake */
    tarn_buf *out;
} compile_state;

/* Appends statement `sql` (taking it) with a comment line above it. */
static void emit(compile_state *k, const char *comment, char *sql)
{
    if (comment)
        buf_printf(k->out, "-- %s\n", comment);
    size_t n = strlen(sql);
    while (n && (sql[n - 1] == '\n' || sql[n - 1] == ' ' || sql[n - 1] == ';'))
        n--;
    buf_printf(k->out, "%.*s;\n\n", (int)n, sql);
    free(sql);
}

static char *pinned(compile_state *k, size_t i, const char *partition)
{
    return pin_statement(k->c, k->mi, &k->m->body.items[i], partition, &k->c->sum->results[k->mi]);
}

/* The model's setup statements, pinned (and run in the session, so that
 * the query's columns can be probed after them). */
static int setup(compile_state *k, const char *partition, int print)
{
    for (size_t i = 0; i + 1 < k->m->body.n; i++) {
        char *sql = pinned(k, i, partition);
        int rc = query_exec(k->c->s, sql, NULL);
        if (rc) {
            free(sql);
            return tarn_error_prefix(rc, "%s:%d", k->m->path, k->m->body.items[i].line);
        }
        if (print)
            emit(k, i == 0 ? "the model's setup statements" : NULL, sql);
        else
            free(sql);
    }
    return 0;
}

/* The columns the query returns (a zero-row probe). */
static int query_columns(compile_state *k, const char *q, strlist *cols)
{
    char *sql = xasprintf("SELECT * FROM (\n%s\n) LIMIT 0", q);
    qrows r;
    int rc = query_rows(&r, k->c->s, sql);
    free(sql);
    if (rc) {
        const model_stmt *st = &k->m->body.items[k->m->body.n - 1];
        return tarn_error_prefix(rc, "%s:%d", k->m->path, st->line);
    }
    for (size_t i = 0; i < r.ncols; i++)
        strlist_push(cols, r.names[i]);
    qrows_free(&r);
    return 0;
}

static void merge_steps(compile_state *k, const strlist *cols)
{
    const strlist *key = &k->m->annot.key;
    emit(k, "the keys whose rows changed", cg_changed_keys(k->target, cols, key));
    emit(k, "their rows out", cg_delete_keys(k->target, key));
    emit(k, "their staged rows in", cg_insert_keys(k->target, key));
}

static int compile_merge(compile_state *k, const char *q)
{
    strlist cols = {0};
    int rc = k->exists ? query_columns(k, q, &cols) : 0;
    emit(k, "the query's rows, staged", cg_stage(q));
    emit(k, "the build fails if a key appears twice (nothing written)",
         cg_duplicate_keys(&k->m->annot.key, 5));
    if (!rc && !k->exists)
        emit(k, "a first build: the table from the stage",
             cg_create_from_stage(k->target, NULL, 0));
    else if (!rc)
        merge_steps(k, &cols);
    strlist_free(&cols);
    return rc;
}

/* The build's valid_from/valid_to: the run's start, as history.c writes it. */
static char *run_time(void)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    char text[32];
    strftime(text, sizeof(text), "%Y-%m-%d %H:%M:%S", &tm);
    tarn_buf b = {0};
    buf_puts(&b, "TIMESTAMP ");
    quote_literal(&b, text);
    return buf_detach(&b);
}

static int compile_history(compile_state *k, const char *q)
{
    const model_annot *a = &k->m->annot;
    strlist cols = {0}, track = {0};
    int rc = k->exists ? query_columns(k, q, &cols) : 0;
    char *ts = run_time();
    emit(k, "the query's rows, staged", cg_stage(q));
    emit(k, "the build fails if a key appears twice (nothing written)",
         cg_duplicate_keys(&a->key, 5));
    if (!rc && !k->exists) {
        emit(k, "a first build: every row opens a version", cg_history_create(k->target, ts));
        emit(k, "the current rows' view", cg_history_view(k->c->lake, k->m->schema, k->m->table));
    } else if (!rc) {
        for (size_t i = 0; i < a->track.n; i++)
            strlist_push(&track, a->track.items[i]);
        for (size_t i = 0; !a->track.n && i < cols.n; i++)
            if (strlist_find_nocase(&a->key, cols.items[i]) < 0)
                strlist_push(&track, cols.items[i]);
        emit(k,
             a->deletes_close ? "the keys whose tracked columns changed, new keys, and keys gone "
                                "from the query (deletes=close)"
                              : "the keys whose tracked columns changed, and new keys",
             cg_history_keys(k->target, &a->key, &track, a->deletes_close));
        emit(k, "their current versions closed", cg_history_close(k->target, &a->key, ts));
        emit(k, "their new versions opened", cg_history_open(k->target, &a->key, ts));
    }
    free(ts);
    strlist_free(&cols);
    strlist_free(&track);
    return rc;
}

/* An incremental model: the range it would read (incremental.c says which,
 * from the run record and the table), staged, then replaced or merged. */
static int compile_incremental(compile_state *k)
{
    const model_annot *a = &k->m->annot;
    model_result r = {0};
    build_state b = {.c = k->c, .mi = k->mi, .m = k->m, .r = &r, .target = k->target};
    int rebuild = !k->exists || k->c->o->full_refresh;
    char *filter = NULL, *mark = NULL, *note = NULL;
    int rc = inc_describe(&b, rebuild, &filter, &mark, &note);
    if (rc)
        return rc;
    k->c->watermark_sql = mark;
    buf_printf(k->out, "-- %s; {watermark} is %s\n\n", note, mark ? mark : "NULL");
    rc = setup(k, NULL, 1);
    char *q = rc ? NULL : pinned(k, k->m->body.n - 1, NULL);
    strlist cols = {0};
    if (q && k->exists && a->key.n)
        rc = query_columns(k, q, &cols);
    if (q && !rc) {
        emit(k, "the range's rows, staged", filter ? cg_stage_where(q, filter) : cg_stage(q));
        if (a->key.n)
            emit(k, "the build fails if a key appears twice (nothing written)",
                 cg_duplicate_keys(&a->key, 5));
        if (rebuild)
            emit(k, "a first or full build: the table from the stage",
                 cg_replace(k->target, "SELECT * FROM " CG_STAGE));
        else if (a->key.n)
            merge_steps(k, &cols);
        else {
            if (filter)
                emit(k, "the range replaced: its rows deleted (unless they are the staged ones)",
                     xasprintf("DELETE FROM %s WHERE %s", k->target, filter));
            emit(k, "… and the staged rows inserted", cg_insert_from_stage(k->target, NULL));
        }
    }
    k->c->watermark_sql = NULL;
    free(q);
    free(mark);
    free(filter);
    free(note);
    build_result_free(&r);
    strlist_free(&cols);
    return rc;
}

static void tests_and_commit(compile_state *k)
{
    datatest_sql(k->out, k->c, k->mi, k->target, &k->c->sum->results[k->mi]);
    buf_puts(k->out, "-- then the commit message and tarn's run records, in the same "
                     "transaction\n");
    buf_puts(k->out, "COMMIT;\n");
}

static int compile_slice(compile_state *k, const char *part)
{
    const model_annot *a = &k->m->annot;
    buf_printf(k->out, "-- slice %s: a build and a snapshot of its own\nBEGIN;\n\n", part);
    int rc = setup(k, part, 1);
    if (rc)
        return rc;
    char *q = pinned(k, k->m->body.n - 1, part);
    emit(k, "the slice's rows, staged", cg_stage(q));
    emit(k, "the build fails if a row lies outside the slice",
         cg_outside_partition(a->grain, a->partition_column, part));
    if (!k->exists) {
        emit(k, "a first build: the table",
             cg_create_from_stage(k->target, "CAST(NULL AS VARCHAR)", 1));
        tarn_buf alter = {0};
        buf_printf(&alter, "ALTER TABLE %s SET PARTITIONED BY (", k->target);
        quote_ident(&alter, CG_PARTITION_COLUMN);
        buf_puts(&alter, ")");
        emit(k, "laid out by DuckLake partitioning on the slice", buf_detach(&alter));
    }
    strlist one = {0};
    strlist_push(&one, part);
    emit(k, "the slice's old rows out", cg_delete_partitions(k->target, &one));
    tarn_buf lit = {0};
    quote_literal(&lit, part);
    emit(k, "its new rows in", cg_insert_from_stage(k->target, buf_cstr(&lit)));
    buf_free(&lit);
    strlist_free(&one);
    free(q);
    tests_and_commit(k);
    buf_putc(k->out, '\n');
    return 0;
}

static int compile_partitioned(compile_state *k)
{
    const model_annot *a = &k->m->annot;
    if (a->grain != GRAIN_DYNAMIC)
        emit(k, "{partition}'s macro, for WHERE tarn_partition(ts) = {partition}",
             cg_partition_macro(a->grain));
    const strlist *parts = &k->c->partitions[k->mi];
    if (parts->n == 0) {
        /* a dynamic model without --partition replaces every slice its query yields */
        buf_puts(k->out, "BEGIN;\n\n");
        int rc = setup(k, NULL, 1);
        if (rc)
            return rc;
        char *q = pinned(k, k->m->body.n - 1, NULL);
        emit(k, "the query's rows, staged", cg_stage(q));
        char *expr = cg_partition_expr(a->grain, a->partition_column);
        buf_printf(k->out,
                   "-- the slices the stage holds (SELECT DISTINCT %s FROM " CG_STAGE
                   ") lose their old rows:\n-- DELETE FROM %s WHERE \"" CG_PARTITION_COLUMN
                   "\" IN (those slices);\n\n",
                   expr, k->target);
        emit(k, "the stage's rows in, each with its slice", cg_insert_from_stage(k->target, expr));
        free(expr);
        free(q);
        tests_and_commit(k);
        return 0;
    }
    for (size_t i = 0; i < parts->n; i++) {
        int rc = compile_slice(k, parts->items[i]);
        if (rc)
            return rc;
        k->exists = 1;
    }
    return 0;
}

static int compile_strategy(compile_state *k)
{
    const tarn_model *m = k->m;
    model_strategy st = m->annot.strategy;
    if (st == STRAT_INCREMENTAL)
        return compile_incremental(k);
    if (st == STRAT_MANUAL) {
        for (size_t i = 0; i < m->body.n; i++)
            emit(k, i == 0 ? "the script, in the build's transaction" : NULL, pinned(k, i, NULL));
        return 0;
    }
    int rc = setup(k, NULL, 1);
    if (rc)
        return rc;
    char *q = pinned(k, m->body.n - 1, NULL);
    if (st == STRAT_MERGE)
        rc = compile_merge(k, q);
    else if (st == STRAT_HISTORY)
        rc = compile_history(k, q);
    else if (st == STRAT_APPEND && k->exists)
        emit(k, "the query's rows appended (after a zero-row probe of its columns)",
             cg_append(k->target, q));
    else
        emit(k, st == STRAT_APPEND ? "a first build: the table from the query" : NULL,
             cg_replace(k->target, q));
    free(q);
    return rc;
}

int build_compile(tarn_buf *out, tarn_project *p, tarn_session *s, const build_opts *o, size_t mi)
{
    run_ctx c;
    build_summary sum;
    int rc = run_ctx_open(&c, &sum, p, s, o);
    if (rc)
        return rc;
    const tarn_model *m = &p->models[mi];
    compile_state k = {.c = &c, .mi = mi, .m = m, .out = out};
    tarn_buf t = {0};
    cg_target(&t, c.lake, m->schema, m->table);
    k.target = buf_detach(&t);
    k.exists = run_has_table(&c, m->schema, m->table);
    buf_printf(out, "-- tarn compile %s (%s): %s\n", m->name, annot_strategy_label(&m->annot),
               m->path);
    buf_printf(out,
               "-- reads pinned to the lake's snapshot %lld (in a run, a model rebuilt before "
               "this one is read at its new snapshot)\n",
               (long long)sum.start_snapshot);
    buf_printf(out, "-- %s\n\n",
               k.exists ? "its table exists: a later build"
                        : "its table does not exist yet: a first build");
    if (m->annot.grain) {
        /* each slice is its own transaction */
        rc = compile_partitioned(&k);
    } else {
        buf_puts(out, "BEGIN;\n\n");
        rc = compile_strategy(&k);
        if (!rc)
            tests_and_commit(&k);
    }
    free(k.target);
    run_ctx_close(&c);
    return rc;
}

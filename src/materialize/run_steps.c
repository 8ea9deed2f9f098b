/*
 * run_steps.c — the steps of a run for one model, as every way of running
 * takes them (build_run in order, run_parallel.c with -j N, remote.c over
 * workers, worker.c for one job): decide whether it builds (skipped when
 * its upstream failed or nothing it depends on changed), build it — a
 * partitioned model slice by slice, each its own snapshot — count it,
 * record it and report it. Part of the runner (run_int.h).
 */
#include "materialize/records.h"
#include "materialize/run_int.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

void run_emit(run_ctx *c, build_event_type type, size_t model, size_t index)
{
    if (!c->o->on_event)
        return;
    build_event ev = {.type = type,
                      .project = c->p,
                      .summary = c->sum,
                      .result = type == BUILD_MODEL_START || type == BUILD_MODEL_FINISH
                                    ? &c->sum->results[model]
                                    : NULL,
                      .index = index};
    c->o->on_event(c->o->ctx, &ev);
}

/* A model is skipped when something it reads failed or was skipped in
 * this run; the reason names the first such upstream model. */
static int skip_reason(run_ctx *c, size_t mi, const unsigned char *sel, model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    for (size_t i = 0; i < m->nup; i++) {
        size_t u = m->up[i].model;
        const model_result *ur = &c->sum->results[u];
        if (!sel[u] || ur->unchanged || (ur->status != MODEL_FAILED && ur->status != MODEL_SKIPPED))
            continue;
        r->error = xasprintf("upstream %s %s", c->p->models[u].name,
                             ur->status == MODEL_FAILED ? "failed" : "was skipped");
        return 1;
    }
    return 0;
}

void run_record_alone(run_ctx *c, size_t mi, const model_result *r)
{
    strlist recs = {0};
    records_model(&recs, c->cat, c->sum->run_id, &c->p->models[mi], r, "[]");
    for (size_t i = 0; i < recs.n; i++)
        if (query_exec(c->s, recs.items[i], NULL) != 0)
            tarn_error_clear();
    strlist_free(&recs);
}

void run_result_prepare(run_ctx *c, size_t mi, char *why)
{
    const tarn_model *m = &c->p->models[mi];
    model_result *r = &c->sum->results[mi];
    r->run_reason = why;
    free(r->warning);
    r->warning = change_warning(&c->chg, mi);
    r->config_hash = c->chg.config_hash[mi];
    r->source_files = c->chg.files_json[mi];
    r->target_version = change_version(&c->chg, m->schema, m->table);
}

/* Whether model mi builds: 0 when it is skipped (its upstream failed, or
 * nothing it depends on changed; recorded and reported here), 1 when it
 * builds (its run reason set). */
int run_decide(run_ctx *c, size_t mi, size_t index)
{
    build_summary *out = c->sum;
    const tarn_model *m = &c->p->models[mi];
    model_result *r = &out->results[mi];
    char *why = NULL;
    if (!skip_reason(c, mi, c->o->selected, r)) {
        why = change_reason(&c->chg, mi, c->o, NULL);
        r->unchanged = why == NULL;
    }
    if (!why) {
        r->status = MODEL_SKIPPED;
        r->started_at = clock_epoch_s();
        if (r->unchanged) {
            /* said again while the model is skipped: a read of a retired
             * model's table is why it never changes */
            free(r->warning);
            r->warning = change_warning(&c->chg, mi);
            /* one INSERT for all of them, at the end of the run */
            if (c->unchanged_rows.len)
                buf_puts(&c->unchanged_rows, ", ");
            else
                records_model_insert(&c->unchanged_rows, c->cat);
            records_model_values(&c->unchanged_rows, out->run_id, m, r, "[]");
            out->unchanged++;
        } else {
            run_record_alone(c, mi, r);
            out->skipped++;
        }
        run_emit(c, BUILD_MODEL_FINISH, mi, index);
        return 0;
    }
    if (c->o->slices || c->from_start[mi]) {
        free(why);
        why = c->o->slices
                  ? xstrdup("backfill")
                  : xasprintf("first run (every slice from start=%s)", m->annot.partition_start);
    }
    run_result_prepare(c, mi, why);
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the build of one slice `one` to the model's result `r`, and frees
 * what `one` holds. */
void run_fold_slice(model_result *r, model_result *one)
{
    if (r->partitions.n == 0)
        r->started_at = one->started_at;
    /* a failed slice fails the model, whatever the slices after it did */
    if (r->partitions.n == 0 || r->status == MODEL_SUCCESS)
        r->status = one->status;
    r->no_change = (r->partitions.n == 0 || r->no_change) && one->no_change;
    /* a slice whose commit conflicted with another's makes the model worth
     * building again (a worker does: its committed slices are kept) */
    r->conflict |= one->conflict;
    r->lost |= one->lost;
    if (one->status == MODEL_SUCCESS && !one->no_change)
        r->snapshot_id = one->snapshot_id;
    else if (r->snapshot_id < 0)
        r->snapshot_id = one->snapshot_id;
    r->rows_written += one->rows_written;
    r->rows_deleted += one->rows_deleted;
    r->duration_ms += one->duration_ms;
    r->query_ms += one->query_ms;
    r->physical_partitions = one->physical_partitions;
    r->partition_rows = xrealloc(r->partition_rows, (r->partitions.n + 1) * sizeof(int64_t));
    r->partition_rows[r->partitions.n] = one->partition_rows ? one->partition_rows[0] : 0;
    strlist_push(&r->partitions, one->partitions.n ? one->partitions.items[0] : "");
    if (!r->upstream) {
        r->upstream = one->upstream;
        r->nupstream = one->nupstream;
        one->upstream = NULL;
        one->nupstream = 0;
    }
    free(r->tests_json);
    r->tests_json = one->tests_json;
    one->tests_json = NULL;
    if (one->error && !r->error) { /* the first failure's, named by its slice */
        r->error = one->partitions.n && strncmp(one->error, "partition ", 10) != 0
                       ? xasprintf("partition %s: %s", one->partitions.items[0], one->error)
                       : one->error;
        if (r->error == one->error)
            one->error = NULL;
    }
    if (one->warning) {
        char *w = r->warning ? xasprintf("%s\n%s", r->warning, one->warning) : one->warning;
        if (w == one->warning)
            one->warning = NULL;
        free(r->warning);
        r->warning = w;
    }
    one->run_reason = NULL; /* r's */
    build_result_free(one);
}

/* A partitioned model's slices, each a build and a snapshot of its own,
 * so that one bad slice fails alone and a run stopped halfway resumes with
 * the slices left (`tarn backfill`, or the next run). A changed model
 * rebuilds, besides the slices the run asks for, every slice other SQL
 * built (the slices rebuilt carry the new model hash); its first failure
 * stops it (the new SQL is wrong). Otherwise every slice is tried. */
static void build_slices(run_ctx *c, size_t mi, model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    strlist all = {0};
    strlist_copy(&all, &c->partitions[mi]);
    int rebuild = r->run_reason && strcmp(r->run_reason, REASON_FULL_REBUILD) == 0;
    const strlist *stale = &c->chg.stale[mi];
    for (size_t i = 0; i < stale->n && !c->o->slices && rebuild; i++)
        if (strlist_find(&all, stale->items[i]) < 0)
            strlist_push(&all, stale->items[i]);
    qsort(all.items, all.n, sizeof(char *), cmp_str);
    strlist saved = c->partitions[mi];
    int failed = 0;
    for (size_t i = 0; i < all.n && !(failed && rebuild) && !build_cancel_signal(); i++) {
        if (c->committed_slices && strlist_find(c->committed_slices, all.items[i]) >= 0)
            continue; /* a lost worker committed it in this run */
        c->partitions[mi] = (strlist){0};
        strlist_push(&c->partitions[mi], all.items[i]);
        model_result one = {.model = mi,
                            .snapshot_id = -1,
                            .run_reason = r->run_reason,
                            .config_hash = r->config_hash,
                            .source_files = r->source_files,
                            .target_version = change_version(&c->chg, m->schema, m->table)};
        model_build(c, mi, &one);
        failed |= one.status != MODEL_SUCCESS;
        if (one.status == MODEL_SUCCESS && !one.no_change)
            change_set_version(&c->chg, m->schema, m->table, one.snapshot_id);
        if (c->o->on_slice) {
            build_event ev = {.type = BUILD_MODEL_FINISH,
                              .project = c->p,
                              .summary = c->sum,
                              .result = &one,
                              .slice = all.items[i],
                              .slice_index = i + 1,
                              .slice_total = all.n};
            c->o->on_slice(c->o->ctx, &ev);
        }
        run_fold_slice(r, &one);
        strlist_free(&c->partitions[mi]);
    }
    c->partitions[mi] = saved;
    strlist_free(&all);
}

/* The snapshot of model mi's success record in this run, or -1: the
 * records of a build are in its commit, so there is one when the commit
 * landed. */
static int64_t committed_in_run(run_ctx *c, size_t mi)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT max(snapshot_id) FROM ");
    quote_prefixed(&q, c->cat, "tarn_model_run");
    buf_printf(
        &q, " WHERE run_id = %lld AND status = 'success' AND model = ", (long long)c->sum->run_id);
    quote_literal(&q, c->p->models[mi].name);
    qrows r;
    int rc = catalog_rows(&r, c->s, c->lake, buf_cstr(&q));
    buf_free(&q);
    if (rc) {
        tarn_error_clear();
        return -1;
    }
    int64_t snap = r.nrows && qrows_get(&r, 0, 0) ? strtoll(qrows_get(&r, 0, 0), NULL, 10) : -1;
    qrows_free(&r);
    return snap;
}

/* How many times a run in one process builds a model again whose catalog
 * connection was lost. */
#define LOST_AGAIN 2

/* model_build, and in a run in one process, again when the build failed
 * on its catalog connection, lost (PostgreSQL dropped it, also inside the
 * commit's catalog transaction): unless the commit landed before the
 * connection went (its success record says), which is then the build. A
 * worker builds a job again itself (worker.c). */
static void build_model(run_ctx *c, size_t mi, model_result *r)
{
    if (c->on_commit) {
        model_build(c, mi, r);
        return;
    }
    for (int again = 0;; again++) {
        c->builds_again = again < LOST_AGAIN;
        model_build(c, mi, r);
        c->builds_again = 0;
        if (r->status != MODEL_FAILED || !r->lost || again >= LOST_AGAIN)
            return;
        int64_t snap = committed_in_run(c, mi);
        if (tarn_session_catch_up(c->s, c->lake) != 0) /* what the lost commit made */
            tarn_error_clear();
        if (snap >= 0) {
            r->status = MODEL_SUCCESS;
            r->snapshot_id = snap;
            r->lost = 0;
            free(r->error);
            r->error = NULL;
            return;
        }
        /* a fresh result, with what run_result_prepare gave it */
        model_result keep = *r;
        *r = (model_result){.model = mi, .snapshot_id = -1};
        r->run_reason = keep.run_reason;
        r->warning = keep.warning;
        r->config_hash = keep.config_hash;
        r->source_files = keep.source_files;
        r->target_version = keep.target_version;
        keep.run_reason = keep.warning = NULL; /* r's now (the hashes are c->chg's) */
        build_result_free(&keep);
    }
}

/* Builds model mi, decided to build (its START event already out). */
void run_execute(run_ctx *c, size_t mi, size_t index)
{
    build_summary *out = c->sum;
    const tarn_model *m = &c->p->models[mi];
    model_result *r = &out->results[mi];
    int rebuild =
        c->chg.stale[mi].n && r->run_reason && strcmp(r->run_reason, REASON_FULL_REBUILD) == 0;
    if (m->annot.grain && c->partitions[mi].n &&
        (c->partitions[mi].n > 1 || c->o->slices || rebuild))
        build_slices(c, mi, r);
    else
        build_model(c, mi, r);
    if (r->status == MODEL_SUCCESS) {
        out->succeeded++;
        if (!r->no_change)
            change_set_version(&c->chg, m->schema, m->table, r->snapshot_id);
    } else if (r->status == MODEL_CANCELLED) {
        out->cancelled++;
    } else {
        out->failed++;
    }
    run_emit(c, BUILD_MODEL_FINISH, mi, index);
    r->config_hash = r->source_files = NULL; /* owned by c->chg */
}

/* A model the stopped run never started: recorded as skipped, not run. */
void run_not_run(run_ctx *c, size_t mi, size_t index)
{
    model_result *r = &c->sum->results[mi];
    r->status = MODEL_SKIPPED;
    r->unchanged = 0;
    r->started_at = clock_epoch_s();
    free(r->error);
    r->error = xstrdup("not run: the run was stopped");
    run_record_alone(c, mi, r);
    c->sum->not_run++;
    run_emit(c, BUILD_MODEL_FINISH, mi, index);
}

void run_one(run_ctx *c, size_t mi, size_t index)
{
    if (build_cancel_signal()) {
        run_not_run(c, mi, index);
        return;
    }
    if (!run_decide(c, mi, index))
        return;
    run_emit(c, BUILD_MODEL_START, mi, index);
    run_execute(c, mi, index);
}

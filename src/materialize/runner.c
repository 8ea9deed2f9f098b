/*
 * runner.c — a run (build_run, see build.h): config, checks, then every
 * selected model in DAG order, skipping the downstream of failures; and
 * `tarn test`'s run of data tests on what is published.
 *
 * Everything that can be checked before writing is checked first — the
 * config runs, every table a model reads exists, every partition argument
 * parses — so that a project error leaves the lake exactly as it was.
 * This file holds the run's context, its start and finish records and the
 * choice of how it runs; the parts are, through run_int.h:
 *   run_reads.c     config/, the lake's tables, what each read resolves to
 *   run_slices.c    which slices of a partitioned model the run builds
 *   run_steps.c     one model: decide, build (slice by slice), record
 *   run_parallel.c  -j N: queries evaluated ahead by worker threads
 *   remote.c        --on-workers: models built by `tarn worker` processes
 *   run_beat.c      the run's heartbeat on a shared catalog
 */
#include "materialize/datatest.h"
#include "materialize/queue.h"
#include "materialize/records.h"
#include "materialize/run_int.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/clock.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* ---- tarn test: data tests on what is published ---------------------- */

/* Runs model mi's data tests on its table at the run's start snapshot,
 * and records them (tarn_test_result). A model not built yet fails. */
static void test_model(run_ctx *c, size_t mi, size_t index)
{
    const tarn_model *m = &c->p->models[mi];
    model_result *r = &c->sum->results[mi];
    run_emit(c, BUILD_MODEL_START, mi, index);
    r->started_at = clock_epoch_s();
    double t0 = clock_mono_ms();
    int rc = 0;
    if (!run_has_table(c, m->schema, m->table)) {
        rc = tarn_error_set(TARN_EINVALID,
                            "%s is not built yet (lake \"%s\" has no table %s): "
                            "tarn run %s first",
                            m->name, c->lake, m->name, m->name);
    } else {
        tarn_buf t = {0};
        quote_qualified(&t, c->lake, m->schema, m->table);
        buf_printf(&t, " AT (VERSION => %lld)", (long long)c->sum->start_snapshot);
        rc = datatest_run(c, mi, buf_cstr(&t), r);
        buf_free(&t);
    }
    r->duration_ms = r->query_ms = clock_mono_ms() - t0;
    r->status = rc ? MODEL_FAILED : MODEL_SUCCESS;
    if (rc)
        r->error = xstrdup(tarn_error_last());
    tarn_error_clear();
    strlist recs = {0};
    records_tests(&recs, c->cat, c->sum->run_id, m, r, c->sum->start_snapshot);
    for (size_t i = 0; i < recs.n; i++)
        if (query_exec(c->s, recs.items[i], NULL) != 0)
            tarn_error_clear();
    strlist_free(&recs);
    if (rc)
        c->sum->failed++;
    else
        c->sum->succeeded++;
    run_emit(c, BUILD_MODEL_FINISH, mi, index);
}
static void ctx_free(run_ctx *c)
{
    strlist_free(&c->lake_tables);
    strlist_free(&c->lake_views);
    strlist_free(&c->lake_schemas);
    for (size_t i = 0; i < c->nsources; i++) {
        free(c->sources[i].key);
        free(c->sources[i].schema);
        free(c->sources[i].table);
    }
    free(c->sources);
    free(c->built_snapshot);
    change_free(&c->chg);
    buf_free(&c->unchanged_rows);
    if (c->partitions)
        for (size_t i = 0; i < c->p->nmodels; i++)
            strlist_free(&c->partitions[i]);
    free(c->partitions);
    free(c->from_start);
}

/* --on-workers: the catalog must take writes from several processes. */
static int check_shared(run_ctx *c)
{
    int shared = 0;
    int rc = tarn_session_catalog_shared(c->s, c->lake, &shared);
    if (rc || shared)
        return rc;
    return tarn_error_set(TARN_EINVALID,
                          "--on-workers: lake \"%s\" has its catalog in a DuckDB file, which one "
                          "process writes at a time, so workers cannot share it; attach the lake "
                          "with a PostgreSQL catalog in config/ (ATTACH "
                          "'ducklake:postgres:dbname=… host=…' AS %s (DATA_PATH '…'), README \"A "
                          "catalog in PostgreSQL\"), or run without --on-workers",
                          c->lake, c->lake);
}

static int prepare(run_ctx *c, const unsigned char *sel)
{
    tarn_project *p = c->p;
    build_summary *sum = c->sum;
    int rc = run_prepare_reads(c, sel);
    if (!rc && c->o->on_workers)
        rc = check_shared(c);
    if (rc)
        return rc;
    rc = records_ensure(c->s, c->cat);
    if (!rc && c->o->on_workers)
        rc = queue_ensure(c->s, c->cat);
    if (!rc)
        rc = records_mark_interrupted(c->s, c->lake, c->cat, &sum->interrupted_runs);
    if (!rc && !c->o->test_only)
        rc = change_load(&c->chg, p, c->s, c->lake, c->cat, sel);
    if (rc)
        return rc;
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT COALESCE(max(run_id), 0) + 1 FROM ");
    quote_prefixed(&sql, c->cat, "tarn_run");
    rc = query_int64(&sum->run_id, c->s, buf_cstr(&sql));
    buf_free(&sql);
    if (rc)
        return rc;
    char *ins = records_run_start(c->cat, sum, c->o->selectors ? c->o->selectors : "",
                                  c->o->tarn_version ? c->o->tarn_version : "", c->o->trigger,
                                  c->o->occurrence, c->p->target);
    rc = query_exec(c->s, ins, NULL);
    free(ins);
    return rc;
}
/* The run's context and summary before anything runs (build_run and
 * run_ctx_open). */
static void ctx_init(run_ctx *c, build_summary *out, tarn_project *p, tarn_session *s,
                     const build_opts *o)
{
    memset(out, 0, sizeof(*out));
    out->started_at = clock_epoch_s();
    out->results = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(model_result));
    out->run_order = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(size_t));
    for (size_t k = 0; k < p->nmodels; k++) {
        size_t mi = p->order[k];
        out->results[mi].model = mi;
        out->results[mi].snapshot_id = -1;
        if (o->selected[mi])
            out->run_order[out->nrun++] = mi;
    }
    *c = (run_ctx){.p = p, .s = s, .o = o, .sum = out};
    c->built_snapshot = xmalloc((p->nmodels ? p->nmodels : 1) * sizeof(int64_t));
    for (size_t i = 0; i < p->nmodels; i++)
        c->built_snapshot[i] = -1;
    c->partitions = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(strlist));
    c->from_start = xcalloc(p->nmodels ? p->nmodels : 1, 1);
}

int run_ctx_open(run_ctx *c, build_summary *sum, tarn_project *p, tarn_session *s,
                 const build_opts *o)
{
    ctx_init(c, sum, p, s, o);
    int rc = run_prepare_reads(c, o->selected);
    if (!rc)
        rc = change_load(&c->chg, p, s, c->lake, c->cat, o->selected);
    if (rc)
        run_ctx_close(c);
    return rc;
}

void run_ctx_close(run_ctx *c)
{
    ctx_free(c);
    build_summary_free(c->sum, c->p->nmodels);
}

int build_run(build_summary *out, tarn_project *p, tarn_session *s, const build_opts *o)
{
    run_ctx c;
    ctx_init(&c, out, p, s, o);
    double t0 = clock_mono_ms();
    int rc = prepare(&c, o->selected);
    if (rc) {
        ctx_free(&c);
        return rc;
    }
    run_beat *beat = run_beat_start(&c);
    run_start_workers(&c);
    run_emit(&c, BUILD_RUN_START, 0, 0);
    if (o->test_only)
        for (size_t k = 0; k < out->nrun; k++)
            test_model(&c, out->run_order[k], k + 1);
    else if (o->on_workers)
        run_on_workers(&c);
    else if (c.pf)
        run_parallel(&c);
    else
        for (size_t k = 0; k < out->nrun; k++)
            run_one(&c, out->run_order[k], k + 1);
    prefetch_close(c.pf);
    c.pf = NULL;
    if (c.unchanged_rows.len && query_exec(s, buf_cstr(&c.unchanged_rows), NULL) != 0)
        tarn_error_clear();
    out->duration_ms = clock_mono_ms() - t0;
    int64_t end = out->start_snapshot;
    if (tarn_session_snapshot(s, c.lake, &end) != 0)
        tarn_error_clear();
    out->stop_signal = build_cancel_signal();
    char *fin = records_run_finish(c.cat, out, end);
    int frc = query_exec(s, fin, NULL);
    if (frc == TARN_ELOST) { /* the catalog connection opens again; the update is the same */
        tarn_error_clear();
        frc = query_exec(s, fin, NULL);
    }
    if (frc != 0)
        tarn_error_clear();
    free(fin);
    run_beat_stop(beat);
    run_emit(&c, BUILD_RUN_FINISH, 0, 0);
    ctx_free(&c);
    return 0;
}

void build_summary_free(build_summary *sum, size_t nmodels)
{
    if (sum->results)
        for (size_t i = 0; i < nmodels; i++)
            build_result_free(&sum->results[i]);
    free(sum->results);
    free(sum->run_order);
    free(sum->jobs_note);
    memset(sum, 0, sizeof(*sum));
}
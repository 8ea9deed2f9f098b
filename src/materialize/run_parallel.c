/*
 * run_parallel.c — a run with -j N: N-1 worker threads (prefetch.h)
 * evaluate ahead the queries of models whose upstream is done, while the
 * main thread builds in run order — committing each model as build_run
 * would, one at a time, so the lake sees the same snapshots in the same
 * order. Part of the runner (run_int.h); the steps are run_steps.c's.
 */
#include "materialize/codegen.h"
#include "materialize/run_int.h"

#include "tarn/error.h"

#include <stdlib.h>
#include <string.h>

typedef enum { RS_WAITING = 0, RS_READY, RS_COMPUTING, RS_COMPUTED, RS_DONE } run_state;

typedef struct {
    unsigned char *state;     /* run_state per model */
    unsigned char *worker_ok; /* a worker may evaluate it (prefetchable, not refused) */
    size_t *index;            /* its position in the run's events */
    size_t next_index, remaining;
} par_run;

static int upstream_done(const run_ctx *c, const par_run *pr, size_t mi)
{
    const tarn_model *m = &c->p->models[mi];
    for (size_t i = 0; i < m->nup; i++) {
        size_t u = m->up[i].model;
        if (c->o->selected[u] && pr->state[u] != RS_DONE)
            return 0;
    }
    return 1;
}

/* Whether a worker can evaluate model mi's query ahead: a lone query
 * (no setup statements, which run in the session), one partition slice at
 * most (or a dynamic model's every value), no {watermark} (it depends on
 * the build's own table), and no lake view read (a view reads the lake as
 * it is, not at a pinned snapshot). Manual models run their own
 * statements in the session. */
static int prefetchable(const run_ctx *c, size_t mi)
{
    const tarn_model *m = &c->p->models[mi];
    model_strategy k = m->annot.strategy;
    if (m->body.n != 1 || c->partitions[mi].n > 1 || c->chg.stale[mi].n ||
        (k != STRAT_REPLACE && k != STRAT_APPEND && k != STRAT_MERGE && k != STRAT_HISTORY))
        return 0;
    const model_stmt *st = &m->body.items[0];
    for (size_t i = 0; i < st->refs.n; i++) {
        const source_entry *e = run_source(c, &st->refs.items[i]);
        if (e && e->kind == SRC_LAKE_VIEW)
            return 0;
    }
    return 1;
}

static void par_finish(par_run *pr, size_t mi)
{
    pr->state[mi] = RS_DONE;
    pr->remaining--;
}

/* Decides every waiting model whose upstream is done. */
static void par_decide(run_ctx *c, par_run *pr)
{
    for (size_t k = 0; k < c->sum->nrun; k++) {
        size_t mi = c->sum->run_order[k];
        if (pr->state[mi] != RS_WAITING || !upstream_done(c, pr, mi))
            continue;
        pr->index[mi] = ++pr->next_index;
        if (run_decide(c, mi, pr->index[mi]))
            pr->state[mi] = RS_READY;
        else
            par_finish(pr, mi);
    }
}

/* Hands ready models to free workers — all but the first ready one in
 * run order, which the main thread evaluates itself (no staging). */
static void par_dispatch(run_ctx *c, par_run *pr)
{
    int first = 1;
    for (size_t k = 0; k < c->sum->nrun && prefetch_has_idle(c->pf); k++) {
        size_t mi = c->sum->run_order[k];
        if (pr->state[mi] != RS_READY)
            continue;
        if (first) {
            first = 0;
            continue;
        }
        if (!pr->worker_ok[mi])
            continue;
        model_result *r = &c->sum->results[mi];
        const tarn_model *m = &c->p->models[mi];
        const char *part = c->partitions[mi].n ? c->partitions[mi].items[0] : NULL;
        char *pinned = pin_statement(c, mi, &m->body.items[0], part, r);
        /* a time grain's build defines tarn_partition() before its query */
        char *prelude = m->annot.grain && m->annot.grain != GRAIN_DYNAMIC
                            ? cg_partition_macro(m->annot.grain)
                            : NULL;
        if (prefetch_submit(c->pf, mi, prelude, pinned) == 0) {
            pr->state[mi] = RS_COMPUTING;
            run_emit(c, BUILD_MODEL_START, mi, pr->index[mi]);
        } else {
            tarn_error_clear(); /* the build pins and evaluates it, and reports */
            pr->worker_ok[mi] = 0;
        }
        free(pinned);
        free(prelude);
    }
}

static int par_first(const run_ctx *c, const par_run *pr, run_state st, size_t *mi)
{
    for (size_t k = 0; k < c->sum->nrun; k++)
        if (pr->state[c->sum->run_order[k]] == st) {
            *mi = c->sum->run_order[k];
            return 1;
        }
    return 0;
}

/* The run with workers: the main thread builds, in this order of
 * preference, a model whose query a worker has evaluated (its rows wait
 * in memory), a ready model itself, or waits for a worker. */
void run_parallel(run_ctx *c)
{
    size_t n = c->p->nmodels ? c->p->nmodels : 1;
    par_run pr = {.state = xcalloc(n, 1),
                  .worker_ok = xcalloc(n, 1),
                  .index = xcalloc(n, sizeof(size_t)),
                  .remaining = c->sum->nrun};
    for (size_t k = 0; k < c->sum->nrun; k++)
        pr.worker_ok[c->sum->run_order[k]] = (unsigned char)prefetchable(c, c->sum->run_order[k]);
    while (pr.remaining && !build_cancel_signal()) {
        size_t mi;
        while (prefetch_next_done(c->pf, &mi, 0))
            pr.state[mi] = RS_COMPUTED;
        par_decide(c, &pr);
        par_dispatch(c, &pr);
        if (par_first(c, &pr, RS_COMPUTED, &mi)) {
            c->sum->results[mi].prefetch = PREFETCH_FAILED; /* until the build uses it */
            run_execute(c, mi, pr.index[mi]);
            prefetch_release(c->pf, mi);
        } else if (par_first(c, &pr, RS_READY, &mi)) {
            run_emit(c, BUILD_MODEL_START, mi, pr.index[mi]);
            run_execute(c, mi, pr.index[mi]);
        } else if (prefetch_next_done(c->pf, &mi, 1)) {
            pr.state[mi] = RS_COMPUTED;
            continue;
        } else {
            break; /* nothing ready or running: cannot happen in a DAG */
        }
        par_finish(&pr, mi);
    }
    /* Whatever is left runs one at a time (there should be nothing, unless
     * the run was stopped: then none of it runs). */
    for (size_t k = 0; k < c->sum->nrun; k++) {
        size_t mi = c->sum->run_order[k];
        if (pr.state[mi] == RS_WAITING)
            run_one(c, mi, ++pr.next_index);
        else if (pr.state[mi] != RS_DONE)
            run_not_run(c, mi, pr.index[mi]);
    }
    free(pr.state);
    free(pr.worker_ok);
    free(pr.index);
}
/* -j N: N-1 workers, when some selected model can use one. */
void run_start_workers(run_ctx *c)
{
    int want = c->o->jobs - 1, useful = 0;
    c->sum->jobs = 1;
    if (c->o->test_only || c->o->on_workers)
        return;
    for (size_t k = 0; k < c->sum->nrun && !useful; k++)
        useful = prefetchable(c, c->sum->run_order[k]);
    if (want < 1 || !useful || c->sum->nrun < 2)
        return;
    if (prefetch_open(&c->pf, c->s, c->p, want) != 0) {
        c->sum->jobs_note = xasprintf("one model at a time: %s", tarn_error_last());
        tarn_error_clear();
        c->pf = NULL;
        return;
    }
    c->sum->jobs = want + 1;
}

/*
 * worker.c — the worker loop (see worker.h): claim, lease, build, finish.
 *
 * A build is build_run's for one model (run_ctx_open with only that model
 * selected, run_execute) in a fresh session, so it reads the catalog as it
 * is now, with the run's own facts put back: its id, its start snapshot
 * (sources are read there), the snapshots the run's upstream builds
 * produced (from their jobs), the run reason the submitter decided. Its
 * commit carries the job's guard row and done mark (queue_commit_sql): a
 * worker killed before the commit leaves only orphan files, and a second
 * attempt of a job whose first one did commit fails on the guard.
 */
#include "materialize/worker.h"

#include "materialize/queue.h"
#include "materialize/records.h"
#include "materialize/run_int.h"
#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/clock.h"

#include <fnmatch.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

void worker_stop(void)
{
    stopping = 1;
}

int worker_stopping(void)
{
    return stopping;
}

typedef struct {
    tarn_project *p;
    const worker_opts *o;
    const char *cat;
    tarn_catlink *l;    /* the loop's: claims and finishes */
    tarn_catlink *beat; /* the heartbeat thread's, one job at a time (opened once: a
                           connection per job cost more than many a build) */
    tarn_session *s;    /* every build's: config/ run once, caught up before each build */
} worker;

static void logf_(const worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(const worker *w, const char *fmt, ...)
{
    if (!w->o->log)
        return;
    va_list ap;
    va_start(ap, fmt);
    tarn_buf b = {0};
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    w->o->log(w->o->ctx, buf_cstr(&b));
    buf_free(&b);
}

static void nap(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ---- the heartbeat: the lease renewed while the build runs ---- */

typedef struct {
    const worker *w;
    const queue_job *j;
    tarn_catlink *l; /* the worker's heartbeat link: the loop's may be in use */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done, lost;
    pthread_t th;
} heartbeat;

static void *beat_main(void *arg)
{
    heartbeat *h = arg;
    double every = queue_renew_every(h->w->o->lease_s);
    pthread_mutex_lock(&h->mu);
    while (!h->done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long ns = until.tv_nsec + (long)((every - (long)every) * 1e9);
        until.tv_sec += (time_t)every + ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&h->cv, &h->mu, &until);
        if (h->done)
            break;
        pthread_mutex_unlock(&h->mu);
        int held = 1;
        if (queue_renew(&held, h->l, h->w->cat, h->j, h->w->o->id, h->w->o->lease_s) != 0 ||
            queue_worker_beat(h->l, h->w->cat, h->w->o->id, "building", h->j->run_id, h->j->model,
                              h->w->o->concurrency, h->w->o->lease_s) != 0)
            tarn_error_clear(); /* a missed beat; the lease outlasts two */
        pthread_mutex_lock(&h->mu);
        if (!held && !h->lost) {
            /* expired and taken by another worker: the guard keeps this
             * build from committing a second time */
            h->lost = 1;
        }
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

static int beat_start(heartbeat *h, const worker *w, const queue_job *j)
{
    memset(h, 0, sizeof(*h));
    h->w = w;
    h->j = j;
    h->l = w->beat;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    if (pthread_create(&h->th, NULL, beat_main, h) != 0) {
        pthread_mutex_destroy(&h->mu);
        pthread_cond_destroy(&h->cv);
        return tarn_error_set(TARN_ERROR, "cannot start the heartbeat thread");
    }
    return 0;
}

static int beat_stop(heartbeat *h)
{
    pthread_mutex_lock(&h->mu);
    h->done = 1;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->th, NULL);
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    return h->lost;
}

/* ---- one job ---- */

typedef struct {
    const worker *w;
    const queue_job *j;
    int partitioned;
} commit_ctx;

/* Test hook: TARN_WORKER_TEST_HOLD=<model or glob> makes the build of that
 * model wait TARN_WORKER_TEST_HOLD_S seconds (default 30) just before its
 * commit, its files written, so that a test can kill the worker there. */
static void test_hold(const worker *w, const char *model)
{
    const char *m = getenv("TARN_WORKER_TEST_HOLD");
    if (!m || fnmatch(m, model, 0) != 0)
        return;
    const char *sec = getenv("TARN_WORKER_TEST_HOLD_S");
    logf_(w, "test hold: %s waits before its commit", model);
    nap(sec ? strtod(sec, NULL) : 30);
}

static void on_commit(void *ctx, run_ctx *c, const model_result *r, strlist *out)
{
    commit_ctx *cc = ctx;
    const char *slice = r->partitions.n ? r->partitions.items[0] : "";
    queue_commit_sql(out, c->cat, cc->j, cc->w->o->id, slice, r->snapshot_id, !cc->partitioned);
    test_hold(cc->w, cc->j->model);
}

typedef struct {
    build_opts bo;
    int64_t start_snapshot;
    char *partition, *from, *to, *target;
} job_opts;

static char *opt_text(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

static int parse_options(job_opts *jo, const char *text)
{
    memset(jo, 0, sizeof(*jo));
    json_t *o = text ? json_loads(text, 0, NULL) : NULL;
    if (!json_is_object(o)) {
        json_decref(o);
        return tarn_error_set(TARN_EINVALID, "the job's options are not readable");
    }
    jo->bo.now = json_integer_value(json_object_get(o, "now"));
    jo->start_snapshot = json_integer_value(json_object_get(o, "start_snapshot"));
    jo->bo.full_refresh = json_is_true(json_object_get(o, "full_refresh"));
    jo->bo.allow_empty = json_is_true(json_object_get(o, "allow_empty"));
    jo->bo.force = json_is_true(json_object_get(o, "force"));
    jo->bo.partition = jo->partition = opt_text(o, "partition");
    jo->bo.from = jo->from = opt_text(o, "from");
    jo->bo.to = jo->to = opt_text(o, "to");
    jo->target = opt_text(o, "target");
    jo->bo.jobs = 1;
    jo->bo.config_ran = 1;
    json_decref(o);
    return 0;
}

static void job_opts_free(job_opts *jo)
{
    free(jo->partition);
    free(jo->from);
    free(jo->to);
    free(jo->target);
}

/* The snapshots the run's upstream builds produced, into c->built_snapshot;
 * fails when a model mi reads in the run is not done. */
static int load_pins(run_ctx *c, const worker *w, const queue_job *j, size_t mi)
{
    qrows rows;
    int rc = queue_run_jobs(&rows, w->l, w->cat, j->run_id);
    if (rc)
        return rc;
    job_state *st = xcalloc(w->p->nmodels + 1, sizeof(job_state));
    unsigned char *in_run = xcalloc(w->p->nmodels + 1, 1);
    for (size_t i = 0; i < rows.nrows; i++) {
        long u = queue_model_index(w->p, qrows_get(&rows, i, 0));
        if (u < 0 || job_state_parse(&st[u], qrows_get(&rows, i, 1)) != 0)
            continue;
        in_run[u] = 1;
        if (st[u] == JOB_DONE && qrows_get(&rows, i, 6))
            c->built_snapshot[u] = strtoll(qrows_get(&rows, i, 6), NULL, 10);
    }
    qrows_free(&rows);
    const tarn_model *m = &w->p->models[mi];
    job_state *up = xcalloc(m->nup + 1, sizeof(job_state));
    size_t nup = 0;
    const char *waiting = NULL;
    for (size_t i = 0; i < m->nup; i++) {
        size_t u = m->up[i].model;
        if (!in_run[u])
            continue;
        up[nup++] = st[u];
        if (st[u] != JOB_DONE && !waiting)
            waiting = w->p->models[u].name;
    }
    if (queue_upstream(up, nup) != UPSTREAM_DONE)
        rc = tarn_error_set(TARN_EINVALID, "upstream %s is not built in run %lld", waiting,
                            (long long)j->run_id);
    free(up);
    free(st);
    free(in_run);
    return rc;
}

typedef struct {
    job_state state;
    int64_t snapshot_id;
    int conflict; /* failed on a conflict with another commit: worth building again */
    int lost;     /* failed on its catalog connection, lost: built again (the guard and
                     queue_committed tell whether its commit landed meanwhile) */
    char *error;
    model_result shown; /* status, rows, duration for the log */
} job_outcome;

/* Builds job j's model in session s; the outcome for its job row.
 * again: whether a failure on a conflict or a lost connection is built
 * again (then not recorded). */
static void build_job(job_outcome *out, const worker *w, const queue_job *j, tarn_session *s,
                      size_t mi, const job_opts *jo, int again)
{
    const tarn_model *m = &w->p->models[mi];
    unsigned char *sel = xcalloc(w->p->nmodels + 1, 1);
    sel[mi] = 1;
    build_opts bo = jo->bo;
    bo.selected = sel;
    run_ctx c;
    build_summary sum;
    strlist committed = {0};
    int64_t committed_snap = -1;
    /* the lake as other workers left it (their tables, views) */
    int rc = tarn_session_catch_up(s, w->p->lake_alias);
    if (!rc)
        rc = run_ctx_open(&c, &sum, w->p, s, &bo);
    if (rc) {
        out->state = JOB_FAILED;
        out->lost = rc == TARN_ELOST;
        out->error = xstrdup(tarn_error_last());
        tarn_error_clear();
        free(sel);
        return;
    }
    sum.run_id = j->run_id;
    sum.start_snapshot = jo->start_snapshot;
    rc = load_pins(&c, w, j, mi);
    if (!rc)
        rc = queue_committed(&committed, &committed_snap, w->l, w->cat, j->run_id, j->model);
    if (!rc && committed.n && (!m->annot.grain || c.partitions[mi].n <= 1)) {
        /* a lost attempt committed it already: its records are there */
        out->state = JOB_DONE;
        out->snapshot_id = committed_snap;
        out->shown.status = MODEL_SUCCESS;
        out->shown.snapshot_id = committed_snap;
        logf_(w, "%s: committed already in run %lld (snapshot %lld)", j->model,
              (long long)j->run_id, (long long)committed_snap);
    } else if (!rc) {
        commit_ctx cc = {.w = w, .j = j, .partitioned = m->annot.grain != 0};
        c.on_commit = on_commit;
        c.commit_ctx = &cc;
        c.committed_slices = &committed;
        c.builds_again = again;
        run_result_prepare(&c, mi, xstrdup(j->run_reason ? j->run_reason : "queued"));
        /* what other workers committed since the context was read; builds
         * on other workers run meanwhile, and their commits and this one's
         * are moved onto each other's (lake/rebase.c) */
        if (tarn_session_catch_up(s, c.lake) != 0)
            tarn_error_clear();
        run_execute(&c, mi, 1);
        model_result *r = &sum.results[mi];
        out->state = r->status == MODEL_SUCCESS     ? JOB_DONE
                     : r->status == MODEL_CANCELLED ? JOB_CANCELLED
                                                    : JOB_FAILED;
        out->snapshot_id = r->status == MODEL_SUCCESS ? r->snapshot_id : -1;
        out->error = r->error ? xstrdup(r->error) : NULL;
        out->conflict = r->conflict;
        out->lost = r->lost;
        out->shown.status = r->status;
        out->shown.rows_written = r->rows_written;
        out->shown.snapshot_id = r->snapshot_id;
        out->shown.duration_ms = r->duration_ms;
        out->shown.no_change = r->no_change;
    }
    if (rc) {
        out->state = JOB_FAILED;
        out->lost = rc == TARN_ELOST;
        out->error = xstrdup(tarn_error_last());
        tarn_error_clear();
    }
    strlist_free(&committed);
    run_ctx_close(&c);
    free(sel);
}

/* How many times a build whose commit conflicted, or whose catalog
 * connection was lost, is built again. */
#define BUILD_AGAIN 5

/* A claimed job, from its session to its job row. */
static void serve_job(const worker *w, const queue_job *j)
{
    job_outcome out = {.snapshot_id = -1};
    long mi = queue_model_index(w->p, j->model);
    job_opts jo = {0};
    int rc = 0;
    if (mi < 0)
        rc = tarn_error_set(TARN_EINVALID,
                            "model %s is not in the worker's project (%s): run the worker on the "
                            "project the run was submitted from",
                            j->model, w->p->dir);
    if (!rc)
        rc = parse_options(&jo, j->options);
    if (!rc && jo.target && strcmp(jo.target, w->p->target ? w->p->target : "default") != 0)
        rc = tarn_error_set(TARN_EINVALID,
                            "the run is for target %s, the worker's project for target %s: "
                            "start the worker with --target %s",
                            jo.target, w->p->target ? w->p->target : "default", jo.target);
    tarn_session *s = w->s;
    heartbeat hb;
    int beating = 0;
    if (!rc) {
        rc = beat_start(&hb, w, j);
        beating = rc == 0;
    }
    double t0 = clock_mono_ms();
    /* A commit that conflicts with another worker's (both made the schema
     * of their new tables, say) is built again on the lake as that one
     * left it, as DuckLake's users run a conflicting transaction again.
     * So is a build whose catalog connection was lost (its connection is
     * opened again): if its commit landed before the connection went, the
     * next attempt finds the job's guard row and builds nothing. */
    for (int again = 0; !rc; again++) {
        build_job(&out, w, j, s, (size_t)mi, &jo, again < BUILD_AGAIN && !stopping);
        if (out.state != JOB_FAILED || !(out.conflict || out.lost) || again >= BUILD_AGAIN ||
            stopping)
            break;
        logf_(w, "%s: %s (%s); building it again", j->model,
              out.lost ? "its catalog connection was lost" : "its commit conflicted with another",
              out.error ? out.error : "");
        free(out.error);
        out = (job_outcome){.snapshot_id = -1};
        nap(0.05 * (again + 1));
    }
    if (rc) {
        out.state = JOB_FAILED;
        out.error = xstrdup(tarn_error_last());
        tarn_error_clear();
    }
    int lost = beating ? beat_stop(&hb) : 0;
    job_opts_free(&jo);
    if (out.state == JOB_CANCELLED) {
        /* stopped mid-build: another worker takes it */
        if (queue_finish(w->l, w->cat, j, w->o->id, JOB_READY, -1, NULL) != 0)
            tarn_error_clear();
        logf_(w, "%s: stopped, rolled back; back in the queue", j->model);
    } else {
        /* once more when the link's connection was lost: the link opens
         * it again, and the update (of this attempt's row) is the same */
        int frc = queue_finish(w->l, w->cat, j, w->o->id, out.state, out.snapshot_id, out.error);
        if (frc == TARN_ELOST) {
            tarn_error_clear();
            frc = queue_finish(w->l, w->cat, j, w->o->id, out.state, out.snapshot_id, out.error);
        }
        if (frc != 0) {
            logf_(w, "%s: cannot record the job's end: %s", j->model, tarn_error_last());
            tarn_error_clear();
        }
        if (out.state == JOB_DONE)
            logf_(w, "%s: built in run %lld, %lld rows, %s%lld (%.0f ms)%s", j->model,
                  (long long)j->run_id, (long long)out.shown.rows_written,
                  out.shown.no_change ? "no change at snapshot " : "snapshot ",
                  (long long)out.snapshot_id, clock_mono_ms() - t0,
                  lost ? "; its lease was lost meanwhile" : "");
        else
            logf_(w, "%s: failed in run %lld: %s", j->model, (long long)j->run_id,
                  out.error ? out.error : "");
    }
    free(out.error);
}

int worker_serve(tarn_project *p, tarn_session *s, const worker_opts *o)
{
    int shared = 0;
    int rc = tarn_session_catalog_shared(s, p->lake_alias, &shared);
    if (rc)
        return rc;
    if (!shared)
        return tarn_error_set(TARN_EINVALID,
                              "lake \"%s\" has its catalog in a DuckDB file, which one process "
                              "writes at a time, so workers cannot share it: attach the lake "
                              "with a PostgreSQL catalog in config/ (ATTACH "
                              "'ducklake:postgres:dbname=… host=…' AS %s (DATA_PATH '…'), "
                              "README \"A catalog in PostgreSQL\")",
                              p->lake_alias, p->lake_alias);
    worker w = {.p = p, .o = o, .cat = tarn_session_catalog_prefix(s, p->lake_alias), .s = s};
    rc = records_ensure(s, w.cat);
    if (!rc)
        rc = queue_ensure(s, w.cat);
    if (!rc)
        rc = tarn_catlink_open(&w.l, s, p->lake_alias);
    if (!rc)
        rc = tarn_catlink_open(&w.beat, s, p->lake_alias);
    if (!rc)
        rc = queue_worker_beat(w.l, w.cat, o->id, "idle", 0, NULL, o->concurrency, o->lease_s);
    if (rc) {
        tarn_catlink_close(w.l);
        tarn_catlink_close(w.beat);
        return rc;
    }
    logf_(&w, "worker %s ready: lease %.1f s", o->id, o->lease_s);
    double last_beat = clock_mono_ms() / 1000.0;
    int failing = 0;
    while (!stopping) {
        queue_job j;
        int got = 0;
        rc = queue_claim(&j, &got, w.l, w.cat, o->id, o->lease_s, o->max_attempts);
        if (rc) {
            if (!failing)
                logf_(&w, "cannot reach the queue: %s (retrying)", tarn_error_last());
            failing = 1;
            tarn_error_clear();
            nap(1);
            continue;
        }
        failing = 0;
        if (!got) {
            double now = clock_mono_ms() / 1000.0;
            if (now - last_beat >= queue_renew_every(o->lease_s)) {
                if (queue_worker_beat(w.l, w.cat, o->id, "idle", 0, NULL, o->concurrency,
                                      o->lease_s) != 0)
                    tarn_error_clear();
                last_beat = now;
            }
            nap(o->poll_s);
            continue;
        }
        logf_(&w, "%s: claimed in run %lld (attempt %d)", j.model, (long long)j.run_id, j.attempts);
        if (queue_worker_beat(w.l, w.cat, o->id, "building", j.run_id, j.model, o->concurrency,
                              o->lease_s) != 0)
            tarn_error_clear();
        serve_job(&w, &j);
        queue_job_free(&j);
        if (queue_worker_beat(w.l, w.cat, o->id, "idle", 0, NULL, o->concurrency, o->lease_s) != 0)
            tarn_error_clear();
        last_beat = clock_mono_ms() / 1000.0;
    }
    if (queue_worker_beat(w.l, w.cat, o->id, "stopped", 0, NULL, o->concurrency, o->lease_s) != 0)
        tarn_error_clear();
    logf_(&w, "worker %s stopped", o->id);
    tarn_catlink_close(w.l);
    tarn_catlink_close(w.beat);
    return 0;
}

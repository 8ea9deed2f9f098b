/*
 * remote.c — a run built over `tarn worker` processes (`tarn run
 * --on-workers`, queue.h). The submitting process does what build_run does
 * for each model except the build itself: it decides each model as
 * build_run decides it (upstream failed, unchanged: the same records and
 * events), once every model it reads is finished in the run, and marks the
 * job ready; a worker claims and builds it, its reads pinned to the
 * snapshots the run's upstream builds produced; the submitter follows the
 * jobs, reads each finished build's record back (tarn_model_run) and
 * reports it as build_run would. A job whose worker died is claimed again
 * by another when its lease expires; one that lost its worker on every
 * attempt fails, and its downstream is skipped.
 */
#include "materialize/queue.h"
#include "materialize/run_int.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/quote.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How many times a job is claimed before the run gives up on it. */
#define MAX_ATTEMPTS 3

typedef struct {
    run_ctx *c;
    tarn_catlink *l;
    unsigned char *decided, *started, *finished;
    size_t *index;
    size_t next_index, remaining;
} remote_run;

static double poll_s(void)
{
    const char *e = getenv("TARN_QUEUE_POLL_MS");
    long ms = e ? strtol(e, NULL, 10) : 100;
    return (ms > 0 ? ms : 100) / 1000.0;
}

static void nap(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* The run's build options a worker builds with. */
static char *options_json(run_ctx *c)
{
    const build_opts *o = c->o;
    json_t *j = json_object();
    json_object_set_new(j, "now", json_integer(run_now(c)));
    json_object_set_new(j, "start_snapshot", json_integer(c->sum->start_snapshot));
    json_object_set_new(j, "full_refresh", json_boolean(o->full_refresh));
    json_object_set_new(j, "allow_empty", json_boolean(o->allow_empty));
    json_object_set_new(j, "force", json_boolean(o->force));
    if (o->partition)
        json_object_set_new(j, "partition", json_string(o->partition));
    if (o->from)
        json_object_set_new(j, "from", json_string(o->from));
    if (o->to)
        json_object_set_new(j, "to", json_string(o->to));
    json_object_set_new(j, "target", json_string(c->p->target ? c->p->target : "default"));
    char *s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(j);
    return s;
}

/* The run's models model mi reads. */
static char *deps_json(run_ctx *c, size_t mi)
{
    const tarn_model *m = &c->p->models[mi];
    json_t *a = json_array();
    for (size_t i = 0; i < m->nup; i++) {
        size_t u = m->up[i].model;
        if (c->o->selected[u])
            json_array_append_new(a, json_string(c->p->models[u].name));
    }
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return s;
}

static int upstream_finished(const remote_run *rr, size_t mi)
{
    const tarn_model *m = &rr->c->p->models[mi];
    for (size_t i = 0; i < m->nup; i++) {
        size_t u = m->up[i].model;
        if (rr->c->o->selected[u] && !rr->finished[u])
            return 0;
    }
    return 1;
}

static void finish(remote_run *rr, size_t mi)
{
    rr->finished[mi] = 1;
    rr->remaining--;
}

/* Decides every waiting model whose upstream is finished: ready for the
 * workers, or settled here (skipped, unchanged) as build_run settles it. */
static int decide(remote_run *rr)
{
    run_ctx *c = rr->c;
    for (size_t k = 0; k < c->sum->nrun; k++) {
        size_t mi = c->sum->run_order[k];
        if (rr->decided[mi] || !upstream_finished(rr, mi))
            continue;
        rr->decided[mi] = 1;
        rr->index[mi] = ++rr->next_index;
        const char *name = c->p->models[mi].name;
        int rc;
        if (run_decide(c, mi, rr->index[mi])) {
            rc = queue_ready(rr->l, c->cat, c->sum->run_id, name, c->sum->results[mi].run_reason);
        } else {
            const model_result *r = &c->sum->results[mi];
            /* an unchanged model is as good as built: its downstream reads
             * it at the run's start */
            rc = queue_settle(rr->l, c->cat, c->sum->run_id, name,
                              r->unchanged ? JOB_DONE : JOB_SKIPPED, r->error);
            finish(rr, mi);
        }
        if (rc)
            return rc;
    }
    return 0;
}

static char *json_text(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    return json_is_string(v) ? xstrdup(json_string_value(v)) : NULL;
}

/* One record's figures (row i of load_result's query) into r. */
static void parse_record(const qrows *rows, size_t row, model_result *r)
{
    const char *st = qrows_get(rows, row, 0);
    r->status = st && strcmp(st, "success") == 0     ? MODEL_SUCCESS
                : st && strcmp(st, "cancelled") == 0 ? MODEL_CANCELLED
                                                     : MODEL_FAILED;
#define CELL(i) qrows_get(rows, row, i)
    r->snapshot_id = CELL(1) ? strtoll(CELL(1), NULL, 10) : -1;
    r->rows_written = CELL(2) ? strtoll(CELL(2), NULL, 10) : 0;
    r->rows_deleted = CELL(3) ? strtoll(CELL(3), NULL, 10) : 0;
    json_t *parts = CELL(4) ? json_loads(CELL(4), 0, NULL) : NULL;
    size_t i;
    json_t *v;
    json_array_foreach(parts, i, v) if (json_is_string(v))
        strlist_push(&r->partitions, json_string_value(v));
    json_decref(parts);
    json_t *up = CELL(5) ? json_loads(CELL(5), 0, NULL) : NULL;
    r->upstream = xcalloc(json_array_size(up) + 1, sizeof(upstream_read));
    json_array_foreach(up, i, v)
    {
        upstream_read *u = &r->upstream[r->nupstream++];
        u->table = json_text(v, "table");
        u->model = json_text(v, "model");
        u->snapshot_id = json_integer_value(json_object_get(v, "snapshot_id"));
        u->version = json_integer_value(json_object_get(v, "version"));
    }
    json_decref(up);
    r->duration_ms = CELL(6) ? strtod(CELL(6), NULL) : 0;
    r->query_ms = CELL(7) ? strtod(CELL(7), NULL) : 0;
    free(r->error);
    r->error = CELL(8) ? xstrdup(CELL(8)) : NULL;
    r->no_change = CELL(9) && strncmp(CELL(9), "no change", 9) == 0;
    r->tests_json = CELL(10) ? xstrdup(CELL(10)) : NULL;
    json_t *d = CELL(11) ? json_loads(CELL(11), 0, NULL) : NULL;
    if (d) {
        r->rows_opened = json_integer_value(json_object_get(d, "rows_opened"));
        r->rows_closed = json_integer_value(json_object_get(d, "rows_closed"));
        r->schema_change = json_text(d, "schema_change");
        r->valid_at = json_text(d, "valid_at");
        r->watermark_from = json_text(d, "watermark_from");
        r->watermark_to = json_text(d, "watermark_to");
        r->covered_through = json_text(d, "covered_through");
        r->full_refresh = json_is_true(json_object_get(d, "full_refresh"));
    }
    json_decref(d);
    r->started_at = CELL(12) ? strtod(CELL(12), NULL) : clock_epoch_s();
#undef CELL
}

static const qrows *sort_rows;

/* Slices in the order build_slices builds them (by name). */
static int cmp_slice(const void *a, const void *b)
{
    const char *x = qrows_get(sort_rows, *(const size_t *)a, 4);
    const char *y = qrows_get(sort_rows, *(const size_t *)b, 4);
    return strcmp(x ? x : "", y ? y : "");
}

/* A finished build's figures, from its records: one per slice when the
 * worker built a partitioned model slice by slice (each its own snapshot
 * and record, perhaps by two workers when one was lost halfway), folded
 * into the model's result as build_slices folds them; of a slice's
 * records the success when there is one (a lost attempt may have
 * recorded a failure beside it). 0, or TARN_ENOTFOUND when the worker
 * recorded nothing. */
static int load_result(run_ctx *c, tarn_catlink *l, size_t mi, model_result *r)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT status, snapshot_id, rows_written, rows_deleted, partitions, upstream, "
                 "duration_ms, query_ms, error, note, tests, details, extract(epoch FROM "
                 "started_at) FROM ");
    quote_prefixed(&q, c->cat, "tarn_model_run");
    buf_printf(&q, " WHERE run_id = %lld AND model = ", (long long)c->sum->run_id);
    quote_literal(&q, c->p->models[mi].name);
    buf_puts(&q, " ORDER BY (status = 'success') DESC, finished_at DESC");
    qrows rows;
    int rc = link_rows(&rows, l, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    if (!rows.nrows) {
        qrows_free(&rows);
        return TARN_ENOTFOUND;
    }
    /* the best record of each slice (rows come best first); a record
     * naming no slice beside slices is an attempt that built none */
    size_t *pick = xcalloc(rows.nrows, sizeof(size_t));
    size_t npick = 0, nslices = 0;
    for (size_t i = 0; i < rows.nrows; i++) {
        const char *key = qrows_get(&rows, i, 4);
        int seen = 0;
        for (size_t k = 0; k < npick && !seen; k++) {
            const char *o = qrows_get(&rows, pick[k], 4);
            seen = (o == NULL) == (key == NULL) && (!key || strcmp(o, key) == 0);
        }
        if (seen)
            continue;
        pick[npick++] = i;
        nslices += key && strcmp(key, "[]") != 0;
    }
    if (npick == 1) {
        parse_record(&rows, pick[0], r);
    } else {
        size_t n = 0;
        for (size_t k = 0; k < npick; k++) {
            const char *key = qrows_get(&rows, pick[k], 4);
            if (nslices == 0 || (key && strcmp(key, "[]") != 0))
                pick[n++] = pick[k];
        }
        sort_rows = &rows;
        qsort(pick, n, sizeof(size_t), cmp_slice);
        sort_rows = NULL;
        r->snapshot_id = -1;
        for (size_t k = 0; k < n; k++) {
            model_result one = {.model = mi, .snapshot_id = -1};
            parse_record(&rows, pick[k], &one);
            run_fold_slice(r, &one);
        }
    }
    free(pick);
    qrows_free(&rows);
    return 0;
}

/* Job mi finished on a worker (state done or failed; error: the job's). */
static void settle_built(remote_run *rr, size_t mi, const char *error)
{
    run_ctx *c = rr->c;
    model_result *r = &c->sum->results[mi];
    const tarn_model *m = &c->p->models[mi];
    if (!rr->started[mi]) {
        rr->started[mi] = 1;
        run_emit(c, BUILD_MODEL_START, mi, rr->index[mi]);
    }
    int rc = load_result(c, rr->l, mi, r);
    if (rc) { /* the worker failed before building: recorded here */
        tarn_error_clear();
        r->status = MODEL_FAILED;
        r->started_at = clock_epoch_s();
        free(r->error);
        r->error = xstrdup(error ? error : "the worker recorded no build");
        run_record_alone(c, mi, r);
    }
    if (r->status == MODEL_SUCCESS) {
        c->sum->succeeded++;
        c->built_snapshot[mi] = r->snapshot_id;
        if (!r->no_change)
            change_set_version(&c->chg, m->schema, m->table, r->snapshot_id);
    } else if (r->status == MODEL_CANCELLED) {
        c->sum->cancelled++;
    } else {
        r->status = MODEL_FAILED;
        c->sum->failed++;
    }
    run_emit(c, BUILD_MODEL_FINISH, mi, rr->index[mi]);
    r->config_hash = r->source_files = NULL; /* owned by c->chg */
    finish(rr, mi);
}

/* Job mi lost its worker on every attempt. */
static void settle_lost(remote_run *rr, size_t mi, int attempts)
{
    run_ctx *c = rr->c;
    char *err = xasprintf("lost its worker on each of %d attempts (each died or stopped renewing "
                          "its lease): see `tarn workers` and the workers' logs",
                          attempts);
    int changed = 0;
    if (queue_abandon(&changed, rr->l, c->cat, c->sum->run_id, c->p->models[mi].name, attempts,
                      err) != 0)
        tarn_error_clear();
    if (changed)
        settle_built(rr, mi, err);
    free(err);
}

/* One look at the run's jobs: starts and ends reported, lost jobs given
 * up. */
static int follow(remote_run *rr)
{
    run_ctx *c = rr->c;
    qrows rows;
    int rc = queue_run_jobs(&rows, rr->l, c->cat, c->sum->run_id);
    if (rc)
        return rc;
    for (size_t i = 0; i < rows.nrows; i++) {
        long mi = queue_model_index(c->p, qrows_get(&rows, i, 0));
        job_state st;
        if (mi < 0 || rr->finished[mi] || !rr->decided[mi] ||
            job_state_parse(&st, qrows_get(&rows, i, 1)) != 0)
            continue;
        if (st == JOB_RUNNING && !rr->started[mi]) {
            rr->started[mi] = 1;
            run_emit(c, BUILD_MODEL_START, mi, rr->index[mi]);
        }
        if (st == JOB_DONE || st == JOB_FAILED) {
            settle_built(rr, (size_t)mi, qrows_get(&rows, i, 7));
            /* its downstream decided now, as build_run decides the next
             * model right after a build: a skip is reported before the
             * start of a build that comes later in the run */
            rc = decide(rr);
            if (rc)
                break;
        } else if (st == JOB_RUNNING && qrows_get(&rows, i, 4) && qrows_get(&rows, i, 5)) {
            int attempts = atoi(qrows_get(&rows, i, 3));
            if (queue_lease(strtod(qrows_get(&rows, i, 5), NULL),
                            strtod(qrows_get(&rows, i, 4), NULL), attempts,
                            MAX_ATTEMPTS) == LEASE_GIVE_UP) {
                settle_lost(rr, (size_t)mi, attempts);
                if ((rc = decide(rr)) != 0)
                    break;
            }
        }
    }
    qrows_free(&rows);
    return rc;
}

/* The run was stopped: what no worker started is not run; a build in
 * flight on a worker is the worker's to finish (its record says how). */
static void stop_run(remote_run *rr)
{
    run_ctx *c = rr->c;
    for (size_t k = 0; k < c->sum->nrun; k++) {
        size_t mi = c->sum->run_order[k];
        if (rr->finished[mi])
            continue;
        if (queue_settle(rr->l, c->cat, c->sum->run_id, c->p->models[mi].name, JOB_CANCELLED,
                         "not run: the run was stopped") != 0)
            tarn_error_clear();
        if (!rr->index[mi])
            rr->index[mi] = ++rr->next_index;
        run_not_run(c, mi, rr->index[mi]);
        finish(rr, mi);
    }
}

/* Every model of the run fails with the queue's error (it cannot be
 * reached). */
static void fail_all(remote_run *rr, const char *why)
{
    run_ctx *c = rr->c;
    for (size_t k = 0; k < c->sum->nrun; k++) {
        size_t mi = c->sum->run_order[k];
        if (rr->finished[mi])
            continue;
        model_result *r = &c->sum->results[mi];
        r->status = MODEL_FAILED;
        r->started_at = clock_epoch_s();
        free(r->error);
        r->error = xasprintf("the job queue failed: %s", why);
        run_record_alone(c, mi, r);
        c->sum->failed++;
        if (!rr->index[mi])
            rr->index[mi] = ++rr->next_index;
        run_emit(c, BUILD_MODEL_FINISH, mi, rr->index[mi]);
        r->config_hash = r->source_files = NULL;
        finish(rr, mi);
    }
}

static int enqueue(remote_run *rr)
{
    run_ctx *c = rr->c;
    char *opts = options_json(c);
    int rc = 0;
    for (size_t k = 0; k < c->sum->nrun && !rc; k++) {
        size_t mi = c->sum->run_order[k];
        char *deps = deps_json(c, mi);
        rc = queue_enqueue(rr->l, c->cat, c->sum->run_id, c->p->models[mi].name, k, deps, opts);
        free(deps);
    }
    free(opts);
    return rc;
}

/* Says once when no worker is alive to take the run's jobs. */
static void notice_workers(remote_run *rr, double *next_check, int *told)
{
    double now = clock_mono_ms() / 1000.0;
    if (*told || now < *next_check)
        return;
    *next_check = now + 2;
    int64_t alive = 0;
    if (queue_workers_alive(&alive, rr->l, rr->c->cat) != 0) {
        tarn_error_clear();
        return;
    }
    if (alive == 0) {
        char *msg = xasprintf("waiting for a worker: none is alive on lake \"%s\"'s catalog "
                              "(start one: tarn worker -C DIR)",
                              rr->c->lake);
        if (rr->c->o->on_notice)
            rr->c->o->on_notice(rr->c->o->ctx, msg);
        free(msg);
        *told = 1;
    }
}

void run_on_workers(run_ctx *c)
{
    size_t n = c->p->nmodels ? c->p->nmodels : 1;
    remote_run rr = {.c = c,
                     .decided = xcalloc(n, 1),
                     .started = xcalloc(n, 1),
                     .finished = xcalloc(n, 1),
                     .index = xcalloc(n, sizeof(size_t)),
                     .remaining = c->sum->nrun};
    int rc = tarn_catlink_open(&rr.l, c->s, c->lake);
    if (!rc)
        rc = enqueue(&rr);
    double next_check = 0;
    int told = 0;
    while (!rc && rr.remaining && !build_cancel_signal()) {
        rc = decide(&rr);
        if (!rc && rr.remaining)
            rc = follow(&rr);
        if (!rc && rr.remaining) {
            notice_workers(&rr, &next_check, &told);
            nap(poll_s());
        }
    }
    if (rc) {
        char *why = xstrdup(tarn_error_last());
        tarn_error_clear();
        fail_all(&rr, why);
        free(why);
    } else if (rr.remaining) {
        stop_run(&rr);
    }
    tarn_catlink_close(rr.l);
    free(rr.decided);
    free(rr.started);
    free(rr.finished);
    free(rr.index);
}

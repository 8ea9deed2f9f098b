/*
 * queue.h — the job queue of a run built over `tarn worker` processes
 * (`tarn run --on-workers`), kept in the lake's catalog database beside the
 * run records (records.h):
 *
 *   tarn_job         one row per selected model per run: its state (below),
 *                    seq (its place in the run's order), deps (the run's
 *                    models it reads, a JSON list), run_reason, options (the
 *                    run's build options, JSON: what a worker builds with),
 *                    the worker holding it and its lease (lease_until),
 *                    attempts, and the outcome (snapshot_id, error)
 *   tarn_job_commit  one row per committed build of a job, written in that
 *                    build's own commit: (run_id, model, slice) is its
 *                    primary key (slice '' for an unpartitioned model), so a
 *                    second commit of the same build fails and leaves only
 *                    orphan files — a model is never committed twice in a run
 *   tarn_worker      one row per worker: host, pid, start, last heartbeat,
 *                    state (idle, building, stopped) and the job it builds
 *
 * A job goes waiting → ready (the submitting `tarn run` decided it builds,
 * once every model it reads is done in the run) → running (a worker claimed
 * it with `SELECT … FOR UPDATE SKIP LOCKED` and holds a lease it renews) →
 * done (in the build's commit) or failed; or waiting → skipped (an upstream
 * failed, or nothing changed) / cancelled (the run was stopped). A running
 * job whose lease expired (its worker died) is claimed again, up to
 * max_attempts times. Times are the database's clock (clock_timestamp()),
 * so machines' clocks need not agree.
 *
 * Statements go through a link (tarn_catlink: PostgreSQL's own SQL, each in
 * its own transaction), except the guard and done mark, which join the
 * build's commit (tarn_session_commit_sql).
 */
#ifndef TARN_MATERIALIZE_QUEUE_H
#define TARN_MATERIALIZE_QUEUE_H

#include "project/project.h"
#include "project/query.h"
#include "tarn/session.h"
#include "util/strlist.h"

#include <stddef.h>
#include <stdint.h>

typedef enum {
    JOB_WAITING = 0,
    JOB_READY,
    JOB_RUNNING,
    JOB_DONE,
    JOB_FAILED,
    JOB_SKIPPED,
    JOB_CANCELLED,
} job_state;

/* "waiting", "ready", …; job_state_parse: 0, or -1 for an unknown name. */
const char *job_state_name(job_state s);
int job_state_parse(job_state *out, const char *name);

/* ---- pure decisions (queue_logic.c) ---- */

typedef enum {
    UPSTREAM_WAIT = 0, /* some model it reads is not finished in the run */
    UPSTREAM_DONE,     /* every one is built: it may be decided and claimed */
    UPSTREAM_BLOCKED,  /* one failed, was skipped or cancelled: it is skipped */
} upstream_verdict;

/* What the states of a job's upstream jobs (in the run) allow. */
upstream_verdict queue_upstream(const job_state *up, size_t n);

typedef enum {
    LEASE_HELD = 0, /* its worker renews it: leave it */
    LEASE_EXPIRED,  /* its worker is gone: another may claim it */
    LEASE_GIVE_UP,  /* expired and every attempt used: the job fails */
} lease_verdict;

/* A running job's lease at time `now` (seconds, the database's clock). */
lease_verdict queue_lease(double now, double lease_until, int attempts, int max_attempts);
/* How often a worker renews a lease of lease_s seconds: three times per
 * lease, so one late renewal does not lose it. */
double queue_renew_every(double lease_s);
/* Whether a worker whose last heartbeat was at `beat` is alive at `now`:
 * it beats every queue_renew_every(lease_s), so a lease without one means
 * it is gone. */
int queue_worker_alive(double now, double beat, double lease_s);

/* The model a job names (tarn_model.name), or -1. */
long queue_model_index(const tarn_project *p, const char *name);

/* ---- the tables ---- */

/* Creates the tables in catalog database `cat` when missing. */
int queue_ensure(tarn_session *s, const char *cat);

typedef struct {
    int64_t run_id;
    char *model;
    int attempts;
    char *run_reason;
    char *options;
} queue_job;

void queue_job_free(queue_job *j);

/* A model of run `run_id` in the queue, waiting. */
int queue_enqueue(tarn_catlink *l, const char *cat, int64_t run_id, const char *model, size_t seq,
                  const char *deps_json, const char *options_json);
/* A waiting job made ready to claim, with why it builds. */
int queue_ready(tarn_catlink *l, const char *cat, int64_t run_id, const char *model,
                const char *run_reason);
/* A job that is not running (waiting, ready) set to `state`. */
int queue_settle(tarn_catlink *l, const char *cat, int64_t run_id, const char *model,
                 job_state state, const char *error);
/* The submitter gives up a job whose lease expired with every attempt
 * used: failed, unless a worker took it meanwhile. *changed: whether it
 * was. */
int queue_abandon(int *changed, tarn_catlink *l, const char *cat, int64_t run_id, const char *model,
                  int attempts, const char *error);

/* Claims the first claimable job (ready, or running with its lease
 * expired and attempts left) for `worker` with a lease of lease_s seconds:
 * *got 0 when there is none. */
int queue_claim(queue_job *out, int *got, tarn_catlink *l, const char *cat, const char *worker,
                double lease_s, int max_attempts);
/* Renews the lease; *held 0 when the job is no longer this worker's
 * attempt (it expired and another took it, or it is finished). */
int queue_renew(int *held, tarn_catlink *l, const char *cat, const queue_job *j, const char *worker,
                double lease_s);
/* This worker's attempt at the job ends: done (snapshot_id) or failed
 * (error). Nothing when the attempt is no longer its own. */
int queue_finish(tarn_catlink *l, const char *cat, const queue_job *j, const char *worker,
                 job_state state, int64_t snapshot_id, const char *error);

/* The statements a build of the job adds to its commit: the guard row of
 * `slice` ("" for an unpartitioned model) and, when `done`, the job's done
 * mark with the snapshot being committed. Pushed onto `out`. */
void queue_commit_sql(strlist *out, const char *cat, const queue_job *j, const char *worker,
                      const char *slice, int64_t snapshot_id, int done);
/* The slices of the job's model committed in its run (guard rows), and the
 * newest snapshot among them (-1: none). */
int queue_committed(strlist *slices, int64_t *snapshot_id, tarn_catlink *l, const char *cat,
                    int64_t run_id, const char *model);

/* The run's jobs: model, state, worker, attempts, lease_until and the
 * database's now (epoch seconds), snapshot_id, error. */
int queue_run_jobs(qrows *out, tarn_catlink *l, const char *cat, int64_t run_id);

/* A worker's row, inserted or updated with a heartbeat now. */
int queue_worker_beat(tarn_catlink *l, const char *cat, const char *worker, const char *state,
                      int64_t run_id, const char *model, int concurrency, double lease_s);
/* The workers: worker_id, host, pid, state, run_id, model, started_at,
 * heartbeat_at (text), seconds since the heartbeat, lease_s. */
int queue_workers(qrows *out, tarn_catlink *l, const char *cat);
/* How many workers beat within their lease. */
int queue_workers_alive(int64_t *n, tarn_catlink *l, const char *cat);

#endif

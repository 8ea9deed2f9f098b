/*
 * worker.h — `tarn worker`: a long-running process that builds the models
 * of runs submitted with `tarn run --on-workers` (queue.h). It claims a
 * ready job, holds its lease (renewed by a heartbeat thread on a link of
 * its own), builds the model as `tarn run` builds it — one snapshot, its
 * reads pinned to the snapshots the run's upstream builds produced, its
 * records and the job's done mark in that snapshot's commit, guarded so
 * that it is never committed twice — and claims the next. A stop request
 * (worker_stop) ends it after the build in flight.
 */
#ifndef TARN_MATERIALIZE_WORKER_H
#define TARN_MATERIALIZE_WORKER_H

#include "project/project.h"
#include "tarn/session.h"

typedef struct {
    const char *id;      /* the worker's name in tarn_worker */
    double lease_s;      /* how long a claim holds without a heartbeat */
    double poll_s;       /* how often an idle worker looks for a job */
    int concurrency;     /* reported: how many workers its process group runs */
    int max_attempts;    /* a job is claimed at most this many times */
    const char *version; /* tarn's, for nothing yet but the log */
    /* one line of the worker's log (claimed, built, failed, …) */
    void (*log)(void *ctx, const char *line);
    void *ctx;
} worker_opts;

/* Serves until worker_stop: `s` has the project's config/ run (the lake
 * attached); each build gets a session of its own. Returns 0 after a stop,
 * or < 0 when the lake cannot serve workers (a DuckDB-file catalog) or its
 * queue cannot be reached. */
int worker_serve(tarn_project *p, tarn_session *s, const worker_opts *o);
/* Asks the worker to stop after the build in flight (signal-safe). */
void worker_stop(void);
int worker_stopping(void);

#endif

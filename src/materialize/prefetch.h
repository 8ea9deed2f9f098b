/*
 * prefetch.h — `tarn run -j N`: models' queries evaluated ahead, on other
 * threads, while the session builds.
 *
 * A build's lake work — its transaction, its Parquet writes, its commit —
 * belongs to the one tarn_session and runs on the main thread, one build
 * at a time. What can run beside it is the expensive part of most models:
 * evaluating the query. A worker evaluates a model's pinned query (every
 * lake read at a fixed snapshot, see pin.c) on its own reader connection
 * into a table of a scratch in-memory database; the build then reads that
 * table where it would have evaluated the query. Because the query is
 * pinned, evaluating it earlier or on another connection gives the same
 * rows: the staged result is used only when the build's own pinning gives
 * exactly the text the worker ran, and a job that failed is simply
 * ignored (the build evaluates the query itself, so any error is the one
 * a one-at-a-time run reports).
 *
 * Readers share the DuckDB instance, not the session's connection state,
 * so each worker's reader first runs config/'s connection-local
 * statements (SET, RESET, USE, CREATE TEMP VIEW/MACRO …) as the session
 * did.
 */
#ifndef TARN_MATERIALIZE_PREFETCH_H
#define TARN_MATERIALIZE_PREFETCH_H

#include "project/project.h"
#include "tarn/session.h"

#include <stddef.h>

typedef struct prefetch prefetch;

/* Starts `workers` threads for the models of project p, each with a
 * reader of s set up as config/ set up s. On failure nothing runs and the
 * error says why (the run then builds one model at a time). *out is owned
 * by the caller: prefetch_close. */
int prefetch_open(prefetch **out, tarn_session *s, const tarn_project *p, int workers);

/* Stops the workers (a running query is interrupted), drops what they
 * staged and the scratch database. */
void prefetch_close(prefetch *pf);

/* Whether a worker is free to take a model. */
int prefetch_has_idle(const prefetch *pf);

/* Hands model mi's query, as pinned for its build, to a free worker
 * (main thread, outside any lake transaction). `prelude` (may be NULL):
 * plain DuckDB statements the build makes before the query (the
 * tarn_partition macro), run first on the worker's connection. */
int prefetch_submit(prefetch *pf, size_t mi, const char *prelude, const char *pinned);

/* A model whose job finished since the last call: 1 with *mi set, 0 when
 * there is none — with `wait`, waits for one while jobs are running. */
int prefetch_next_done(prefetch *pf, size_t *mi, int wait);

/* The query that reads model mi's staged rows, when its job succeeded for
 * exactly the query `pinned`; else NULL. Owned by pf. *worker_ms (may be
 * NULL) gets the worker's time the first time it is asked, 0 after. */
const char *prefetch_result(prefetch *pf, size_t mi, const char *pinned, double *worker_ms);

/* Drops model mi's staged rows (after its build's transaction ended). */
void prefetch_release(prefetch *pf, size_t mi);

#endif

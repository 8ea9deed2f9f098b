/*
 * queue.c — the tarn_job / tarn_job_commit / tarn_worker tables (see
 * queue.h): their creation through the session (so that `tarn sql` reads
 * them like the run records), everything else through a link, in
 * PostgreSQL's SQL.
 */
#include "materialize/queue.h"

#include "materialize/records.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/proc.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

int queue_ensure(tarn_session *s, const char *cat)
{
    static const char *const defs[][2] = {
        {"tarn_job", "(run_id BIGINT NOT NULL, model VARCHAR NOT NULL, seq INTEGER, state VARCHAR "
                     "NOT NULL, deps VARCHAR, run_reason VARCHAR, options VARCHAR, worker "
                     "VARCHAR, lease_until TIMESTAMPTZ, attempts INTEGER NOT NULL DEFAULT 0, "
                     "enqueued_at TIMESTAMPTZ, claimed_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, "
                     "snapshot_id BIGINT, error VARCHAR, PRIMARY KEY (run_id, model))"},
        {"tarn_job_commit", "(run_id BIGINT NOT NULL, model VARCHAR NOT NULL, slice VARCHAR NOT "
                            "NULL, worker VARCHAR, attempt INTEGER, snapshot_id BIGINT, "
                            "PRIMARY KEY (run_id, model, slice))"},
        {"tarn_worker", "(worker_id VARCHAR NOT NULL PRIMARY KEY, host VARCHAR, pid BIGINT, "
                        "started_at TIMESTAMPTZ, heartbeat_at TIMESTAMPTZ, state VARCHAR, run_id "
                        "BIGINT, model VARCHAR, concurrency INTEGER, lease_s DOUBLE PRECISION)"},
    };
    return records_create_tables(s, cat, defs, sizeof(defs) / sizeof(defs[0]));
}

void queue_job_free(queue_job *j)
{
    free(j->model);
    free(j->run_reason);
    free(j->options);
    memset(j, 0, sizeof(*j));
}

/* " WHERE run_id = R AND model = 'm'" */
static void where_job(tarn_buf *b, int64_t run_id, const char *model)
{
    buf_printf(b, " WHERE run_id = %lld AND model = ", (long long)run_id);
    quote_literal(b, model);
}

/* "UPDATE <tarn_job> SET ": the start of every job update. */
static void update_jobs(tarn_buf *b, const char *cat)
{
    buf_puts(b, "UPDATE ");
    quote_prefixed(b, cat, "tarn_job");
    buf_puts(b, " SET ");
}

/* A job's end: "UPDATE … SET state = S, finished_at = now, error = E"
 * (E NULL: none); the caller adds its other columns and WHERE. */
static void update_finished(tarn_buf *b, const char *cat, job_state state, const char *error)
{
    update_jobs(b, cat);
    buf_printf(b, "state = '%s', finished_at = clock_timestamp(), error = ", job_state_name(state));
    quote_literal(b, error);
}

static int run_sql(tarn_catlink *l, tarn_buf *b, int64_t *changed)
{
    int rc = link_exec(l, buf_cstr(b), changed);
    buf_free(b);
    return rc;
}

int queue_enqueue(tarn_catlink *l, const char *cat, int64_t run_id, const char *model, size_t seq,
                  const char *deps_json, const char *options_json)
{
    tarn_buf b = {0};
    buf_puts(&b, "INSERT INTO ");
    quote_prefixed(&b, cat, "tarn_job");
    buf_printf(&b,
               " (run_id, model, seq, state, deps, options, attempts, enqueued_at) VALUES "
               "(%lld, ",
               (long long)run_id);
    quote_literal(&b, model);
    buf_printf(&b, ", %zu, 'waiting', ", seq);
    quote_literal(&b, deps_json);
    buf_puts(&b, ", ");
    quote_literal(&b, options_json);
    buf_puts(&b, ", 0, clock_timestamp())");
    return run_sql(l, &b, NULL);
}

int queue_ready(tarn_catlink *l, const char *cat, int64_t run_id, const char *model,
                const char *run_reason)
{
    tarn_buf b = {0};
    update_jobs(&b, cat);
    buf_puts(&b, "state = 'ready', run_reason = ");
    quote_literal(&b, run_reason);
    where_job(&b, run_id, model);
    buf_puts(&b, " AND state = 'waiting'");
    return run_sql(l, &b, NULL);
}

int queue_settle(tarn_catlink *l, const char *cat, int64_t run_id, const char *model,
                 job_state state, const char *error)
{
    tarn_buf b = {0};
    update_finished(&b, cat, state, error);
    where_job(&b, run_id, model);
    buf_puts(&b, " AND state IN ('waiting', 'ready')");
    return run_sql(l, &b, NULL);
}

int queue_abandon(int *changed, tarn_catlink *l, const char *cat, int64_t run_id, const char *model,
                  int attempts, const char *error)
{
    tarn_buf b = {0};
    update_finished(&b, cat, JOB_FAILED, error);
    where_job(&b, run_id, model);
    buf_printf(&b, " AND state = 'running' AND attempts = %d AND lease_until < clock_timestamp()",
               attempts);
    int64_t n = 0;
    int rc = run_sql(l, &b, &n);
    *changed = !rc && n > 0;
    return rc;
}

int queue_claim(queue_job *out, int *got, tarn_catlink *l, const char *cat, const char *worker,
                double lease_s, int max_attempts)
{
    memset(out, 0, sizeof(*out));
    *got = 0;
    tarn_buf b = {0};
    update_jobs(&b, cat);
    buf_puts(&b, "state = 'running', worker = ");
    quote_literal(&b, worker);
    buf_printf(&b,
               ", attempts = attempts + 1, claimed_at = clock_timestamp(), lease_until = "
               "clock_timestamp() + make_interval(secs => %.3f) WHERE (run_id, model) IN "
               "(SELECT run_id, model FROM ",
               lease_s);
    quote_prefixed(&b, cat, "tarn_job");
    /* the oldest run first, and in it the run's order: a run submitted
     * earlier is not starved by a later one */
    buf_printf(&b,
               " WHERE (state = 'ready' OR (state = 'running' AND lease_until < "
               "clock_timestamp())) AND attempts < %d ORDER BY run_id, seq LIMIT 1 FOR UPDATE "
               "SKIP LOCKED) RETURNING run_id, model, attempts, run_reason, options",
               max_attempts);
    qrows r;
    int rc = link_rows(&r, l, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        return rc;
    if (r.nrows) {
        *got = 1;
        out->run_id = strtoll(qrows_get(&r, 0, 0), NULL, 10);
        out->model = qrows_dup(&r, 0, 1, NULL);
        out->attempts = atoi(qrows_get(&r, 0, 2));
        out->run_reason = qrows_dup(&r, 0, 3, NULL);
        out->options = qrows_dup(&r, 0, 4, NULL);
    }
    qrows_free(&r);
    return 0;
}

/* " … AND the attempt is worker's" */
static void where_attempt(tarn_buf *b, const queue_job *j, const char *worker)
{
    where_job(b, j->run_id, j->model);
    buf_puts(b, " AND state = 'running' AND worker = ");
    quote_literal(b, worker);
    buf_printf(b, " AND attempts = %d", j->attempts);
}

int queue_renew(int *held, tarn_catlink *l, const char *cat, const queue_job *j, const char *worker,
                double lease_s)
{
    tarn_buf b = {0};
    update_jobs(&b, cat);
    buf_printf(&b, "lease_until = clock_timestamp() + make_interval(secs => %.3f)", lease_s);
    where_attempt(&b, j, worker);
    int64_t n = 0;
    int rc = run_sql(l, &b, &n);
    *held = !rc && n > 0;
    return rc;
}

int queue_finish(tarn_catlink *l, const char *cat, const queue_job *j, const char *worker,
                 job_state state, int64_t snapshot_id, const char *error)
{
    tarn_buf b = {0};
    update_finished(&b, cat, state, error);
    buf_puts(&b, ", snapshot_id = ");
    if (snapshot_id >= 0)
        buf_printf(&b, "%lld", (long long)snapshot_id);
    else
        buf_puts(&b, "NULL");
    where_attempt(&b, j, worker);
    return run_sql(l, &b, NULL);
}

/* The snapshot the build's commit makes (another than the id the build
 * was given when another worker committed meanwhile). */
static void commit_snapshot(tarn_buf *b, const char *cat, int64_t provisional)
{
    char *e = tarn_session_commit_snapshot_sql(cat, provisional);
    buf_puts(b, e);
    free(e);
}

void queue_commit_sql(strlist *out, const char *cat, const queue_job *j, const char *worker,
                      const char *slice, int64_t snapshot_id, int done)
{
    tarn_buf b = {0};
    buf_puts(&b, "INSERT INTO ");
    quote_prefixed(&b, cat, "tarn_job_commit");
    buf_printf(&b, " (run_id, model, slice, worker, attempt, snapshot_id) VALUES (%lld, ",
               (long long)j->run_id);
    quote_literal(&b, j->model);
    buf_puts(&b, ", ");
    quote_literal(&b, slice);
    buf_puts(&b, ", ");
    quote_literal(&b, worker);
    buf_printf(&b, ", %d, ", j->attempts);
    commit_snapshot(&b, cat, snapshot_id);
    buf_putc(&b, ')');
    strlist_push_owned(out, buf_detach(&b));
    if (!done)
        return;
    update_finished(&b, cat, JOB_DONE, NULL);
    buf_puts(&b, ", snapshot_id = ");
    commit_snapshot(&b, cat, snapshot_id);
    where_job(&b, j->run_id, j->model);
    strlist_push_owned(out, buf_detach(&b));
}

int queue_committed(strlist *slices, int64_t *snapshot_id, tarn_catlink *l, const char *cat,
                    int64_t run_id, const char *model)
{
    *snapshot_id = -1;
    tarn_buf b = {0};
    buf_puts(&b, "SELECT slice, snapshot_id FROM ");
    quote_prefixed(&b, cat, "tarn_job_commit");
    where_job(&b, run_id, model);
    buf_puts(&b, " ORDER BY snapshot_id");
    qrows r;
    int rc = link_rows(&r, l, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows; i++) {
        strlist_push(slices, qrows_get(&r, i, 0) ? qrows_get(&r, i, 0) : "");
        if (qrows_get(&r, i, 1))
            *snapshot_id = strtoll(qrows_get(&r, i, 1), NULL, 10);
    }
    qrows_free(&r);
    return 0;
}

int queue_run_jobs(qrows *out, tarn_catlink *l, const char *cat, int64_t run_id)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT model, state, worker, attempts, extract(epoch FROM lease_until), "
                 "extract(epoch FROM clock_timestamp()), snapshot_id, error FROM ");
    quote_prefixed(&b, cat, "tarn_job");
    buf_printf(&b, " WHERE run_id = %lld ORDER BY seq", (long long)run_id);
    int rc = link_rows(out, l, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

int queue_worker_beat(tarn_catlink *l, const char *cat, const char *worker, const char *state,
                      int64_t run_id, const char *model, int concurrency, double lease_s)
{
    char *host, *start;
    long pid;
    proc_self(&host, &pid, &start);
    tarn_buf b = {0};
    buf_puts(&b, "INSERT INTO ");
    quote_prefixed(&b, cat, "tarn_worker");
    buf_puts(&b, " AS w (worker_id, host, pid, started_at, heartbeat_at, state, run_id, model, "
                 "concurrency, lease_s) VALUES (");
    quote_literal(&b, worker);
    buf_puts(&b, ", ");
    quote_literal(&b, host);
    buf_printf(&b, ", %ld, clock_timestamp(), clock_timestamp(), ", pid);
    quote_literal(&b, state);
    if (run_id > 0)
        buf_printf(&b, ", %lld, ", (long long)run_id);
    else
        buf_puts(&b, ", NULL, ");
    quote_literal(&b, model);
    /* a restarted worker of the same name starts anew */
    buf_printf(&b,
               ", %d, %.3f) ON CONFLICT (worker_id) DO UPDATE SET host = excluded.host, "
               "started_at = CASE WHEN w.pid = excluded.pid AND w.host = excluded.host AND "
               "w.state <> 'stopped' THEN w.started_at ELSE excluded.started_at END, pid = "
               "excluded.pid, heartbeat_at = excluded.heartbeat_at, state = excluded.state, "
               "run_id = excluded.run_id, model = excluded.model, concurrency = "
               "excluded.concurrency, lease_s = excluded.lease_s",
               concurrency, lease_s);
    free(host);
    free(start);
    return run_sql(l, &b, NULL);
}

int queue_workers(qrows *out, tarn_catlink *l, const char *cat)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT worker_id, host, pid, state, run_id, model, "
                 "to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), "
                 "to_char(heartbeat_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'), "
                 "extract(epoch FROM clock_timestamp() - heartbeat_at), lease_s FROM ");
    quote_prefixed(&b, cat, "tarn_worker");
    buf_puts(&b, " ORDER BY worker_id");
    int rc = link_rows(out, l, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

int queue_workers_alive(int64_t *n, tarn_catlink *l, const char *cat)
{
    *n = 0;
    tarn_buf b = {0};
    buf_puts(&b, "SELECT count(*) FROM ");
    quote_prefixed(&b, cat, "tarn_worker");
    buf_puts(&b, " WHERE state <> 'stopped' AND heartbeat_at + make_interval(secs => lease_s) >= "
                 "clock_timestamp()");
    qrows r;
    int rc = link_rows(&r, l, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        return rc;
    if (r.nrows && qrows_get(&r, 0, 0))
        *n = strtoll(qrows_get(&r, 0, 0), NULL, 10);
    qrows_free(&r);
    return 0;
}

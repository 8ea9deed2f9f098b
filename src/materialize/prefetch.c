/*
 * prefetch.c — worker threads that evaluate models' queries ahead of
 * their builds (see prefetch.h).
 *
 * One mutex guards the jobs; the main thread submits a job only to a
 * free worker, so the queue never holds more jobs than there are idle
 * workers. A worker puts the job it finished on a second FIFO, which
 * prefetch_next_done reads (the run submits each model at most once, so
 * each FIFO holds at most one entry a model). A job's table is
 * "__tarn_prefetch"."main"."m<model index>", in an in-memory database
 * attached for the run: tables there are shared by every connection of
 * the instance, and DuckDB spills them to its temporary directory when
 * they outgrow memory.
 */
#include "materialize/prefetch.h"

#include "materialize/build.h"

#include "project/query.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/clock.h"
#include "util/buf.h"
#include "util/quote.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SCRATCH "__tarn_prefetch"

/* A job goes NONE → QUEUED → RUNNING → DONE | FAILED → RELEASED; it is
 * submitted at most once, which bounds both FIFOs by the model count. */
typedef enum {
    JOB_NONE = 0,
    JOB_QUEUED,
    JOB_RUNNING,
    JOB_DONE,
    JOB_FAILED,
    JOB_RELEASED
} job_state;

typedef struct {
    job_state state;
    char *pinned;   /* the query as the build pins it */
    char *sql;      /* what the reader runs: CREATE TABLE … AS <rewritten query> */
    char *relation; /* SELECT * FROM the job's table */
    double ms;
} job;

typedef struct {
    prefetch *pf;
    tarn_reader *reader;
    pthread_t thread;
    int started;
    int busy;
} worker;

struct prefetch {
    tarn_session *s;
    size_t nmodels;
    job *jobs;
    size_t *queue; /* model indexes, FIFO */
    size_t qhead, qtail;
    size_t *finished; /* model indexes of jobs done or failed, FIFO */
    size_t fhead, ftail;
    worker *workers;
    int nworkers;
    int idle;    /* workers not running a job, minus the jobs queued for them */
    int running; /* jobs queued or running */
    int stop;
    pthread_mutex_t mu;
    pthread_cond_t work; /* a job was queued, or stop */
    pthread_cond_t done; /* a job finished */
};

static void job_table(tarn_buf *b, size_t mi)
{
    char name[32];
    snprintf(name, sizeof(name), "m%zu", mi);
    quote_qualified(b, SCRATCH, "main", name);
}

/* ---- the workers ------------------------------------------------------ */

static void *worker_main(void *arg)
{
    worker *w = arg;
    prefetch *pf = w->pf;
    pthread_mutex_lock(&pf->mu);
    for (;;) {
        while (!pf->stop && pf->qhead == pf->qtail)
            pthread_cond_wait(&pf->work, &pf->mu);
        if (pf->stop)
            break;
        size_t mi = pf->queue[pf->qhead++];
        job *j = &pf->jobs[mi];
        j->state = JOB_RUNNING;
        w->busy = 1;
        pthread_mutex_unlock(&pf->mu);
        double t0 = clock_mono_ms();
        int rc = tarn_reader_exec(w->reader, j->sql);
        tarn_error_clear(); /* the build evaluates the query itself and reports */
        pthread_mutex_lock(&pf->mu);
        j->ms = clock_mono_ms() - t0;
        j->state = rc ? JOB_FAILED : JOB_DONE;
        pf->finished[pf->ftail++] = mi;
        w->busy = 0;
        pf->idle++;
        pf->running--;
        pthread_cond_broadcast(&pf->done);
    }
    pthread_mutex_unlock(&pf->mu);
    return NULL;
}

/* ---- setting readers up as the session ------------------------------- */

/* Whether a config/ statement changes only the connection that runs it,
 * so that a reader must run it too: SET/RESET (not GLOBAL), USE, and
 * CREATE of TEMP views, macros and functions. Everything else (ATTACH,
 * CREATE VIEW, CREATE MACRO …) lives in the instance, which readers share.
 * A TEMP table is not re-created: its rows would be computed again, and
 * could differ (random(), now(), a file that changed); a model that reads
 * one fails on the worker and is evaluated in the session instead. */
static int connection_local(const char *sql)
{
    sql_tokens tk;
    if (sql_tokenize(&tk, sql) != 0) {
        tarn_error_clear();
        return 0;
    }
    int local = 0;
    if (tk.n > 0 && (sql_tok_is_kw(&tk.toks[0], "SET") || sql_tok_is_kw(&tk.toks[0], "RESET")))
        local = !(tk.n > 1 && sql_tok_is_kw(&tk.toks[1], "GLOBAL"));
    else if (tk.n > 0 && sql_tok_is_kw(&tk.toks[0], "USE"))
        local = 1;
    else if (tk.n > 1 && sql_tok_is_kw(&tk.toks[0], "CREATE")) {
        size_t i = 1;
        if (i + 1 < tk.n && sql_tok_is_kw(&tk.toks[i], "OR"))
            i += 2;
        local = i + 1 < tk.n &&
                (sql_tok_is_kw(&tk.toks[i], "TEMP") || sql_tok_is_kw(&tk.toks[i], "TEMPORARY")) &&
                !sql_tok_is_kw(&tk.toks[i + 1], "TABLE");
    }
    sql_tokens_free(&tk);
    return local;
}

static int setup_reader(prefetch *pf, const tarn_project *p, tarn_reader *r)
{
    for (size_t i = 0; i < p->nconfig; i++) {
        const config_file *cf = &p->config[i];
        for (size_t k = 0; k < cf->nstmts; k++) {
            if (!connection_local(cf->stmts[k].text))
                continue;
            char *sql = NULL;
            int rc = tarn_session_reader_sql(pf->s, cf->stmts[k].text, &sql);
            if (!rc)
                rc = tarn_reader_exec(r, sql);
            free(sql);
            if (rc)
                return tarn_error_prefix(rc, "%s:%d: a worker cannot run it as the session did",
                                         cf->path, cf->stmts[k].line);
        }
    }
    return 0;
}

static void workers_stop(prefetch *pf)
{
    pthread_mutex_lock(&pf->mu);
    pf->stop = 1;
    for (int i = 0; i < pf->nworkers; i++)
        if (pf->workers[i].busy)
            tarn_reader_interrupt(pf->workers[i].reader);
    pthread_cond_broadcast(&pf->work);
    pthread_mutex_unlock(&pf->mu);
    for (int i = 0; i < pf->nworkers; i++)
        if (pf->workers[i].started)
            pthread_join(pf->workers[i].thread, NULL);
}

int prefetch_open(prefetch **out, tarn_session *s, const tarn_project *p, int workers)
{
    prefetch *pf = xcalloc(1, sizeof(*pf));
    pf->s = s;
    pf->nmodels = p->nmodels;
    pf->jobs = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(job));
    pf->queue = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(size_t));
    pf->finished = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(size_t));
    pf->workers = xcalloc((size_t)workers, sizeof(worker));
    pthread_mutex_init(&pf->mu, NULL);
    pthread_cond_init(&pf->work, NULL);
    pthread_cond_init(&pf->done, NULL);
    int rc = 0;
    for (int i = 0; i < workers && !rc; i++) {
        worker *w = &pf->workers[i];
        w->pf = pf;
        rc = tarn_reader_open(&w->reader, s);
        if (rc)
            break;
        pf->nworkers++;
        if (i == 0)
            rc = tarn_reader_exec(w->reader, "ATTACH IF NOT EXISTS ':memory:' AS " SCRATCH);
        if (!rc)
            rc = setup_reader(pf, p, w->reader);
    }
    for (int i = 0; i < pf->nworkers && !rc; i++) {
        if (pthread_create(&pf->workers[i].thread, NULL, worker_main, &pf->workers[i]) != 0)
            rc = tarn_error_set(TARN_ERROR, "cannot start a worker thread");
        else
            pf->workers[i].started = 1;
    }
    pf->idle = pf->nworkers;
    if (rc) {
        char *msg = xstrdup(tarn_error_last());
        prefetch_close(pf);
        rc = tarn_error_set(rc, "%s", msg);
        free(msg);
        return rc;
    }
    *out = pf;
    return 0;
}

void prefetch_close(prefetch *pf)
{
    if (!pf)
        return;
    workers_stop(pf);
    for (size_t i = 0; i < pf->nmodels; i++)
        if (pf->jobs[i].state != JOB_NONE && pf->jobs[i].state != JOB_RELEASED)
            prefetch_release(pf, i);
    if (pf->nworkers > 0 &&
        tarn_reader_exec(pf->workers[0].reader, "DETACH DATABASE IF EXISTS " SCRATCH) != 0)
        tarn_error_clear();
    for (int i = 0; i < pf->nworkers; i++)
        tarn_reader_close(pf->workers[i].reader);
    pthread_mutex_destroy(&pf->mu);
    pthread_cond_destroy(&pf->work);
    pthread_cond_destroy(&pf->done);
    free(pf->workers);
    free(pf->queue);
    free(pf->finished);
    free(pf->jobs);
    free(pf);
}

/* ---- jobs -------------------------------------------------------------- */

int prefetch_has_idle(const prefetch *pf)
{
    /* only the main thread changes idle downwards; a stale read errs on
     * the side of "busy" */
    prefetch *m = (prefetch *)pf;
    pthread_mutex_lock(&m->mu);
    int idle = m->idle > 0;
    pthread_mutex_unlock(&m->mu);
    return idle;
}

int prefetch_submit(prefetch *pf, size_t mi, const char *prelude, const char *pinned)
{
    job *j = &pf->jobs[mi];
    if (j->state != JOB_NONE) /* once per model: the FIFOs hold one entry a model */
        return tarn_error_set(TARN_EINVALID, "model %zu was already prefetched", mi);
    tarn_buf ctas = {0}, rel = {0};
    buf_puts(&ctas, "CREATE TABLE ");
    job_table(&ctas, mi);
    buf_printf(&ctas, " AS\n%s\n", pinned);
    char *body = NULL;
    int rc = tarn_session_reader_sql(pf->s, buf_cstr(&ctas), &body);
    buf_free(&ctas);
    if (rc)
        return rc;
    char *sql = prelude ? xasprintf("%s;\n%s", prelude, body) : xstrdup(body);
    free(body);
    buf_puts(&rel, "SELECT * FROM ");
    job_table(&rel, mi);
    pthread_mutex_lock(&pf->mu);
    j->pinned = xstrdup(pinned);
    j->sql = sql;
    j->relation = buf_detach(&rel);
    j->state = JOB_QUEUED;
    pf->queue[pf->qtail++] = mi;
    pf->idle--;
    pf->running++;
    pthread_cond_signal(&pf->work);
    pthread_mutex_unlock(&pf->mu);
    return 0;
}

int prefetch_next_done(prefetch *pf, size_t *mi, int wait)
{
    pthread_mutex_lock(&pf->mu);
    /* a stopped run (build_cancel) stops waiting: the wait wakes every
     * 100 ms to look */
    while (wait && pf->fhead == pf->ftail && pf->running > 0 && !build_cancel_signal()) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += 100000000L;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&pf->done, &pf->mu, &until);
    }
    int found = pf->fhead < pf->ftail;
    if (found)
        *mi = pf->finished[pf->fhead++];
    pthread_mutex_unlock(&pf->mu);
    return found;
}

const char *prefetch_result(prefetch *pf, size_t mi, const char *pinned, double *worker_ms)
{
    pthread_mutex_lock(&pf->mu);
    job *j = &pf->jobs[mi];
    int ok = j->state == JOB_DONE && strcmp(j->pinned, pinned) == 0;
    if (worker_ms)
        *worker_ms = j->ms;
    j->ms = 0;
    pthread_mutex_unlock(&pf->mu);
    return ok ? j->relation : NULL;
}

void prefetch_release(prefetch *pf, size_t mi)
{
    pthread_mutex_lock(&pf->mu);
    job *j = &pf->jobs[mi];
    int staged = j->state == JOB_DONE || j->state == JOB_FAILED;
    int finished = j->state == JOB_DONE || j->state == JOB_FAILED || j->state == JOB_QUEUED;
    pthread_mutex_unlock(&pf->mu);
    if (!finished)
        return; /* still running: prefetch_close drops it after the join */
    if (staged) {
        tarn_buf sql = {0};
        buf_puts(&sql, "DROP TABLE IF EXISTS ");
        job_table(&sql, mi);
        if (query_exec(pf->s, buf_cstr(&sql), NULL) != 0)
            tarn_error_clear();
        buf_free(&sql);
    }
    pthread_mutex_lock(&pf->mu);
    free(j->pinned);
    free(j->sql);
    free(j->relation);
    memset(j, 0, sizeof(*j));
    j->state = JOB_RELEASED;
    pthread_mutex_unlock(&pf->mu);
}

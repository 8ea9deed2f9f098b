/*
 * run_beat.c — a run's heartbeat on a catalog several processes share
 * (PostgreSQL): a thread renews tarn_run.heartbeat_at every
 * records_beat_every() seconds, on a link of its own to the catalog (the
 * session is busy building), until the run ends. Another host cannot ask
 * this host's process table whether the run is alive; the heartbeat tells
 * it, so a long build is not taken for a run that died
 * (records_dead_runs). Part of the runner (run_int.h).
 */
#include "materialize/records.h"
#include "materialize/run_int.h"

#include "project/query.h"
#include "tarn/error.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct run_beat {
    tarn_catlink *l;
    char *sql;
    double every;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    pthread_t th;
};

static void beat_once(run_beat *b)
{
    if (link_exec(b->l, b->sql, NULL) != 0)
        tarn_error_clear(); /* a missed beat: the next one may reach it */
}

static void *beat_main(void *arg)
{
    run_beat *b = arg;
    pthread_mutex_lock(&b->mu);
    while (!b->done) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long ns = until.tv_nsec + (long)((b->every - (long)b->every) * 1e9);
        until.tv_sec += (time_t)b->every + ns / 1000000000L;
        until.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&b->cv, &b->mu, &until);
        if (b->done)
            break;
        pthread_mutex_unlock(&b->mu);
        beat_once(b);
        pthread_mutex_lock(&b->mu);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

run_beat *run_beat_start(run_ctx *c)
{
    int shared = 0;
    if (tarn_session_catalog_shared(c->s, c->lake, &shared) != 0 || !shared) {
        tarn_error_clear();
        return NULL;
    }
    run_beat *b = xcalloc(1, sizeof(*b));
    if (tarn_catlink_open(&b->l, c->s, c->lake) != 0) {
        /* no heartbeat: the run is judged by its records alone, as before */
        tarn_error_clear();
        free(b);
        return NULL;
    }
    b->sql = records_run_beat_sql(c->cat, c->sum->run_id);
    b->every = records_beat_every();
    beat_once(b); /* from the start: the row says it beats */
    pthread_mutex_init(&b->mu, NULL);
    pthread_cond_init(&b->cv, NULL);
    if (pthread_create(&b->th, NULL, beat_main, b) != 0) {
        pthread_mutex_destroy(&b->mu);
        pthread_cond_destroy(&b->cv);
        tarn_catlink_close(b->l);
        free(b->sql);
        free(b);
        return NULL;
    }
    return b;
}

void run_beat_stop(run_beat *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&b->mu);
    b->done = 1;
    pthread_cond_signal(&b->cv);
    pthread_mutex_unlock(&b->mu);
    pthread_join(b->th, NULL);
    pthread_mutex_destroy(&b->mu);
    pthread_cond_destroy(&b->cv);
    tarn_catlink_close(b->l);
    free(b->sql);
    free(b);
}

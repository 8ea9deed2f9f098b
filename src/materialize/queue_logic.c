/*
 * queue_logic.c — the job queue's decisions without SQL (see queue.h):
 * whether a job's upstream lets it go, what a lease's expiry means, how
 * often a worker beats. The SQL of queue.c makes the same decisions in the
 * database; these make them for the submitter and the worker.
 */
#include "materialize/queue.h"

#include <string.h>

static const char *const names[] = {"waiting", "ready",   "running",  "done",
                                    "failed",  "skipped", "cancelled"};

const char *job_state_name(job_state s)
{
    return names[s];
}

int job_state_parse(job_state *out, const char *name)
{
    for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(names[i], name) == 0) {
            *out = (job_state)i;
            return 0;
        }
    return -1;
}

upstream_verdict queue_upstream(const job_state *up, size_t n)
{
    int waiting = 0;
    for (size_t i = 0; i < n; i++) {
        if (up[i] == JOB_FAILED || up[i] == JOB_SKIPPED || up[i] == JOB_CANCELLED)
            return UPSTREAM_BLOCKED;
        if (up[i] != JOB_DONE)
            waiting = 1;
    }
    return waiting ? UPSTREAM_WAIT : UPSTREAM_DONE;
}

lease_verdict queue_lease(double now, double lease_until, int attempts, int max_attempts)
{
    if (now <= lease_until)
        return LEASE_HELD;
    return attempts >= max_attempts ? LEASE_GIVE_UP : LEASE_EXPIRED;
}

double queue_renew_every(double lease_s)
{
    double every = lease_s / 3;
    return every < 0.05 ? 0.05 : every;
}

int queue_worker_alive(double now, double beat, double lease_s)
{
    return now - beat <= lease_s;
}

long queue_model_index(const tarn_project *p, const char *name)
{
    for (size_t i = 0; name && i < p->nmodels; i++)
        if (strcmp(p->models[i].name, name) == 0)
            return (long)i;
    return -1;
}

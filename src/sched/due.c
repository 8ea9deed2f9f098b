/*
 * due.c — one tick's decision for each scheduled model (see due.h).
 */
#include "sched/due.h"

#include "util/buf.h"
#include "util/cron.h"

#include <stdlib.h>
#include <string.h>

const char *sched_action_name(sched_action a)
{
    static const char *const names[] = {"idle", "arm", "fire", "coalesced", "capped"};
    return names[a];
}

/* The newest occurrence in (anchor, now], or -1 when none has come. */
static int64_t newest_due(const cron_spec *c, int64_t anchor, int64_t now)
{
    int64_t o = cron_next(c, anchor), newest = -1;
    /* each step is a minute at least: a year of minutes bounds the walk */
    for (int i = 0; o >= 0 && o <= now && i < 600000; i++) {
        newest = o;
        o = cron_next(c, o);
    }
    return newest;
}

static int decide_cron(sched_decision *d, const sched_entry *e, int64_t now)
{
    cron_spec c;
    char why[200];
    if (cron_parse(&c, e->schedule, why, sizeof(why)) != 0)
        return -1;
    d->next = cron_next(&c, now);
    if (!e->armed) {
        d->action = SCHED_ARM;
        return 0;
    }
    int64_t anchor = e->last_occurrence > e->armed_at ? e->last_occurrence : e->armed_at;
    d->occurrence = newest_due(&c, anchor, now);
    d->action = d->occurrence < 0 ? SCHED_IDLE : SCHED_FIRE;
    return 0;
}

static void decide_freshness(sched_decision *d, const sched_entry *e, int64_t now)
{
    if (e->last_good_build >= 0 && now - e->last_good_build < e->freshness_s) {
        d->action = SCHED_IDLE;
        d->next = e->last_good_build + e->freshness_s;
        return;
    }
    d->action = SCHED_FIRE;
    d->occurrence = now;
    d->next = now + e->freshness_s;
}

/* The due entry that has waited longest (then the first by name) among
 * those not yet given a fire, or -1. */
static long longest_waiting(const sched_decision *out, const sched_entry *entries, size_t n,
                            const unsigned char *placed)
{
    long best = -1;
    for (size_t i = 0; i < n; i++) {
        if (out[i].action != SCHED_FIRE || placed[i])
            continue;
        if (best < 0 || out[i].occurrence < out[best].occurrence ||
            (out[i].occurrence == out[best].occurrence &&
             strcmp(entries[i].model, entries[best].model) < 0))
            best = (long)i;
    }
    return best;
}

int sched_decide(sched_decision *out, const sched_entry *entries, size_t n, int64_t now,
                 size_t max_fires)
{
    for (size_t i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof(out[i]));
        out[i].occurrence = out[i].next = -1;
        const sched_entry *e = &entries[i];
        if (e->schedule) {
            if (decide_cron(&out[i], e, now) != 0)
                return -1;
        } else {
            decide_freshness(&out[i], e, now);
        }
        if (out[i].action == SCHED_FIRE && e->in_flight)
            out[i].action = SCHED_COALESCED;
    }
    unsigned char *placed = xcalloc(n ? n : 1, 1);
    size_t fired = 0;
    for (long i; (i = longest_waiting(out, entries, n, placed)) >= 0;) {
        placed[i] = 1;
        if (max_fires && fired == max_fires)
            out[i].action = SCHED_CAPPED;
        else
            fired++;
    }
    free(placed);
    return 0;
}

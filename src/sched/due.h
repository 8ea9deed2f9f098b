/*
 * due.h — what the scheduler does with each scheduled model on one tick:
 * pure logic over the recorded state and the time, no clock and no I/O
 * (the scheduler reads the state from the catalog and writes back what it
 * decided).
 *
 * A cron rule (`-- schedule`):
 *   - a rule seen for the first time (no record, or the record of another
 *     rule) is ARMed: it waits for its next occurrence strictly after now,
 *     so a new schedule never fires on the tick that first sees it;
 *   - an armed rule is due when an occurrence has come since the later of
 *     its arming and the occurrence it last served. However many have come
 *     (the scheduler was down), it fires once, serving the newest of them,
 *     and then waits for the next: one missed occurrence is recovered, the
 *     others are jumped;
 * A freshness rule (`-- freshness 6h`) is due when the model has no good
 * build or its last one is at least that old; it serves `now`.
 * A due model whose build is already in flight is COALESCED (not queued a
 * second time); of the others, at most max_fires FIRE this tick, the
 * longest-waiting first (then by model name), the rest are CAPPED and stay
 * due for a later tick.
 */
#ifndef TARN_SCHED_DUE_H
#define TARN_SCHED_DUE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    const char *model;    /* borrowed */
    const char *schedule; /* the cron rule, or NULL for a freshness rule */
    long freshness_s;     /* with no schedule */
    /* the recorded state (times in seconds since the epoch, UTC) */
    int armed;               /* a record of this very rule exists */
    int64_t armed_at;        /* when the rule was first seen */
    int64_t last_occurrence; /* the occurrence it last served, or -1 */
    int64_t last_good_build; /* when its last good build finished, or -1 */
    int in_flight;           /* a build of it is running now */
} sched_entry;

typedef enum {
    SCHED_IDLE = 0,  /* not due: waits for `next` */
    SCHED_ARM,       /* first seen: record armed_at = now, wait for `next` */
    SCHED_FIRE,      /* build it now, serving `occurrence` */
    SCHED_COALESCED, /* due, but its build is in flight */
    SCHED_CAPPED,    /* due, but the tick's fires are used up */
} sched_action;

typedef struct {
    sched_action action;
    int64_t occurrence; /* FIRE, COALESCED, CAPPED: the occurrence served */
    int64_t next;       /* IDLE, ARM, FIRE: the next occurrence after this tick (-1: none) */
} sched_decision;

/* "idle", "arm", "fire", "coalesced", "capped" */
const char *sched_action_name(sched_action a);

/* Decides entries[0..n) at `now`: out[i] for entries[i]. max_fires 0
 * means no cap. Returns 0, or -1 when a schedule does not parse (the
 * project loader refuses those, so only a corrupt record gets here). */
int sched_decide(sched_decision *out, const sched_entry *entries, size_t n, int64_t now,
                 size_t max_fires);

#endif

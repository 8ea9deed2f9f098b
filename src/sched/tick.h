/*
 * tick.h — one tick of the scheduler: what is due, recorded, and built.
 *
 * The scheduler's memory is the catalog, so that successive processes
 * (`tarn scheduler --once`, a restart) behave as successive ticks of one
 * scheduler. Beside tarn_run it keeps
 *
 *   tarn_schedule  one row per scheduled model: its rule as last seen
 *                  (`0 6 * * *`, or `freshness 6h`), when that rule was
 *                  armed, the occurrence it last served and when, and the
 *                  run that served it.
 *
 * A tick (sched_tick): runs config/ (attaching the lake read-write),
 * reads those rows, the last good build of each model and the runs in
 * flight, decides (due.h), records the arms and the fires — a fire is
 * recorded before its build starts, so that a crash mid-build does not
 * fire the same occurrence again: the run is recorded as interrupted
 * instead — and builds the fired models, with change detection, together
 * with the models upstream of them that have no rule of their own, as one
 * run whose trigger is `scheduler`.
 */
#ifndef TARN_SCHED_TICK_H
#define TARN_SCHED_TICK_H

#include "materialize/build.h"
#include "project/project.h"
#include "sched/due.h"
#include "tarn/session.h"

#include <stdint.h>

typedef struct {
    size_t model; /* index in the project */
    sched_decision d;
} sched_line;

typedef struct {
    sched_line *lines; /* one per scheduled model, in project order */
    size_t nlines;
    size_t fired;
    int built;         /* a run took place */
    int has_sum;       /* sum holds memory (build_run was called) */
    build_summary sum; /* when built */
    char *occurrences; /* the fires, "schema.t@2026-06-01T06:00:00Z …", or NULL */
} sched_report;

/* One tick at `now` (seconds since the epoch, UTC) over project `p`, whose
 * config/ has not run in session `s` yet. max_fires: 0 for no cap. `base`
 * gives the build options (jobs, events, version); selection and trigger
 * are the tick's. Returns 0 (model failures are in out->sum), or an error
 * that stopped the tick before any build (config/, the catalog). */
int sched_tick(sched_report *out, tarn_project *p, tarn_session *s, int64_t now, size_t max_fires,
               const build_opts *base);
void sched_report_free(sched_report *r, const tarn_project *p);

/* The rule of model m as tarn_schedule keeps it ("0 6 * * *", or
 * "freshness 21600s"), or NULL when it has none (caller frees). */
char *sched_rule_text(const tarn_model *m);

/* Formats t (seconds since the epoch) as 2026-06-01T06:00:00Z into
 * buf[0..21). */
void sched_format_time(char buf[21], int64_t t);

#endif

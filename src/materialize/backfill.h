/*
 * backfill.h — the worklist of `tarn backfill MODEL --start A --end B`:
 * which slices of a time-partitioned model to build, from what the lake
 * records of each (tarn_partition, records.h). The build itself is a run
 * with build_opts.slices set: each slice its own build and snapshot, so a
 * backfill stopped halfway (a signal, a kill, a failing slice) keeps what
 * it committed, and the same command run again takes what is left.
 */
#ifndef TARN_MATERIALIZE_BACKFILL_H
#define TARN_MATERIALIZE_BACKFILL_H

#include "project/project.h"
#include "tarn/session.h"
#include "util/strlist.h"

#include <stdint.h>

typedef enum {
    BACKFILL_MISSING = 0, /* never built, failed or cancelled, or built by other SQL */
    BACKFILL_FAILED,      /* failed or cancelled only */
    BACKFILL_ALL,         /* every slice of the range */
} backfill_mode;

typedef struct {
    strlist todo;       /* the slices to build, oldest first */
    size_t total;       /* slices in the range */
    size_t built;       /* of them, built by the model's current SQL */
    size_t failed;      /* of them, whose last build failed or was cancelled */
    size_t stale;       /* of them, built by other SQL */
    char *first, *last; /* the range's first and last slice */
} backfill_work;

/* The worklist of model `mi` (a time-partitioned model) from the slice
 * containing `from` to the one containing `to` (NULL: now; `from` NULL:
 * the model's start=). `s` has config/ run (the lake attached). Errors
 * (TARN_EINVALID) name the model and the fix. */
int backfill_worklist(backfill_work *out, tarn_session *s, const tarn_project *p, size_t mi,
                      const char *from, const char *to, backfill_mode mode, int64_t now);
void backfill_work_free(backfill_work *w);

#endif

/*
 * retain.h — retention that respects the record: which snapshots an
 * expiry may forget, and pins.
 *
 * `tarn maintain expire -C DIR --older-than D | --keep-last N` expires the
 * snapshots the rule picks except those the project still stands on:
 *
 *   - the newest snapshot (the lake as it is);
 *   - the snapshot of every model's last good build (tarn_model_run), so
 *     `tarn show --at` of it and change detection keep working;
 *   - every snapshot pinned with `tarn pin` (tarn_pin: snapshot_id, model,
 *     note, pinned_at, in the catalog database beside tarn_run).
 *
 * The expiry itself is DuckLake's ducklake_expire_snapshots with the list.
 */
#ifndef TARN_MATERIALIZE_RETAIN_H
#define TARN_MATERIALIZE_RETAIN_H

#include "tarn/session.h"
#include "util/strlist.h"

#include <stdint.h>

typedef struct {
    int64_t *expire; /* the snapshots to expire, oldest first */
    size_t nexpire;
    int64_t *kept; /* the snapshots the rule picked that are kept */
    strlist why;   /* … and why, one per kept snapshot */
    size_t nkept;
} retain_plan;

/* The plan for lake `lake` (catalog database `cat`): the snapshots older
 * than `older_than` (a timestamp or an age, '7 days'; NULL: any age) that
 * are not among the newest `keep_last` (0: none kept for that), minus the
 * protected ones. One of the two rules is needed. */
int retain_plan_make(retain_plan *out, tarn_session *s, const char *lake, const char *cat,
                     const char *older_than, long keep_last);
void retain_plan_free(retain_plan *p);

/* Creates tarn_pin if missing. */
int retain_pins_ensure(tarn_session *s, const char *cat);
/* Pins snapshot `snap` (of `model`, or NULL) with `note` (or NULL). An
 * unknown or expired snapshot is TARN_EINVALID. */
int retain_pin(tarn_session *s, const char *lake, const char *cat, int64_t snap, const char *model,
               const char *note);
/* Unpins `snap`; *removed: whether it was pinned. */
int retain_unpin(tarn_session *s, const char *cat, int64_t snap, int *removed);
/* The snapshot of model `model`'s last good build, or TARN_EINVALID. */
int retain_last_good(int64_t *snap, tarn_session *s, const char *cat, const char *model);

#endif

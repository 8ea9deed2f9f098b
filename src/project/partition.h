/*
 * partition.h — partition grains and identities (design §4).
 *
 * A partitioned model is built one slice at a time. Each slice has an
 * identity string, the value stored in the table's _tarn_partition column,
 * recorded in tarn_partition and substituted for {partition}:
 *
 *     hourly   2024-03-05T07     DuckDB strftime '%Y-%m-%dT%H'
 *     daily    2024-03-05                         '%Y-%m-%d'
 *     weekly   2024-W10  (ISO)                    '%G-W%V'
 *     monthly  2024-03                            '%Y-%m'
 *     dynamic  the column's value as text
 *
 * The tarn_partition(ts) macro a build creates is strftime(ts, <format>),
 * so the identities made here and the ones DuckDB computes from rows are
 * the same strings by construction. Times are UTC epoch seconds; all the
 * calendar arithmetic is here, without the C library's time zone.
 */
#ifndef TARN_PROJECT_PARTITION_H
#define TARN_PROJECT_PARTITION_H

#include "util/strlist.h"

#include <stdint.h>

typedef enum {
    GRAIN_NONE = 0,
    GRAIN_HOURLY,
    GRAIN_DAILY,
    GRAIN_WEEKLY,
    GRAIN_MONTHLY,
    GRAIN_DYNAMIC,
} part_grain;

/* The name used in annotations ("daily"...); "" for GRAIN_NONE. */
const char *grain_name(part_grain g);
/* "hourly" | "daily" | "weekly" | "monthly" | "dynamic" → *out; -1 else. */
int grain_parse(part_grain *out, const char *name);
/* DuckDB strftime format of a time grain's identities; NULL for dynamic. */
const char *grain_strftime(part_grain g);

/* The identity of the slice of time grain `g` that contains `t`
 * (caller frees). */
char *partition_format(part_grain g, int64_t t);

/* Parses an identity of time grain `g` exactly as partition_format writes
 * it; *start gets the slice's first second. TARN_EINVALID with a message
 * showing the expected form otherwise. */
int partition_parse(int64_t *start, part_grain g, const char *id);

/* The slice after the one starting at `start`. */
int64_t partition_next(part_grain g, int64_t start);

/* Parses a point in time given on the command line: an identity of any
 * grain (2024-03-05, 2024-03-05T07, 2024-W10, 2024-03) or a timestamp
 * ('2024-03-05 07:30:00', '2024-03-05T07:30'). */
int partition_parse_time(int64_t *out, const char *s);

/* The identities of grain `g` from the slice containing `from` to the one
 * containing `to`, both included, in order. At most `max` of them; more is
 * TARN_EINVALID (a typo'd year should not start a 100-year backfill). */
int partition_range(strlist *out, part_grain g, const char *from, const char *to, size_t max);

/* Days since 1970-01-01 of a civil date, and back (proleptic Gregorian). */
int64_t days_from_civil(int64_t y, unsigned m, unsigned d);
void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

#endif

/*
 * cron.h — five-field cron expressions, in UTC: parsing (strict) and the
 * next occurrence after a time.
 *
 *   minute (0-59)  hour (0-23)  day of month (1-31)  month (1-12, JAN-DEC)
 *   day of week (0-7, SUN-SAT; 0 and 7 are Sunday)
 *
 * Each field is `*`, a value, a range `a-b`, any of those with a step
 * `/n` (`1-30/2`; `5/10` means 5-max/10; `*` with `/15` every 15th), or a
 * comma list of them.
 * Names are case-insensitive and work in ranges (MON-FRI). As in Vixie
 * cron, when both the day of month and the day of week are restricted
 * (neither starts with `*`), a day matches when either does. The
 * shorthands @hourly, @daily (@midnight), @weekly, @monthly and @yearly
 * (@annually) stand for their five fields.
 *
 * Refused, with a message saying what is wrong: other than five fields,
 * the Quartz extensions L W # ?, values out of a field's range, a step of
 * 0, a range that runs backwards, and a day/month combination that never
 * occurs (`0 0 30 2 *`). The parser is pure: no clock, no allocation.
 */
#ifndef TARN_UTIL_CRON_H
#define TARN_UTIL_CRON_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint64_t minutes;  /* bit m: minute m (0-59) */
    uint32_t hours;    /* bit h (0-23) */
    uint32_t days;     /* bit d: day of month d (1-31) */
    uint16_t months;   /* bit m: month m (1-12) */
    uint8_t weekdays;  /* bit w: 0 Sunday … 6 Saturday */
    int days_star;     /* the day-of-month field starts with '*' */
    int weekdays_star; /* the day-of-week field starts with '*' */
} cron_spec;

/* Parses `expr`. Returns 0, or -1 with a message (what is wrong, naming
 * the field and the value) in why[0..whylen). */
int cron_parse(cron_spec *out, const char *expr, char *why, size_t whylen);

/* The first minute strictly after `after` (seconds since the epoch, UTC)
 * that `c` matches, in seconds since the epoch; -1 when there is none in
 * the next ten years (only for a spec cron_parse did not make). */
int64_t cron_next(const cron_spec *c, int64_t after);

/* Whether minute `t` (seconds since the epoch, UTC; seconds ignored)
 * matches `c`. */
int cron_matches(const cron_spec *c, int64_t t);

#endif

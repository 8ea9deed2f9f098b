/*
 * test_cron.c — unit tests for src/util/cron.c: what a field accepts
 * (values, names, ranges, steps, lists, Sunday as 0 or 7), what it refuses
 * (six fields, Quartz's L W # ?, out-of-range values, zero steps, ranges
 * that run backwards, days that never come) with a message naming the
 * problem, and the next occurrence (strictly after the time given, in UTC,
 * across month ends, leap days and the day-of-month OR day-of-week rule).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "util/cron.h"

/* Seconds since the epoch of a UTC time "YYYY-MM-DD HH:MM". */
static int64_t at(const char *text)
{
    struct tm tm = {0};
    assert_non_null(strptime(text, "%Y-%m-%d %H:%M", &tm));
    return (int64_t)timegm(&tm);
}

/* The next occurrence of `expr` after `from`, as "YYYY-MM-DD HH:MM". */
static const char *next_of(const char *expr, const char *from)
{
    static char out[32];
    cron_spec c;
    char why[200];
    if (cron_parse(&c, expr, why, sizeof(why)) != 0)
        fail_msg("'%s' refused: %s", expr, why);
    int64_t t = cron_next(&c, at(from));
    assert_true(t > 0);
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, sizeof(out), "%Y-%m-%d %H:%M", &tm);
    return out;
}

static void assert_refused(const char *expr, const char *want)
{
    cron_spec c;
    char why[200] = "";
    if (cron_parse(&c, expr, why, sizeof(why)) == 0)
        fail_msg("'%s' was accepted", expr);
    if (!strstr(why, want))
        fail_msg("'%s': message '%s' lacks '%s'", expr, why, want);
}

static void test_accepts(void **state)
{
    (void)state;
    cron_spec c;
    char why[200];
    assert_int_equal(cron_parse(&c, "*/15 0-6/2 1,15 JAN-mar mon-FRI", why, sizeof(why)), 0);
    assert_true(c.minutes == ((1ull << 0) | (1ull << 15) | (1ull << 30) | (1ull << 45)));
    assert_int_equal(c.hours, (1u << 0) | (1u << 2) | (1u << 4) | (1u << 6));
    assert_int_equal(c.days, (1u << 1) | (1u << 15));
    assert_int_equal(c.months, (1u << 1) | (1u << 2) | (1u << 3));
    assert_int_equal(c.weekdays, 0x3e);
    assert_false(c.days_star);
    assert_false(c.weekdays_star);
    assert_int_equal(cron_parse(&c, "5/20 * * * 7", why, sizeof(why)), 0);
    assert_true(c.minutes == ((1ull << 5) | (1ull << 25) | (1ull << 45)));
    assert_int_equal(c.weekdays, 1); /* 7 is Sunday */
    assert_int_equal(cron_parse(&c, "@daily", why, sizeof(why)), 0);
    assert_true(c.minutes == 1 && c.hours == 1 && c.days_star && c.weekdays_star);
    assert_int_equal(cron_parse(&c, "0 0 29 2 *", why, sizeof(why)), 0); /* leap years */
}

static void test_refuses(void **state)
{
    (void)state;
    assert_refused("99 6 * * *", "minute 99 is out of range (0-59)");
    assert_refused("0 24 * * *", "hour 24 is out of range (0-23)");
    assert_refused("0 6 0 * *", "day of month 0 is out of range (1-31)");
    assert_refused("0 6 * 13 *", "month 13 is out of range (1-12)");
    assert_refused("0 6 * * 8", "day of week 8 is out of range (0-7)");
    assert_refused("0 6 L * *", "'L' in the day of month field is not supported");
    assert_refused("0 6 15W * *", "'W' in the day of month field is not supported");
    assert_refused("0 6 * * 1#2", "'#' in the day of week field is not supported");
    assert_refused("0 6 ? * *", "'?' in the day of month field is not supported");
    assert_refused("0 0 6 * * *", "six (seconds are not supported)");
    assert_refused("0 6 * *", "too few");
    assert_refused("*/0 * * * *", "minute step 0 is out of range");
    assert_refused("0 10-2 * * *", "hour range 10-2 runs backwards");
    assert_refused("0 6 * FOO *", "'FOO' is not a month (JAN-DEC or 1-12)");
    assert_refused("0 6 * * MONDAY", "'MONDAY' is not a day of week");
    assert_refused("0 6 1,,2 * *", "empty item");
    assert_refused("0 6 1, * *", "empty item");
    assert_refused("0 0 30 2 *", "never occurs");
    assert_refused("0 0 31 4,6,9,11 *", "never occurs");
    assert_refused("@often", "not a cron shorthand");
    assert_refused("0 6 -1 * *", "'-' is not allowed in the day of month field");
}

static void test_next(void **state)
{
    (void)state;
    /* strictly after: at 06:00 exactly, the next 06:00 is tomorrow's */
    assert_string_equal(next_of("0 6 * * *", "2026-06-01 06:00"), "2026-06-02 06:00");
    assert_string_equal(next_of("0 6 * * *", "2026-06-01 05:59"), "2026-06-01 06:00");
    assert_string_equal(next_of("* * * * *", "2026-06-01 06:00"), "2026-06-01 06:01");
    assert_string_equal(next_of("*/15 * * * *", "2026-06-01 06:50"), "2026-06-01 07:00");
    /* month ends and years */
    assert_string_equal(next_of("0 0 31 * *", "2026-04-15 00:00"), "2026-05-31 00:00");
    assert_string_equal(next_of("0 0 1 1 *", "2026-06-01 00:00"), "2027-01-01 00:00");
    assert_string_equal(next_of("0 0 29 2 *", "2026-03-01 00:00"), "2028-02-29 00:00");
    /* weekdays: 2026-06-01 is a Monday */
    assert_string_equal(next_of("30 9 * * SAT", "2026-06-01 00:00"), "2026-06-06 09:30");
    assert_string_equal(next_of("0 8 * * 1-5", "2026-06-05 09:00"), "2026-06-08 08:00");
    /* both restricted: the 15th OR a Sunday, whichever comes first */
    assert_string_equal(next_of("0 0 15 * 0", "2026-06-01 00:00"), "2026-06-07 00:00");
    assert_string_equal(next_of("0 0 15 * 0", "2026-06-14 00:00"), "2026-06-15 00:00");
    /* a restricted day with the weekday '*': only the day */
    assert_string_equal(next_of("0 0 15 * *", "2026-06-01 00:00"), "2026-06-15 00:00");
}

static void test_matches(void **state)
{
    (void)state;
    cron_spec c;
    char why[200];
    assert_int_equal(cron_parse(&c, "0 6 * * *", why, sizeof(why)), 0);
    assert_true(cron_matches(&c, at("2026-06-01 06:00")));
    assert_true(cron_matches(&c, at("2026-06-01 06:00") + 59));
    assert_false(cron_matches(&c, at("2026-06-01 06:01")));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts),
        cmocka_unit_test(test_refuses),
        cmocka_unit_test(test_next),
        cmocka_unit_test(test_matches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

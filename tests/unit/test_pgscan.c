/*
 * test_pgscan.c — unit tests for the text-to-value conversions of
 * src/duck/pgscan.c: PostgreSQL's text of timestamps, dates and UUIDs
 * (DateStyle ISO, TimeZone UTC) as the values DuckDB stores.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "duck/pgscan.h"

static int64_t ts(const char *text)
{
    int64_t us = 0;
    assert_int_equal(duck_pg_parse_timestamp(&us, text), 0);
    return us;
}

static void test_timestamps(void **state)
{
    (void)state;
    assert_true(ts("1970-01-01 00:00:00") == 0);
    assert_true(ts("1970-01-01 00:00:00+00") == 0);
    assert_true(ts("2024-01-02 03:04:05") == 1704164645LL * 1000000);
    /* fractions: fewer than six digits are scaled, more are cut */
    assert_true(ts("1999-12-31 23:59:59.123456") == 946684799123456LL);
    assert_true(ts("1999-12-31 23:59:59.5+00") == 946684799500000LL);
    /* an offset east of UTC is earlier in UTC */
    assert_true(ts("2024-01-02 05:04:05+02") == 1704164645LL * 1000000);
    assert_true(ts("2024-01-02 02:34:05-00:30") == 1704164645LL * 1000000);
    /* before 1970, and BC (1 BC is year 0) */
    assert_true(ts("1969-12-31 23:59:59") == -1000000);
    assert_true(ts("0001-01-01 00:00:00 BC") == -62167219200LL * 1000000);
    assert_true(ts("infinity") == INT64_MAX);
    assert_true(ts("-infinity") == -INT64_MAX);
    int64_t us;
    assert_int_not_equal(duck_pg_parse_timestamp(&us, "yesterday"), 0);
    assert_int_not_equal(duck_pg_parse_timestamp(&us, "2024-13-01 00:00:00"), 0);
}

static void test_dates(void **state)
{
    (void)state;
    int32_t d = 1;
    assert_int_equal(duck_pg_parse_date(&d, "1970-01-01"), 0);
    assert_int_equal(d, 0);
    assert_int_equal(duck_pg_parse_date(&d, "2000-03-01"), 0);
    assert_int_equal(d, 11017);
    assert_int_equal(duck_pg_parse_date(&d, "1900-02-28"), 0);
    assert_int_equal(d, -25509);
    assert_int_equal(duck_pg_parse_date(&d, "infinity"), 0);
    assert_int_equal(d, INT32_MAX);
    assert_int_not_equal(duck_pg_parse_date(&d, "2000-02"), 0);
}

static void test_uuids(void **state)
{
    (void)state;
    uint64_t hi = 0, lo = 0;
    assert_int_equal(duck_pg_parse_uuid(&hi, &lo, "00000000-0000-0000-0000-000000000000"), 0);
    assert_true(hi == (uint64_t)1 << 63); /* DuckDB flips the top bit */
    assert_true(lo == 0);
    assert_int_equal(duck_pg_parse_uuid(&hi, &lo, "ffffffff-ffff-ffff-0123-456789abcdef"), 0);
    assert_true(hi == 0x7fffffffffffffffULL);
    assert_true(lo == 0x0123456789abcdefULL);
    assert_int_not_equal(duck_pg_parse_uuid(&hi, &lo, "0123"), 0);
    assert_int_not_equal(duck_pg_parse_uuid(&hi, &lo, "zzzzzzzz-0000-0000-0000-000000000000"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timestamps),
        cmocka_unit_test(test_dates),
        cmocka_unit_test(test_uuids),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

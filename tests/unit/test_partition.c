/*
 * test_partition.c — unit tests for src/project/partition.c: identities
 * of each grain (ISO weeks included), strict parsing, ranges, and the
 * calendar arithmetic behind them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "project/partition.h"
#include "tarn/error.h"

/* 2024-03-05 07:30:15 UTC */
#define T0 1709623815

static void assert_format(part_grain g, int64_t t, const char *want)
{
    char *s = partition_format(g, t);
    assert_string_equal(s, want);
    free(s);
}

static void test_format(void **state)
{
    assert_format(GRAIN_HOURLY, T0, "2024-03-05T07");
    assert_format(GRAIN_DAILY, T0, "2024-03-05");
    assert_format(GRAIN_WEEKLY, T0, "2024-W10");
    assert_format(GRAIN_MONTHLY, T0, "2024-03");
    assert_format(GRAIN_DAILY, 0, "1970-01-01");
    assert_format(GRAIN_DAILY, -1, "1969-12-31");
}

static void test_iso_weeks(void **state)
{
    /* 2021-01-03 (Sunday) belongs to 2020-W53; 2021-01-04 to 2021-W01. */
    assert_format(GRAIN_WEEKLY, days_from_civil(2021, 1, 3) * 86400, "2020-W53");
    assert_format(GRAIN_WEEKLY, days_from_civil(2021, 1, 4) * 86400, "2021-W01");
    /* 2024-12-30 (Monday) is 2025-W01. */
    assert_format(GRAIN_WEEKLY, days_from_civil(2024, 12, 30) * 86400, "2025-W01");
    int64_t t;
    assert_int_equal(partition_parse(&t, GRAIN_WEEKLY, "2020-W53"), 0);
    assert_int_equal(t, days_from_civil(2020, 12, 28) * 86400);
    /* 2021 has no week 53. */
    assert_int_equal(partition_parse(&t, GRAIN_WEEKLY, "2021-W53"), TARN_EINVALID);
}

static void test_parse_roundtrip(void **state)
{
    static const struct {
        part_grain g;
        const char *id;
    } cases[] = {{GRAIN_HOURLY, "2024-02-29T23"},
                 {GRAIN_DAILY, "2024-02-29"},
                 {GRAIN_WEEKLY, "2024-W01"},
                 {GRAIN_MONTHLY, "2024-12"}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int64_t t;
        assert_int_equal(partition_parse(&t, cases[i].g, cases[i].id), 0);
        assert_format(cases[i].g, t, cases[i].id);
    }
}

static void test_parse_strict(void **state)
{
    int64_t t;
    const char *bad_daily[] = {"2024-2-01", "2024-02-30", "2023-02-29", "2024-02-01T00",
                               "2024-02",   "20240201",   "",           "2024-02-01 "};
    for (size_t i = 0; i < sizeof(bad_daily) / sizeof(bad_daily[0]); i++)
        assert_int_equal(partition_parse(&t, GRAIN_DAILY, bad_daily[i]), TARN_EINVALID);
    assert_non_null(strstr(tarn_error_last(), "YYYY-MM-DD"));
    assert_int_equal(partition_parse(&t, GRAIN_HOURLY, "2024-02-01T24"), TARN_EINVALID);
    assert_int_equal(partition_parse(&t, GRAIN_MONTHLY, "2024-13"), TARN_EINVALID);
    assert_int_equal(partition_parse(&t, GRAIN_WEEKLY, "2024-W00"), TARN_EINVALID);
    assert_int_equal(partition_parse(&t, GRAIN_WEEKLY, "2024-W1"), TARN_EINVALID);
}

static void test_next(void **state)
{
    int64_t t;
    partition_parse(&t, GRAIN_MONTHLY, "2024-12");
    assert_format(GRAIN_MONTHLY, partition_next(GRAIN_MONTHLY, t), "2025-01");
    partition_parse(&t, GRAIN_HOURLY, "2024-03-31T23");
    assert_format(GRAIN_HOURLY, partition_next(GRAIN_HOURLY, t), "2024-04-01T00");
    partition_parse(&t, GRAIN_WEEKLY, "2020-W53");
    assert_format(GRAIN_WEEKLY, partition_next(GRAIN_WEEKLY, t), "2021-W01");
}

static void test_range(void **state)
{
    strlist l = {0};
    assert_int_equal(partition_range(&l, GRAIN_DAILY, "2024-02-27", "2024-03-02", 100), 0);
    assert_int_equal(l.n, 5);
    assert_string_equal(l.items[0], "2024-02-27");
    assert_string_equal(l.items[2], "2024-02-29");
    assert_string_equal(l.items[4], "2024-03-02");
    strlist_free(&l);
    /* Points in time of another grain or timestamps pick their slice. */
    assert_int_equal(partition_range(&l, GRAIN_MONTHLY, "2024-01-15", "2024-03-01 10:00:00", 100),
                     0);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.items[0], "2024-01");
    strlist_free(&l);
    assert_int_equal(partition_range(&l, GRAIN_HOURLY, "2024-01-01T22", "2024-01-02", 100), 0);
    assert_int_equal(l.n, 3);
    assert_string_equal(l.items[2], "2024-01-02T00");
    strlist_free(&l);
    assert_int_equal(partition_range(&l, GRAIN_DAILY, "2024-03-02", "2024-03-01", 100),
                     TARN_EINVALID);
    assert_int_equal(partition_range(&l, GRAIN_DAILY, "2000-01-01", "2030-01-01", 1000),
                     TARN_EINVALID);
    assert_non_null(strstr(tarn_error_last(), "more than 1000"));
    strlist_free(&l);
    assert_int_equal(partition_range(&l, GRAIN_DAILY, "yesterday", "2024-01-01", 10),
                     TARN_EINVALID);
    strlist_free(&l);
}

static void test_grains(void **state)
{
    part_grain g;
    assert_int_equal(grain_parse(&g, "weekly"), 0);
    assert_int_equal(g, GRAIN_WEEKLY);
    assert_int_equal(grain_parse(&g, "Weekly"), -1);
    assert_string_equal(grain_strftime(GRAIN_WEEKLY), "%G-W%V");
    assert_string_equal(grain_strftime(GRAIN_HOURLY), "%Y-%m-%dT%H");
    assert_null(grain_strftime(GRAIN_DYNAMIC));
    assert_string_equal(grain_name(GRAIN_DAILY), "daily");
}

static void test_civil(void **state)
{
    for (int64_t z = -800000; z < 800000; z += 997) {
        int64_t y;
        unsigned m, d;
        civil_from_days(z, &y, &m, &d);
        assert_int_equal(days_from_civil(y, m, d), z);
    }
    assert_int_equal(days_from_civil(1970, 1, 1), 0);
    assert_int_equal(days_from_civil(2000, 3, 1), 11017);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_format),      cmocka_unit_test(test_iso_weeks),
        cmocka_unit_test(test_parse_roundtrip), cmocka_unit_test(test_parse_strict),
        cmocka_unit_test(test_next),        cmocka_unit_test(test_range),
        cmocka_unit_test(test_grains),      cmocka_unit_test(test_civil),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

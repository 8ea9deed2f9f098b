/*
 * test_guard.c — unit tests for the strategy-change rules of
 * src/materialize/guard.c: which changes of how a table is written lose
 * or duplicate rows of a table that has some, and how a change is named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "materialize/guard.h"

static void test_lossless(void **state)
{
    assert_int_equal(guard_classify("merge key=id", "merge key=id"), GUARD_OK);
    /* replace's table is exactly its query's rows */
    assert_int_equal(guard_classify("replace", "merge key=id"), GUARD_OK);
    assert_int_equal(guard_classify("replace", "append"), GUARD_OK);
    assert_int_equal(guard_classify("replace", "history key=id"), GUARD_OK);
    assert_int_equal(guard_classify("replace", "partitioned daily column=ts"), GUARD_OK);
    /* a manual script says what it does */
    assert_int_equal(guard_classify("history key=id", "manual"), GUARD_OK);
    /* the same merge by key, a slice at a time, and back */
    assert_int_equal(guard_classify("merge key=id", "incremental key=id"), GUARD_OK);
    assert_int_equal(guard_classify("incremental key=id", "merge key=id"), GUARD_OK);
    assert_int_equal(guard_classify("append", "incremental"), GUARD_OK);
}

static void test_lossy(void **state)
{
    assert_int_equal(guard_classify("merge key=id", "replace"), GUARD_REPLACE);
    assert_int_equal(guard_classify("history key=id", "replace"), GUARD_REPLACE);
    assert_int_equal(guard_classify("append", "replace"), GUARD_REPLACE);
    assert_int_equal(guard_classify("incremental", "replace"), GUARD_REPLACE);
    assert_int_equal(guard_classify("partitioned daily column=ts", "replace"), GUARD_REPLACE);
    assert_int_equal(guard_classify("history key=id", "merge key=id"), GUARD_HISTORY);
    assert_int_equal(guard_classify("history key=id", "append"), GUARD_HISTORY);
    assert_int_equal(guard_classify("merge key=id", "merge key=email"), GUARD_KEY);
    assert_int_equal(guard_classify("merge key=a,b", "merge key=a"), GUARD_KEY);
    assert_int_equal(guard_classify("history key=id", "history key=email"), GUARD_KEY);
    assert_int_equal(guard_classify("incremental key=id", "incremental"), GUARD_KEY);
    assert_int_equal(guard_classify("merge key=id", "incremental key=email"), GUARD_MERGE);
    assert_int_equal(guard_classify("append", "merge key=id"), GUARD_MERGE);
    assert_int_equal(guard_classify("merge key=id", "append"), GUARD_APPEND);
    assert_int_equal(guard_classify("incremental", "append"), GUARD_APPEND);
    assert_int_equal(guard_classify("merge key=id", "partitioned daily column=ts"), GUARD_SLICES);
    assert_int_equal(guard_classify("partitioned daily column=ts", "partitioned monthly column=ts"),
                     GUARD_GRAIN);
    assert_int_equal(guard_classify("partitioned daily column=ts", "partitioned daily column=at"),
                     GUARD_GRAIN);
}

static void assert_describe(const char *prev, const char *now, const char *want)
{
    char *s = guard_describe(prev, now);
    assert_string_equal(s, want);
    free(s);
}

static void test_describe(void **state)
{
    assert_describe("history key=id", "replace", "history → replace");
    assert_describe("merge key=id", "append", "merge → append");
    assert_describe("merge key=id", "merge key=email", "merge key=id → merge key=email");
    assert_describe("partitioned daily column=ts", "partitioned monthly column=ts",
                    "partitioned daily column=ts → partitioned monthly column=ts");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lossless),
        cmocka_unit_test(test_lossy),
        cmocka_unit_test(test_describe),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

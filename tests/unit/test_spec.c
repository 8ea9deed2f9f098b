/*
 * test_spec.c — unit tests for the strategy-change rules of
 * src/materialize/spec.c: which changes of how a table is written lose
 * or duplicate rows of a table that has some, and how a change is named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "materialize/spec.h"

static void test_lossless(void **state)
{
    assert_int_equal(spec_classify("merge key=id", "merge key=id"), SPEC_OK);
    /* replace's table is exactly its query's rows */
    assert_int_equal(spec_classify("replace", "merge key=id"), SPEC_OK);
    assert_int_equal(spec_classify("replace", "append"), SPEC_OK);
    assert_int_equal(spec_classify("replace", "history key=id"), SPEC_OK);
    assert_int_equal(spec_classify("replace", "partitioned daily column=ts"), SPEC_OK);
    /* a manual script says what it does */
    assert_int_equal(spec_classify("history key=id", "manual"), SPEC_OK);
    /* the same merge by key, a slice at a time, and back */
    assert_int_equal(spec_classify("merge key=id", "incremental key=id"), SPEC_OK);
    assert_int_equal(spec_classify("incremental key=id", "merge key=id"), SPEC_OK);
    assert_int_equal(spec_classify("append", "incremental"), SPEC_OK);
}

static void test_lossy(void **state)
{
    assert_int_equal(spec_classify("merge key=id", "replace"), SPEC_REPLACE);
    assert_int_equal(spec_classify("history key=id", "replace"), SPEC_REPLACE);
    assert_int_equal(spec_classify("append", "replace"), SPEC_REPLACE);
    assert_int_equal(spec_classify("incremental", "replace"), SPEC_REPLACE);
    assert_int_equal(spec_classify("partitioned daily column=ts", "replace"), SPEC_REPLACE);
    assert_int_equal(spec_classify("history key=id", "merge key=id"), SPEC_HISTORY);
    assert_int_equal(spec_classify("history key=id", "append"), SPEC_HISTORY);
    assert_int_equal(spec_classify("merge key=id", "merge key=email"), SPEC_KEY);
    assert_int_equal(spec_classify("merge key=a,b", "merge key=a"), SPEC_KEY);
    assert_int_equal(spec_classify("history key=id", "history key=email"), SPEC_KEY);
    assert_int_equal(spec_classify("incremental key=id", "incremental"), SPEC_KEY);
    assert_int_equal(spec_classify("merge key=id", "incremental key=email"), SPEC_MERGE);
    assert_int_equal(spec_classify("append", "merge key=id"), SPEC_MERGE);
    assert_int_equal(spec_classify("merge key=id", "append"), SPEC_APPEND);
    assert_int_equal(spec_classify("incremental", "append"), SPEC_APPEND);
    assert_int_equal(spec_classify("merge key=id", "partitioned daily column=ts"), SPEC_SLICES);
    assert_int_equal(spec_classify("partitioned daily column=ts", "partitioned monthly column=ts"),
                     SPEC_GRAIN);
    assert_int_equal(spec_classify("partitioned daily column=ts", "partitioned daily column=at"),
                     SPEC_GRAIN);
    /* the same slices written another way inside each: nothing lost */
    assert_int_equal(
        spec_classify("partitioned daily column=ts", "partitioned daily column=ts key=id"),
        SPEC_OK);
    assert_int_equal(
        spec_classify("partitioned daily column=ts key=id", "partitioned daily column=ts append"),
        SPEC_OK);
    assert_int_equal(
        spec_classify("partitioned daily column=ts append", "partitioned monthly column=ts append"),
        SPEC_GRAIN);
}

static void assert_describe(const char *prev, const char *now, const char *want)
{
    char *s = spec_describe(prev, now);
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

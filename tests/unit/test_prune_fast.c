/*
 * test_prune_fast.c — unit tests for src/lake/prune_fast.c: which terms C
 * decides (integer, DOUBLE and VARCHAR columns with constants of their
 * kind; IS [NOT] NULL on any column) and, from one file's statistics row,
 * when a term proves that no row of the file matches: each comparison at
 * and beside the file's bounds, BETWEEN, IN, NOT NULL against the row
 * count, an unknown bound or null count deciding nothing, NaN in a DOUBLE
 * file, a string literal with a doubled quote, a file without a row.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lake/prune_fast.h"

/* One file (id 7, 100 rows) with statistics min, max, nulls, nan. */
typedef struct {
    int64_t id;
    char *mins[1], *maxs[1];
    int64_t nulls[1];
    signed char nan[1];
    scan_colstats cs;
} one_file;

static void file_init(one_file *f, const char *mn, const char *mx, int64_t nulls, int nan)
{
    f->id = 7;
    f->mins[0] = (char *)mn;
    f->maxs[0] = (char *)mx;
    f->nulls[0] = nulls;
    f->nan[0] = (signed char)nan;
    f->cs = (scan_colstats){1, 1, &f->id, f->mins, f->maxs, f->nulls, f->nan};
}

static lk_column column(const char *type)
{
    lk_column c;
    memset(&c, 0, sizeof(c));
    c.id = 1;
    c.name = "c";
    c.type = (char *)type;
    return c;
}

/* Whether term `op v...` on a column of `type` excludes file f. */
static int excl(const one_file *f, const char *type, lk_prune_op op, const char *v0, const char *v1)
{
    char *vals[2] = {(char *)v0, (char *)v1};
    lk_prune_term x = {0, "c", op, vals, v1 ? 2 : (v0 ? 1 : 0)};
    lk_column c = column(type);
    assert_true(pf_term_supported(&x, &c));
    return pf_term_excludes(&x, &c, &f->cs, 7, 100);
}

static int supported(const char *type, lk_prune_op op, const char *v0)
{
    char *vals[1] = {(char *)v0};
    lk_prune_term x = {0, "c", op, vals, v0 ? 1 : 0};
    lk_column c = column(type);
    return pf_term_supported(&x, &c);
}

static void test_supported(void **state)
{
    (void)state;
    assert_true(supported("int32", LK_PRUNE_EQ, "5"));
    assert_true(supported("int64", LK_PRUNE_LT, "-9000000000"));
    assert_false(supported("int32", LK_PRUNE_EQ, "5.5")); /* compared as a decimal */
    assert_false(supported("int32", LK_PRUNE_EQ, "'5'"));
    assert_false(supported("int64", LK_PRUNE_EQ, "99999999999999999999"));
    assert_true(supported("float64", LK_PRUNE_GT, "1.5e3"));
    assert_false(supported("float64", LK_PRUNE_GT, "inf"));
    assert_false(supported("float32", LK_PRUNE_GT, "1.5"));
    assert_true(supported("varchar", LK_PRUNE_EQ, "'it''s'"));
    assert_false(supported("varchar", LK_PRUNE_EQ, "5"));
    assert_false(supported("varchar", LK_PRUNE_EQ, "'a' || 'b'"));
    assert_false(supported("date", LK_PRUNE_EQ, "DATE '2020-01-01'"));
    assert_true(supported("date", LK_PRUNE_IS_NULL, NULL));
    assert_true(supported("timestamp", LK_PRUNE_NOT_NULL, NULL));
}

static void test_integer_bounds(void **state)
{
    (void)state;
    one_file f;
    file_init(&f, "10", "20", 0, -1);
    assert_true(excl(&f, "int32", LK_PRUNE_EQ, "9", NULL));
    assert_false(excl(&f, "int32", LK_PRUNE_EQ, "10", NULL));
    assert_false(excl(&f, "int32", LK_PRUNE_EQ, "20", NULL));
    assert_true(excl(&f, "int32", LK_PRUNE_EQ, "21", NULL));
    assert_true(excl(&f, "int32", LK_PRUNE_LT, "10", NULL));
    assert_false(excl(&f, "int32", LK_PRUNE_LT, "11", NULL));
    assert_true(excl(&f, "int32", LK_PRUNE_LE, "9", NULL));
    assert_false(excl(&f, "int32", LK_PRUNE_LE, "10", NULL));
    assert_true(excl(&f, "int32", LK_PRUNE_GT, "20", NULL));
    assert_false(excl(&f, "int32", LK_PRUNE_GT, "19", NULL));
    assert_true(excl(&f, "int32", LK_PRUNE_GE, "21", NULL));
    assert_false(excl(&f, "int32", LK_PRUNE_GE, "20", NULL));
    assert_true(excl(&f, "int32", LK_PRUNE_BETWEEN, "21", "30"));
    assert_true(excl(&f, "int32", LK_PRUNE_BETWEEN, "0", "9"));
    assert_false(excl(&f, "int32", LK_PRUNE_BETWEEN, "0", "10"));
    assert_true(excl(&f, "int32", LK_PRUNE_IN, "5", "25"));
    assert_false(excl(&f, "int32", LK_PRUNE_IN, "5", "15"));
    assert_false(excl(&f, "int32", LK_PRUNE_NE, "10", NULL));
    file_init(&f, "-3", "-3", 0, -1);
    assert_true(excl(&f, "int64", LK_PRUNE_NE, "-3", NULL));
    assert_false(excl(&f, "int64", LK_PRUNE_NE, "3", NULL));
}

static void test_unknown_decides_nothing(void **state)
{
    (void)state;
    one_file f;
    file_init(&f, NULL, "20", -1, -1);
    assert_false(excl(&f, "int32", LK_PRUNE_LT, "5", NULL)); /* the min is unknown */
    assert_true(excl(&f, "int32", LK_PRUNE_GT, "20", NULL)); /* the max is enough */
    assert_true(excl(&f, "int32", LK_PRUNE_EQ, "25", NULL));
    assert_false(excl(&f, "int32", LK_PRUNE_IS_NULL, NULL, NULL));
    assert_false(excl(&f, "int32", LK_PRUNE_NOT_NULL, NULL, NULL));
    file_init(&f, "abc", "20", 0, -1); /* a bound that does not parse */
    assert_false(excl(&f, "int32", LK_PRUNE_LT, "5", NULL));
    /* a file with no statistics row */
    char *vals[1] = {"5"};
    lk_prune_term x = {0, "c", LK_PRUNE_EQ, vals, 1};
    lk_column c = column("int32");
    assert_false(pf_term_excludes(&x, &c, &f.cs, 8, 100));
}

static void test_nulls(void **state)
{
    (void)state;
    one_file f;
    file_init(&f, "1", "2", 0, -1);
    assert_true(excl(&f, "int32", LK_PRUNE_IS_NULL, NULL, NULL));
    assert_false(excl(&f, "int32", LK_PRUNE_NOT_NULL, NULL, NULL));
    file_init(&f, NULL, NULL, 100, -1); /* every row NULL */
    assert_false(excl(&f, "varchar", LK_PRUNE_IS_NULL, NULL, NULL));
    assert_true(excl(&f, "varchar", LK_PRUNE_NOT_NULL, NULL, NULL));
}

static void test_doubles_and_nan(void **state)
{
    (void)state;
    one_file f;
    file_init(&f, "0.5", "2.25", 0, 0);
    assert_true(excl(&f, "float64", LK_PRUNE_GT, "2.25", NULL));
    assert_false(excl(&f, "float64", LK_PRUNE_GT, "2.2", NULL));
    assert_true(excl(&f, "float64", LK_PRUNE_LT, "0.5", NULL));
    assert_true(excl(&f, "float64", LK_PRUNE_EQ, "3", NULL));
    file_init(&f, "0.5", "2.25", 0, 1); /* NaN sorts above every number */
    assert_false(excl(&f, "float64", LK_PRUNE_GT, "2.25", NULL));
    file_init(&f, "0.5", "2.25", 0, -1); /* NaN not known absent */
    assert_false(excl(&f, "float64", LK_PRUNE_GT, "2.25", NULL));
}

static void test_strings(void **state)
{
    (void)state;
    one_file f;
    file_init(&f, "it's 0", "it's 99", 0, -1);
    assert_false(excl(&f, "varchar", LK_PRUNE_EQ, "'it''s 20'", NULL));
    assert_true(excl(&f, "varchar", LK_PRUNE_EQ, "'its'", NULL));
    assert_true(excl(&f, "varchar", LK_PRUNE_LT, "'it''s 0'", NULL));
    assert_false(excl(&f, "varchar", LK_PRUNE_LE, "'it''s 0'", NULL));
    assert_true(excl(&f, "varchar", LK_PRUNE_GT, "'it''s 99'", NULL));
    file_init(&f, "B", "a", 0, -1); /* byte order: 'B' < 'a' */
    assert_false(excl(&f, "varchar", LK_PRUNE_EQ, "'Z'", NULL));
    assert_true(excl(&f, "varchar", LK_PRUNE_EQ, "'b'", NULL));
    assert_false(supported("varchar", LK_PRUNE_EQ, "'a'b'"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_supported),
        cmocka_unit_test(test_integer_bounds),
        cmocka_unit_test(test_unknown_decides_nothing),
        cmocka_unit_test(test_nulls),
        cmocka_unit_test(test_doubles_and_nan),
        cmocka_unit_test(test_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

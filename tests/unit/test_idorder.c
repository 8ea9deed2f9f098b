/*
 * test_idorder.c — unit tests for src/lake/idorder.c: DuckDB's
 * case-insensitive hash, the iteration order of the simulated maps, and
 * the order in which DuckLake numbers a transaction's new objects.
 *
 * The expected orders were produced by libstdc++'s std::unordered_map with
 * the same hash (the structure DuckLake's catalog sets are), so they check
 * the model of the map, not the model against itself.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lake/idorder.h"

static void test_hash(void **state)
{
    assert_int_equal(lk_idorder_hash("main"), 669725655u);
    assert_int_equal(lk_idorder_hash("Orders"), 799259042u);
    assert_int_equal(lk_idorder_hash("orders"), lk_idorder_hash("ORDERS"));
    assert_int_equal(lk_idorder_hash("c"), 4005191001u);
    assert_int_equal(lk_idorder_hash("cv"), 1220682208u);
    /* bytes >= 0x80 are added sign-extended, as a C++ char is */
    assert_int_equal(lk_idorder_hash("\xc3\xa9"), 26298542u);
}

static void assert_order(const char *const *keys, size_t n, const char *const *want)
{
    const char **got = NULL;
    lk_idorder_simulate(keys, n, &got);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(got[i], want[i]);
    free(got);
}

static void test_map_order(void **state)
{
    const char *two[] = {"c", "cv"}, *two_want[] = {"cv", "c"};
    assert_order(two, 2, two_want);
    const char *four[] = {"orders", "customers", "items", "v_orders"};
    const char *four_want[] = {"v_orders", "items", "customers", "orders"};
    assert_order(four, 4, four_want);
    /* 20 keys: the map grows from 13 to 29 buckets on the 14th */
    const char *keys[20],
        *want[] = {"t18", "t17", "t15", "t14", "t0", "t10", "t19", "t1", "t16", "t2",
                   "t6",  "t3",  "t4",  "t8",  "t5", "t11", "t13", "t7", "t12", "t9"};
    char names[20][16];
    for (int i = 0; i < 20; i++) {
        snprintf(names[i], sizeof(names[i]), "t%d", i);
        keys[i] = names[i];
    }
    assert_order(keys, 20, want);
}

static void assert_sequence(lk_idorder *o, const int64_t *want, size_t n)
{
    int64_t *seq = NULL;
    assert_int_equal(lk_idorder_sequence(o, &seq), n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(seq[i], want[i]);
    free(seq);
}

static void test_sequence(void **state)
{
    /* CREATE TABLE c (3); ALTER c; CREATE VIEW cv (4): the view first */
    lk_idorder *o = lk_idorder_new();
    lk_idorder_entry_touched(o, "main", "c");
    lk_idorder_entry_id(o, "main", "c", 3);
    lk_idorder_entry_touched(o, "main", "c");
    lk_idorder_entry_touched(o, "main", "cv");
    lk_idorder_entry_id(o, "main", "cv", 4);
    assert_sequence(o, (const int64_t[]){4, 3}, 2);
    lk_idorder_free(o);

    /* schemas are numbered before tables, whatever the statement order */
    o = lk_idorder_new();
    lk_idorder_entry_touched(o, "main", "t");
    lk_idorder_entry_id(o, "main", "t", 5);
    lk_idorder_schema_created(o, "tx", 6);
    lk_idorder_entry_touched(o, "tx", "u");
    lk_idorder_entry_id(o, "tx", "u", 7);
    int64_t *seq = NULL;
    assert_int_equal(lk_idorder_sequence(o, &seq), 3);
    assert_int_equal(seq[0], 6);
    free(seq);
    lk_idorder_free(o);

    /* a renamed entry keeps its ids; a dropped one loses them */
    o = lk_idorder_new();
    lk_idorder_entry_touched(o, "main", "a");
    lk_idorder_entry_id(o, "main", "a", 1);
    lk_idorder_entry_renamed(o, "main", "a", "b");
    lk_idorder_entry_touched(o, "main", "old");
    lk_idorder_entry_dropped(o, "main", "old");
    assert_sequence(o, (const int64_t[]){1}, 1);
    lk_idorder_free(o);
}

static void test_change_schemas(void **state)
{
    /* new schemas sales, hr, ops and a table in each (ops first): DuckLake
     * lists the schemas as sales, hr, ops and the tables' schemas as ops,
     * sales, hr (orders from libstdc++ with the same hash) */
    lk_idorder *o = lk_idorder_new();
    const char *names[] = {"sales", "hr", "ops"};
    for (int i = 0; i < 3; i++)
        lk_idorder_schema_created(o, names[i], i + 1);
    const char *tables[] = {"ops", "sales", "hr"};
    for (int i = 0; i < 3; i++) {
        lk_idorder_entry_touched(o, tables[i], "t");
        lk_idorder_entry_id(o, tables[i], "t", i + 4);
        lk_idorder_entry_created(o, tables[i], "t");
    }
    const char **got = NULL;
    assert_int_equal(lk_idorder_change_schemas(o, 0, &got), 3);
    assert_string_equal(got[0], "sales");
    assert_string_equal(got[1], "hr");
    assert_string_equal(got[2], "ops");
    free(got);
    assert_int_equal(lk_idorder_change_schemas(o, 1, &got), 3);
    assert_string_equal(got[0], "ops");
    assert_string_equal(got[1], "sales");
    assert_string_equal(got[2], "hr");
    free(got);
    /* ids: schemas first (ops, hr, sales), then tables (hr, sales, ops) */
    assert_sequence(o, (const int64_t[]){3, 2, 1, 6, 5, 4}, 6);
    lk_idorder_free(o);
}

/* Macros: each kind in its own map of schema -> names, numbered in their
 * iteration order (the orders above, checked against libstdc++). */
static void test_macro_order(void **state)
{
    lk_idorder *o = lk_idorder_new();
    const char *names[] = {"orders", "customers", "items", "v_orders"};
    for (size_t i = 0; i < 4; i++)
        lk_idorder_macro_created(o, 0, "main", names[i]);
    lk_idorder_macro_created(o, 1, "s", "c");
    lk_idorder_macro_created(o, 1, "s", "cv");
    lk_idorder_macro_dropped(o, 0, "main", "items"); /* erasing keeps the others' order */
    const char **sch = NULL, **got = NULL;
    size_t n = lk_idorder_macro_order(o, 0, &sch, &got);
    assert_int_equal(n, 3);
    assert_string_equal(got[0], "v_orders");
    assert_string_equal(got[1], "customers");
    assert_string_equal(got[2], "orders");
    assert_string_equal(sch[0], "main");
    free(sch);
    free(got);
    n = lk_idorder_macro_order(o, 1, &sch, &got);
    assert_int_equal(n, 2);
    assert_string_equal(got[0], "cv");
    assert_string_equal(got[1], "c");
    assert_string_equal(sch[1], "s");
    free(sch);
    free(got);
    /* dropping the last one discards the schema's map */
    lk_idorder_macro_dropped(o, 1, "s", "c");
    lk_idorder_macro_dropped(o, 1, "s", "cv");
    assert_int_equal(lk_idorder_macro_order(o, 1, &sch, &got), 0);
    free(sch);
    free(got);
    const char **schemas = NULL;
    assert_int_equal(lk_idorder_macro_change_schemas(o, 1, &schemas), 0);
    free(schemas);
    assert_int_equal(lk_idorder_macro_change_schemas(o, 0, &schemas), 1);
    assert_string_equal(schemas[0], "main");
    free(schemas);
    lk_idorder_free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hash),        cmocka_unit_test(test_map_order),
        cmocka_unit_test(test_sequence),    cmocka_unit_test(test_change_schemas),
        cmocka_unit_test(test_macro_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

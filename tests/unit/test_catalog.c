/*
 * test_catalog.c — unit tests for the copy-on-write working catalog
 * (src/lake/model.c): a transaction's model borrows the committed tables,
 * copies one only when it is edited, and at commit takes the borrowed
 * memory over so that freeing the old catalog frees exactly what is no
 * longer used. The sanitizer build turns a double free, a use after free
 * or a leak on any of these paths into a failure.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lake/model.h"
#include "util/buf.h"

/* A committed catalog of n tables t0…t(n-1), two columns each. */
static void committed(lk_catalog *c, size_t n)
{
    memset(c, 0, sizeof(*c));
    c->snapshot_id = 7;
    lk_schema *s = lk_catalog_add_schema(c);
    s->id = 0;
    s->name = xstrdup("main");
    s->uuid = xstrdup("u-main");
    for (size_t i = 0; i < n; i++) {
        lk_table *t = lk_catalog_add_table(c);
        char name[32];
        snprintf(name, sizeof(name), "t%zu", i);
        t->id = (int64_t)i + 1;
        t->name = xstrdup(name);
        t->uuid = xstrdup(name);
        t->partition_id = -1;
        t->cols = calloc(2, sizeof(lk_column));
        t->ncols = 2;
        for (size_t k = 0; k < 2; k++) {
            t->cols[k].id = (int64_t)k + 1;
            t->cols[k].name = xstrdup(k ? "b" : "a");
            t->cols[k].type = xstrdup("int64");
            t->cols[k].parent = -1;
        }
    }
}

static void test_share_borrows_every_table(void **state)
{
    lk_catalog c, w;
    committed(&c, 3);
    lk_catalog_share(&w, &c);
    assert_int_equal(w.ntables, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_true(w.tables[i].borrowed);
        assert_false(c.tables[i].borrowed);
        assert_ptr_equal(w.tables[i].cols, c.tables[i].cols);
    }
    assert_ptr_not_equal(w.schemas[0].name, c.schemas[0].name); /* schemas are copied */
    lk_catalog_free(&w); /* a rollback: nothing of c's is freed */
    assert_string_equal(c.tables[2].cols[1].name, "b");
    lk_catalog_free(&c);
}

static void test_edit_copies_and_leaves_committed(void **state)
{
    lk_catalog c, w;
    committed(&c, 3);
    lk_catalog_share(&w, &c);
    lk_table *t = lk_catalog_table_edit(&w, lk_catalog_table(&w, 0, "t1"));
    assert_non_null(t);
    assert_false(t->borrowed);
    assert_ptr_not_equal(t->cols, c.tables[1].cols);
    free(t->name);
    t->name = xstrdup("renamed");
    free(t->cols[0].name);
    t->cols[0].name = xstrdup("z");
    assert_string_equal(c.tables[1].name, "t1");
    assert_string_equal(c.tables[1].cols[0].name, "a");
    /* editing again does not copy again */
    assert_ptr_equal(lk_catalog_table_edit(&w, t), t);
    assert_null(lk_catalog_table_edit(&w, NULL));
    lk_catalog_free(&w);
    lk_catalog_free(&c);
}

static void test_take_over_after_drop_edit_and_add(void **state)
{
    lk_catalog c, w;
    committed(&c, 4);
    lk_catalog_share(&w, &c);
    lk_catalog_remove_table(&w, 0); /* dropped: stays c's to free */
    lk_table *t = lk_catalog_table_edit(&w, lk_catalog_table_by_id(&w, 3));
    free(t->cols[1].type);
    t->cols[1].type = xstrdup("varchar");
    lk_table *added = lk_catalog_add_table(&w);
    added->id = 9;
    added->name = xstrdup("new");
    lk_catalog_take_over(&w, &c);
    lk_catalog_free(&c); /* the old committed catalog goes, as at a commit */
    assert_int_equal(w.ntables, 4);
    for (size_t i = 0; i < w.ntables; i++)
        assert_false(w.tables[i].borrowed);
    assert_string_equal(lk_catalog_table_by_id(&w, 2)->cols[1].name, "b");
    assert_string_equal(lk_catalog_table_by_id(&w, 3)->cols[1].type, "varchar");
    assert_string_equal(lk_catalog_table_by_id(&w, 4)->name, "t3");
    assert_null(lk_catalog_table_by_id(&w, 1));
    /* the next transaction shares the new committed catalog in turn */
    lk_catalog next;
    lk_catalog_share(&next, &w);
    lk_catalog_take_over(&next, &w);
    lk_catalog_free(&w);
    assert_string_equal(lk_catalog_table_by_id(&next, 9)->name, "new");
    lk_catalog_free(&next);
}

static void test_unshare_outlives_lender(void **state)
{
    lk_catalog c, w;
    committed(&c, 2);
    lk_catalog_share(&w, &c);
    lk_catalog_unshare(&w);
    lk_catalog_free(&c);
    assert_false(w.tables[0].borrowed);
    assert_string_equal(w.tables[1].cols[0].name, "a");
    lk_catalog_free(&w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share_borrows_every_table),
        cmocka_unit_test(test_edit_copies_and_leaves_committed),
        cmocka_unit_test(test_take_over_after_drop_edit_and_add),
        cmocka_unit_test(test_unshare_outlives_lender),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

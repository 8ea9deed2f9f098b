/*
 * test_conflict.c — unit tests for src/lake/conflict.c: DuckLake's
 * conflict rules between a committing transaction's changes_made tokens
 * and those of the snapshots committed since it began, with DuckLake's
 * messages word for word.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "lake/conflict.h"

/* Our tokens (comma-separated, as one changes_made list) against theirs:
 * the message, or NULL when they may commit together. */
static char *check(const char *ours, const char *theirs, const lk_conflict_info *info)
{
    const char *list[] = {ours};
    char *msg = NULL;
    int found = lk_conflict_find(&msg, list, 1, theirs, info);
    assert_int_equal(found, msg != NULL);
    return msg;
}

static void assert_conflict(const char *ours, const char *theirs, const char *want)
{
    char *msg = check(ours, theirs, NULL);
    if (!msg)
        fail_msg("no conflict for ours=%s theirs=%s", ours, theirs);
    assert_string_equal(msg, want);
    free(msg);
}

static void assert_no_conflict(const char *ours, const char *theirs)
{
    char *msg = check(ours, theirs, NULL);
    if (msg)
        fail_msg("unexpected conflict for ours=%s theirs=%s: %s", ours, theirs, msg);
}

static void test_inserts_and_other_tables_commit(void **state)
{
    assert_no_conflict("inserted_into_table:1", "inserted_into_table:1,inlined_insert:1");
    assert_no_conflict("inlined_insert:1", "inlined_insert:1");
    assert_no_conflict("deleted_from_table:1", "deleted_from_table:2,inserted_into_table:3");
    assert_no_conflict("altered_table:1", "altered_table:2,dropped_table:3");
    assert_no_conflict("created_table:\"main\".\"a\"", "created_table:\"main\".\"b\"");
    assert_no_conflict("created_table:\"s\".\"a\"", "created_table:\"t\".\"a\"");
    assert_no_conflict("inserted_into_table:1", "");
    assert_no_conflict("inserted_into_table:1", NULL);
    /* ids are compared as ids, not text: 1 is not 10 */
    assert_no_conflict("dropped_table:1", "dropped_table:10");
}

static void test_drops(void **state)
{
    assert_conflict("dropped_table:3", "inlined_insert:1,dropped_table:3",
                    "Transaction conflict - attempting to drop table with index \"3\" - but "
                    "another transaction has dropped it already");
    assert_conflict("dropped_view:4", "dropped_view:4",
                    "Transaction conflict - attempting to drop view with index \"4\" - but "
                    "another transaction has dropped it already");
    assert_conflict("dropped_scalar_macro:5", "dropped_scalar_macro:5",
                    "Transaction conflict - attempting to drop macro with index \"5\" - but "
                    "another transaction has dropped it already");
    assert_conflict("dropped_schema:2", "dropped_schema:2",
                    "Transaction conflict - attempting to drop schema with index \"2\" - but "
                    "another transaction has dropped it already");
}

static const char *name_of(void *ctx, int64_t id)
{
    return id == 7 ? "sales" : NULL;
}

static int64_t id_of(void *ctx, const char *name)
{
    return strcmp(name, "sales") == 0 ? 7 : -1;
}

static void test_schemas(void **state)
{
    lk_conflict_info info = {.schema_name = name_of, .schema_id = id_of};
    char *m = check("dropped_schema:7", "created_table:\"sales\".\"t\"", &info);
    assert_string_equal(m, "Transaction conflict - attempting to drop schema with name \"sales\" - "
                           "but another transaction has created an entry in this schema");
    free(m);
    m = check("created_table:\"sales\".\"t\"", "dropped_schema:7", &info);
    assert_string_equal(m, "Transaction conflict - attempting to create table \"t\" in schema "
                           "\"sales\" with index \"7\" - but another transaction has dropped "
                           "this schema");
    free(m);
    assert_conflict("created_schema:\"s1\"", "created_schema:\"s1\"",
                    "Transaction conflict - attempting to create schema with name \"s1\" - but "
                    "another transaction has created a schema with this name already");
}

static void test_creations(void **state)
{
    assert_conflict("created_table:\"main\".\"test\"", "created_table:\"main\".\"test\"",
                    "Transaction conflict - attempting to create table \"test\" in schema "
                    "\"main\" - but this table has been created by another transaction already");
    /* a view and a table share names: the message names what the other made */
    assert_conflict("created_table:\"main\".\"v\"", "created_view:\"main\".\"v\"",
                    "Transaction conflict - attempting to create table \"v\" in schema \"main\" "
                    "- but this view has been created by another transaction already");
    assert_conflict("created_view:\"main\".\"v\"", "created_table:\"main\".\"v\"",
                    "Transaction conflict - attempting to create view \"v\" in schema \"main\" "
                    "- but this table has been created by another transaction already");
    assert_conflict("created_scalar_macro:\"main\".\"f\"", "created_scalar_macro:\"main\".\"f\"",
                    "Transaction conflict - attempting to create scalar \"f\" in schema \"main\" "
                    "- but this scalar_macro has been created by another transaction already");
    /* quoted names with commas and quotes inside */
    assert_conflict("created_table:\"main\".\"a,\"\"b\"", "created_table:\"main\".\"a,\"\"b\"",
                    "Transaction conflict - attempting to create table \"a,\"b\" in schema "
                    "\"main\" - but this table has been created by another transaction already");
}

static void test_inserts(void **state)
{
    assert_conflict("inserted_into_table:1", "dropped_table:1",
                    "Transaction conflict - attempting to insert into table with index \"1\" - "
                    "but another transaction has dropped it");
    assert_conflict("inlined_insert:1", "altered_table:1",
                    "Transaction conflict - attempting to insert into table with index \"1\" - "
                    "but another transaction has altered it");
    assert_conflict("inserted_into_table:1", "deleted_from_table:1",
                    "Transaction conflict - attempting to insert into table with index \"1\" - "
                    "but another transaction has deleted from it");
    assert_conflict("inlined_insert:1", "inlined_delete:1",
                    "Transaction conflict - attempting to insert into table with index \"1\" - "
                    "but another transaction has deleted inlined data from it");
}

static void test_deletes(void **state)
{
    assert_conflict("deleted_from_table:1", "dropped_table:1",
                    "Transaction conflict - attempting to delete from table with index \"1\" - "
                    "but another transaction has dropped it");
    assert_conflict("deleted_from_table:1", "merge_adjacent:1",
                    "Transaction conflict - attempting to delete from table with index \"1\" - "
                    "but another transaction has compacted it");
    assert_conflict("deleted_from_table:1", "inlined_insert:1",
                    "Transaction conflict - attempting to delete from table with index \"1\" - "
                    "but another transaction has inserted into it");
    assert_conflict("inlined_delete:1", "inline_flush:1",
                    "Transaction conflict - attempting to delete from table with index \"1\" - "
                    "but another transaction has flushed the inlined data");
    assert_conflict("inlined_delete:1", "inlined_delete:1",
                    "Transaction conflict - attempting to delete from table with index \"1\" - "
                    "but another transaction has deleted from it");
    /* both deleted from one table: only files both deleted from conflict */
    assert_no_conflict("deleted_from_table:1", "deleted_from_table:1");
    int64_t ours[] = {10, 11}, theirs[] = {12, 11};
    lk_conflict_info info = {
        .our_files = ours, .n_our_files = 2, .their_files = theirs, .n_their_files = 2};
    char *m = check("deleted_from_table:1", "deleted_from_table:1", &info);
    assert_string_equal(m, "Transaction conflict - attempting to delete from file with index "
                           "\"11\" - but another transaction has deleted from it");
    free(m);
    info.n_their_files = 1;
    assert_null(check("deleted_from_table:1", "deleted_from_table:1", &info));
    /* the file rule needs both to delete from one table */
    info.n_their_files = 2;
    assert_null(check("deleted_from_table:1", "deleted_from_table:2", &info));
    const char *list[] = {"deleted_from_table:1"};
    assert_int_equal(lk_conflict_needs_files(list, 1, "deleted_from_table:1"), 1);
    assert_int_equal(lk_conflict_needs_files(list, 1, "deleted_from_table:2"), 0);
}

static void test_maintenance_and_alters(void **state)
{
    assert_conflict("inline_flush:1", "inline_flush:1",
                    "Transaction conflict - attempting to flush inline data with index \"1\" - "
                    "but another transaction has flushed it");
    assert_conflict("merge_adjacent:1", "rewrite_delete:1",
                    "Transaction conflict - attempting to compact table with index \"1\" - but "
                    "another transaction has compacted it");
    assert_conflict("rewrite_delete:1", "deleted_from_table:1",
                    "Transaction conflict - attempting to compact table with index \"1\" - but "
                    "another transaction has deleted from it");
    assert_conflict("altered_table:2", "altered_table:2",
                    "Transaction conflict - attempting to alter table with index \"2\" - but "
                    "another transaction has altered it");
    assert_conflict("altered_table:2", "dropped_table:2",
                    "Transaction conflict - attempting to alter table with index \"2\" - but "
                    "another transaction has dropped it");
    assert_conflict("altered_view:3", "altered_view:3",
                    "Transaction conflict - attempting to alter view with index \"3\" - but "
                    "another transaction has altered it");
}

static void test_order_of_checks(void **state)
{
    /* drops are checked before inserts, as DuckLake orders its checks */
    assert_conflict("inserted_into_table:1,dropped_table:2", "dropped_table:1,dropped_table:2",
                    "Transaction conflict - attempting to drop table with index \"2\" - but "
                    "another transaction has dropped it already");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_inserts_and_other_tables_commit),
        cmocka_unit_test(test_drops),
        cmocka_unit_test(test_schemas),
        cmocka_unit_test(test_creations),
        cmocka_unit_test(test_inserts),
        cmocka_unit_test(test_deletes),
        cmocka_unit_test(test_maintenance_and_alters),
        cmocka_unit_test(test_order_of_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

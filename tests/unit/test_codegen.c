/*
 * test_codegen.c — unit tests for src/build/codegen.c: the SQL of each
 * write strategy, quoting included. Each statement is also run against a
 * plain DuckDB session on TEMP tables, so the SQL is not just the expected
 * text but SQL that works (merge semantics, NULL-safe keys, duplicates,
 * partition checks).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "build/codegen.h"
#include "project/query.h"
#include "tarn/error.h"
#include "tarn/session.h"

static tarn_session *S;

static int setup(void **state)
{
    return tarn_session_open(&S);
}

static int teardown(void **state)
{
    tarn_session_close(S);
    return 0;
}

static void exec_ok(const char *sql)
{
    if (query_exec(S, sql, NULL) != 0)
        fail_msg("%s\n-> %s", sql, tarn_error_last());
}

static char *scalar(const char *sql)
{
    char *v = NULL;
    if (query_string(&v, S, sql) != 0)
        fail_msg("%s\n-> %s", sql, tarn_error_last());
    return v;
}

static void assert_scalar(const char *sql, const char *want)
{
    char *v = scalar(sql);
    assert_non_null(v);
    assert_string_equal(v, want);
    free(v);
}

static void test_target_quoting(void **state)
{
    tarn_buf b = {0};
    cg_target(&b, "lake", "my \"s\"", "t");
    assert_string_equal(buf_cstr(&b), "\"lake\".\"my \"\"s\"\"\".\"t\"");
    buf_free(&b);
    char *s = cg_replace("\"l\".\"s\".\"t\"", "SELECT 1 -- trailing comment");
    assert_string_equal(s, "CREATE OR REPLACE TABLE \"l\".\"s\".\"t\" AS\nSELECT 1 -- trailing "
                           "comment\n");
    free(s);
    s = cg_append("t", "SELECT 1 -- c");
    assert_string_equal(s, "INSERT INTO t SELECT * FROM (\nSELECT 1 -- c\n)");
    free(s);
    s = cg_commit_message("lake", "tarn: build it's", "{\"a\":\"b'c\"}");
    assert_string_equal(s, "CALL ducklake_set_commit_message('lake', 'tarn', 'tarn: build it''s', "
                           "extra_info => '{\"a\":\"b''c\"}')");
    free(s);
}

static void merge_into(const char *rows)
{
    strlist key = {0}, cols = {0};
    strlist_push(&key, "k");
    strlist_push(&cols, "k");
    strlist_push(&cols, "v");
    char *q = xasprintf("SELECT * FROM (VALUES %s) x(k, v)", rows);
    char *sql = cg_stage(q);
    exec_ok(sql);
    free(sql);
    free(q);
    sql = cg_changed_keys("temp.main.target", &cols, &key);
    exec_ok(sql);
    free(sql);
    sql = cg_delete_keys("temp.main.target", &key);
    exec_ok(sql);
    free(sql);
    sql = cg_insert_keys("temp.main.target", &key);
    exec_ok(sql);
    free(sql);
    strlist_free(&key);
    strlist_free(&cols);
}

static void test_merge_semantics(void **state)
{
    exec_ok("CREATE OR REPLACE TEMP TABLE target AS SELECT * FROM (VALUES (1, 'a'), (2, 'b'), "
            "(NULL, 'n'), (4, 'd')) x(k, v)");
    /* 1 unchanged, 2 changed, NULL key changed, 5 new; 4 untouched. */
    merge_into("(1, 'a'), (2, 'B'), (NULL, 'N'), (5, 'e')");
    assert_scalar("SELECT string_agg(coalesce(k::VARCHAR, 'null') || v, ',' ORDER BY k NULLS "
                  "FIRST) FROM target",
                  "nullN,1a,2B,4d,5e");
    /* Only the changed keys were touched. */
    assert_scalar("SELECT count(*) FROM _tarn_keys", "3");
}

static void test_duplicate_keys(void **state)
{
    strlist key = {0};
    strlist_push(&key, "k");
    strlist_push(&key, "r");
    char *sql = cg_stage("SELECT * FROM (VALUES (1, 'eu'), (1, 'eu'), (1, 'us'), (NULL, 'eu'), "
                         "(NULL, 'eu'), (2, 'x'), (2, 'x'), (2, 'x')) t(k, r)");
    exec_ok(sql);
    free(sql);
    sql = cg_duplicate_keys(&key, 5);
    qrows q;
    assert_int_equal(query_rows(&q, S, sql), 0);
    free(sql);
    /* NULL keys are exempt; most duplicated first. */
    assert_int_equal(q.nrows, 2);
    assert_string_equal(qrows_get(&q, 0, 0), "k=2, r=x");
    assert_string_equal(qrows_get(&q, 0, 1), "3");
    assert_string_equal(qrows_get(&q, 0, 2), "2");
    assert_string_equal(qrows_get(&q, 1, 0), "k=1, r=eu");
    qrows_free(&q);
    strlist_free(&key);
}

static void test_partition_sql(void **state)
{
    char *e = cg_partition_expr(GRAIN_WEEKLY, "ts");
    assert_string_equal(e, "strftime(\"ts\", '%G-W%V')");
    free(e);
    e = cg_partition_expr(GRAIN_DYNAMIC, "region");
    assert_string_equal(e, "CAST(\"region\" AS VARCHAR)");
    free(e);
    char *m = cg_partition_macro(GRAIN_HOURLY);
    exec_ok(m);
    free(m);
    assert_scalar("SELECT tarn_partition(TIMESTAMP '2024-03-05 07:30:00')", "2024-03-05T07");
    char *sql = cg_stage("SELECT * FROM (VALUES (TIMESTAMP '2024-03-05 07:00:00'), (TIMESTAMP "
                         "'2024-03-05 08:00:00'), (NULL)) t(ts)");
    exec_ok(sql);
    free(sql);
    sql = cg_outside_partition(GRAIN_HOURLY, "ts", "2024-03-05T07");
    qrows q;
    assert_int_equal(query_rows(&q, S, sql), 0);
    free(sql);
    assert_string_equal(qrows_get(&q, 0, 0), "2");
    assert_string_equal(qrows_get(&q, 0, 1), "2024-03-05 08:00:00");
    assert_string_equal(qrows_get(&q, 0, 2), "1");
    qrows_free(&q);
    /* DuckDB's ISO weeks are the identities partition.c makes. */
    m = cg_partition_macro(GRAIN_WEEKLY);
    exec_ok(m);
    free(m);
    assert_scalar("SELECT tarn_partition(DATE '2021-01-03')", "2020-W53");
    assert_scalar("SELECT tarn_partition(DATE '2024-12-30')", "2025-W01");
    strlist ids = {0};
    strlist_push(&ids, "a'b");
    strlist_push(&ids, "c");
    sql = cg_delete_partitions("t", &ids);
    assert_string_equal(sql, "DELETE FROM t WHERE \"_tarn_partition\" IN ('a''b', 'c')");
    free(sql);
    strlist_free(&ids);
    sql = cg_create_from_stage("t", "'p'", 1);
    assert_string_equal(sql, "CREATE TABLE t AS SELECT *, 'p' AS \"_tarn_partition\" FROM "
                             "temp.main._tarn_stage LIMIT 0");
    free(sql);
    sql = cg_insert_from_stage("t", "'p'");
    assert_string_equal(sql, "INSERT INTO t SELECT *, 'p' FROM temp.main._tarn_stage");
    free(sql);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_quoting),
        cmocka_unit_test(test_merge_semantics),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_partition_sql),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

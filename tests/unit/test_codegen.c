/*
 * test_codegen.c — unit tests for src/materialize/codegen.c: the SQL of each
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

#include "materialize/codegen.h"
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

/* One history build over temp.main.hist (key k, tracked t, untracked u)
 * at time `ts`. */
static void history_run(const char *rows, const char *ts, int deletes_close)
{
    strlist key = {0}, track = {0};
    strlist_push(&key, "k");
    strlist_push(&track, "t");
    char *q = xasprintf("SELECT * FROM (VALUES %s) x(k, t, u)", rows);
    char *sql = cg_stage(q);
    exec_ok(sql);
    free(sql);
    free(q);
    sql = cg_history_keys("hist", &key, &track, deletes_close);
    exec_ok(sql);
    free(sql);
    sql = cg_history_close("hist", &key, ts);
    exec_ok(sql);
    free(sql);
    sql = cg_history_open("hist", &key, ts);
    exec_ok(sql);
    free(sql);
    strlist_free(&key);
    strlist_free(&track);
}

static void test_history_semantics(void **state)
{
    exec_ok("CREATE OR REPLACE TEMP TABLE _tarn_stage AS SELECT * FROM (VALUES (1, 'a', 'x'), "
            "(2, NULL, 'y'), (NULL, 'n', 'z'), (3, 'c', 'w')) x(k, t, u)");
    char *sql = cg_history_create("hist", "TIMESTAMP '2024-01-01'");
    exec_ok(sql);
    free(sql);
    /* 1: only the untracked u changes (no new version); 2: NULL -> 'b'
     * (changed, NULL-safe); NULL key: unchanged; 3: missing (kept); 4: new. */
    history_run("(1, 'a', 'X'), (2, 'b', 'y'), (NULL, 'n', 'z'), (4, 'd', 'v')",
                "TIMESTAMP '2024-02-01'", 0);
    assert_scalar("SELECT string_agg(concat_ws(':', coalesce(k::VARCHAR, 'null'), t, u, "
                  "strftime(valid_from, '%m'), strftime(valid_to, '%m'), is_current), ' ' "
                  "ORDER BY k NULLS FIRST, valid_from) FROM hist",
                  "null:n:z:01:true 1:a:x:01:true 2:y:01:02:false 2:b:y:02:true 3:c:w:01:true "
                  "4:d:v:02:true");
    /* deletes=close: 3 and 4 are gone, the rest unchanged. */
    history_run("(1, 'a', 'X'), (2, 'b', 'y'), (NULL, 'n', 'z')", "TIMESTAMP '2024-03-01'", 1);
    assert_scalar("SELECT string_agg(coalesce(k::VARCHAR, 'null'), ',' ORDER BY k NULLS FIRST) "
                  "FROM hist WHERE is_current",
                  "null,1,2");
    assert_scalar("SELECT string_agg(k::VARCHAR, ',' ORDER BY k) FROM hist WHERE "
                  "strftime(valid_to, '%m') = '03'",
                  "3,4");
    /* The same input again: no key to close or open. */
    history_run("(1, 'a', 'X'), (2, 'b', 'y'), (NULL, 'n', 'z')", "TIMESTAMP '2024-04-01'", 1);
    assert_scalar("SELECT count(*) FROM _tarn_keys", "0");
    sql = cg_history_view("lake", "s\"q", "t");
    assert_string_equal(sql, "CREATE OR REPLACE VIEW \"lake\".\"s\"\"q\".\"t_current\" AS SELECT "
                             "* EXCLUDE (\"valid_to\", \"is_current\") FROM \"s\"\"q\".\"t\" "
                             "WHERE \"is_current\"");
    free(sql);
}

static void test_incremental_sql(void **state)
{
    exec_ok("CREATE OR REPLACE TEMP TABLE inc AS SELECT * FROM (VALUES (1, TIMESTAMP "
            "'2024-05-01 10:00:00'), (2, TIMESTAMP '2024-05-01 11:00:00')) x(id, \"my ts\")");
    char *sql = cg_watermark("temp.main.inc", "my ts");
    assert_scalar(sql, "2024-05-01 11:00:00");
    free(sql);
    sql = cg_stage_where("SELECT * FROM inc -- c",
                         "\"my ts\" > CAST('2024-05-01 10:00:00' AS TIMESTAMP)");
    assert_string_equal(sql, "CREATE OR REPLACE TEMP TABLE _tarn_stage AS SELECT * FROM (\nSELECT "
                             "* FROM inc -- c\n) WHERE \"my ts\" > CAST('2024-05-01 10:00:00' AS "
                             "TIMESTAMP)");
    exec_ok(sql);
    free(sql);
    assert_scalar("SELECT string_agg(id::VARCHAR, ',') FROM _tarn_stage", "2");
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
    assert_string_equal(sql, "CREATE OR REPLACE TABLE t AS SELECT *, 'p' AS \"_tarn_partition\" FROM "
                             "temp.main._tarn_stage LIMIT 0");
    free(sql);
    sql = cg_insert_from_stage("t", "'p'");
    assert_string_equal(sql, "INSERT INTO t SELECT *, 'p' FROM temp.main._tarn_stage");
    free(sql);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_target_quoting),  cmocka_unit_test(test_merge_semantics),
        cmocka_unit_test(test_duplicate_keys),  cmocka_unit_test(test_history_semantics),
        cmocka_unit_test(test_incremental_sql), cmocka_unit_test(test_partition_sql),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

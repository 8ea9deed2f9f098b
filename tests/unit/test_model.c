/*
 * test_model.c — unit tests for a model's parts: statements and their
 * shape (body.c), table references through DuckDB's parser with CTEs
 * excluded (refs.c), ${VAR} expansion (env.c) and the model hash (hash.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "project/body.h"
#include "project/env.h"
#include "project/hash.h"
#include "project/refs.h"
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

/* ---- refs ------------------------------------------------------------- */

static ref_list refs_ok(const char *sql)
{
    ref_list r;
    size_t off;
    if (refs_extract(&r, &off, S, sql) != 0)
        fail_msg("refs_extract(%s): %s", sql, tarn_error_last());
    return r;
}

static const table_ref *find_ref(const ref_list *r, const char *table)
{
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].table, table) == 0)
            return &r->items[i];
    return NULL;
}

static void test_refs_basic(void **state)
{
    const char *sql = "SELECT * FROM staging.orders o JOIN lake.marts.dim d USING (id) "
                      "WHERE x IN (SELECT y FROM raw.z)";
    ref_list r = refs_ok(sql);
    assert_int_equal(r.n, 3);
    const table_ref *o = find_ref(&r, "orders");
    assert_non_null(o);
    assert_null(o->catalog);
    assert_string_equal(o->schema, "staging");
    assert_int_equal(o->offset, 14);
    assert_int_equal(o->len, strlen("staging.orders"));
    const table_ref *d = find_ref(&r, "dim");
    assert_string_equal(d->catalog, "lake");
    assert_int_equal(d->len, strlen("lake.marts.dim"));
    assert_memory_equal(sql + d->offset, "lake.marts.dim", d->len);
    assert_non_null(find_ref(&r, "z"));
    refs_free(&r);
}

static void test_refs_ctes_excluded(void **state)
{
    ref_list r = refs_ok("WITH a AS (SELECT * FROM src.t), b AS (SELECT * FROM a) "
                         "SELECT * FROM b JOIN (WITH c AS (SELECT 1) SELECT * FROM c) USING (x) "
                         "JOIN main.a ON true");
    assert_int_equal(r.n, 2);
    assert_non_null(find_ref(&r, "t"));
    /* main.a is qualified, so it is a table, not the CTE a. */
    const table_ref *a = find_ref(&r, "a");
    assert_non_null(a);
    assert_string_equal(a->schema, "main");
    refs_free(&r);
    /* A CTE name is only a CTE inside its WITH. */
    r = refs_ok("SELECT * FROM (WITH q AS (SELECT 1) SELECT * FROM q), q");
    assert_int_equal(r.n, 1);
    assert_string_equal(r.items[0].table, "q");
    refs_free(&r);
}

static void test_refs_quoted_files_at(void **state)
{
    const char *sql = "SELECT 'héllo' FROM \"My Schema\".\"T x\" AT (VERSION => 3), 'data/x.csv'";
    ref_list r = refs_ok(sql);
    assert_int_equal(r.n, 2);
    const table_ref *t = find_ref(&r, "T x");
    assert_string_equal(t->schema, "My Schema");
    assert_true(t->has_at);
    assert_memory_equal(sql + t->offset, "\"My Schema\".\"T x\"", t->len);
    const table_ref *f = find_ref(&r, "data/x.csv");
    assert_true(f->is_file);
    refs_free(&r);
}

static void test_refs_parse_error(void **state)
{
    ref_list r;
    size_t off = 0;
    assert_int_equal(refs_extract(&r, &off, S, "SELECT * FROM t WHERE"), TARN_EINVALID);
    assert_non_null(strstr(tarn_error_last(), "syntax error"));
    assert_true(off != REF_NO_OFFSET);
    tarn_error_clear();
    assert_int_equal(refs_from_json(&r, &off, "not json", "x"), TARN_ERROR);
    tarn_error_clear();
}

/* ---- body ------------------------------------------------------------- */

static int body(model_body *b, diag_list *d, const char *text, int manual)
{
    memset(d, 0, sizeof(*d));
    return body_parse(b, d, "models/m.sql", text, manual);
}

static void test_body_managed(void **state)
{
    model_body b;
    diag_list d;
    const char *text = "-- header\nSET threads = 1;\nCREATE TEMP TABLE x AS SELECT * FROM raw.a;\n"
                       "CREATE OR REPLACE TEMP MACRO m(v) AS v + 1;\n"
                       "WITH q AS (SELECT 1) SELECT * FROM q WHERE d = {partition}\n";
    assert_int_equal(body(&b, &d, text, 0), 0);
    assert_int_equal(b.n, 4);
    assert_int_equal(b.items[0].line, 2);
    assert_int_equal(b.items[0].query_off, REF_NO_OFFSET);
    assert_int_equal(b.items[1].query_off, strlen("CREATE TEMP TABLE x AS "));
    assert_true(b.items[3].is_query);
    assert_int_equal(b.items[3].npart, 1);
    char *q = body_query_for_parse(&b.items[3]);
    assert_non_null(strstr(q, "d = " BODY_PARTITION_DUMMY));
    assert_int_equal(strlen(q), strlen(b.items[3].text));
    free(q);
    assert_int_equal(body_line_of(&b.items[1], 5), 3);
    body_free(&b);
}

static void test_body_rejects(void **state)
{
    model_body b;
    diag_list d;
    assert_int_equal(body(&b, &d, "SELECT 1;\nINSERT INTO lake.t VALUES (1)\n", 0), 1);
    assert_int_equal(d.items[0].line, 2);
    assert_non_null(strstr(d.items[0].msg, "not a query"));
    assert_non_null(strstr(d.items[0].fix, "-- materialize manual"));
    body_free(&b);
    diag_free(&d);
    assert_int_equal(body(&b, &d, "DELETE FROM lake.t;\nSELECT 1\n", 0), 1);
    assert_non_null(strstr(d.items[0].msg, "DELETE is not allowed"));
    assert_non_null(strstr(d.items[0].fix, "-- materialize manual"));
    body_free(&b);
    diag_free(&d);
    assert_int_equal(body(&b, &d, "SELECT 1;\nSELECT 2\n", 0), 1);
    assert_non_null(strstr(d.items[0].msg, "second query"));
    assert_int_equal(d.items[0].line, 1);
    body_free(&b);
    diag_free(&d);
    assert_int_equal(body(&b, &d, "-- only a comment\n", 0), 1);
    assert_non_null(strstr(d.items[0].msg, "no SQL statement"));
    body_free(&b);
    diag_free(&d);
    assert_int_equal(body(&b, &d, "SELECT 'unterminated\n", 0), 1);
    body_free(&b);
    diag_free(&d);
    /* Manual models: anything but transactions and ATTACH. */
    assert_int_equal(body(&b, &d, "CREATE TABLE lake.s.t (a INT);\nINSERT INTO lake.s.t SELECT a FROM x\n", 1),
                     0);
    assert_int_equal(b.items[1].query_off, strlen("INSERT INTO lake.s.t "));
    body_free(&b);
    assert_int_equal(body(&b, &d, "BEGIN;\nINSERT INTO lake.s.t VALUES (1);\nCOMMIT\n", 1), 2);
    assert_non_null(strstr(d.items[0].fix, "own transaction"));
    body_free(&b);
    diag_free(&d);
}

/* ---- env -------------------------------------------------------------- */

static void test_env(void **state)
{
    env_vars e = {0};
    diag_list d = {0};
    env_parse(&e, &d, ".env",
              "# comment\n\nLAKE=lake.ducklake\nexport DATA='data dir'\nQ=\"x\"\nbad line\n");
    assert_int_equal(d.n, 1);
    assert_int_equal(d.items[0].line, 6);
    diag_free(&d);
    setenv("TARN_TEST_FROM_ENV", "env", 1);
    setenv("LAKE", "from-env", 1);
    char *out =
        env_expand(&e, &d, "config/x.sql",
                   "ATTACH '${LAKE}' '${DATA}' ${Q} ${TARN_TEST_FROM_ENV} ${NOPE:-dflt} $x");
    assert_non_null(out);
    assert_string_equal(out, "ATTACH 'from-env' 'data dir' x env dflt $x");
    free(out);
    /* A value is a value: its quotes are doubled inside a string or a
     * quoted name; outside quotes only a number or a name is taken. */
    setenv("TARN_TEST_QUOTE", "a'b\"c", 1);
    out = env_expand(&e, &d, "config/x.sql", "SELECT '${TARN_TEST_QUOTE}', \"${TARN_TEST_QUOTE}\"");
    assert_non_null(out);
    assert_string_equal(out, "SELECT 'a''b\"c', \"a'b\"\"c\"");
    free(out);
    out = env_expand(&e, &d, "config/x.sql", "SET threads = ${N:--4.5}; USE ${M:-lake.main}");
    assert_non_null(out);
    assert_string_equal(out, "SET threads = -4.5; USE lake.main");
    free(out);
    assert_null(env_expand(&e, &d, "config/x.sql", "\nSET threads = ${TARN_TEST_QUOTE}"));
    assert_int_equal(d.n, 1);
    assert_int_equal(d.items[0].line, 2);
    assert_non_null(strstr(d.items[0].msg, "not a number or a name"));
    diag_free(&d);
    assert_null(env_expand(&e, &d, "config/x.sql", "SELECT ${X:-1; DROP TABLE t}"));
    diag_free(&d);
    unsetenv("TARN_TEST_QUOTE");
    unsetenv("LAKE");
    out = env_expand(&e, &d, "config/x.sql", "${LAKE}");
    assert_string_equal(out, "lake.ducklake");
    free(out);
    out = env_expand(&e, &d, "config/x.sql", "-- uses ${UNSET_IN_COMMENT}\nSELECT '--${LAKE}' /* ${X} */");
    assert_string_equal(out, "-- uses ${UNSET_IN_COMMENT}\nSELECT '--lake.ducklake' /* ${X} */");
    free(out);
    assert_null(env_expand(&e, &d, "config/x.sql", "a\nb ${MISSING_VAR_X}\n${}"));
    assert_int_equal(d.n, 2);
    assert_int_equal(d.items[0].line, 2);
    assert_non_null(strstr(d.items[0].msg, "${MISSING_VAR_X} is not set"));
    assert_int_equal(d.items[1].line, 3);
    diag_free(&d);
    env_free(&e);
}

/* ---- hash ------------------------------------------------------------- */

static void test_hash(void **state)
{
    char h[65];
    hash_sha256_hex(h, "abc", 3);
    assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    char *a = hash_normalize_sql("SELECT  a,\n  b -- note\nFROM t /* x */");
    char *b = hash_normalize_sql("SELECT a, b FROM t");
    assert_string_equal(a, b);
    free(a);
    free(b);
    a = hash_normalize_sql("SELECT 'a  b'");
    b = hash_normalize_sql("SELECT 'a b'");
    assert_string_not_equal(a, b);
    free(a);
    free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refs_basic),     cmocka_unit_test(test_refs_ctes_excluded),
        cmocka_unit_test(test_refs_quoted_files_at), cmocka_unit_test(test_refs_parse_error),
        cmocka_unit_test(test_body_managed),   cmocka_unit_test(test_body_rejects),
        cmocka_unit_test(test_env),            cmocka_unit_test(test_hash),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

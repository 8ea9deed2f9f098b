/*
 * test_geostats.c — unit tests for src/lake/geostats.c: GEOMETRY statistics
 * taken from DuckDB's RETURN_STATS entries, merged, and printed as the
 * extra_stats JSON DuckLake writes (C's %f, null for a dimension without
 * values, types sorted and unique); and the SQL merge of a stored text,
 * run in DuckDB against NULL, an all-NULL box and a real one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "duck/duck.h"
#include "lake/geostats.h"
#include "util/buf.h"
#include "util/quote.h"

static char *json_of(const lk_geo_stats *g)
{
    tarn_buf b = {0};
    lk_geo_json(&b, g);
    return buf_detach(&b);
}

static void test_empty(void **state)
{
    lk_geo_stats g;
    lk_geo_init(&g);
    char *j = json_of(&g);
    assert_string_equal(j, "{\"bbox\": {\"xmin\": null, \"xmax\": null, \"ymin\": null, \"ymax\": "
                           "null, \"zmin\": null, \"zmax\": null, \"mmin\": null, \"mmax\": "
                           "null}, \"types\": []}");
    free(j);
    lk_geo_free(&g);
}

static void test_set_and_merge(void **state)
{
    lk_geo_stats a, b;
    lk_geo_init(&a);
    lk_geo_init(&b);
    assert_int_equal(lk_geo_set(&a, "bbox_xmin", "1.0"), 1);
    assert_int_equal(lk_geo_set(&a, "bbox_xmax", "10.5"), 1);
    assert_int_equal(lk_geo_set(&a, "bbox_ymin", "-2"), 1);
    assert_int_equal(lk_geo_set(&a, "bbox_ymax", "2"), 1);
    assert_int_equal(lk_geo_set(&a, "geo_types", "[point, linestring_z]"), 1);
    assert_int_equal(lk_geo_set(&a, "null_count", "0"), 0);
    assert_int_equal(lk_geo_set(&a, "bbox_qmin", "0"), 0);
    assert_int_equal(lk_geo_set(&a, "bbox_x", "0"), 0);
    lk_geo_set(&b, "bbox_mmin", "-30");
    lk_geo_set(&b, "bbox_mmax", "5");
    lk_geo_set(&b, "bbox_xmin", "-30");
    lk_geo_set(&b, "bbox_xmax", "-30");
    lk_geo_set(&b, "geo_types", "[point_m, point, point_m]");
    lk_geo_merge(&a, &b);
    char *j = json_of(&a);
    assert_string_equal(j, "{\"bbox\": {\"xmin\": -30.000000, \"xmax\": 10.500000, \"ymin\": "
                           "-2.000000, \"ymax\": 2.000000, \"zmin\": null, \"zmax\": null, "
                           "\"mmin\": -30.000000, \"mmax\": 5.000000}, \"types\": "
                           "[\"linestring_z\", \"point\", \"point_m\"]}");
    free(j);
    lk_geo_stats c;
    lk_geo_copy(&c, &a);
    lk_geo_free(&a);
    j = json_of(&c);
    assert_non_null(strstr(j, "\"types\": [\"linestring_z\", \"point\", \"point_m\"]"));
    free(j);
    lk_geo_free(&b);
    lk_geo_free(&c);
}

/* the SQL merge of `stored` (NULL: SQL NULL) with g, evaluated by DuckDB */
static char *merged_sql(duckdb_connection con, const char *stored, const lk_geo_stats *g)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT ");
    lk_geo_merge_sql(&b, "s", g);
    buf_puts(&b, " FROM (SELECT ");
    if (stored)
        quote_literal(&b, stored);
    else
        buf_puts(&b, "NULL::VARCHAR");
    buf_puts(&b, " AS s)");
    char *out = NULL;
    assert_int_equal(duck_query_string(&out, con, buf_cstr(&b)), 0);
    buf_free(&b);
    return out;
}

static void test_merge_sql(void **state)
{
    duckdb_database db;
    duckdb_connection con;
    assert_int_equal(duckdb_open(NULL, &db), DuckDBSuccess);
    assert_int_equal(duckdb_connect(db, &con), DuckDBSuccess);
    lk_geo_stats g, empty, stored;
    lk_geo_init(&g);
    lk_geo_init(&empty);
    lk_geo_init(&stored);
    lk_geo_set(&g, "bbox_xmin", "1");
    lk_geo_set(&g, "bbox_xmax", "3");
    lk_geo_set(&g, "bbox_ymin", "2");
    lk_geo_set(&g, "bbox_ymax", "2");
    lk_geo_set(&g, "geo_types", "[point]");
    lk_geo_set(&stored, "bbox_xmin", "-1");
    lk_geo_set(&stored, "bbox_xmax", "2");
    lk_geo_set(&stored, "bbox_ymin", "5");
    lk_geo_set(&stored, "bbox_ymax", "6");
    lk_geo_set(&stored, "bbox_zmin", "0.25");
    lk_geo_set(&stored, "bbox_zmax", "0.5");
    lk_geo_set(&stored, "geo_types", "[polygon_z, linestring]");
    char *want = json_of(&g);
    char *got = merged_sql(con, NULL, &g);
    assert_string_equal(got, want);
    free(got);
    char *e = json_of(&empty);
    got = merged_sql(con, e, &g);
    assert_string_equal(got, want);
    free(got);
    free(want);
    free(e);
    char *s = json_of(&stored);
    lk_geo_merge(&stored, &g);
    want = json_of(&stored);
    got = merged_sql(con, s, &g);
    assert_string_equal(got, want);
    free(got);
    free(want);
    free(s);
    lk_geo_free(&g);
    lk_geo_free(&empty);
    lk_geo_free(&stored);
    duckdb_disconnect(&con);
    duckdb_close(&db);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_set_and_merge),
        cmocka_unit_test(test_merge_sql),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

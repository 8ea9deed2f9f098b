/*
 * test_textmap.c — unit tests for src/util/textmap.c: a position in a
 * rewritten statement (references pinned, the query wrapped, a lake read
 * turned into a scan) maps back to the same byte of the user's text; a
 * position inside text tarn added maps nowhere; the excerpt shows the
 * user's line with the caret under the byte, and cuts long lines.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/buf.h"
#include "util/textmap.h"

static const char USER[] = "SELECT id,\n  nope + 1 AS z\nFROM staging.items\nWHERE id > 2";

static long locate(const char *ran, const char *needle)
{
    return textmap_locate(USER, ran, (long)(strstr(ran, needle) - ran));
}

static void test_same_text(void **state)
{
    (void)state;
    assert_int_equal(textmap_locate(USER, USER, 13), 13);
}

static void test_through_rewrites(void **state)
{
    (void)state;
    long nope = (long)(strstr(USER, "nope") - USER), where = (long)(strstr(USER, "id >") - USER);
    /* wrapped by a strategy, then by the session's text read */
    const char *wrapped =
        "SELECT COLUMNS(*)::VARCHAR FROM (CREATE OR REPLACE TABLE \"lake\".\"m\".\"x\" "
        "AS\nSELECT id,\n  nope + 1 AS z\nFROM staging.items\nWHERE id > 2)";
    assert_int_equal(locate(wrapped, "nope"), nope);
    /* the reference pinned and turned into a scan: text after it still maps */
    const char *pinned =
        "SELECT id,\n  nope + 1 AS z\nFROM (SELECT * FROM read_parquet(['a.parquet'])) "
        "AS items\nWHERE id > 2";
    assert_int_equal(locate(pinned, "nope"), nope);
    assert_int_equal(locate(pinned, "id > 2"), where);
    /* inside the text tarn put there: nowhere */
    assert_int_equal(locate(pinned, "read_parquet"), -1);
    assert_int_equal(textmap_locate(USER, pinned, -1), -1);
}

static void test_end_of_input(void **state)
{
    (void)state;
    const char *ran =
        "CREATE TABLE t AS SELECT id,\n  nope + 1 AS z\nFROM staging.items\nWHERE id > 2";
    assert_int_equal(textmap_locate(USER, ran, (long)strlen(ran)), (long)strlen(USER));
    assert_int_equal(textmap_locate(USER, "SELECT 1 FROM x WHERE", 21), -1);
}

/* A long statement that repeats itself (a VALUES list) maps when it is
 * under the limit and is not searched over it. */
static void test_long_texts(void **state)
{
    (void)state;
    size_t n = 60 * 1024;
    char *orig = malloc(n + 1), *ran = malloc(n + 40);
    for (size_t i = 0; i < n; i++)
        orig[i] = "(1, 'a'),"[i % 9];
    orig[n] = 0;
    strcpy(ran, "INSERT INTO t VALUES ");
    strcat(ran, orig);
    long pos = (long)strlen("INSERT INTO t VALUES ") + 9 * 100;
    assert_int_equal(textmap_locate(orig, ran, pos) % 9, 0);
    char *big = malloc(2 * n + 1);
    memcpy(big, orig, n);
    memcpy(big + n, orig, n + 1);
    assert_int_equal(textmap_locate(big, ran, pos), -1);
    free(big);
    free(orig);
    free(ran);
}

static void test_excerpt(void **state)
{
    (void)state;
    tarn_buf b = {0};
    textmap_excerpt(&b, USER, (size_t)(strstr(USER, "nope") - USER), 4);
    assert_string_equal(buf_cstr(&b), "\n\nLINE 5:   nope + 1 AS z\n          ^");
    buf_free(&b);
    char line[300];
    memset(line, 'x', sizeof(line) - 1);
    line[sizeof(line) - 1] = 0;
    memcpy(line + 150, "HERE", 4);
    textmap_excerpt(&b, line, 150, 1);
    const char *s = buf_cstr(&b);
    assert_non_null(strstr(s, "LINE 1: ...x"));
    assert_non_null(strstr(s, "HEREx"));
    assert_non_null(strstr(s, "x...\n"));
    /* the caret is under the H */
    const char *caret = strchr(s + 2, '\n') + 1, *first = strstr(s, "LINE");
    assert_int_equal((long)(strchr(caret, '^') - caret), (long)(strstr(s, "HERE") - first));
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_text),    cmocka_unit_test(test_through_rewrites),
        cmocka_unit_test(test_end_of_input), cmocka_unit_test(test_long_texts),
        cmocka_unit_test(test_excerpt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_quote.c — unit tests for src/util/quote.c: quote_literal and its
 * inverse quote_unliteral round-trip every string (quotes, empty, blanks,
 * backslashes kept as DuckDB keeps them), and quote_unliteral refuses what
 * is not exactly one plain '...' literal (expressions, concatenations,
 * E'…' strings, NULL, an unterminated quote); quote_prefixed appends a
 * quoted name to a prefix that is SQL already (a catalog and its schema).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "util/buf.h"
#include "util/quote.h"

static void test_round_trip(void **state)
{
    (void)state;
    static const char *const VALUES[] = {"lake", "", "it's", "''", "a\\nb", " x ", "'", "é;--"};
    for (size_t i = 0; i < sizeof(VALUES) / sizeof(VALUES[0]); i++) {
        tarn_buf b = {0};
        buf_puts(&b, "  ");
        quote_literal(&b, VALUES[i]);
        buf_puts(&b, "\n");
        char *out = NULL;
        assert_int_equal(quote_unliteral(&out, buf_cstr(&b)), 1);
        assert_string_equal(out, VALUES[i]);
        free(out);
        buf_free(&b);
    }
}

static void test_refused(void **state)
{
    (void)state;
    static const char *const NOT[] = {"'a' || 'b'", "E'a'", "NULL",    "'a", "lower('A')",
                                      "'a''",       "",     "'a' 'b'", "1"};
    for (size_t i = 0; i < sizeof(NOT) / sizeof(NOT[0]); i++) {
        char *out = NULL;
        assert_int_equal(quote_unliteral(&out, NOT[i]), 0);
        assert_null(out);
    }
}

static void test_prefixed(void **state)
{
    (void)state;
    tarn_buf b = {0};
    quote_prefixed(&b, "\"__ducklake_metadata_lake\".\"dl\"", "tarn_run");
    assert_string_equal(buf_cstr(&b), "\"__ducklake_metadata_lake\".\"dl\".\"tarn_run\"");
    buf_free(&b);
    quote_prefixed(&b, "\"m\"", "a\"b");
    assert_string_equal(buf_cstr(&b), "\"m\".\"a\"\"b\"");
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_prefixed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_murmur3.c — unit tests for src/lake/murmur3.c and src/lake/bucket.c:
 * MurmurHash3 x86 32 against the reference implementation's published
 * vectors (every tail length, several seeds), the value hashes against the
 * Iceberg spec's test vectors (Appendix B), the bucket of a negative hash,
 * DuckLake's deviations (short DECIMALs hash their unscaled value), and the
 * murmur3_32() function registered in a DuckDB connection: the same values
 * for every directly hashed type, NULL in NULL out, the types hashed by
 * their text form (checked against DuckDB's own cast), nested types refused
 * with a hint, key expressions that run, and bucket(N) parsing.
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
#include "lake/bucket.h"
#include "lake/murmur3.h"
#include "tarn/error.h"
#include "util/buf.h"

static int32_t as_signed(uint32_t u)
{
    int32_t s;
    memcpy(&s, &u, sizeof(s));
    return s;
}

static void test_reference_vectors(void **state)
{
    static const struct {
        const char *in;
        uint32_t seed, want;
    } cases[] = {
        {"", 0, 0},
        {"", 1, 0x514E28B7u},
        {"", 0xffffffffu, 0x81F16F39u},
        {"a", 0x9747b28cu, 0x7FA09EA6u},
        {"aa", 0x9747b28cu, 0x5D211726u},
        {"aaa", 0x9747b28cu, 0x283E0130u},
        {"aaaa", 0x9747b28cu, 0x5A97808Au},
        {"abc", 0x9747b28cu, 0xC84A62DDu},
        {"abcd", 0x9747b28cu, 0xF0478627u},
        {"Hello, world!", 0x9747b28cu, 0x24884CBAu},
        {"The quick brown fox jumps over the lazy dog", 0x9747b28cu, 0x2FA826CDu},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        assert_int_equal(lk_murmur3_32(cases[i].in, strlen(cases[i].in), cases[i].seed),
                         as_signed(cases[i].want));
    static const unsigned char zeros[4] = {0};
    assert_int_equal(lk_murmur3_32(zeros, 4, 0), as_signed(0x2362F9DEu));
}

/* Iceberg spec, Appendix B "32-bit Hash Requirements". */
static void test_iceberg_vectors(void **state)
{
    assert_int_equal(lk_murmur3_long(34), 2017239379);                  /* int 34, long 34 */
    assert_int_equal(lk_murmur3_long(17486), -653330422);               /* date 2017-11-16 */
    assert_int_equal(lk_murmur3_long(81068000000LL), -662762989);       /* time 22:31:08 */
    assert_int_equal(lk_murmur3_long(1510871468000000LL), -2047944441); /* timestamp(tz) */
    assert_int_equal(lk_murmur3_long(1510871468000001LL), -1207196810); /* …08.000001 */
    assert_int_equal(lk_murmur3_32("iceberg", 7, 0), 1210000089);
    static const unsigned char bin[] = {0, 1, 2, 3};
    assert_int_equal(lk_murmur3_32(bin, 4, 0), -188683207);
    assert_int_equal(lk_murmur3_double(1.0), -142385009); /* float and double */
    assert_int_equal(lk_murmur3_double(0.0), 1669671676);
    assert_int_equal(lk_murmur3_double(-0.0), 1669671676);
    assert_int_equal(lk_murmur3_long(1), 1392991556); /* true */
    assert_int_equal(lk_murmur3_long(0), 1669671676); /* false */
}

static void test_bucket(void **state)
{
    assert_int_equal(lk_murmur3_bucket(2017239379, 16), 2017239379 % 16);
    /* a negative hash loses its sign bit, never yields a negative bucket */
    assert_int_equal(lk_murmur3_bucket(-653330422, 7), (-653330422 & INT32_MAX) % 7);
    assert_int_equal(lk_murmur3_bucket(INT32_MIN, 5), 0);
    assert_int_equal(lk_murmur3_bucket(-1, 1), 0);
    /* DuckLake, unlike Iceberg, hashes DECIMAL(4,2) 14.20 as the long 1420
     * (Iceberg: the big-endian bytes of the unscaled value, -500754589). */
    assert_int_equal(lk_murmur3_long(1420), -622427183);
}

static void test_forms_and_parse(void **state)
{
    assert_int_equal(lk_bucket_form("int32"), LK_HASH_LONG);
    assert_int_equal(lk_bucket_form("timestamptz"), LK_HASH_LONG);
    assert_int_equal(lk_bucket_form("decimal(18,3)"), LK_HASH_LONG);
    assert_int_equal(lk_bucket_form("decimal(19,3)"), LK_HASH_TEXT);
    assert_int_equal(lk_bucket_form("float32"), LK_HASH_DOUBLE);
    assert_int_equal(lk_bucket_form("varchar"), LK_HASH_BYTES);
    assert_int_equal(lk_bucket_form("blob"), LK_HASH_BYTES);
    assert_int_equal(lk_bucket_form("uuid"), LK_HASH_TEXT);
    assert_int_equal(lk_bucket_form("uint64"), LK_HASH_TEXT);
    assert_int_equal(lk_bucket_form("struct"), LK_HASH_TEXT);

    int32_t n = 0;
    assert_int_equal(lk_bucket_parse("bucket(16)", &n), 1);
    assert_int_equal(n, 16);
    assert_int_equal(lk_bucket_parse("bucket(2147483647)", &n), 1);
    assert_int_equal(lk_bucket_parse("bucket(0)", &n), 0);
    assert_int_equal(lk_bucket_parse("bucket(2147483648)", &n), 0);
    assert_int_equal(lk_bucket_parse("bucket()", &n), 0);
    assert_int_equal(lk_bucket_parse("bucket(4", &n), 0);
    assert_int_equal(lk_bucket_parse("identity", &n), 0);

    assert_int_equal(lk_bucket_check_count("8", &n), 0);
    assert_int_equal(n, 8);
    assert_int_equal(lk_bucket_check_count("0", &n), TARN_EINVALID);
    assert_string_equal(tarn_error_last(), "Bucket count must be positive");
    assert_int_equal(lk_bucket_check_count("-1", &n), TARN_EINVALID);
    assert_string_equal(tarn_error_last(), "Bucket count must be positive");
    assert_int_equal(lk_bucket_check_count("abc", &n), TARN_EINVALID);
    assert_string_equal(tarn_error_last(), "Bucket count must be an integer");
    assert_int_equal(lk_bucket_check_count("2147483648", &n), TARN_EINVALID);
    assert_string_equal(tarn_error_last(), "Bucket count cannot exceed 2147483647");

    tarn_buf b = {0};
    lk_bucket_key_expr(&b, "user id", "varchar", 4);
    assert_string_equal(buf_cstr(&b), "(murmur3_32(\"user id\") & 2147483647) % 4");
    buf_clear(&b);
    lk_bucket_key_expr(&b, "u", "uuid", 3);
    assert_string_equal(buf_cstr(&b), "(murmur3_32(CAST(\"u\" AS VARCHAR)) & 2147483647) % 3");
    buf_free(&b);
}

/* ---- murmur3_32() in DuckDB ---- */

typedef struct {
    duckdb_database db;
    duckdb_connection con;
} duck;

static int duck_setup(void **state)
{
    duck *d = calloc(1, sizeof(*d));
    if (!d || duckdb_open(NULL, &d->db) != DuckDBSuccess ||
        duckdb_connect(d->db, &d->con) != DuckDBSuccess || lk_bucket_register(d->con) != 0)
        return -1;
    *state = d;
    return 0;
}

static int duck_teardown(void **state)
{
    duck *d = *state;
    duckdb_disconnect(&d->con);
    duckdb_close(&d->db);
    free(d);
    return 0;
}

static void assert_query(duck *d, const char *sql, const char *want)
{
    char *got = NULL;
    int rc = duck_query_string(&got, d->con, sql);
    if (rc)
        fail_msg("%s: %s", sql, tarn_error_last());
    if (!want)
        assert_null(got);
    else
        assert_string_equal(got, want);
    free(got);
}

static void test_sql_function(void **state)
{
    duck *d = *state;
    assert_query(d, "SELECT murmur3_32(34)::VARCHAR", "2017239379");
    assert_query(d, "SELECT murmur3_32(34::TINYINT)::VARCHAR", "2017239379");
    assert_query(d, "SELECT murmur3_32(34::SMALLINT)::VARCHAR", "2017239379");
    assert_query(d, "SELECT murmur3_32(34::BIGINT)::VARCHAR", "2017239379");
    assert_query(d, "SELECT murmur3_32(DATE '2017-11-16')::VARCHAR", "-653330422");
    assert_query(d, "SELECT murmur3_32(TIME '22:31:08')::VARCHAR", "-662762989");
    assert_query(d, "SELECT murmur3_32(TIMESTAMP '2017-11-16 22:31:08')::VARCHAR", "-2047944441");
    assert_query(d, "SELECT murmur3_32(TIMESTAMPTZ '2017-11-16 14:31:08-08:00')::VARCHAR",
                 "-2047944441");
    assert_query(d, "SELECT murmur3_32('iceberg')::VARCHAR", "1210000089");
    assert_query(d, "SELECT murmur3_32('\\x00\\x01\\x02\\x03'::BLOB)::VARCHAR", "-188683207");
    assert_query(d, "SELECT murmur3_32(1.0::FLOAT)::VARCHAR", "-142385009");
    assert_query(d, "SELECT murmur3_32(-0.0::DOUBLE)::VARCHAR", "1669671676");
    assert_query(d, "SELECT murmur3_32(true)::VARCHAR", "1392991556");
    assert_query(d, "SELECT murmur3_32(14.20)::VARCHAR", "-622427183"); /* DECIMAL(4,2) */
    assert_query(d, "SELECT murmur3_32(1420::DECIMAL(18,0))::VARCHAR", "-622427183");
    assert_query(d, "SELECT murmur3_32(NULL::INTEGER)", NULL);
    assert_query(d, "SELECT murmur3_32(NULL)", NULL);
    /* NULLs inside a vector, more than one vector of rows, and strings
     * longer than DuckDB's 12-byte inline form */
    assert_query(d,
                 "SELECT count(*)::VARCHAR FROM (SELECT CASE WHEN i % 7 = 0 THEN NULL ELSE i END "
                 "AS v FROM range(5000) t(i)) WHERE murmur3_32(v) IS NULL",
                 "715");
    char want[32];
    const char *fox = "The quick brown fox jumps over the lazy dog";
    snprintf(want, sizeof(want), "%d", (int)lk_murmur3_32(fox, strlen(fox), 0));
    assert_query(d, "SELECT murmur3_32('The quick brown fox jumps over the lazy dog')::VARCHAR",
                 want);
    assert_query(d,
                 "SELECT list((murmur3_32(x) & 2147483647) % 4 ORDER BY x)::VARCHAR FROM "
                 "(VALUES ('alice'), ('bob'), ('charlie')) t(x)",
                 "[1, 2, 3]");
}

/* murmur3_32(x) of a type DuckLake hashes by its text equals murmur3_32 of
 * DuckDB's own CAST(x AS VARCHAR), over many values and the extremes. */
static void assert_text_form(duck *d, const char *values)
{
    tarn_buf b = {0};
    buf_printf(&b,
               "SELECT (count(*) > 0 AND count(*) FILTER (murmur3_32(x) IS DISTINCT FROM "
               "murmur3_32(CAST(x AS VARCHAR))) = 0)::VARCHAR FROM (%s) t(x)",
               values);
    assert_query(d, buf_cstr(&b), "true");
    buf_free(&b);
}

static void test_sql_text_forms(void **state)
{
    duck *d = *state;
    assert_text_form(d, "SELECT i::UTINYINT FROM range(256) r(i)");
    assert_text_form(d, "SELECT (i * 257)::USMALLINT FROM range(255) r(i)");
    assert_text_form(d, "SELECT (i * 16777259)::UINTEGER FROM range(255) r(i)");
    assert_text_form(d, "SELECT 18446744073709551615::UBIGINT - i::UBIGINT * 72057594037927 "
                        "FROM range(3000) r(i)");
    assert_text_form(d, "SELECT (i - 1500)::HUGEINT * 113427455640312821154458202477256070 "
                        "FROM range(3000) r(i) UNION ALL SELECT "
                        "'-170141183460469231731687303715884105728'::HUGEINT UNION ALL SELECT "
                        "'170141183460469231731687303715884105727'::HUGEINT");
    assert_text_form(d, "SELECT i::UHUGEINT * 113427455640312821154458202477256070 "
                        "FROM range(3000) r(i) UNION ALL SELECT "
                        "'340282366920938463463374607431768211455'::UHUGEINT");
    assert_text_form(d, "SELECT gen_random_uuid() FROM range(3000) UNION ALL SELECT "
                        "'00000000-0000-0000-0000-000000000000'::UUID UNION ALL SELECT "
                        "'ffffffff-ffff-ffff-ffff-ffffffffffff'::UUID UNION ALL SELECT "
                        "'80000000-0000-0000-7fff-ffffffffffff'::UUID");
    assert_text_form(d, "SELECT (((i - 1500)::HUGEINT * 98765432109876543 * 12345)::DECIMAL(38,10) "
                        "* 0.001)::DECIMAL(38,10) "
                        "FROM range(3000) r(i)");
    assert_text_form(d, "SELECT ((i - 1500) * 0.01)::DECIMAL(20,2) FROM range(3000) r(i)");
    assert_text_form(d, "SELECT (i - 1500)::DECIMAL(38,0) FROM range(3000) r(i) UNION ALL "
                        "SELECT 0.00000000000000000000000000000000000001::DECIMAL(38,38) "
                        "UNION ALL SELECT -0.5::DECIMAL(38,37)");
    assert_text_form(d, "SELECT to_months(((i % 41) - 20)::INT) + to_days(((i % 17) - 8)::INT) + "
                        "to_microseconds(((i % 13) - 6) * (i * 987654321)) FROM range(3000) r(i) "
                        "UNION ALL SELECT INTERVAL '0 seconds' UNION ALL SELECT "
                        "INTERVAL '100 hours' UNION ALL SELECT -INTERVAL '1.5 seconds'");
    assert_int_equal(duck_exec(d->con, "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')"), 0);
    assert_text_form(d, "SELECT (['sad', 'ok', 'happy'])[i % 3 + 1]::mood FROM range(30) r(i)");

    char *got = NULL;
    assert_int_not_equal(duck_query_string(&got, d->con, "SELECT murmur3_32([1, 2])"), 0);
    assert_non_null(strstr(tarn_error_last(), "CAST(x AS VARCHAR)"));
    assert_int_not_equal(duck_query_string(&got, d->con, "SELECT murmur3_32({'a': 1})"), 0);
    /* the key expression of a text-form type casts, and runs */
    tarn_buf b = {0};
    buf_puts(&b, "SELECT ");
    lk_bucket_key_expr(&b, "u", "uuid", 8);
    buf_puts(&b, " = (murmur3_32('f79c3e09-677c-4d17-a7a6-a7f7a8d5af2c') & 2147483647) % 8 "
                 "FROM (SELECT 'f79c3e09-677c-4d17-a7a6-a7f7a8d5af2c'::UUID AS u)");
    assert_query(d, buf_cstr(&b), "true");
    buf_clear(&b);
    buf_puts(&b, "SELECT ");
    lk_bucket_key_expr(&b, "s", "struct", 3);
    buf_puts(&b, " = (murmur3_32('{''x'': 1, ''y'': a}') & 2147483647) % 3 "
                 "FROM (SELECT {'x': 1, 'y': 'a'} AS s)");
    assert_query(d, buf_cstr(&b), "true");
    buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference_vectors),
        cmocka_unit_test(test_iceberg_vectors),
        cmocka_unit_test(test_bucket),
        cmocka_unit_test(test_forms_and_parse),
        cmocka_unit_test_setup_teardown(test_sql_function, duck_setup, duck_teardown),
        cmocka_unit_test_setup_teardown(test_sql_text_forms, duck_setup, duck_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

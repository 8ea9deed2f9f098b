/*
 * test_hostcheck.c — unit tests for src/web/hostcheck.c: which Host
 * headers `tarn serve` answers (IP literals, localhost, names given with
 * --allow-host; never another name, the DNS-rebinding case) and which
 * Origins may POST (the page's own only).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "web/hostcheck.h"

static void test_hosts_answered(void **state)
{
    (void)state;
    static const char *const OK[] = {"127.0.0.1:8080", "127.0.0.1",     "localhost:8080",
                                     "LOCALHOST",      "localhost.:80", "[::1]:8080",
                                     "[::1]",          "10.0.0.7:80",   "app.localhost:9"};
    for (size_t i = 0; i < sizeof(OK) / sizeof(OK[0]); i++)
        assert_int_equal(web_host_allowed(OK[i], NULL), 1);
    assert_int_equal(web_host_allowed(NULL, NULL), 1);
}

static void test_hosts_refused(void **state)
{
    (void)state;
    static const char *const NO[] = {"evil.example:8080",
                                     "evil.example",
                                     "localhost.evil.example",
                                     "127.0.0.1.nip.io",
                                     "",
                                     "[::1",
                                     "::1:8080",
                                     "[::1]x",
                                     "mylocalhost"};
    for (size_t i = 0; i < sizeof(NO) / sizeof(NO[0]); i++)
        assert_int_equal(web_host_allowed(NO[i], NULL), 0);
}

static void test_allow_host(void **state)
{
    (void)state;
    assert_int_equal(web_host_allowed("tarn.lan:8080", "tarn.lan"), 1);
    assert_int_equal(web_host_allowed("Tarn.LAN", "other, tarn.lan"), 1);
    assert_int_equal(web_host_allowed("tarn.lan.evil:8080", "tarn.lan"), 0);
    assert_int_equal(web_host_allowed("evil.example", "tarn.lan,x.y"), 0);
}

static void test_origin(void **state)
{
    (void)state;
    assert_int_equal(web_origin_same(NULL, "127.0.0.1:8080"), 1);
    assert_int_equal(web_origin_same("http://127.0.0.1:8080", "127.0.0.1:8080"), 1);
    assert_int_equal(web_origin_same("http://evil.example", "127.0.0.1:8080"), 0);
    assert_int_equal(web_origin_same("http://127.0.0.1:9999", "127.0.0.1:8080"), 0);
    assert_int_equal(web_origin_same("null", "127.0.0.1:8080"), 0);
    assert_int_equal(web_origin_same("http://127.0.0.1:8080", NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hosts_answered),
        cmocka_unit_test(test_hosts_refused),
        cmocka_unit_test(test_allow_host),
        cmocka_unit_test(test_origin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

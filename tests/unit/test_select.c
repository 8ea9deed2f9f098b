/*
 * test_select.c — unit tests for src/project/select.c: dbt's selector
 * grammar on a hand-made graph (graph operators with depths, @, unions,
 * intersections, exclusions) and the "did you mean" distance.
 *
 *   s.a → c.b → c.c → m.d
 *     └→ s.e
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "project/select.h"
#include "tarn/error.h"
#include "util/strdist.h"

#define N 5
static tarn_model models[N];
static tarn_project proj = {.models = models, .nmodels = N};
static model_edge ups[N][1];
static size_t downs[N][2];

static void model_init(size_t i, const char *name, const char *table, const char *path)
{
    models[i].name = (char *)name;
    models[i].table = (char *)table;
    models[i].path = (char *)path;
}

static void edge(size_t from, size_t to)
{
    ups[to][models[to].nup++] = (model_edge){.model = from};
    models[to].up = ups[to];
    downs[from][models[from].ndown++] = to;
    models[from].down = downs[from];
}

static int setup(void **state)
{
    model_init(0, "s.a", "a", "models/s/a.sql");
    model_init(1, "c.b", "b", "models/c/b.sql");
    model_init(2, "c.c", "c", "models/c/c.sql");
    model_init(3, "m.d", "d", "models/m/d.sql");
    model_init(4, "s.e", "e", "models/s/e.sql");
    edge(0, 1);
    edge(1, 2);
    edge(2, 3);
    edge(0, 4);
    return 0;
}

/* The selection as a string of 0/1, one per model. */
static char *pick(const char *sel, const char *excl)
{
    static char out[N + 1];
    unsigned char *m = NULL;
    char *a[] = {(char *)sel}, *e[] = {(char *)excl};
    if (select_models_excluding(&m, &proj, a, sel ? 1 : 0, e, excl ? 1 : 0) != 0) {
        tarn_error_clear();
        return "error";
    }
    for (size_t i = 0; i < N; i++)
        out[i] = m[i] ? '1' : '0';
    out[N] = 0;
    free(m);
    return out;
}

static void test_graph_operators(void **state)
{
    assert_string_equal(pick("c.c", NULL), "00100");
    assert_string_equal(pick("+c.c", NULL), "11100");
    assert_string_equal(pick("1+c.c", NULL), "01100");
    assert_string_equal(pick("c.b+", NULL), "01110");
    assert_string_equal(pick("c.b+1", NULL), "01100");
    assert_string_equal(pick("s.a+2", NULL), "11101");
    assert_string_equal(pick("@c.b", NULL), "11110");
    assert_string_equal(pick("@s.e", NULL), "10001");
}

static void test_sets(void **state)
{
    assert_string_equal(pick("c.b s.e", NULL), "01001");
    assert_string_equal(pick("s.a+,+c.c", NULL), "11100");
    assert_string_equal(pick("c.*", NULL), "01100");
    assert_string_equal(pick(NULL, "c.c+"), "11001");
    assert_string_equal(pick("s.a+", "c.b+"), "10001");
    assert_string_equal(pick("s.a+", "*"), "error");
    assert_string_equal(pick("c.c,s.e", NULL), "error");
    assert_string_equal(pick("nope", NULL), "error");
    assert_string_equal(pick("@c.b+", NULL), "error");
    assert_string_equal(pick("+", NULL), "error");
}

static void test_closest(void **state)
{
    unsigned char *m = NULL;
    char *a[] = {"c.cc"};
    assert_int_not_equal(select_models(&m, &proj, a, 1), 0);
    assert_non_null(strstr(tarn_error_last(), "did you mean c.c?"));
    tarn_error_clear();
    assert_int_equal(str_distance("orders", "ORDERS"), 0);
    assert_int_equal(str_distance("oders", "orders"), 1);
    assert_int_equal(str_distance("", "abc"), 3);
    assert_int_equal(str_distance("kitten", "sitting"), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_graph_operators),
        cmocka_unit_test(test_sets),
        cmocka_unit_test(test_closest),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

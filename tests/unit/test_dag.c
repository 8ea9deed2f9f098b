/*
 * test_dag.c — unit tests for src/project/dag.c and select.c: the build
 * order, cycles named with file and line, closures and dbt-style
 * selectors. Projects are built by hand (no files, no DuckDB).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "project/dag.h"
#include "project/select.h"
#include "tarn/error.h"
#include "util/buf.h"

/* A project of models named "s.<name>" at models/s/<name>.sql. */
static tarn_project *mk(const char *const *names, size_t n)
{
    tarn_project *p = xcalloc(1, sizeof(*p));
    p->models = xcalloc(n, sizeof(tarn_model));
    p->nmodels = n;
    for (size_t i = 0; i < n; i++) {
        tarn_model *m = &p->models[i];
        m->schema = xstrdup("s");
        m->table = xstrdup(names[i]);
        m->name = xasprintf("s.%s", names[i]);
        m->path = xasprintf("models/s/%s.sql", names[i]);
    }
    return p;
}

/* Model `down` reads model `up` (reference on `line`). */
static void edge(tarn_project *p, size_t down, size_t up, int line)
{
    tarn_model *m = &p->models[down];
    m->up = xrealloc(m->up, (m->nup + 1) * sizeof(model_edge));
    m->up[m->nup].model = up;
    m->up[m->nup].line = line;
    m->nup++;
}

static void free_project(tarn_project *p)
{
    for (size_t i = 0; i < p->nmodels; i++) {
        tarn_model *m = &p->models[i];
        free(m->schema);
        free(m->table);
        free(m->name);
        free(m->path);
        free(m->up);
        free(m->down);
        strlist_free(&m->annot.tags);
    }
    free(p->models);
    free(p->order);
    free(p);
}

static size_t pos(const tarn_project *p, size_t m)
{
    for (size_t i = 0; i < p->nmodels; i++)
        if (p->order[i] == m)
            return i;
    fail_msg("model %zu not in the order", m);
    return 0;
}

static void test_order_upstream_first(void **state)
{
    /* a <- b <- d, a <- c <- d, e alone */
    static const char *const names[] = {"d", "c", "b", "a", "e"};
    tarn_project *p = mk(names, 5);
    edge(p, 0, 1, 1); /* d reads c */
    edge(p, 0, 2, 2); /* d reads b */
    edge(p, 1, 3, 1); /* c reads a */
    edge(p, 2, 3, 1); /* b reads a */
    diag_list d = {0};
    assert_int_equal(dag_build(p, &d), 0);
    assert_int_equal(d.n, 0);
    assert_true(pos(p, 3) < pos(p, 1));
    assert_true(pos(p, 3) < pos(p, 2));
    assert_true(pos(p, 1) < pos(p, 0));
    assert_true(pos(p, 2) < pos(p, 0));
    /* Among ready models, the first by path: c before e; a is first. */
    assert_int_equal(p->order[0], 3);
    assert_int_equal(p->models[3].ndown, 2);
    free_project(p);
}

static void test_order_is_deterministic(void **state)
{
    static const char *const names[] = {"x", "y", "z"};
    tarn_project *p = mk(names, 3);
    diag_list d = {0};
    assert_int_equal(dag_build(p, &d), 0);
    assert_int_equal(p->order[0], 0);
    assert_int_equal(p->order[1], 1);
    assert_int_equal(p->order[2], 2);
    free_project(p);
}

static void test_cycle_named(void **state)
{
    static const char *const names[] = {"a", "b", "c", "ok"};
    tarn_project *p = mk(names, 4);
    edge(p, 0, 1, 3); /* a reads b (line 3) */
    edge(p, 1, 2, 4); /* b reads c (line 4) */
    edge(p, 2, 0, 7); /* c reads a (line 7) */
    diag_list d = {0};
    assert_int_equal(dag_build(p, &d), 1);
    assert_int_equal(d.n, 1);
    assert_string_equal(d.items[0].msg, "cycle: s.a -> s.b -> s.c -> s.a (each model reads the next)");
    assert_string_equal(d.items[0].file, "models/s/c.sql");
    assert_int_equal(d.items[0].line, 7);
    assert_non_null(d.items[0].fix);
    diag_free(&d);
    free_project(p);
}

static void test_cycle_of_two(void **state)
{
    static const char *const names[] = {"a", "b"};
    tarn_project *p = mk(names, 2);
    edge(p, 0, 1, 2);
    edge(p, 1, 0, 5);
    diag_list d = {0};
    assert_int_equal(dag_build(p, &d), 1);
    assert_non_null(strstr(d.items[0].msg, "s.a -> s.b -> s.a"));
    assert_string_equal(d.items[0].file, "models/s/b.sql");
    assert_int_equal(d.items[0].line, 5);
    diag_free(&d);
    free_project(p);
}

/* chain: a <- b <- c, and d reads a; e has tag nightly and lives in models/t. */
static tarn_project *chain(void)
{
    static const char *const names[] = {"a", "b", "c", "d", "e"};
    tarn_project *p = mk(names, 5);
    edge(p, 1, 0, 1);
    edge(p, 2, 1, 1);
    edge(p, 3, 0, 1);
    strlist_push(&p->models[4].annot.tags, "nightly");
    free(p->models[4].path);
    p->models[4].path = xstrdup("models/t/e.sql");
    diag_list d = {0};
    assert_int_equal(dag_build(p, &d), 0);
    return p;
}

static void assert_selected(const char *const *args, size_t nargs, const char *expect)
{
    tarn_project *p = chain();
    unsigned char *sel = NULL;
    int rc = select_models(&sel, p, (char *const *)args, nargs);
    if (rc)
        fail_msg("select failed: %s", tarn_error_last());
    char got[16] = {0};
    for (size_t i = 0; i < p->nmodels; i++)
        got[i] = sel[i] ? '1' : '0';
    assert_string_equal(got, expect);
    free(sel);
    free_project(p);
}

static void test_selectors(void **state)
{
    const char *none[] = {NULL};
    assert_selected(none, 0, "11111");
    const char *b[] = {"s.b"};
    assert_selected(b, 1, "01000");
    const char *b_table[] = {"b"};
    assert_selected(b_table, 1, "01000");
    const char *b_path[] = {"models/s/b.sql"};
    assert_selected(b_path, 1, "01000");
    const char *up[] = {"+c"};
    assert_selected(up, 1, "11100");
    const char *down[] = {"a+"};
    assert_selected(down, 1, "11110");
    const char *both[] = {"+b+"};
    assert_selected(both, 1, "11100");
    const char *tag[] = {"tag:nightly"};
    assert_selected(tag, 1, "00001");
    const char *path[] = {"path:t"};
    assert_selected(path, 1, "00001");
    const char *path2[] = {"path:models/s/"};
    assert_selected(path2, 1, "11110");
    const char *uni[] = {"d", "tag:nightly"};
    assert_selected(uni, 2, "00011");
}

static void test_selector_errors(void **state)
{
    tarn_project *p = chain();
    unsigned char *sel = NULL;
    char *nope[] = {"nope"};
    assert_int_equal(select_models(&sel, p, nope, 1), TARN_EINVALID);
    assert_non_null(strstr(tarn_error_last(), "selector 'nope' matches no model"));
    char *tag[] = {"tag:none"};
    assert_int_equal(select_models(&sel, p, tag, 1), TARN_EINVALID);
    char *path[] = {"path:zz"};
    assert_int_equal(select_models(&sel, p, path, 1), TARN_EINVALID);
    char *plus[] = {"+"};
    assert_int_equal(select_models(&sel, p, plus, 1), TARN_EINVALID);
    /* Two models with the same table name in different schemas. */
    free(p->models[3].schema);
    p->models[3].schema = xstrdup("other");
    free(p->models[3].table);
    p->models[3].table = xstrdup("a");
    free(p->models[3].name);
    p->models[3].name = xstrdup("other.a");
    char *amb[] = {"a"};
    assert_int_equal(select_models(&sel, p, amb, 1), TARN_EINVALID);
    assert_non_null(strstr(tarn_error_last(), "ambiguous"));
    char *q[] = {"other.a"};
    assert_int_equal(select_models(&sel, p, q, 1), 0);
    assert_true(sel[3]);
    free(sel);
    free_project(p);
}

static void test_closure(void **state)
{
    tarn_project *p = chain();
    unsigned char mark[5] = {0};
    dag_closure(p, 0, +1, mark);
    assert_memory_equal(mark, ((unsigned char[]){0, 1, 1, 1, 0}), 5);
    memset(mark, 0, 5);
    dag_closure(p, 2, -1, mark);
    assert_memory_equal(mark, ((unsigned char[]){1, 1, 0, 0, 0}), 5);
    free_project(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_order_upstream_first),
        cmocka_unit_test(test_order_is_deterministic),
        cmocka_unit_test(test_cycle_named),
        cmocka_unit_test(test_cycle_of_two),
        cmocka_unit_test(test_selectors),
        cmocka_unit_test(test_selector_errors),
        cmocka_unit_test(test_closure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

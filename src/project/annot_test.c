/*
 * annot_test.c — the `-- data_test` lines (see annot.h): unique,
 * not_null, accepted_values, relationships, a custom tests/<file>.sql, and
 * severity=warn|error anywhere on the line. Part of the annotation grammar
 * (annot_int.h); materialize/datatest.c runs the tests.
 */
#include "project/annot_int.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const test_kinds[] = {"unique", "not_null", "accepted_values", "relationships"};
#define NTEST_KINDS (sizeof(test_kinds) / sizeof(test_kinds[0]))

static void test_push(model_annot *a, data_test *t)
{
    a->tests = xrealloc(a->tests, (a->ntests + 1) * sizeof(*a->tests));
    a->tests[a->ntests++] = *t;
}

/* Takes a `severity=warn|error` word out of a data_test line (anywhere
 * on it: accepted_values' values would otherwise take it in). Returns the
 * line without it (caller frees); *warn is set, or an error reported. */
static char *take_severity(annot_parser *p, const char *rest, int *warn)
{
    static const char kw[] = "severity";
    const char *at = rest;
    *warn = 0;
    while ((at = strstr(at, kw)) != NULL) {
        int starts = at == rest || isspace((unsigned char)at[-1]);
        const char *v = at + strlen(kw);
        if (starts && (*v == '=' || isspace((unsigned char)*v) || !*v))
            break;
        at = v;
    }
    if (!at)
        return xstrdup(rest);
    const char *v = at + strlen(kw), *end = v;
    while (*end && !isspace((unsigned char)*end))
        end++;
    const char *fix = "write severity=warn (a failure is reported, the build goes on) or "
                      "severity=error (the default: a failure fails the build), no spaces";
    if (*v != '=')
        ERR(p, fix, "'severity' needs a value");
    else if ((size_t)(end - v - 1) == 4 && strncmp(v + 1, "warn", 4) == 0)
        *warn = 1;
    else if (!((size_t)(end - v - 1) == 5 && strncmp(v + 1, "error", 5) == 0))
        ERR(p, fix, "unknown severity '%.*s'", (int)(end - v - 1), v + 1);
    tarn_buf b = {0};
    buf_append(&b, rest, (size_t)(at - rest));
    buf_puts(&b, end);
    return buf_detach(&b);
}

/* unique <col>[,<col>] | not_null <col>: 1 when t is complete. */
static int test_columns(annot_parser *p, data_test *t, const strlist *w)
{
    const char *kind = w->items[0];
    t->kind = kind[0] == 'u' ? DT_UNIQUE : DT_NOT_NULL;
    if (w->n != 2) {
        char *fix = xasprintf("write '-- data_test %s <column>'", kind);
        ERR(p, fix, "'data_test %s' takes one column%s", kind,
            t->kind == DT_UNIQUE ? " (or a,b for a composite key, no spaces)" : "");
        free(fix);
        return 0;
    }
    if (t->kind == DT_NOT_NULL && !annot_is_ident(w->items[1])) {
        ERR(p, "columns in annotations are plain names", "'%s' is not a column name", w->items[1]);
        return 0;
    }
    char *what = xasprintf("data_test %s ", kind);
    int ok = annot_parse_columns(p, &t->columns, what, w->items[1]) == 0;
    free(what);
    return ok;
}

/* The values after '=' of accepted_values, each trimmed and unquoted. */
static int accepted_list(annot_parser *p, data_test *t, const char *s, const char *fix)
{
    for (;;) {
        const char *c = strchr(s, ',');
        size_t n = c ? (size_t)(c - s) : strlen(s);
        char *v = annot_trim_dup(s, n);
        size_t l = strlen(v);
        if (l >= 2 && v[0] == '\'' && v[l - 1] == '\'') {
            memmove(v, v + 1, l - 2);
            v[l - 2] = 0;
        }
        if (!*v && l == 0) {
            ERR(p, fix, "accepted_values has an empty value");
            free(v);
            return 0;
        }
        strlist_push_owned(&t->values, v);
        if (!c)
            return 1;
        s = c + 1;
    }
}

/* accepted_values <col> = a,b,c */
static int test_accepted(annot_parser *p, data_test *t, const char *rest)
{
    t->kind = DT_ACCEPTED_VALUES;
    const char *body = strstr(rest, "accepted_values") + strlen("accepted_values");
    const char *eq = strchr(body, '=');
    char *col = eq ? annot_trim_dup(body, (size_t)(eq - body)) : NULL;
    const char *fix = "write '-- data_test accepted_values <column> = a,b,c'";
    int ok = 0;
    if (!eq || !annot_is_ident(col)) {
        ERR(p, fix, "'data_test accepted_values' needs <column> = <values>");
    } else {
        strlist_push(&t->columns, col);
        ok = accepted_list(p, t, eq + 1, fix);
    }
    free(col);
    return ok;
}

/* relationships <col> -> schema.table.column */
static int test_relationships(annot_parser *p, data_test *t, const char *rest)
{
    t->kind = DT_RELATIONSHIPS;
    const char *body = strstr(rest, "relationships") + strlen("relationships");
    const char *arrow = strstr(body, "->");
    const char *fix = "write '-- data_test relationships <column> -> schema.table.column'";
    char *col = arrow ? annot_trim_dup(body, (size_t)(arrow - body)) : NULL;
    char *ref = arrow ? annot_trim_dup(arrow + 2, strlen(arrow + 2)) : NULL;
    char *d1 = ref ? strchr(ref, '.') : NULL;
    char *d2 = d1 ? strchr(d1 + 1, '.') : NULL;
    int ok = 0;
    if (!arrow || !annot_is_ident(col) || !d1 || !d2 || strchr(d2 + 1, '.')) {
        ERR(p, fix, "'data_test relationships' needs <column> -> schema.table.column");
    } else {
        *d1 = *d2 = 0;
        if (!annot_is_ident(ref) || !annot_is_ident(d1 + 1) || !annot_is_ident(d2 + 1)) {
            ERR(p, fix, "'%s.%s.%s' is not schema.table.column", ref, d1 + 1, d2 + 1);
        } else {
            strlist_push(&t->columns, col);
            t->ref_schema = xstrdup(ref);
            t->ref_table = xstrdup(d1 + 1);
            t->ref_column = xstrdup(d2 + 1);
            ok = 1;
        }
    }
    free(col);
    free(ref);
    return ok;
}

/* tests/<file>.sql, alone on the line, inside the project. */
static int test_custom(annot_parser *p, data_test *t, const strlist *w)
{
    const char *kind = w->items[0];
    t->kind = DT_CUSTOM;
    if (w->n != 1) {
        ERR(p, "write '-- data_test tests/<file>.sql' alone on the line",
            "a custom data test is one file path");
        return 0;
    }
    if (kind[0] == '/' || strstr(kind, "..")) {
        ERR(p, "give the path relative to the project folder, e.g. tests/no_negatives.sql",
            "'%s' must be a path inside the project", kind);
        return 0;
    }
    t->path = xstrdup(kind);
    return 1;
}

/* The test the line's words name into t: 1 when it is complete. */
static int parse_test(annot_parser *p, data_test *t, const strlist *w, const char *rest)
{
    const char *kind = w->n ? w->items[0] : "";
    const char *usage = "write one of: data_test unique <col>, data_test not_null <col>, "
                        "data_test accepted_values <col> = a,b, data_test relationships <col> -> "
                        "schema.table.col, data_test tests/<file>.sql";
    if (!*kind) {
        ERR(p, usage, "'-- data_test' needs a test");
        return 0;
    }
    if (strcmp(kind, "unique") == 0 || strcmp(kind, "not_null") == 0)
        return test_columns(p, t, w);
    if (strcmp(kind, "accepted_values") == 0)
        return test_accepted(p, t, rest);
    if (strcmp(kind, "relationships") == 0)
        return test_relationships(p, t, rest);
    if (strlen(kind) > 4 && strcmp(kind + strlen(kind) - 4, ".sql") == 0)
        return test_custom(p, t, w);
    const char *near = annot_closest(kind, test_kinds, NTEST_KINDS);
    char *fix = near ? xasprintf("did you mean '%s'?", near) : xstrdup(usage);
    ERR(p, fix, "unknown data test '%s'", kind);
    free(fix);
    return 0;
}

void annot_parse_data_test(annot_parser *p, const char *line)
{
    data_test t = {.line = p->line};
    int errors_before = p->errors;
    char *rest = take_severity(p, line, &t.warn);
    strlist w = {0};
    annot_split_words(&w, rest);
    int ok = p->errors == errors_before && parse_test(p, &t, &w, rest);
    strlist_free(&w);
    free(rest);
    if (ok) {
        test_push(p->a, &t);
    } else {
        strlist_free(&t.columns);
        strlist_free(&t.values);
        free(t.ref_schema);
        free(t.ref_table);
        free(t.ref_column);
        free(t.path);
    }
}

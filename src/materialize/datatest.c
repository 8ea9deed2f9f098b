/*
 * datatest.c — data tests inside the build transaction (see datatest.h).
 */
#include "materialize/datatest.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/quote.h"
#include "util/textmap.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* AND-able condition restricting a partitioned table to the slices built. */
static void scope(tarn_buf *b, const tarn_model *m, const model_result *r, const char *alias)
{
    if (!m->annot.grain)
        return;
    buf_puts(b, " AND ");
    if (alias)
        buf_printf(b, "%s.", alias);
    quote_ident(b, "_tarn_partition");
    buf_puts(b, " IN (");
    quote_literal_list(b, r->partitions.items, r->partitions.n);
    if (!r->partitions.n)
        buf_puts(b, "NULL");
    buf_puts(b, ")");
}

static char *test_name(const data_test *t)
{
    char *cols = strlist_join(&t->columns, ",");
    char *s;
    switch (t->kind) {
    case DT_UNIQUE:
        s = xasprintf("unique %s", cols);
        break;
    case DT_NOT_NULL:
        s = xasprintf("not_null %s", cols);
        break;
    case DT_ACCEPTED_VALUES: {
        char *v = strlist_join(&t->values, ",");
        s = xasprintf("accepted_values %s = %s", cols, v);
        free(v);
        break;
    }
    case DT_RELATIONSHIPS:
        s = xasprintf("relationships %s -> %s.%s.%s", cols, t->ref_schema, t->ref_table,
                      t->ref_column);
        break;
    default:
        s = xstrdup(t->path);
    }
    free(cols);
    return s;
}

/* The referenced table of a relationships test, qualified and pinned the
 * way the build's reads are (its own table: as the build left it). */
static void ref_table(tarn_buf *b, run_ctx *c, size_t mi, const data_test *t)
{
    quote_qualified(b, c->lake, t->ref_schema, t->ref_table);
    long up = project_find_model(c->p, t->ref_schema, t->ref_table);
    if (up == (long)mi)
        return;
    int64_t snap =
        up >= 0 && c->built_snapshot[up] >= 0 ? c->built_snapshot[up] : c->sum->start_snapshot;
    buf_printf(b, " AT (VERSION => %lld)", (long long)snap);
}

/* A custom test's SQL with its references qualified (its own model's
 * table unpinned: the test checks what the build wrote). */
static int custom_sql(char **out, model_stmt *keep, run_ctx *c, size_t mi, const data_test *t,
                      model_result *r)
{
    char *text = NULL;
    if (fs_read_file(&text, t->path) != 0)
        return tarn_error_code();
    model_body body;
    diag_list d = {0};
    int errs = body_parse(&body, &d, t->path, text, 0);
    free(text);
    if (errs || body.n != 1) {
        char *msg = diag_text(&d);
        int rc = tarn_error_set(TARN_EINVALID, "%s: a data test is one query of violating rows%s%s",
                                t->path, errs ? ": " : "", errs ? msg : "");
        free(msg);
        diag_free(&d);
        body_free(&body);
        return rc;
    }
    diag_free(&d);
    model_stmt *st = &body.items[0];
    char *q = body_query_for_parse(st);
    size_t off;
    int rc = refs_extract(&st->refs, &off, c->s, q);
    free(q);
    if (rc) {
        body_free(&body);
        return tarn_error_prefix(rc, "%s", t->path);
    }
    const char *part = r->partitions.n ? r->partitions.items[0] : NULL;
    *out = pin_statement_ex(c, mi, st, part, r, 0);
    keep->text = xstrdup(st->text); /* where an error of the test points */
    keep->line = st->line;
    body_free(&body);
    return 0;
}

/* A custom test's error, located in its file when DuckDB's position maps
 * into the test's text: "tests/f.sql:3: Binder Error: …" and its line. */
static void custom_error_at(const data_test *t, const model_stmt *st)
{
    const char *ran = NULL;
    long pos = tarn_error_position(&ran);
    long at = pos >= 0 && st->text ? textmap_locate(st->text, ran, pos) : -1;
    if (at < 0)
        return;
    tarn_buf msg = {0};
    buf_printf(&msg, "%s:%d: %s", t->path, body_line_of(st, (size_t)at), tarn_error_last());
    textmap_excerpt(&msg, st->text, (size_t)at, st->line);
    tarn_error_set(tarn_error_code(), "%s", buf_cstr(&msg));
    buf_free(&msg);
}

static char *check_sql(run_ctx *c, size_t mi, const data_test *t, const char *target,
                       const model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    tarn_buf b = {0};
    const char *col = t->columns.n ? t->columns.items[0] : NULL;
    switch (t->kind) {
    case DT_UNIQUE:
        buf_puts(&b, "SELECT count(*), array_to_string(list(k)[1:5], '; ') FROM (SELECT "
                     "concat_ws(', '");
        for (size_t i = 0; i < t->columns.n; i++) {
            buf_puts(&b, ", ");
            quote_literal(&b, t->columns.items[i]);
            buf_puts(&b, " || '=' || CAST(");
            quote_ident(&b, t->columns.items[i]);
            buf_puts(&b, " AS VARCHAR)");
        }
        buf_printf(&b, ") AS k FROM %s WHERE true", target);
        for (size_t i = 0; i < t->columns.n; i++) {
            buf_puts(&b, " AND ");
            quote_ident(&b, t->columns.items[i]);
            buf_puts(&b, " IS NOT NULL");
        }
        scope(&b, m, r, NULL);
        buf_puts(&b, " GROUP BY ");
        quote_ident_list(&b, t->columns.items, t->columns.n);
        buf_puts(&b, " HAVING count(*) > 1)");
        break;
    case DT_NOT_NULL:
        buf_printf(&b, "SELECT count(*), NULL FROM %s WHERE ", target);
        quote_ident(&b, col);
        buf_puts(&b, " IS NULL");
        scope(&b, m, r, NULL);
        break;
    case DT_ACCEPTED_VALUES:
        buf_puts(&b, "SELECT count(*), array_to_string(list(DISTINCT CAST(");
        quote_ident(&b, col);
        buf_printf(&b, " AS VARCHAR))[1:5], '; ') FROM %s WHERE ", target);
        quote_ident(&b, col);
        buf_puts(&b, " IS NOT NULL AND CAST(");
        quote_ident(&b, col);
        buf_puts(&b, " AS VARCHAR) NOT IN (");
        quote_literal_list(&b, t->values.items, t->values.n);
        buf_puts(&b, ")");
        scope(&b, m, r, NULL);
        break;
    case DT_RELATIONSHIPS:
        buf_puts(&b, "SELECT count(*), array_to_string(list(DISTINCT CAST(x.");
        quote_ident(&b, col);
        buf_printf(&b, " AS VARCHAR))[1:5], '; ') FROM %s AS x WHERE x.", target);
        quote_ident(&b, col);
        buf_puts(&b, " IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ");
        ref_table(&b, c, mi, t);
        buf_puts(&b, " AS y WHERE y.");
        quote_ident(&b, t->ref_column);
        buf_puts(&b, " = x.");
        quote_ident(&b, col);
        buf_puts(&b, ")");
        scope(&b, m, r, "x");
        break;
    default:
        break;
    }
    return buf_detach(&b);
}

int datatest_run(run_ctx *c, size_t mi, const char *target, model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    json_t *results = json_array();
    tarn_buf failures = {0};
    int rc = 0;
    for (size_t i = 0; i < m->annot.ntests && !rc; i++) {
        const data_test *t = &m->annot.tests[i];
        char *sql = NULL;
        model_stmt custom = {0};
        if (t->kind == DT_CUSTOM) {
            char *q = NULL;
            rc = custom_sql(&q, &custom, c, mi, t, r);
            if (!rc)
                sql = xasprintf("SELECT count(*), NULL FROM (\n%s\n)", q);
            free(q);
        } else {
            sql = check_sql(c, mi, t, target, r);
        }
        qrows q = {0};
        if (!rc)
            rc = query_rows(&q, c->s, sql);
        free(sql);
        if (rc && custom.text)
            custom_error_at(t, &custom);
        free(custom.text);
        char *name = test_name(t);
        if (rc) {
            rc = tarn_error_prefix(rc, "%s:%d: data test %s could not run", m->path, t->line, name);
            free(name);
            break;
        }
        const char *cnt = q.nrows ? qrows_get(&q, 0, 0) : "0";
        const char *ex = q.nrows ? qrows_get(&q, 0, 1) : NULL;
        int64_t n = cnt ? strtoll(cnt, NULL, 10) : 0;
        json_t *o = json_object();
        json_object_set_new(o, "test", json_string(name));
        json_object_set_new(o, "line", json_integer(t->line));
        json_object_set_new(o, "violations", json_integer(n));
        json_object_set_new(o, "examples", ex ? json_string(ex) : json_null());
        json_array_append_new(results, o);
        if (n > 0)
            buf_printf(&failures, "%s%s:%d: data test %s failed: %lld violation%s%s%s%s",
                       failures.len ? "\n" : "", m->path, t->line, name, (long long)n,
                       n == 1 ? "" : "s", ex ? " (e.g. " : "", ex ? ex : "", ex ? ")" : "");
        free(name);
        qrows_free(&q);
    }
    free(r->tests_json);
    r->tests_json = json_dumps(results, JSON_COMPACT);
    json_decref(results);
    if (!rc && failures.len)
        rc = tarn_error_set(TARN_EINVALID, "%s", buf_cstr(&failures));
    buf_free(&failures);
    return rc;
}

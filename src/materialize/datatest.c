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

/* The cap on a failing test's sample: rows, and bytes of their JSON (a row
 * that would go past it is dropped with the rest, never cut). */
#define SAMPLE_ROWS 20
#define SAMPLE_BYTES (50 * 1024)

/* AND-able condition restricting the rows a built-in test looks at: on a
 * partitioned model in a build, the slices built (`tarn test` checks the
 * whole table); on a history model, its current rows (a key's earlier
 * versions are the record, not duplicates). */
static void scope(tarn_buf *b, run_ctx *c, const tarn_model *m, const model_result *r,
                  const char *alias)
{
    if (m->annot.strategy == STRAT_HISTORY) {
        buf_puts(b, " AND ");
        if (alias)
            buf_printf(b, "%s.", alias);
        quote_ident(b, "is_current");
    }
    if (!m->annot.grain || c->o->test_only)
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
    if (up == (long)mi && !c->o->test_only)
        return;
    int64_t snap =
        up >= 0 && c->built_snapshot[up] >= 0 ? c->built_snapshot[up] : c->sum->start_snapshot;
    buf_printf(b, " AT (VERSION => %lld)", (long long)snap);
}

/* A custom test's SQL with its references qualified (its own model's
 * table unpinned in a build: the test checks what the build wrote; pinned
 * at the run's start for `tarn test`). */
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
    *out = pin_statement_ex(c, mi, st, part, r, c->o->test_only);
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

/* One check: the query counting its violations (count, examples) and the
 * query of the violating rows themselves (for the sample). */
typedef struct {
    char *name;
    int line;
    int warn;
    int builtin; /* tarn's own check of a history table, no data_test line */
    char *count_sql;
    char *rows_sql;
} check;

static void check_free(check *k)
{
    free(k->name);
    free(k->count_sql);
    free(k->rows_sql);
}

/* The built-in kinds: the condition on the tested table's rows (alias x
 * for relationships), the count of violations with up to five examples,
 * and the violating rows. */
static void builtin_sql(check *k, run_ctx *c, size_t mi, const data_test *t, const char *target,
                        const model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    const char *col = t->columns.n ? t->columns.items[0] : NULL;
    tarn_buf cond = {0}, b = {0};
    const char *alias = t->kind == DT_RELATIONSHIPS ? "x" : NULL;
    switch (t->kind) {
    case DT_UNIQUE:
        buf_puts(&cond, "true");
        for (size_t i = 0; i < t->columns.n; i++) {
            buf_puts(&cond, " AND ");
            quote_ident(&cond, t->columns.items[i]);
            buf_puts(&cond, " IS NOT NULL");
        }
        break;
    case DT_NOT_NULL:
        quote_ident(&cond, col);
        buf_puts(&cond, " IS NULL");
        break;
    case DT_ACCEPTED_VALUES:
        quote_ident(&cond, col);
        buf_puts(&cond, " IS NOT NULL AND CAST(");
        quote_ident(&cond, col);
        buf_puts(&cond, " AS VARCHAR) NOT IN (");
        quote_literal_list(&cond, t->values.items, t->values.n);
        buf_puts(&cond, ")");
        break;
    default: /* DT_RELATIONSHIPS */
        buf_puts(&cond, "x.");
        quote_ident(&cond, col);
        buf_puts(&cond, " IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ");
        ref_table(&cond, c, mi, t);
        buf_puts(&cond, " AS y WHERE y.");
        quote_ident(&cond, t->ref_column);
        buf_puts(&cond, " = x.");
        quote_ident(&cond, col);
        buf_puts(&cond, ")");
        break;
    }
    scope(&cond, c, m, r, alias);
    if (t->kind == DT_UNIQUE) {
        /* violations: the keys that appear twice; rows: every row of them */
        buf_puts(&b, "SELECT count(*), array_to_string(list(k)[1:5], '; ') FROM (SELECT "
                     "concat_ws(', '");
        for (size_t i = 0; i < t->columns.n; i++) {
            buf_puts(&b, ", ");
            quote_literal(&b, t->columns.items[i]);
            buf_puts(&b, " || '=' || CAST(");
            quote_ident(&b, t->columns.items[i]);
            buf_puts(&b, " AS VARCHAR)");
        }
        buf_printf(&b, ") AS k FROM %s WHERE %s GROUP BY ", target, buf_cstr(&cond));
        quote_ident_list(&b, t->columns.items, t->columns.n);
        buf_puts(&b, " HAVING count(*) > 1)");
        k->count_sql = buf_detach(&b);
        buf_printf(&b, "SELECT * FROM %s WHERE %s QUALIFY count(*) OVER (PARTITION BY ", target,
                   buf_cstr(&cond));
        quote_ident_list(&b, t->columns.items, t->columns.n);
        buf_puts(&b, ") > 1 ORDER BY ");
        quote_ident_list(&b, t->columns.items, t->columns.n);
        k->rows_sql = buf_detach(&b);
    } else if (t->kind == DT_NOT_NULL) {
        k->count_sql = xasprintf("SELECT count(*), NULL FROM %s WHERE %s", target, buf_cstr(&cond));
        k->rows_sql = xasprintf("SELECT * FROM %s WHERE %s", target, buf_cstr(&cond));
    } else {
        buf_puts(&b, "SELECT count(*), array_to_string(list(DISTINCT CAST(");
        if (alias)
            buf_printf(&b, "%s.", alias);
        quote_ident(&b, col);
        buf_printf(&b, " AS VARCHAR))[1:5], '; ') FROM %s%s WHERE %s", target, alias ? " AS x" : "",
                   buf_cstr(&cond));
        k->count_sql = buf_detach(&b);
        k->rows_sql = xasprintf("SELECT %s* FROM %s%s WHERE %s", alias ? "x." : "", target,
                                alias ? " AS x" : "", buf_cstr(&cond));
    }
    buf_free(&cond);
}

/* tarn's own checks of a history table (SCD type 2): one current row per
 * key, and each version's validity an interval that is open exactly on
 * the current row. They hold unless the table was written outside tarn. */
static size_t history_checks(check *out, run_ctx *c, size_t mi, const char *target,
                             const model_result *r)
{
    const model_annot *a = &c->p->models[mi].annot;
    char *kl = strlist_join(&a->key, ",");
    /* a unique test of the key, which on a history model sees its current rows */
    data_test key = {.kind = DT_UNIQUE, .columns = a->key};
    out[0] = (check){.name = xasprintf("history: one current row per key (%s)", kl),
                     .line = a->materialize_line,
                     .builtin = 1};
    builtin_sql(&out[0], c, mi, &key, target, r);
    free(kl);
    tarn_buf keys = {0}, ex = {0};
    quote_ident_list(&keys, a->key.items, a->key.n);
    buf_puts(&ex, "concat_ws(', '");
    for (size_t i = 0; i < a->key.n; i++) {
        buf_puts(&ex, ", ");
        quote_literal(&ex, a->key.items[i]);
        buf_puts(&ex, " || '=' || CAST(");
        quote_ident(&ex, a->key.items[i]);
        buf_puts(&ex, " AS VARCHAR)");
    }
    buf_puts(&ex, ", 'valid_from=' || coalesce(CAST(\"valid_from\" AS VARCHAR), 'NULL'), "
                  "'valid_to=' || coalesce(CAST(\"valid_to\" AS VARCHAR), 'NULL'))");
    static const char bad[] = "NOT coalesce(\"valid_to\" IS NULL AND \"is_current\" OR "
                              "\"valid_from\" < \"valid_to\" AND NOT \"is_current\", false)";
    out[1] = (check){.name = xstrdup("history: valid_from < valid_to, valid_to NULL only on "
                                     "the current row"),
                     .line = a->materialize_line,
                     .builtin = 1};
    out[1].count_sql = xasprintf("SELECT count(*), array_to_string(list(%s)[1:5], '; ') FROM %s "
                                 "WHERE %s",
                                 buf_cstr(&ex), target, bad);
    out[1].rows_sql =
        xasprintf("SELECT * FROM %s WHERE %s ORDER BY %s", target, bad, buf_cstr(&keys));
    buf_free(&keys);
    buf_free(&ex);
    return 2;
}

/* Up to SAMPLE_ROWS violating rows as JSON objects, at most SAMPLE_BYTES
 * of them; *dropped: rows fetched and left out for the size. A sample
 * that cannot be taken (a custom query whose columns JSON cannot hold)
 * is NULL with its error in *why: the test's result stands. */
static json_t *take_sample(run_ctx *c, const char *rows_sql, int *dropped, char **why)
{
    char *sql = xasprintf("SELECT CAST(to_json(_tarn_row) AS VARCHAR) FROM (SELECT * FROM (\n%s\n) "
                          "LIMIT %d) AS _tarn_row",
                          rows_sql, SAMPLE_ROWS);
    qrows q = {0};
    int rc = query_rows(&q, c->s, sql);
    free(sql);
    *dropped = 0;
    if (rc) {
        *why = xstrdup(tarn_error_last());
        tarn_error_clear();
        return NULL;
    }
    json_t *a = json_array();
    size_t bytes = 2;
    for (size_t i = 0; i < q.nrows; i++) {
        const char *row = qrows_get(&q, i, 0);
        json_t *o = row ? json_loads(row, 0, NULL) : NULL;
        size_t n = row ? strlen(row) + 1 : 0;
        if (!o || bytes + n > SAMPLE_BYTES) {
            json_decref(o);
            *dropped = (int)(q.nrows - i);
            break;
        }
        bytes += n;
        json_array_append_new(a, o);
    }
    qrows_free(&q);
    return a;
}

/* Runs check k: its result as a JSON object, and its failure (error
 * severity) or warning added to `fails` / `warns`. */
static int check_run(json_t **out, run_ctx *c, const tarn_model *m, const check *k, tarn_buf *fails,
                     tarn_buf *warns)
{
    qrows q = {0};
    int rc = query_rows(&q, c->s, k->count_sql);
    if (rc)
        return rc;
    const char *cnt = q.nrows ? qrows_get(&q, 0, 0) : "0";
    const char *ex = q.nrows ? qrows_get(&q, 0, 1) : NULL;
    int64_t n = cnt ? strtoll(cnt, NULL, 10) : 0;
    json_t *o = json_object();
    json_object_set_new(o, "test", json_string(k->name));
    json_object_set_new(o, "line", json_integer(k->line));
    json_object_set_new(o, "severity", json_string(k->warn ? "warn" : "error"));
    json_object_set_new(o, "status", json_string(n == 0 ? "pass" : k->warn ? "warn" : "fail"));
    if (k->builtin)
        json_object_set_new(o, "builtin", json_true());
    json_object_set_new(o, "violations", json_integer(n));
    json_object_set_new(o, "examples", ex ? json_string(ex) : json_null());
    if (n > 0) {
        int dropped = 0;
        char *why = NULL;
        json_t *sample = take_sample(c, k->rows_sql, &dropped, &why);
        json_object_set_new(o, "sample", sample ? sample : json_null());
        json_object_set_new(o, "sample_rows",
                            json_integer(sample ? (json_int_t)json_array_size(sample) : 0));
        json_object_set_new(o, "sample_dropped", json_integer(dropped));
        if (why)
            json_object_set_new(o, "sample_error", json_string(why));
        free(why);
        tarn_buf *to = k->warn ? warns : fails;
        buf_printf(to, "%s%s:%d: data test %s %s: %lld violation%s%s%s%s", to->len ? "\n" : "",
                   m->path, k->line, k->name, k->warn ? "(severity=warn) failed" : "failed",
                   (long long)n, n == 1 ? "" : "s", ex ? " (e.g. " : "", ex ? ex : "",
                   ex ? ")" : "");
    }
    qrows_free(&q);
    *out = o;
    return 0;
}

/* The check of data test t: for a custom test its file's query (an error
 * reading or parsing it is returned, located in the file). */
static int check_make(check *k, run_ctx *c, size_t mi, const data_test *t, const char *target,
                      model_result *r)
{
    *k = (check){.name = test_name(t), .line = t->line, .warn = t->warn};
    if (t->kind != DT_CUSTOM) {
        builtin_sql(k, c, mi, t, target, r);
        return 0;
    }
    char *q = NULL;
    model_stmt custom = {0};
    int rc = custom_sql(&q, &custom, c, mi, t, r);
    if (!rc) {
        k->count_sql = xasprintf("SELECT count(*), NULL FROM (\n%s\n)", q);
        /* an error of the test's query is located in its file */
        qrows probe = {0};
        char *zero = xasprintf("SELECT * FROM (\n%s\n) LIMIT 0", q);
        rc = query_rows(&probe, c->s, zero);
        free(zero);
        qrows_free(&probe);
        if (rc)
            custom_error_at(t, &custom);
        k->rows_sql = q;
        q = NULL;
    }
    free(q);
    free(custom.text);
    return rc;
}

void datatest_sql(tarn_buf *out, run_ctx *c, size_t mi, const char *target, model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    for (size_t i = 0; i < m->annot.ntests; i++) {
        const data_test *t = &m->annot.tests[i];
        check k = {.name = test_name(t), .line = t->line, .warn = t->warn};
        if (t->kind != DT_CUSTOM) {
            builtin_sql(&k, c, mi, t, target, r);
        } else {
            model_stmt custom = {0};
            if (custom_sql(&k.rows_sql, &custom, c, mi, t, r) == 0)
                k.count_sql = xasprintf("SELECT count(*), NULL FROM (\n%s\n)", k.rows_sql);
            else
                tarn_error_clear(); /* the build reports it, with the file's line */
            free(custom.text);
        }
        buf_printf(out, "-- data test %s (%s:%d%s): the count of violations\n%s;\n\n", k.name,
                   m->path, t->line, t->warn ? ", severity warn" : "",
                   k.count_sql ? k.count_sql : "-- (its SQL cannot be read)");
        check_free(&k);
    }
}

int datatest_run(run_ctx *c, size_t mi, const char *target, model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    json_t *results = json_array();
    tarn_buf fails = {0}, warns = {0};
    int rc = 0;
    size_t nchecks = m->annot.ntests + 2, n = 0;
    check *ks = xcalloc(nchecks, sizeof(check));
    for (size_t i = 0; i < m->annot.ntests && !rc; i++) {
        rc = check_make(&ks[n], c, mi, &m->annot.tests[i], target, r);
        n++;
        if (rc)
            rc = tarn_error_prefix(rc, "%s:%d: data test %s could not run", m->path,
                                   m->annot.tests[i].line, ks[n - 1].name);
    }
    if (!rc && m->annot.strategy == STRAT_HISTORY && m->annot.key.n)
        n += history_checks(&ks[n], c, mi, target, r);
    for (size_t i = 0; i < n && !rc; i++) {
        json_t *o = NULL;
        rc = check_run(&o, c, m, &ks[i], &fails, &warns);
        if (rc)
            rc = tarn_error_prefix(rc, "%s:%d: data test %s could not run", m->path, ks[i].line,
                                   ks[i].name);
        else
            json_array_append_new(results, o);
    }
    for (size_t i = 0; i < n; i++)
        check_free(&ks[i]);
    free(ks);
    free(r->tests_json);
    r->tests_json = json_dumps(results, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(results);
    if (warns.len) {
        /* reported with the build, which goes on */
        char *w = r->warning ? xasprintf("%s\n%s", r->warning, buf_cstr(&warns))
                             : xstrdup(buf_cstr(&warns));
        free(r->warning);
        r->warning = w;
    }
    if (!rc && fails.len)
        rc = tarn_error_set(TARN_EINVALID, "%s", buf_cstr(&fails));
    buf_free(&fails);
    buf_free(&warns);
    return rc;
}

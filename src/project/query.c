/*
 * query.c — small-result helpers over tarn_session_exec (see query.h).
 */
#include "project/query.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    qrows *r;
    size_t cap;
    int64_t count;
} collect;

static void c_begin(void *ctx, size_t ncols, const char *const *names)
{
    collect *c = ctx;
    c->r->ncols = ncols;
    c->r->names = xcalloc(ncols ? ncols : 1, sizeof(char *));
    for (size_t i = 0; i < ncols; i++)
        c->r->names[i] = xstrdup(names[i]);
}

static void c_row(void *ctx, const char *const *cells)
{
    collect *c = ctx;
    qrows *r = c->r;
    if (r->nrows == c->cap) {
        c->cap = c->cap ? c->cap * 2 : 16;
        r->cells = xrealloc(r->cells, c->cap * (r->ncols ? r->ncols : 1) * sizeof(char *));
    }
    for (size_t i = 0; i < r->ncols; i++)
        r->cells[r->nrows * r->ncols + i] = cells[i] ? xstrdup(cells[i]) : NULL;
    r->nrows++;
}

static void c_count(void *ctx, int64_t n)
{
    ((collect *)ctx)->count = n;
}

char *qrows_dup(const qrows *r, size_t row, size_t col, const char *if_null)
{
    const char *v = qrows_get(r, row, col);
    if (!v)
        v = if_null;
    return v ? xstrdup(v) : NULL;
}

void qrows_free(qrows *r)
{
    strv_free(r->names, r->ncols);
    strv_free(r->cells, r->nrows * r->ncols);
    memset(r, 0, sizeof(*r));
}

int query_rows(qrows *out, tarn_session *s, const char *sql)
{
    memset(out, 0, sizeof(*out));
    collect c = {.r = out, .count = -1};
    tarn_sink sink = {.begin = c_begin, .row = c_row, .count = c_count, .ctx = &c};
    int rc = tarn_session_exec(s, sql, &sink);
    if (rc)
        qrows_free(out);
    return rc;
}

int query_exec(tarn_session *s, const char *sql, int64_t *count)
{
    qrows r = {0};
    collect c = {.r = &r, .count = -1};
    tarn_sink sink = {.begin = c_begin, .row = c_row, .count = c_count, .ctx = &c};
    int rc = tarn_session_exec(s, sql, &sink);
    qrows_free(&r);
    if (!rc && count)
        *count = c.count;
    return rc;
}

int query_string(char **out, tarn_session *s, const char *sql)
{
    qrows r;
    *out = NULL;
    int rc = query_rows(&r, s, sql);
    if (rc)
        return rc;
    if (r.nrows > 0 && r.ncols > 0 && qrows_get(&r, 0, 0))
        *out = xstrdup(qrows_get(&r, 0, 0));
    qrows_free(&r);
    return 0;
}

int query_int64(int64_t *out, tarn_session *s, const char *sql)
{
    char *v = NULL;
    int rc = query_string(&v, s, sql);
    if (rc)
        return rc;
    if (!v)
        return tarn_error_set(TARN_ENOTFOUND, "query returned no value");
    *out = strtoll(v, NULL, 10);
    free(v);
    return 0;
}

int catalog_rows(qrows *out, tarn_session *s, const char *alias, const char *sql)
{
    memset(out, 0, sizeof(*out));
    collect c = {.r = out, .count = -1};
    tarn_sink sink = {.begin = c_begin, .row = c_row, .count = c_count, .ctx = &c};
    int rc = tarn_session_catalog_query(s, alias, sql, &sink);
    if (rc)
        qrows_free(out);
    return rc;
}

int link_rows(qrows *out, tarn_catlink *l, const char *sql)
{
    memset(out, 0, sizeof(*out));
    collect c = {.r = out, .count = -1};
    tarn_sink sink = {.begin = c_begin, .row = c_row, .count = c_count, .ctx = &c};
    int rc = tarn_catlink_exec(l, sql, &sink);
    if (rc)
        qrows_free(out);
    return rc;
}

int link_exec(tarn_catlink *l, const char *sql, int64_t *count)
{
    collect c = {.count = -1};
    tarn_sink sink = {.count = c_count, .ctx = &c};
    int rc = tarn_catlink_exec(l, sql, &sink);
    if (!rc && count)
        *count = c.count;
    return rc;
}

int64_t query_catalog_columns(tarn_session *s, const char *cat, const char *table, const char *name)
{
    tarn_buf sql = {0}, qualified = {0};
    quote_prefixed(&qualified, cat, table);
    buf_puts(&sql, "SELECT count(*) FROM pragma_table_info(");
    quote_literal(&sql, buf_cstr(&qualified));
    buf_putc(&sql, ')');
    if (name) {
        buf_puts(&sql, " WHERE name = ");
        quote_literal(&sql, name);
    }
    int64_t n = 0;
    if (query_int64(&n, s, buf_cstr(&sql)) != 0) {
        tarn_error_clear();
        n = 0;
    }
    buf_free(&qualified);
    buf_free(&sql);
    return n;
}

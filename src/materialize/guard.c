/*
 * guard.c — refusing a change of strategy that would lose or duplicate
 * rows of a table (see guard.h): which changes lose something, the count
 * of what would be lost, and the message.
 */
#include "materialize/codegen.h"
#include "materialize/guard.h"
#include "materialize/model_int.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* count(*) of `sql`'s single value. */
static int count_of(tarn_session *s, const char *sql, int64_t *out)
{
    return query_int64(out, s, sql);
}

static int table_rows(tarn_session *s, const char *target, const char *where, int64_t *out)
{
    char *sql = xasprintf("SELECT count(*) FROM %s%s%s", target, where ? " WHERE " : "",
                          where ? where : "");
    int rc = count_of(s, sql, out);
    free(sql);
    return rc;
}

/* What the build would do to the table's `rows` rows, for the message. */
static int loss_text(build_state *b, spec_change g, const spec_parts *p, const spec_parts *n,
                     int64_t rows, tarn_buf *out)
{
    const char *unit = spec_is(p, "history") ? "versions" : "rows";
    int64_t extra = 0;
    int rc = 0;
    switch (g) {
    case SPEC_REPLACE: {
        char *q = mb_query_text(b, NULL);
        char *sql = xasprintf("SELECT count(*) FROM (\n%s\n)", q);
        free(q);
        rc = count_of(b->c->s, sql, &extra);
        free(sql);
        if (!rc)
            buf_printf(out, "replace %lld %s by %lld rows", (long long)rows, unit,
                       (long long)extra);
        break;
    }
    case SPEC_HISTORY:
        rc = table_rows(b->c->s, b->target, "NOT " CG_IS_CURRENT, &extra);
        if (!rc)
            buf_printf(out, "drop valid_from, valid_to and is_current from its %lld versions",
                       (long long)rows);
        if (!rc && extra > 0)
            buf_printf(out, " (%lld of them closed)", (long long)extra);
        break;
    case SPEC_KEY:
        buf_printf(out, "match its %lld %s %s%s%s instead of %s%s%s", (long long)rows, unit,
                   n->key[0] ? "by (" : "", n->key[0] ? n->key : "without a key",
                   n->key[0] ? ")" : "", p->key[0] ? "by (" : "", p->key[0] ? p->key : "appending",
                   p->key[0] ? ")" : "");
        break;
    case SPEC_GRAIN:
        buf_printf(out,
                   "cut its %lld rows into slices %s while they sit in slices %s, which it "
                   "would not replace: rows would be there twice",
                   (long long)rows, n->part, p->part);
        break;
    case SPEC_SLICES:
        buf_printf(out, "replace the %s rows in each slice it builds (%lld rows in all)", p->kind,
                   (long long)rows);
        break;
    case SPEC_APPEND:
        buf_printf(out, "append the query's rows beside its %lld %s: rows would be there twice",
                   (long long)rows, unit);
        break;
    case SPEC_MERGE:
        buf_printf(out, "merge its %lld %s by (%s), collapsing the rows that share a key",
                   (long long)rows, unit, n->key);
        break;
    case SPEC_OK:
        break;
    }
    return rc;
}

/* Whether every column of key `key` ("a,b") is a column of the table: a
 * key naming another column fails the build on its own, more plainly. */
static int key_in_table(build_state *b, const char *key)
{
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT count(*) FROM pragma_table_info(");
    quote_literal(&sql, b->target);
    buf_puts(&sql, ") WHERE list_contains(string_split(lower(");
    quote_literal(&sql, key);
    buf_puts(&sql, "), ','), lower(name))");
    int64_t n = 0;
    int rc = query_int64(&n, b->c->s, buf_cstr(&sql));
    buf_free(&sql);
    if (rc) {
        tarn_error_clear();
        return 1;
    }
    size_t want = 1;
    for (const char *p = key; *p; p++)
        want += *p == ',';
    return n == (int64_t)want;
}

int guard_strategy(build_state *b)
{
    run_ctx *c = b->c;
    const tarn_model *m = b->m;
    int label_only = 0;
    const char *prev = change_last_spec(&c->chg, b->mi, &label_only);
    if (!b->existed || c->o->full_refresh || !prev)
        return 0;
    char *now =
        label_only ? xstrdup(annot_strategy_label(&m->annot)) : annot_strategy_spec(&m->annot);
    spec_change g = spec_classify(prev, now);
    spec_parts p, n;
    spec_split(&p, prev);
    spec_split(&n, now);
    if (n.key[0] && (g == SPEC_KEY || g == SPEC_MERGE) && !key_in_table(b, n.key))
        g = SPEC_OK;
    int64_t rows = 0;
    int rc = g == SPEC_OK ? 0 : table_rows(c->s, b->target, NULL, &rows);
    if (!rc && g != SPEC_OK && rows > 0) {
        tarn_buf loss = {0};
        rc = loss_text(b, g, &p, &n, rows, &loss);
        char *what = spec_describe(prev, now);
        int line = m->annot.materialize_line   ? m->annot.materialize_line
                   : m->annot.partitioned_line ? m->annot.partitioned_line
                                               : 1;
        if (!rc)
            rc = tarn_error_set(TARN_EINVALID,
                                "%s:%d: %s: %s would %s; nothing was written. The table was "
                                "built as %s: restore that annotation, or rebuild the table on "
                                "purpose with: tarn run --full-refresh %s",
                                m->path, line, m->name, what, buf_cstr(&loss), prev, m->name);
        free(what);
        buf_free(&loss);
    }
    free(now);
    return rc;
}

char *guard_plan(const change_ctx *cc, tarn_session *s, const char *lake, size_t mi)
{
    const tarn_model *m = &cc->p->models[mi];
    int label_only = 0;
    const char *prev = change_last_spec(cc, mi, &label_only);
    if (!prev || change_version(cc, m->schema, m->table) < 0)
        return NULL;
    char *now =
        label_only ? xstrdup(annot_strategy_label(&m->annot)) : annot_strategy_spec(&m->annot);
    char *out = NULL;
    if (spec_classify(prev, now) != SPEC_OK) {
        tarn_buf t = {0};
        quote_qualified(&t, lake, m->schema, m->table);
        int64_t rows = 0;
        if (table_rows(s, buf_cstr(&t), NULL, &rows) != 0)
            tarn_error_clear(); /* the run will say */
        else if (rows > 0) {
            char *what = spec_describe(prev, now);
            out = xasprintf("strategy changed (%s)", what);
            free(what);
        }
        buf_free(&t);
    }
    free(now);
    return out;
}

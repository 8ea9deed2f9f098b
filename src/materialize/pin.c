/*
 * pin.c — rewriting a model's statements for a build (see run_int.h):
 * each reference to a lake table becomes "lake"."schema"."table" AT
 * (VERSION => n), each {partition} the slice's identity as a literal, and
 * each {watermark} the incremental model's covered-through mark (a typed
 * literal, or NULL on a first or full-refresh build).
 *
 * The rewrite edits the user's text in place at the offsets DuckDB's
 * parser reported (refs.h), so everything else — formatting, comments,
 * functions DuckDB could not print back identically — is left exactly as
 * written.
 */
#include "materialize/run_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    size_t offset, len;
    char *text;
} text_edit;

static int cmp_edit(const void *a, const void *b)
{
    const text_edit *x = a, *y = b;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static char *edits_apply(const char *text, text_edit *e, size_t n)
{
    qsort(e, n, sizeof(*e), cmp_edit);
    tarn_buf b = {0};
    size_t at = 0, len = strlen(text);
    for (size_t i = 0; i < n; i++) {
        if (e[i].offset < at || e[i].offset + e[i].len > len)
            continue; /* overlapping or out of range: cannot happen with parser offsets */
        buf_append(&b, text + at, e[i].offset - at);
        buf_puts(&b, e[i].text);
        at = e[i].offset + e[i].len;
    }
    buf_append(&b, text + at, len - at);
    return buf_detach(&b);
}

static void record_read(model_result *r, const char *table, const char *model, int64_t snap,
                        int64_t version)
{
    for (size_t i = 0; i < r->nupstream; i++)
        if (strcmp(r->upstream[i].table, table) == 0)
            return;
    r->upstream = xrealloc(r->upstream, (r->nupstream + 1) * sizeof(upstream_read));
    upstream_read *u = &r->upstream[r->nupstream++];
    u->table = xstrdup(table);
    u->model = model ? xstrdup(model) : NULL;
    u->snapshot_id = snap;
    u->version = version;
}

/* A read of history model `hm`'s view <table>_current: qualified, not
 * pinned (a view has no versions; it reads the lake as the run left it,
 * which is the table at the snapshot recorded here). */
static text_edit current_view_edit(run_ctx *c, size_t mi, size_t hm, const table_ref *ref,
                                   model_result *r)
{
    const tarn_model *h = &c->p->models[hm];
    char *view = xasprintf("%s_current", h->table);
    tarn_buf b = {0};
    quote_qualified(&b, c->lake, h->schema, view);
    free(view);
    if (hm != mi && run_has_table(c, h->schema, h->table)) {
        char *t = xasprintf("%s.%s", h->schema, h->table);
        record_read(r, t, h->name,
                    c->built_snapshot[hm] >= 0 ? c->built_snapshot[hm] : c->sum->start_snapshot,
                    change_version(&c->chg, h->schema, h->table));
        free(t);
    }
    return (text_edit){.offset = ref->offset, .len = ref->len, .text = buf_detach(&b)};
}

char *pin_statement(run_ctx *c, size_t mi, const model_stmt *st, const char *partition,
                    model_result *r)
{
    return pin_statement_ex(c, mi, st, partition, r, 1);
}

/* Where reference `ref` of model mi reads: the schema, table and model
 * (NULL for a source) and the snapshot to pin (-1: not pinned). 0 when
 * the reference is not one of the lake's tables (left as written). */
static int ref_target(run_ctx *c, size_t mi, long up, const table_ref *ref, const char **schema,
                      const char **table, const char **model, int64_t *snap)
{
    *model = NULL;
    *snap = -1;
    if (up >= 0) {
        const tarn_model *um = &c->p->models[up];
        *schema = um->schema;
        *table = um->table;
        *model = um->name;
        if (!run_has_table(c, *schema, *table))
            *snap = -1; /* not built yet: left for DuckDB to report */
        else if (c->built_snapshot[up] >= 0 && (size_t)up != mi)
            *snap = c->built_snapshot[up];
        else
            *snap = c->sum->start_snapshot;
        return 1;
    }
    const source_entry *src = run_source(c, ref);
    if (!src || (src->kind != SRC_LAKE && src->kind != SRC_LAKE_VIEW))
        return 0;
    *schema = src->schema;
    *table = src->table;
    if (src->kind == SRC_LAKE)
        *snap = c->sum->start_snapshot;
    return 1;
}

/* The edit of one table reference of model mi into *e: qualified, and
 * pinned to the snapshot it reads (recorded in r). 0 when the reference
 * stays as written. */
static int ref_edit(text_edit *e, run_ctx *c, size_t mi, const table_ref *ref, model_result *r,
                    int pin_self)
{
    if (ref->offset == REF_NO_OFFSET || ref->len == 0 || ref->is_file)
        return 0;
    long up = project_ref_model(c->p, ref);
    if (up < 0 && (up = project_ref_current_view(c->p, ref)) >= 0) {
        *e = current_view_edit(c, mi, (size_t)up, ref, r);
        return 1;
    }
    tarn_buf b = {0};
    /* A manual script reads its own table as it writes it: in the
     * transaction's current state, not pinned. */
    if (up >= 0 && (size_t)up == mi &&
        (c->p->models[mi].annot.strategy == STRAT_MANUAL || !pin_self)) {
        /* qualified, not pinned */
        quote_qualified(&b, c->lake, c->p->models[mi].schema, c->p->models[mi].table);
        *e = (text_edit){.offset = ref->offset, .len = ref->len, .text = buf_detach(&b)};
        return 1;
    }
    const char *schema, *table, *model;
    int64_t snap;
    if (!ref_target(c, mi, up, ref, &schema, &table, &model, &snap))
        return 0;
    quote_qualified(&b, c->lake, schema, table);
    if (snap >= 0 && !ref->has_at)
        buf_printf(&b, " AT (VERSION => %lld)", (long long)snap);
    if (snap >= 0 && (size_t)up != mi) {
        char *t = xasprintf("%s.%s", schema, table);
        record_read(r, t, model, snap, change_version(&c->chg, schema, table));
        free(t);
    }
    *e = (text_edit){.offset = ref->offset, .len = ref->len, .text = buf_detach(&b)};
    return 1;
}

/* The edits of st's {partition} and {watermark} placeholders, from e. */
static size_t placeholder_edits(text_edit *e, run_ctx *c, const model_stmt *st,
                                const char *partition)
{
    size_t n = 0;
    for (size_t i = 0; i < st->npart; i++) {
        tarn_buf b = {0};
        quote_literal(&b, partition ? partition : "");
        e[n++] = (text_edit){
            .offset = st->part_offs[i], .len = BODY_PARTITION_LEN, .text = buf_detach(&b)};
    }
    for (size_t i = 0; i < st->nwm; i++)
        e[n++] = (text_edit){.offset = st->wm_offs[i],
                             .len = BODY_PARTITION_LEN,
                             .text = xstrdup(c->watermark_sql ? c->watermark_sql : "NULL")};
    return n;
}

char *pin_statement_ex(run_ctx *c, size_t mi, const model_stmt *st, const char *partition,
                       model_result *r, int pin_self)
{
    text_edit *e = xcalloc(st->refs.n + st->npart + st->nwm + 1, sizeof(text_edit));
    size_t n = 0;
    for (size_t i = 0; i < st->refs.n; i++)
        n += (size_t)ref_edit(&e[n], c, mi, &st->refs.items[i], r, pin_self);
    n += placeholder_edits(&e[n], c, st, partition);
    char *out = edits_apply(st->text, e, n);
    for (size_t i = 0; i < n; i++)
        free(e[i].text);
    free(e);
    return out;
}

char *pin_upstream_json(const model_result *r)
{
    json_t *a = json_array();
    for (size_t i = 0; i < r->nupstream; i++) {
        const upstream_read *u = &r->upstream[i];
        json_t *o = json_object();
        json_object_set_new(o, "table", json_string(u->table));
        json_object_set_new(o, "model", u->model ? json_string(u->model) : json_null());
        json_object_set_new(o, "snapshot_id", json_integer(u->snapshot_id));
        json_object_set_new(o, "version", json_integer(u->version));
        json_array_append_new(a, o);
    }
    char *s = json_dumps(a, JSON_COMPACT);
    json_decref(a);
    return s ? s : xstrdup("[]");
}

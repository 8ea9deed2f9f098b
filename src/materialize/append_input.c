/*
 * append_input.c — whether an append model's input is the one it already
 * appended. Change detection (change.c) runs a model when a lake table it
 * reads has a newer version than at its last build; for most strategies a
 * build over the same rows is only wasted work, but an append model would
 * put every row there a second time. A table rebuilt with the same rows
 * (a replace whose SQL changed but not its result, `--force` upstream)
 * has a newer version and the same input. So an append model that would
 * run only for such versions compares, for each table it reads, the rows
 * its last build read (the table at the snapshot recorded in its
 * tarn_model_run.upstream) with the rows this build would read (the
 * table at the snapshot the run pins): when every table holds the same
 * rows and columns, the build appends nothing and is recorded as a success
 * that wrote no snapshot, with the new versions read, so the next run
 * compares from there. Part of the model build (model_int.h); `tarn
 * plan` runs the same comparison (append_plan_same_input, plan.c).
 *
 * The comparison runs before the build's BEGIN: a read that fails there (a
 * snapshot expired since, columns of another count) means "changed" and
 * leaves no aborted transaction behind.
 */
#include "materialize/change.h"
#include "materialize/model_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* The snapshot model mi's last build read `table` at, or -1. */
static int64_t last_read_snapshot(const change_ctx *cc, size_t mi, const char *table)
{
    const json_t *up = cc->prev[mi].upstream, *e;
    size_t i;
    json_array_foreach(up, i, e)
    {
        const char *t = json_string_value(json_object_get(e, "table"));
        const json_t *snap = json_object_get(e, "snapshot_id");
        if (t && strcmp(t, table) == 0)
            return json_is_integer(snap) ? (int64_t)json_integer_value(snap) : -1;
    }
    return -1;
}

static void table_at(tarn_buf *b, const char *lake, const char *table, int64_t snap)
{
    const char *name = table; /* the pins name each table schema.table */
    char *schema = change_name_split(table, &name);
    buf_puts(b, "FROM ");
    quote_qualified(b, lake, schema, name);
    buf_printf(b, " AT (VERSION => %lld)", (long long)snap);
    free(schema);
}

/* The columns (names and types) of `table` at snapshot `snap`, one text. */
static int columns_at(char **out, tarn_session *s, const char *lake, const char *table,
                      int64_t snap)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT string_agg(column_name || ' ' || column_type, ', ') FROM (DESCRIBE ");
    table_at(&q, lake, table, snap);
    buf_puts(&q, ")");
    qrows r;
    int rc = query_rows(&r, s, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    *out = xstrdup(r.nrows && qrows_get(&r, 0, 0) ? qrows_get(&r, 0, 0) : "");
    qrows_free(&r);
    return 0;
}

/* Whether `table` of `lake` holds the same columns and rows (as a
 * multiset) at snapshots a and b. Any error counts as "not the same". */
static int same_rows(tarn_session *s, const char *lake, const char *table, int64_t a, int64_t b)
{
    char *ca = NULL, *cb = NULL;
    int same = columns_at(&ca, s, lake, table, a) == 0 && columns_at(&cb, s, lake, table, b) == 0 &&
               strcmp(ca, cb) == 0;
    free(ca);
    free(cb);
    if (same) {
        tarn_buf q = {0};
        buf_puts(&q, "SELECT count(*) FROM ((");
        table_at(&q, lake, table, a);
        buf_puts(&q, " EXCEPT ALL ");
        table_at(&q, lake, table, b);
        buf_puts(&q, ") UNION ALL (");
        table_at(&q, lake, table, b);
        buf_puts(&q, " EXCEPT ALL ");
        table_at(&q, lake, table, a);
        buf_puts(&q, ") LIMIT 1)");
        qrows r;
        int ran = query_rows(&r, s, buf_cstr(&q)) == 0;
        same = ran && r.nrows == 1 && qrows_get(&r, 0, 0) && strcmp(qrows_get(&r, 0, 0), "0") == 0;
        if (ran)
            qrows_free(&r);
        buf_free(&q);
    }
    tarn_error_clear();
    return same;
}

int mb_append_same_input(build_state *b)
{
    run_ctx *c = b->c;
    const tarn_model *m = b->m;
    model_result *r = b->r;
    if (m->annot.strategy != STRAT_APPEND || m->annot.grain || !b->exists ||
        !change_only_upstream(&c->chg, b->mi, r->run_reason))
        return 0;
    /* the reads this build would make, by every statement of the model:
     * pinned as the build will pin them */
    for (size_t s = 0; s < m->body.n; s++)
        free(pin_statement(c, b->mi, &m->body.items[s], NULL, r));
    int same = r->nupstream > 0;
    for (size_t i = 0; i < r->nupstream && same; i++) {
        const upstream_read *u = &r->upstream[i];
        int64_t was = last_read_snapshot(&c->chg, b->mi, u->table);
        same = was >= 0 &&
               (was == u->snapshot_id || same_rows(c->s, c->lake, u->table, was, u->snapshot_id));
    }
    if (same) {
        char *why = xasprintf("%s, which holds the rows the last build read: nothing appended",
                              r->run_reason);
        free(r->run_reason);
        r->run_reason = why;
    }
    return same;
}

/* How a table the last build of model mi read (entry e of its upstream
 * record) stands in the plan: 0 at the version read, 1 built by a model
 * that would run first (will_run), 2 at a newer version. */
enum { INPUT_KEPT, INPUT_BUILT_FIRST, INPUT_NEWER };
static int input_state(const change_ctx *cc, const json_t *e, const unsigned char *will_run)
{
    const char *t = json_string_value(json_object_get(e, "table")), *name = t;
    const json_t *ver = json_object_get(e, "version");
    char *schema = t ? change_name_split(t, &name) : NULL;
    long um = schema ? project_find_model(cc->p, schema, name) : -1;
    int64_t now = schema ? change_version(cc, schema, name) : -1;
    free(schema);
    if (will_run && um >= 0 && will_run[um])
        return INPUT_BUILT_FIRST;
    return json_is_integer(ver) && now >= 0 && now <= json_integer_value(ver) ? INPUT_KEPT
                                                                              : INPUT_NEWER;
}

/* `tarn plan`'s side of mb_append_same_input: the same comparison, read
 * only, of each table the last build read at the snapshot it read with
 * the table now — except a table a model builds earlier in the run, whose
 * rows are not known before the run (then -1). The reads are the last
 * build's: the model's SQL and config are unchanged (change_only_upstream).
 * It reads what the run's own check reads, once. */
int append_plan_same_input(const change_ctx *cc, tarn_session *s, const char *lake, size_t mi,
                           const char *reason, const unsigned char *will_run)
{
    const tarn_model *m = &cc->p->models[mi];
    int64_t now = -1;
    if (m->annot.strategy != STRAT_APPEND || m->annot.grain ||
        change_version(cc, m->schema, m->table) < 0 || !change_only_upstream(cc, mi, reason) ||
        tarn_session_snapshot(s, lake, &now) != 0) {
        tarn_error_clear();
        return 0;
    }
    const json_t *up = cc->prev[mi].upstream, *e;
    int same = json_array_size(up) > 0, pending = 0;
    size_t i;
    json_array_foreach(up, i, e)
    {
        const char *t = json_string_value(json_object_get(e, "table"));
        int state = input_state(cc, e, will_run);
        int64_t was = t ? last_read_snapshot(cc, mi, t) : -1;
        if (state == INPUT_BUILT_FIRST)
            pending = 1;
        else if (same && state == INPUT_NEWER)
            same = was >= 0 && same_rows(s, lake, t, was, now);
    }
    return !same ? 0 : pending ? -1 : 1;
}

/*
 * backfill.c — the worklist of a backfill (see backfill.h): the range's
 * slices (project/partition.h) against the tarn_partition rows of the
 * model (status, model_hash) and whether its table exists in the lake.
 */
#include "materialize/backfill.h"

#include "materialize/records.h"
#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* A typo'd year should not start a century of builds. */
#define BACKFILL_MAX_SLICES 100000

void backfill_work_free(backfill_work *w)
{
    strlist_free(&w->todo);
    free(w->first);
    free(w->last);
    memset(w, 0, sizeof(*w));
}

/* Each recorded slice's state: 'built' (by the current SQL), 'stale',
 * 'failed', or another status. */
static int slice_states(strlist *keys, strlist *states, tarn_session *s, const char *cat,
                        const tarn_model *m)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT \"partition\", CASE WHEN status = 'success' AND model_hash = ");
    quote_literal(&q, m->hash);
    buf_puts(&q, " THEN 'built' WHEN status = 'success' THEN 'stale' WHEN status IN ('failed', "
                 "'cancelled') THEN 'failed' ELSE coalesce(status, 'missing') END FROM ");
    quote_prefixed(&q, cat, "tarn_partition");
    buf_puts(&q, " WHERE model = ");
    quote_literal(&q, m->name);
    qrows r;
    int rc = query_rows(&r, s, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows; i++) {
        strlist_push(keys, qrows_get(&r, i, 0));
        strlist_push(states, qrows_get(&r, i, 1));
    }
    qrows_free(&r);
    return 0;
}

static int wanted(backfill_mode mode, const char *state)
{
    if (mode == BACKFILL_ALL)
        return 1;
    if (mode == BACKFILL_FAILED)
        return strcmp(state, "failed") == 0;
    return strcmp(state, "built") != 0;
}

int backfill_worklist(backfill_work *out, tarn_session *s, const tarn_project *p, size_t mi,
                      const char *from, const char *to, backfill_mode mode, int64_t now)
{
    memset(out, 0, sizeof(*out));
    const tarn_model *m = &p->models[mi];
    part_grain g = m->annot.grain;
    if (!g)
        return tarn_error_set(TARN_EINVALID,
                              "%s is not partitioned: a backfill builds the slices of a model "
                              "with '-- partitioned hourly|daily|weekly|monthly column=…' (%s); "
                              "tarn run %s rebuilds it",
                              m->name, m->path, m->name);
    if (g == GRAIN_DYNAMIC)
        return tarn_error_set(TARN_EINVALID,
                              "%s is partitioned dynamic: its slices are the values its query "
                              "yields, not a range; tarn run %s --partition VALUE builds one",
                              m->name, m->name);
    if (!from)
        from = m->annot.partition_start;
    if (!from)
        return tarn_error_set(TARN_EINVALID,
                              "give the range: tarn backfill %s --start 2024-01-01 [--end …] (or "
                              "add start=2024-01-01 to the -- partitioned line of %s)",
                              m->name, m->path);
    char *now_id = to ? NULL : partition_format(g, now);
    strlist all = {0};
    int rc = partition_range(&all, g, from, to ? to : now_id, BACKFILL_MAX_SLICES);
    free(now_id);
    if (rc) {
        strlist_free(&all);
        return tarn_error_prefix(rc, "backfill %s", m->name);
    }
    out->total = all.n;
    out->first = xstrdup(all.items[0]);
    out->last = xstrdup(all.items[all.n - 1]);
    const char *cat = tarn_session_catalog_prefix(s, p->lake_alias);
    int exists = 0;
    strlist keys = {0}, states = {0};
    rc = tarn_session_table_exists(s, p->lake_alias, m->schema, m->table, &exists);
    if (!rc && exists)
        rc = records_ensure(s, cat);
    if (!rc && exists) /* a dropped table holds no slice, whatever was recorded */
        rc = slice_states(&keys, &states, s, cat, m);
    for (size_t i = 0; !rc && i < all.n; i++) {
        long k = strlist_find(&keys, all.items[i]);
        const char *st = k >= 0 ? states.items[k] : "missing";
        out->built += strcmp(st, "built") == 0;
        out->stale += strcmp(st, "stale") == 0;
        out->failed += strcmp(st, "failed") == 0;
        if (wanted(mode, st))
            strlist_push(&out->todo, all.items[i]);
    }
    strlist_free(&keys);
    strlist_free(&states);
    strlist_free(&all);
    if (rc)
        backfill_work_free(out);
    return rc;
}

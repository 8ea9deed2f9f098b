/*
 * run_slices.c — which slices of a partitioned model a run builds: the
 * slices the run names (--partition, --from/--to, a backfill's list), else
 * the current slice and its lookback=N predecessors, or — for a model with
 * start= whose table does not exist yet — every slice from its start to
 * now. Part of the runner (run_int.h); the slice arithmetic is
 * project/partition's.
 */
#include "materialize/run_int.h"

#include "tarn/error.h"

#include <stdlib.h>
#include <string.h>

/* --partition P: the slice P itself, or — for a model of another grain —
 * the slice that contains the point in time P. */
static int slice_of_partition(strlist *out, const tarn_model *m, const char *part)
{
    part_grain g = m->annot.grain;
    int64_t t;
    if (g == GRAIN_DYNAMIC || partition_parse(&t, g, part) == 0) {
        strlist_push(out, part);
        return 0;
    }
    char *msg = xstrdup(tarn_error_last());
    if (partition_parse_time(&t, part) != 0) {
        int rc = tarn_error_set(TARN_EINVALID, "--partition for %s: %s", m->name, msg);
        free(msg);
        return rc;
    }
    free(msg);
    tarn_error_clear();
    strlist_push_owned(out, partition_format(g, t));
    return 0;
}

/* A dynamic model without --partition builds every value its SELECT
 * yields, unless its SQL names one value ({partition}). */
static int dynamic_slices(const tarn_model *m)
{
    int uses = 0;
    for (size_t i = 0; i < m->body.n; i++)
        uses |= m->body.items[i].npart > 0;
    if (uses)
        return tarn_error_set(TARN_EINVALID,
                              "%s is partitioned dynamic and its SQL uses {partition}: give "
                              "--partition VALUE (or select other models)",
                              m->name);
    return 0;
}

/* The current slice and the lookback=N slices before it, oldest first. */
static void lookback_slices(strlist *out, const tarn_model *m, int64_t now)
{
    part_grain g = m->annot.grain;
    int64_t at = now;
    strlist before = {0};
    for (int k = 0; k < m->annot.lookback; k++) {
        char *cur = partition_format(g, at);
        int64_t start = at;
        if (partition_parse(&start, g, cur) != 0)
            tarn_error_clear();
        free(cur);
        at = start - 1;
        strlist_push_owned(&before, partition_format(g, at));
    }
    for (size_t k = before.n; k > 0; k--)
        strlist_push(out, before.items[k - 1]);
    strlist_free(&before);
    strlist_push_owned(out, partition_format(g, now));
}

int build_partitions(strlist *out, const tarn_model *m, const build_opts *o, int64_t now)
{
    part_grain g = m->annot.grain;
    if (!g)
        return 0;
    if (o->slices) {
        strlist_copy(out, o->slices);
        return 0;
    }
    if (o->partition)
        return slice_of_partition(out, m, o->partition);
    if ((o->from || o->to) && g != GRAIN_DYNAMIC) {
        if (!o->from || !o->to)
            return tarn_error_set(TARN_EINVALID, "give both --from and --to");
        return partition_range(out, g, o->from, o->to, 100000);
    }
    if (g == GRAIN_DYNAMIC)
        return dynamic_slices(m);
    lookback_slices(out, m, now);
    return 0;
}

/* A time-partitioned model with start= whose table does not exist yet
 * builds every slice from its start to now (its first run is a backfill),
 * unless the run names its slices. */
int run_first_from_start(run_ctx *c, size_t mi, int64_t now)
{
    const tarn_model *m = &c->p->models[mi];
    const build_opts *o = c->o;
    if (!m->annot.partition_start || m->annot.grain == GRAIN_DYNAMIC || o->slices || o->partition ||
        o->from || run_has_table(c, m->schema, m->table))
        return 0;
    char *to = partition_format(m->annot.grain, now);
    strlist all = {0};
    int rc = partition_range(&all, m->annot.grain, m->annot.partition_start, to, 100000);
    free(to);
    if (rc) {
        strlist_free(&all);
        return tarn_error_prefix(rc, "%s: start=%s", m->path, m->annot.partition_start);
    }
    strlist_free(&c->partitions[mi]);
    c->partitions[mi] = all;
    c->from_start[mi] = 1;
    return 0;
}

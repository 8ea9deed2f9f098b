/*
 * plan.c — `tarn plan`'s answer for each selected model (build.h's
 * build_plan): why it would run (change detection, change.c), whether it
 * would fail before writing (the strategy guard, guard.c), a warning,
 * what a full rebuild would cost, and what it would read or build (the
 * slices of a first run from start= or a lookback, an incremental range). It sits above both:
 * change detection knows nothing of the guard.
 */
#include "materialize/build.h"
#include "materialize/change.h"
#include "materialize/guard.h"
#include "materialize/model_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The first selected upstream model of mi that would fail, or -1. */
static long failing_upstream(const tarn_project *p, size_t mi, const plan_entry *plan,
                             const unsigned char *sel)
{
    const tarn_model *m = &p->models[mi];
    for (size_t i = 0; i < m->nup; i++) {
        size_t u = m->up[i].model;
        if (sel[u] && (plan[u].fails || plan[u].skip))
            return (long)u;
    }
    return -1;
}

/* The slices a time-partitioned model's run would build, and a sentence
 * when they are more than the current one: a first run builds every slice
 * from start= (its table does not exist), a later one the current slice
 * and its lookback. */
static int plan_slices(plan_entry *e, const change_ctx *cc, const tarn_model *m,
                       const build_opts *o, int64_t now)
{
    const model_annot *a = &m->annot;
    int rc = build_partitions(&e->slices, m, o, now);
    if (rc || !a->grain || a->grain == GRAIN_DYNAMIC || o->partition || o->from || o->slices)
        return rc;
    int exists = change_version(cc, m->schema, m->table) >= 0;
    if (a->partition_start && !exists) {
        char *to = partition_format(a->grain, now);
        strlist all = {0};
        rc = partition_range(&all, a->grain, a->partition_start, to, 100000);
        free(to);
        if (rc) {
            strlist_free(&all);
            return tarn_error_prefix(rc, "%s: start=%s", m->path, a->partition_start);
        }
        strlist_free(&e->slices);
        e->slices = all;
        e->range = xasprintf("first run: every slice from start=%s, %zu slice%s %s … %s, one "
                             "snapshot each",
                             a->partition_start, all.n, all.n == 1 ? "" : "s", all.items[0],
                             all.items[all.n - 1]);
    } else if (a->lookback > 0 && e->slices.n > 1) {
        char *list = strlist_join(&e->slices, ", ");
        e->range = xasprintf("the current slice %s and the %d before it (lookback=%d): %s",
                             e->slices.items[e->slices.n - 1], a->lookback, a->lookback, list);
        free(list);
    }
    return 0;
}

/* An incremental model's range, as its build would compute it (the run
 * record's mark, the table's column type, the frontier at `now`). */
static int plan_increment(plan_entry *e, tarn_project *p, tarn_session *s, const char *cat,
                          const change_ctx *cc, size_t mi, const build_opts *o, int64_t now)
{
    const tarn_model *m = &p->models[mi];
    int exists = cat && change_version(cc, m->schema, m->table) >= 0;
    build_summary sum = {.started_at = (double)now};
    run_ctx c = {.p = p, .s = s, .o = o, .lake = p->lake_alias, .cat = cat, .sum = &sum};
    model_result r = {0};
    tarn_buf t = {0};
    quote_qualified(&t, p->lake_alias, m->schema, m->table);
    build_state b = {.c = &c, .mi = mi, .m = m, .r = &r, .target = buf_detach(&t)};
    int rebuild =
        !exists || o->full_refresh || (e->reason && strcmp(e->reason, REASON_FULL_REBUILD) == 0);
    char *filter = NULL, *mark = NULL;
    int rc = inc_describe(&b, rebuild, &filter, &mark, &e->range);
    if (rc) {
        /* a plan is not a build: say what could not be worked out */
        e->range = xasprintf("the range cannot be worked out: %s", tarn_error_last());
        tarn_error_clear();
    }
    free(filter);
    free(mark);
    free(b.target);
    build_result_free(&r);
    return 0;
}

/* An append model that would run only for new versions of tables it
 * reads is not built when they hold the rows its last build read
 * (append_input.c): the plan runs the same comparison and says so, or,
 * when a model that would run first builds one of them, that the run
 * decides (its rows are not known yet). */
static void plan_same_input(plan_entry *e, const change_ctx *cc, tarn_session *s, const char *lake,
                            size_t mi, const unsigned char *will_run)
{
    int same = append_plan_same_input(cc, s, lake, mi, e->reason, will_run);
    char *why = NULL;
    if (same > 0) {
        e->nothing =
            xasprintf("%s, which holds the rows the last build read: nothing appended", e->reason);
    } else if (same < 0) {
        why = xasprintf("%s (appends nothing if the models built before it leave the rows it "
                        "reads as its last build read them)",
                        e->reason);
    } else {
        return;
    }
    free(e->reason);
    e->reason = why;
}

int build_plan(plan_entry **out, tarn_project *p, tarn_session *s, const build_opts *o,
               int lake_attached)
{
    size_t nm = p->nmodels ? p->nmodels : 1;
    plan_entry *plan = xcalloc(nm, sizeof(plan_entry));
    const char *cat = lake_attached ? tarn_session_catalog_prefix(s, p->lake_alias) : NULL;
    change_ctx cc;
    int rc = change_load(&cc, p, s, p->lake_alias, cat, o->selected);
    unsigned char *will_run = xcalloc(nm, 1);
    for (size_t k = 0; !rc && k < p->nmodels; k++) {
        size_t mi = p->order[k];
        if (!o->selected[mi])
            continue;
        plan_entry *e = &plan[mi];
        e->reason = change_reason(&cc, mi, o, will_run);
        if (cat && e->reason)
            plan_same_input(e, &cc, s, p->lake_alias, mi, will_run);
        will_run[mi] = e->reason != NULL;
        e->warning = change_warning(&cc, mi);
        if (cat && !o->full_refresh)
            e->fails = guard_plan(&cc, s, p->lake_alias, mi);
        long up = failing_upstream(p, mi, plan, o->selected);
        if (!e->fails && up >= 0)
            e->skip = xasprintf("upstream %s would fail", p->models[up].name);
        if (e->reason && strcmp(e->reason, REASON_FULL_REBUILD) == 0)
            e->cost = !p->models[mi].annot.grain
                          ? xstrdup("would rebuild the table from scratch")
                          : xasprintf("would rebuild %zu slice%s", cc.stale[mi].n,
                                      cc.stale[mi].n == 1 ? "" : "s");
        int64_t now = o->now > 0 ? o->now : (int64_t)time(NULL);
        if (p->models[mi].annot.grain)
            rc = plan_slices(e, &cc, &p->models[mi], o, now);
        else if (e->reason && p->models[mi].annot.strategy == STRAT_INCREMENTAL)
            rc = plan_increment(e, p, s, cat, &cc, mi, o, now);
    }
    free(will_run);
    change_free(&cc);
    if (rc) {
        build_plan_free(plan, p->nmodels);
        plan = NULL;
    }
    *out = plan;
    return rc;
}

void build_plan_free(plan_entry *plan, size_t nmodels)
{
    if (!plan)
        return;
    for (size_t i = 0; i < nmodels; i++) {
        free(plan[i].reason);
        free(plan[i].fails);
        free(plan[i].skip);
        free(plan[i].nothing);
        free(plan[i].warning);
        free(plan[i].cost);
        free(plan[i].range);
        strlist_free(&plan[i].slices);
    }
    free(plan);
}

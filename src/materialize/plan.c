/*
 * plan.c — `tarn plan`'s answer for each selected model (build.h's
 * build_plan): why it would run (change detection, change.c), whether it
 * would fail before writing (the strategy guard, guard.c), a warning, and
 * what a full rebuild would cost. It sits above both: change detection
 * knows nothing of the guard.
 */
#include "materialize/build.h"
#include "materialize/change.h"
#include "materialize/guard.h"

#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

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

int build_plan(plan_entry **out, tarn_project *p, tarn_session *s, const build_opts *o,
               int lake_attached)
{
    size_t nm = p->nmodels ? p->nmodels : 1;
    plan_entry *plan = xcalloc(nm, sizeof(plan_entry));
    const char *cat = lake_attached ? tarn_session_catalog_name(s, p->lake_alias) : NULL;
    change_ctx cc;
    int rc = change_load(&cc, p, s, p->lake_alias, cat, o->selected);
    unsigned char *will_run = xcalloc(nm, 1);
    for (size_t k = 0; !rc && k < p->nmodels; k++) {
        size_t mi = p->order[k];
        if (!o->selected[mi])
            continue;
        plan_entry *e = &plan[mi];
        e->reason = change_reason(&cc, mi, o, will_run);
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
        free(plan[i].warning);
        free(plan[i].cost);
    }
    free(plan);
}

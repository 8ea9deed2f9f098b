/*
 * tick.c — one tick of the scheduler (see tick.h): the tarn_schedule rows,
 * the decision, and the run that serves the fires.
 *
 * tarn_schedule (model VARCHAR, rule VARCHAR, armed_at TIMESTAMPTZ,
 * last_occurrence TIMESTAMPTZ, last_fire_at TIMESTAMPTZ, last_run_id
 * BIGINT) lives in the catalog database beside tarn_run; DuckLake ignores
 * it. A row whose rule differs from the model's current one is a rule
 * seen for the first time: it is re-armed.
 */
#include "sched/tick.h"

#include "materialize/records.h"
#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/proc.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

void sched_format_time(char buf[21], int64_t t)
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(buf, 21, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

char *sched_rule_text(const tarn_model *m)
{
    if (m->annot.schedule)
        return xstrdup(m->annot.schedule);
    if (m->annot.freshness_line)
        return xasprintf("freshness %lds", m->annot.freshness_s);
    return NULL;
}

static void table(tarn_buf *b, const char *cat, const char *name)
{
    quote_prefixed(b, cat, name);
}

static int run_sql(tarn_session *s, tarn_buf *b)
{
    int rc = query_exec(s, buf_cstr(b), NULL);
    buf_free(b);
    return rc;
}

static int ensure_table(tarn_session *s, const char *cat)
{
    tarn_buf b = {0};
    buf_puts(&b, "CREATE TABLE IF NOT EXISTS ");
    table(&b, cat, "tarn_schedule");
    buf_puts(&b, " (model VARCHAR NOT NULL, rule VARCHAR NOT NULL, armed_at TIMESTAMPTZ, "
                 "last_occurrence TIMESTAMPTZ, last_fire_at TIMESTAMPTZ, last_run_id BIGINT)");
    return run_sql(s, &b);
}

/* Index of the scheduled model named `name` among the report's lines. */
static long line_of(const sched_report *r, const tarn_project *p, const char *name)
{
    for (size_t i = 0; name && i < r->nlines; i++)
        if (strcmp(p->models[r->lines[i].model].name, name) == 0)
            return (long)i;
    return -1;
}

static int64_t cell_i64(const qrows *q, size_t row, size_t col, int64_t dflt)
{
    const char *v = qrows_get(q, row, col);
    return v ? strtoll(v, NULL, 10) : dflt;
}

/* The recorded rows, each model's last good build, and the scheduler runs
 * in flight (alive and 'running') into entries[]. */
static int read_state(sched_entry *e, char **rules, const sched_report *r, tarn_project *p,
                      tarn_session *s, const char *cat)
{
    tarn_buf b = {0};
    buf_puts(&b,
             "SELECT model, rule, epoch(armed_at)::BIGINT, epoch(last_occurrence)::BIGINT FROM ");
    table(&b, cat, "tarn_schedule");
    qrows q;
    int rc = query_rows(&q, s, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        return rc;
    for (size_t row = 0; row < q.nrows; row++) {
        long i = line_of(r, p, qrows_get(&q, row, 0));
        const char *rule = qrows_get(&q, row, 1);
        if (i < 0 || !rule || strcmp(rule, rules[i]) != 0)
            continue;
        e[i].armed = 1;
        e[i].armed_at = cell_i64(&q, row, 2, 0);
        e[i].last_occurrence = cell_i64(&q, row, 3, -1);
    }
    qrows_free(&q);
    buf_puts(&b, "SELECT model, epoch(max(finished_at))::BIGINT FROM ");
    table(&b, cat, "tarn_model_run");
    buf_puts(&b, " WHERE status = 'success' GROUP BY model");
    rc = query_rows(&q, s, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        return rc;
    for (size_t row = 0; row < q.nrows; row++) {
        long i = line_of(r, p, qrows_get(&q, row, 0));
        if (i >= 0)
            e[i].last_good_build = cell_i64(&q, row, 1, -1);
    }
    qrows_free(&q);
    return 0;
}

/* Marks the models a live scheduler run is serving as in flight (a dead
 * 'running' run is the next run's to mark interrupted, not a build). */
static int read_in_flight(sched_entry *e, const sched_report *r, const tarn_project *p,
                          tarn_session *s, const char *cat)
{
    int64_t *dead = NULL;
    size_t ndead = 0;
    int rc = records_dead_runs(&dead, &ndead, s, p->lake_alias, cat);
    if (rc)
        return rc;
    tarn_buf b = {0};
    buf_puts(&b, "SELECT run_id, occurrence FROM ");
    table(&b, cat, "tarn_run");
    buf_puts(&b, " WHERE status = 'running' AND \"trigger\" = 'scheduler'");
    qrows q;
    rc = query_rows(&q, s, buf_cstr(&b));
    buf_free(&b);
    for (size_t row = 0; !rc && row < q.nrows; row++) {
        int64_t id = cell_i64(&q, row, 0, -1);
        int is_dead = 0;
        for (size_t k = 0; k < ndead; k++)
            is_dead |= dead[k] == id;
        const char *occ = qrows_get(&q, row, 1);
        for (size_t i = 0; !is_dead && occ && i < r->nlines; i++) {
            char *needle = xasprintf("%s@", p->models[r->lines[i].model].name);
            e[i].in_flight |= strstr(occ, needle) != NULL;
            free(needle);
        }
    }
    if (!rc)
        qrows_free(&q);
    free(dead);
    return rc;
}

/* Records the arms and the fires of the decision (a fire before its
 * build: see tick.h). */
static int record_decisions(const sched_report *r, const tarn_project *p, char **rules,
                            const sched_entry *e, tarn_session *s, const char *cat, int64_t now)
{
    int rc = 0;
    for (size_t i = 0; !rc && i < r->nlines; i++) {
        const sched_decision *d = &r->lines[i].d;
        const char *name = p->models[r->lines[i].model].name;
        tarn_buf b = {0};
        if (!e[i].armed) { /* first seen (freshness rules too): a fresh row */
            buf_puts(&b, "DELETE FROM ");
            table(&b, cat, "tarn_schedule");
            buf_puts(&b, " WHERE model = ");
            quote_literal(&b, name);
            rc = run_sql(s, &b);
            buf_puts(&b, "INSERT INTO ");
            table(&b, cat, "tarn_schedule");
            buf_puts(&b, " VALUES (");
            quote_literal(&b, name);
            buf_puts(&b, ", ");
            quote_literal(&b, rules[i]);
            buf_printf(&b, ", to_timestamp(%lld), NULL, NULL, NULL)", (long long)now);
            if (!rc)
                rc = run_sql(s, &b);
            else
                buf_free(&b);
        }
        if (!rc && d->action == SCHED_FIRE) {
            buf_puts(&b, "UPDATE ");
            table(&b, cat, "tarn_schedule");
            buf_printf(&b,
                       " SET last_occurrence = to_timestamp(%lld), last_fire_at = "
                       "to_timestamp(%lld) WHERE model = ",
                       (long long)d->occurrence, (long long)now);
            quote_literal(&b, name);
            rc = run_sql(s, &b);
        }
    }
    return rc;
}

/* The fired models and, upstream of them, the models with no rule of
 * their own (a scheduled upstream model keeps to its own rule). */
static void select_fired(unsigned char *sel, const sched_report *r, const tarn_project *p)
{
    unsigned char *ruled = xcalloc(p->nmodels ? p->nmodels : 1, 1);
    for (size_t i = 0; i < r->nlines; i++) {
        ruled[r->lines[i].model] = 1;
        if (r->lines[i].d.action == SCHED_FIRE)
            sel[r->lines[i].model] = 1;
    }
    /* p->order is topological: walking it backwards reaches every
     * upstream model after the models that read it */
    for (size_t k = p->nmodels; k-- > 0;) {
        size_t mi = p->order[k];
        if (!sel[mi])
            continue;
        for (size_t u = 0; u < p->models[mi].nup; u++)
            if (!ruled[p->models[mi].up[u].model])
                sel[p->models[mi].up[u].model] = 1;
    }
    free(ruled);
}

static char *fired_text(const sched_report *r, const tarn_project *p)
{
    tarn_buf b = {0};
    for (size_t i = 0; i < r->nlines; i++) {
        if (r->lines[i].d.action != SCHED_FIRE)
            continue;
        char when[21];
        sched_format_time(when, r->lines[i].d.occurrence);
        buf_printf(&b, "%s%s@%s", b.len ? " " : "", p->models[r->lines[i].model].name, when);
    }
    return b.len ? buf_detach(&b) : (buf_free(&b), NULL);
}

static int record_run_id(const sched_report *r, const tarn_project *p, tarn_session *s,
                         const char *cat)
{
    tarn_buf b = {0};
    buf_puts(&b, "UPDATE ");
    table(&b, cat, "tarn_schedule");
    buf_printf(&b, " SET last_run_id = %lld WHERE model IN (", (long long)r->sum.run_id);
    int first = 1;
    for (size_t i = 0; i < r->nlines; i++)
        if (r->lines[i].d.action == SCHED_FIRE) {
            buf_puts(&b, first ? "" : ", ");
            quote_literal(&b, p->models[r->lines[i].model].name);
            first = 0;
        }
    buf_puts(&b, ")");
    return run_sql(s, &b);
}

static int decide_and_record(sched_report *out, tarn_project *p, tarn_session *s, const char *cat,
                             int64_t now, size_t max_fires)
{
    sched_entry *e = xcalloc(out->nlines ? out->nlines : 1, sizeof(*e));
    char **rules = xcalloc(out->nlines ? out->nlines : 1, sizeof(*rules));
    for (size_t i = 0; i < out->nlines; i++) {
        const tarn_model *m = &p->models[out->lines[i].model];
        rules[i] = sched_rule_text(m);
        e[i] = (sched_entry){.model = m->name,
                             .schedule = m->annot.schedule,
                             .freshness_s = m->annot.freshness_s,
                             .last_occurrence = -1,
                             .last_good_build = -1};
    }
    int rc = read_state(e, rules, out, p, s, cat);
    if (!rc)
        rc = read_in_flight(e, out, p, s, cat);
    sched_decision *d = xcalloc(out->nlines ? out->nlines : 1, sizeof(*d));
    if (!rc && sched_decide(d, e, out->nlines, now, max_fires) != 0)
        rc = tarn_error_set(TARN_EINVALID, "a recorded schedule does not parse");
    for (size_t i = 0; !rc && i < out->nlines; i++) {
        out->lines[i].d = d[i];
        out->fired += d[i].action == SCHED_FIRE;
    }
    if (!rc)
        rc = record_decisions(out, p, rules, e, s, cat, now);
    for (size_t i = 0; i < out->nlines; i++)
        free(rules[i]);
    free(rules);
    free(e);
    free(d);
    return rc;
}

int sched_tick(sched_report *out, tarn_project *p, tarn_session *s, int64_t now, size_t max_fires,
               const build_opts *base)
{
    memset(out, 0, sizeof(*out));
    out->lines = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(*out->lines));
    for (size_t i = 0; i < p->nmodels; i++)
        if (p->models[i].annot.schedule || p->models[i].annot.freshness_line)
            out->lines[out->nlines++].model = i;
    int rc = build_run_config(p, s);
    const char *cat = rc ? NULL : tarn_session_catalog_prefix(s, p->lake_alias);
    if (!rc)
        rc = records_ensure(s, cat);
    if (!rc)
        rc = ensure_table(s, cat);
    if (!rc)
        rc = decide_and_record(out, p, s, cat, now, max_fires);
    if (rc || !out->fired)
        return rc;
    unsigned char *sel = xcalloc(p->nmodels ? p->nmodels : 1, 1);
    select_fired(sel, out, p);
    out->occurrences = fired_text(out, p);
    build_opts o = *base;
    o.selected = sel;
    o.trigger = "scheduler";
    o.now = now; /* the tick's time: the slices and frontiers it builds */
    o.occurrence = out->occurrences;
    o.selectors = out->occurrences;
    o.config_ran = 1;
    rc = build_run(&out->sum, p, s, &o);
    out->has_sum = 1; /* build_run fills it even when it fails */
    free(sel);
    if (rc)
        return rc;
    out->built = 1;
    if (record_run_id(out, p, s, cat) != 0)
        tarn_error_clear(); /* the run itself is recorded; only the link is lost */
    return 0;
}

void sched_report_free(sched_report *r, const tarn_project *p)
{
    if (r->has_sum)
        build_summary_free(&r->sum, p->nmodels);
    free(r->lines);
    free(r->occurrences);
    memset(r, 0, sizeof(*r));
}

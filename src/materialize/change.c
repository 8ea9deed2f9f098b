/*
 * change.c — change detection (see change.h): loading the lake's table
 * versions (kept in change_state.c) and the last successful builds, and
 * the reason a model runs; a model's config hash and file fingerprints
 * come from inputs.c.
 */
#include "materialize/change.h"
#include "materialize/inputs.h"
#include "materialize/spec.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- the lake: table versions and the last builds -------------------- */

/* Runs the records query q (freed here) into r; `what` says in an error
 * what was being read. */
static int records_query(qrows *r, change_ctx *cc, tarn_buf *q, const char *what)
{
    /* in the catalog database: PostgreSQL reads its records there rather
     * than sending every row over to DuckDB (a worker reads them for each
     * model it builds) */
    int rc = catalog_rows(r, cc->s, cc->lake, buf_cstr(q));
    buf_free(q);
    return rc ? tarn_error_prefix(rc, "%s", what) : 0;
}

/* Each table's content version (tarn_session_table_versions): a flush,
 * merge or rewrite is not a change, and expiring snapshots can lower a
 * version, never raise it, so change_reason takes only a newer version
 * for a change. */
static int load_versions(change_ctx *cc)
{
    char **keys = NULL;
    size_t n = 0;
    int rc = tarn_session_table_versions(cc->s, cc->lake, &keys, &cc->ver_vals, &n);
    if (rc)
        return tarn_error_prefix(rc, "reading the lake's table versions");
    for (size_t i = 0; i < n; i++)
        strlist_push_owned(&cc->ver_keys, keys[i]);
    free(keys);
    if (!cc->ver_vals)
        cc->ver_vals = xcalloc(1, sizeof(int64_t));
    return 0;
}

/* The columns of records table `table` (a lake built by an older tarn may
 * lack the newer ones); empty when the table does not exist. */
static void record_columns(change_ctx *cc, const char *table, strlist *out)
{
    /* the names of an empty result, in the catalog database (a view over
     * PostgreSQL's table in DuckDB asks PostgreSQL for its columns when it
     * binds); a missing table is an error there: no columns */
    tarn_buf q = {0};
    buf_puts(&q, "SELECT * FROM ");
    quote_prefixed(&q, cc->cat, table);
    buf_puts(&q, " WHERE 1 = 0");
    qrows r;
    int rc = catalog_rows(&r, cc->s, cc->lake, buf_cstr(&q));
    buf_free(&q);
    if (rc) {
        tarn_error_clear();
        return;
    }
    for (size_t i = 0; i < r.ncols; i++)
        strlist_push(out, r.names[i]);
    qrows_free(&r);
}

static void col_or_null(tarn_buf *q, const strlist *cols, const char *name)
{
    if (strlist_find(cols, name) >= 0)
        quote_ident(q, name);
    else
        buf_puts(q, "NULL");
}

static long model_of_name(const change_ctx *cc, const char *name)
{
    const char *table;
    char *schema = change_name_split(name, &table);
    if (!schema)
        return -1;
    long mi = project_find_model(cc->p, schema, table);
    free(schema);
    return mi;
}

/* Reads each model's latest successful run in tarn_model_run, among
 * those `also` (NULL or " AND …") keeps: query q is the select list
 * (model first; freed here), and `row` takes each row of a model of the
 * project. */
static int load_runs(change_ctx *cc, tarn_buf *q, const char *also,
                     void (*row)(change_ctx *cc, long mi, const qrows *r, size_t i),
                     void (*no_model)(change_ctx *cc, const qrows *r, size_t i))
{
    buf_puts(q, " FROM (SELECT *, row_number() OVER (PARTITION BY model ORDER BY run_id DESC, "
                "finished_at DESC) AS _rn FROM ");
    quote_prefixed(q, cc->cat, "tarn_model_run");
    buf_puts(q, " WHERE status = 'success'");
    if (also)
        buf_puts(q, also);
    buf_puts(q, ") AS lr WHERE _rn = 1");
    qrows r;
    int rc = records_query(&r, cc, q, "reading the last builds");
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows; i++) {
        long mi = model_of_name(cc, qrows_get(&r, i, 0));
        if (mi >= 0)
            row(cc, mi, &r, i);
        else if (no_model)
            no_model(cc, &r, i);
    }
    qrows_free(&r);
    return 0;
}

static void prev_row(change_ctx *cc, long mi, const qrows *r, size_t i)
{
    change_prev *pv = &cc->prev[mi];
    pv->found = 1;
    pv->model_hash = qrows_dup(r, i, 1, "");
    pv->config_hash = qrows_dup(r, i, 2, NULL);
    pv->target_version = qrows_get(r, i, 3) ? strtoll(qrows_get(r, i, 3), NULL, 10) : -1;
    pv->upstream = qrows_get(r, i, 4) ? json_loads(qrows_get(r, i, 4), 0, NULL) : NULL;
    pv->files = qrows_get(r, i, 5) ? json_loads(qrows_get(r, i, 5), 0, NULL) : NULL;
}

/* What change detection compares with: each model's last successful
 * build that was not of single slices. cols: tarn_model_run's columns. */
static int load_prev(change_ctx *cc, const strlist *cols)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT model, model_hash, ");
    col_or_null(&q, cols, "config_hash");
    buf_puts(&q, ", ");
    col_or_null(&q, cols, "target_version");
    buf_puts(&q, ", upstream, ");
    col_or_null(&q, cols, "source_files");
    /* A model that appends to its slices compares with its last build of
     * any slice: what it read then was appended. */
    const char *also = strlist_find(cols, "run_reason") < 0 ? NULL
                       : strlist_find(cols, "strategy_spec") < 0
                           ? " AND coalesce(run_reason, '') NOT IN ('partition requested', "
                             "'current partition', 'backfill')"
                           : " AND (coalesce(run_reason, '') NOT IN ('partition requested', "
                             "'current partition', 'backfill') OR coalesce(strategy_spec, '') "
                             "LIKE 'partitioned % append')";
    return load_runs(cc, &q, also, prev_row, NULL);
}

static void last_row(change_ctx *cc, long mi, const qrows *r, size_t i)
{
    change_last *l = &cc->last[mi];
    l->found = 1;
    l->label = qrows_dup(r, i, 1, "");
    l->spec = qrows_dup(r, i, 2, NULL);
    l->model_hash = qrows_dup(r, i, 3, "");
}

/* A model tarn built that the project has no more (its file was removed
 * or renamed) while the lake still holds its table: that table's rows
 * will not change again, and a model reading it is warned. */
static void retired_row(change_ctx *cc, const qrows *r, size_t i)
{
    const char *table;
    char *schema = change_name_split(qrows_get(r, i, 0), &table);
    if (!schema)
        return;
    if (change_version(cc, schema, table) >= 0) {
        const char *path = qrows_get(r, i, 4), *run = qrows_get(r, i, 5);
        strlist_push_owned(&cc->retired_keys, change_table_key(schema, table));
        strlist_push_owned(&cc->retired_notes,
                           xasprintf("last built by run %s from %s", run ? run : "?",
                                     path ? path : "a model file"));
    }
    free(schema);
}

/* The last successful build of every model, whatever its run reason:
 * how it wrote the table (strategy_spec, or only the strategy label on a
 * lake an older tarn built) and its model hash. */
static int load_last(change_ctx *cc, const strlist *cols)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT model, strategy, ");
    col_or_null(&q, cols, "strategy_spec");
    buf_puts(&q, ", model_hash, path, run_id");
    return load_runs(cc, &q, NULL, last_row, retired_row);
}

/* The slices of each selected partitioned model, still written the way it
 * is now, that a build with other SQL wrote last (tarn_partition's
 * model_hash; on a lake an older tarn built, the hash of the run that
 * built the slice). A slice whose last build failed keeps the hash of the
 * build that wrote its rows, so an interrupted rebuild resumes. */
static int load_stale(change_ctx *cc, const unsigned char *sel)
{
    strlist cols = {0};
    record_columns(cc, "tarn_partition", &cols);
    if (cols.n == 0)
        return 0;
    tarn_buf q = {0};
    buf_puts(&q, "SELECT p.model, p.\"partition\", coalesce(");
    if (strlist_find(&cols, "model_hash") >= 0)
        buf_puts(&q, "p.model_hash, ");
    buf_puts(&q, "(SELECT max(r.model_hash) FROM ");
    quote_prefixed(&q, cc->cat, "tarn_model_run");
    buf_puts(&q, " r WHERE r.run_id = p.run_id AND r.model = p.model AND r.status = 'success'), "
                 "'') FROM ");
    quote_prefixed(&q, cc->cat, "tarn_partition");
    buf_puts(&q, " p WHERE p.snapshot_id IS NOT NULL ORDER BY 1, 2");
    strlist_free(&cols);
    qrows r;
    int rc = records_query(&r, cc, &q, "reading the built partitions");
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows; i++) {
        long mi = model_of_name(cc, qrows_get(&r, i, 0));
        if (mi < 0 || !sel[mi] || !cc->p->models[mi].annot.grain ||
            change_strategy_changed(cc, (size_t)mi, NULL))
            continue;
        const tarn_model *m = &cc->p->models[mi];
        const char *hash = qrows_get(&r, i, 2), *part = qrows_get(&r, i, 1);
        strlist_push(&cc->built[mi], part);
        int64_t t;
        /* a slice of another grain (the table was empty when it changed) */
        if (m->annot.grain != GRAIN_DYNAMIC && partition_parse(&t, m->annot.grain, part) != 0) {
            tarn_error_clear();
            continue;
        }
        if (strcmp(hash ? hash : "", m->hash) != 0)
            strlist_push(&cc->stale[mi], part);
    }
    qrows_free(&r);
    return 0;
}

/* ---- the interface --------------------------------------------------- */

int change_load(change_ctx *cc, tarn_project *p, tarn_session *s, const char *lake, const char *cat,
                const unsigned char *sel)
{
    memset(cc, 0, sizeof(*cc));
    cc->p = p;
    cc->s = s;
    cc->lake = lake;
    cc->cat = cat;
    size_t nm = p->nmodels ? p->nmodels : 1;
    cc->config_hash = xcalloc(nm, sizeof(*cc->config_hash));
    cc->files_json = xcalloc(nm, sizeof(char *));
    cc->always = xcalloc(nm, sizeof(char *));
    cc->prev = xcalloc(nm, sizeof(change_prev));
    cc->last = xcalloc(nm, sizeof(change_last));
    cc->stale = xcalloc(nm, sizeof(strlist));
    cc->built = xcalloc(nm, sizeof(strlist));
    cc->vol = xcalloc(nm, sizeof(char *));
    int rc = 0;
    if (cat) {
        strlist runs = {0}; /* none: no build recorded yet */
        rc = load_versions(cc);
        if (!rc)
            record_columns(cc, "tarn_model_run", &runs);
        if (!rc && runs.n)
            rc = load_prev(cc, &runs);
        if (!rc && runs.n)
            rc = load_last(cc, &runs);
        strlist_free(&runs);
        if (!rc)
            rc = load_stale(cc, sel);
    }
    if (rc)
        return rc;
    change_inputs_load(cc, sel);
    return 0;
}

void change_free(change_ctx *cc)
{
    if (cc->p)
        for (size_t i = 0; i < cc->p->nmodels; i++) {
            free(cc->files_json[i]);
            free(cc->always[i]);
            free(cc->prev[i].model_hash);
            free(cc->prev[i].config_hash);
            if (cc->prev[i].upstream)
                json_decref(cc->prev[i].upstream);
            if (cc->prev[i].files)
                json_decref(cc->prev[i].files);
            free(cc->last[i].spec);
            free(cc->last[i].label);
            free(cc->last[i].model_hash);
            strlist_free(&cc->stale[i]);
            strlist_free(&cc->built[i]);
        }
    free(cc->config_hash);
    free(cc->files_json);
    free(cc->always);
    free(cc->prev);
    free(cc->last);
    free(cc->stale);
    free(cc->built);
    free(cc->vol);
    strlist_free(&cc->ver_keys);
    strlist_free(&cc->retired_keys);
    strlist_free(&cc->retired_notes);
    free(cc->ver_vals);
    strlist_free(&cc->fp_keys);
    strlist_free(&cc->fp_vals);
    memset(cc, 0, sizeof(*cc));
}

/* Whether an upstream table read at the last build has changed since. */
static char *upstream_reason(const change_ctx *cc, const json_t *up, const unsigned char *will_run)
{
    if (!json_is_array(up))
        return xstrdup("no change record");
    size_t i;
    const json_t *e;
    json_array_foreach(up, i, e)
    {
        const char *table = json_string_value(json_object_get(e, "table")), *name;
        const json_t *ver = json_object_get(e, "version");
        char *schema = change_name_split(table, &name);
        if (!schema || !json_is_integer(ver)) {
            free(schema);
            return xstrdup("no change record");
        }
        long um = project_find_model(cc->p, schema, name);
        int64_t now = change_version(cc, schema, name);
        free(schema);
        if ((will_run && um >= 0 && will_run[um]) || now < 0 || now > json_integer_value(ver))
            return xasprintf(REASON_UPSTREAM "%s", table);
    }
    return NULL;
}

static char *files_reason(const change_ctx *cc, size_t mi, const json_t *prev)
{
    json_t *now = json_loads(cc->files_json[mi] ? cc->files_json[mi] : "{}", 0, NULL);
    char *why = NULL;
    if (!json_is_object(prev)) {
        why = xstrdup("no change record");
    } else {
        const char *k;
        json_t *v;
        json_object_foreach(now, k, v)
        {
            const char *was = json_string_value(json_object_get(prev, k));
            if (!why && (!was || strcmp(was, json_string_value(v)) != 0))
                why = xasprintf("source file changed: %s", k);
        }
        json_object_foreach((json_t *)prev, k, v)
        {
            if (!why && !json_object_get(now, k))
                why = xasprintf("source file changed: %s", k);
        }
    }
    json_decref(now);
    return why;
}

/* Whether a file model mi names changed since its last build. */
static int files_reason_is_set(const change_ctx *cc, size_t mi)
{
    char *why = files_reason(cc, mi, cc->prev[mi].files);
    int set = why != NULL;
    free(why);
    return set;
}

int change_only_upstream(const change_ctx *cc, size_t mi, const char *reason)
{
    return reason && strncmp(reason, REASON_UPSTREAM, strlen(REASON_UPSTREAM)) == 0 &&
           cc->prev[mi].found && !cc->always[mi] && !files_reason_is_set(cc, mi);
}

const char *change_last_spec(const change_ctx *cc, size_t mi, int *label_only)
{
    const change_last *l = &cc->last[mi];
    if (label_only)
        *label_only = l->found && !l->spec;
    return !l->found ? NULL : l->spec ? l->spec : l->label;
}

int change_strategy_changed(const change_ctx *cc, size_t mi, const char **was)
{
    int label_only = 0;
    const char *prev = change_last_spec(cc, mi, &label_only);
    if (was)
        *was = prev;
    if (!prev)
        return 0;
    const model_annot *a = &cc->p->models[mi].annot;
    if (label_only)
        return strcmp(prev, annot_strategy_label(a)) != 0;
    char *now = annot_strategy_spec(a);
    int changed = strcmp(prev, now) != 0;
    free(now);
    return changed;
}

/* Whether the last successful build ran other SQL or annotations with the
 * same strategy (a change of strategy is guard.h's matter). */
static int sql_changed(const change_ctx *cc, size_t mi)
{
    const change_last *l = &cc->last[mi];
    return l->found && strcmp(l->model_hash, cc->p->models[mi].hash) != 0 &&
           !change_strategy_changed(cc, mi, NULL);
}

/* A partitioned model that must rebuild the slices other SQL built: a
 * time grain always, a dynamic one when it has some (a dynamic model
 * without {partition} is otherwise skipped like any other). */
static int needs_slice_rebuild(const change_ctx *cc, size_t mi)
{
    return cc->p->models[mi].annot.grain && cc->stale[mi].n > 0;
}

const char *change_retired(const change_ctx *cc, const char *schema, const char *table)
{
    char *k = change_table_key(schema, table);
    long i = strlist_find(&cc->retired_keys, k);
    free(k);
    return i >= 0 ? cc->retired_notes.items[i] : NULL;
}

/* The sentences about the tables of retired models that model m reads,
 * appended to w. */
static void warn_retired_reads(tarn_buf *w, const change_ctx *cc, const tarn_model *m)
{
    strlist seen = {0};
    for (size_t s = 0; s < m->body.n; s++)
        for (size_t i = 0; i < m->body.items[s].refs.n; i++) {
            const table_ref *r = &m->body.items[s].refs.items[i];
            if (r->is_file || !change_ref_in_lake(cc, r) || project_ref_model(cc->p, r) >= 0 ||
                project_ref_current_view(cc->p, r) >= 0)
                continue;
            const char *schema = r->schema ? r->schema : "main";
            const char *note = change_retired(cc, schema, r->table);
            char *k = change_table_key(schema, r->table);
            if (note && strlist_find(&seen, k) < 0) {
                buf_printf(w,
                           "%sreads %s.%s, which no model builds now (%s, a file the project no "
                           "longer has): its rows will not change again. Read the model that "
                           "replaced it, restore the file, or drop the table",
                           w->len ? "; " : "", schema, r->table, note);
                strlist_push(&seen, k);
            }
            free(k);
        }
    strlist_free(&seen);
}

char *change_warning(const change_ctx *cc, size_t mi)
{
    const tarn_model *m = &cc->p->models[mi];
    const char *v = cc->vol[mi];
    tarn_buf w = {0};
    if (v && m->annot.strategy == STRAT_APPEND && !m->annot.grain)
        buf_printf(&w,
                   "the query calls %s%s, so its result differs on every run and this append "
                   "model appends its rows again each time (intended for a log of runs; "
                   "otherwise make it a merge with key=, or replace)",
                   v, change_volatile_is_call(v) ? "()" : "");
    warn_retired_reads(&w, cc, m);
    return w.len ? buf_detach(&w) : NULL;
}

/* Whether the slice a run builds by default (the current one at the
 * run's time) has been built. */
static int current_built(const change_ctx *cc, size_t mi, const build_opts *o)
{
    const tarn_model *m = &cc->p->models[mi];
    char *cur = partition_format(m->annot.grain, o->now > 0 ? o->now : (int64_t)time(NULL));
    int built = strlist_find(&cc->built[mi], cur) >= 0;
    free(cur);
    return built;
}

char *change_reason(const change_ctx *cc, size_t mi, const build_opts *o,
                    const unsigned char *will_run)
{
    const tarn_model *m = &cc->p->models[mi];
    if (o->force || o->full_refresh)
        return xstrdup("forced");
    const char *was = NULL;
    if (change_strategy_changed(cc, mi, &was)) {
        char *now = change_last_spec(cc, mi, NULL) == cc->last[mi].label
                        ? xstrdup(annot_strategy_label(&m->annot))
                        : annot_strategy_spec(&m->annot);
        char *what = spec_describe(was, now);
        char *why = xasprintf("strategy changed (%s)", what);
        free(what);
        free(now);
        return why;
    }
    if (needs_slice_rebuild(cc, mi) ||
        (m->annot.strategy == STRAT_INCREMENTAL && sql_changed(cc, mi)))
        return xstrdup(REASON_FULL_REBUILD);
    /* A time-partitioned model rebuilds its current slice on every run —
     * except one that appends to its slices: appending the same input
     * again would duplicate its rows, so it runs when its inputs change,
     * as an append model does (or when that slice was never built). */
    if (o->partition || o->from)
        if (m->annot.grain && m->annot.grain != GRAIN_DYNAMIC)
            return xstrdup("partition requested");
    if (m->annot.grain && m->annot.grain != GRAIN_DYNAMIC && m->annot.strategy != STRAT_APPEND)
        return xstrdup("current partition");
    if (m->annot.grain && m->annot.grain != GRAIN_DYNAMIC && !current_built(cc, mi, o))
        return xstrdup("current partition (not built yet)");
    if (m->annot.grain == GRAIN_DYNAMIC && o->partition)
        return xstrdup("partition requested");
    if (m->annot.strategy == STRAT_INCREMENTAL)
        return xstrdup("incremental");
    if (m->annot.strategy == STRAT_MANUAL)
        return xstrdup("manual");
    const change_prev *pv = &cc->prev[mi];
    if (!pv->found)
        return xstrdup("first run");
    if (strcmp(pv->model_hash, m->hash) != 0)
        return xstrdup(m->annot.strategy == STRAT_APPEND ? REASON_APPEND_CHANGED : "sql changed");
    if (!pv->config_hash || pv->target_version < 0)
        return xstrdup("no change record");
    if (strcmp(pv->config_hash, cc->config_hash[mi]) != 0)
        return xstrdup(strncmp(pv->config_hash, cc->config_hash[mi], CONFIG_HALF) == 0
                           ? "tests changed"
                           : "config changed");
    int64_t tv = change_version(cc, m->schema, m->table);
    if (tv < 0)
        return xstrdup("table missing");
    /* An append model does not append the same input again because its
     * table was written outside tarn: that would duplicate rows. */
    if (tv > pv->target_version && m->annot.strategy != STRAT_APPEND)
        return xstrdup("table changed outside tarn");
    char *why = upstream_reason(cc, pv->upstream, will_run);
    if (!why)
        why = files_reason(cc, mi, pv->files);
    if (!why && cc->always[mi])
        why = xstrdup(cc->always[mi]);
    return why;
}

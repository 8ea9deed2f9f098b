/*
 * runner.c — a run: config, checks, then every selected model in DAG
 * order, skipping the downstream of failures (see build.h).
 *
 * Everything that can be checked before writing is checked first — the
 * config runs, every table a model reads exists, every partition argument
 * parses — so that a project error leaves the lake exactly as it was.
 */
#include "materialize/codegen.h"
#include "materialize/datatest.h"
#include "materialize/queue.h"
#include "materialize/records.h"
#include "materialize/run_int.h"

#include "project/query.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/clock.h"
#include "util/buf.h"
#include "util/quote.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const status_names[] = {"pending", "success", "failed", "skipped", "cancelled"};

/* The run's stop request (build_cancel): written by a signal-watching
 * thread, read by the main thread between and inside builds. */
static _Atomic int cancel_signal;

void build_cancel(int sig)
{
    cancel_signal = sig;
}

int build_cancel_signal(void)
{
    return cancel_signal;
}

const char *model_status_name(model_status s)
{
    return status_names[s];
}

const char *prefetch_use_name(prefetch_use u)
{
    static const char *const names[] = {"none", "used", "failed"};
    return names[u];
}

static char *lower_dup(const char *s)
{
    char *d = xstrdup(s);
    for (char *p = d; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

int run_has_table(const run_ctx *c, const char *schema, const char *table)
{
    char *k = change_table_key(schema, table);
    int found = strlist_find(&c->lake_tables, k) >= 0;
    free(k);
    return found;
}

static char *ref_key(const table_ref *r)
{
    char *k =
        xasprintf("%s.%s.%s", r->catalog ? r->catalog : "", r->schema ? r->schema : "", r->table);
    char *l = lower_dup(k);
    free(k);
    return l;
}

const source_entry *run_source(const run_ctx *c, const table_ref *r)
{
    char *k = ref_key(r);
    const source_entry *found = NULL;
    for (size_t i = 0; i < c->nsources && !found; i++)
        if (strcmp(c->sources[i].key, k) == 0)
            found = &c->sources[i];
    free(k);
    return found;
}

/* ---- config ---------------------------------------------------------- */

int build_run_config(tarn_project *p, tarn_session *s)
{
    for (size_t i = 0; i < p->nconfig; i++) {
        const config_file *cf = &p->config[i];
        for (size_t j = 0; j < cf->nstmts; j++) {
            int rc = query_exec(s, cf->stmts[j].text, NULL);
            if (rc) {
                char *msg = xstrdup(tarn_error_last());
                rc = tarn_error_set(TARN_EINVALID, "%s:%d: %s", cf->path, cf->stmts[j].line, msg);
                free(msg);
                return rc;
            }
        }
    }
    if (!tarn_session_catalog_prefix(s, p->lake_alias))
        return tarn_error_set(TARN_EINVALID, "config/ did not attach lake \"%s\"", p->lake_alias);
    return 0;
}

/* ---- partitions ------------------------------------------------------ */

int build_partitions(strlist *out, const tarn_model *m, const build_opts *o, int64_t now)
{
    part_grain g = m->annot.grain;
    if (!g)
        return 0;
    if (o->slices) {
        strlist_copy(out, o->slices);
        return 0;
    }
    if (o->partition && g == GRAIN_DYNAMIC) {
        strlist_push(out, o->partition);
        return 0;
    }
    if (o->partition) {
        /* The slice P itself, or — for a model of another grain — the
         * slice that contains the point in time P. */
        int64_t t;
        if (partition_parse(&t, g, o->partition) == 0) {
            strlist_push(out, o->partition);
            return 0;
        }
        char *msg = xstrdup(tarn_error_last());
        if (partition_parse_time(&t, o->partition) != 0) {
            int rc = tarn_error_set(TARN_EINVALID, "--partition for %s: %s", m->name, msg);
            free(msg);
            return rc;
        }
        free(msg);
        tarn_error_clear();
        strlist_push_owned(out, partition_format(g, t));
        return 0;
    }
    if ((o->from || o->to) && g != GRAIN_DYNAMIC) {
        if (!o->from || !o->to)
            return tarn_error_set(TARN_EINVALID, "give both --from and --to");
        return partition_range(out, g, o->from, o->to, 100000);
    }
    if (g == GRAIN_DYNAMIC) {
        int uses = 0;
        for (size_t i = 0; i < m->body.n; i++)
            uses |= m->body.items[i].npart > 0;
        if (uses)
            return tarn_error_set(TARN_EINVALID,
                                  "%s is partitioned dynamic and its SQL uses {partition}: give "
                                  "--partition VALUE (or select other models)",
                                  m->name);
        return 0; /* every value the SELECT yields */
    }
    /* the lookback=N slices before the current one, oldest first */
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
    return 0;
}

/* A time-partitioned model with start= whose table does not exist yet
 * builds every slice from its start to now (its first run is a backfill),
 * unless the run names its slices. */
static int first_from_start(run_ctx *c, size_t mi, int64_t now)
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

/* ---- what the lake holds --------------------------------------------- */

static int load_lake_tables(run_ctx *c)
{
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT table_schema, table_name, table_type FROM information_schema.tables "
                   "WHERE table_catalog = ");
    quote_literal(&sql, c->lake);
    qrows q;
    int rc = query_rows(&q, c->s, buf_cstr(&sql));
    buf_free(&sql);
    if (rc)
        return rc;
    for (size_t i = 0; i < q.nrows; i++) {
        char *k = change_table_key(qrows_get(&q, i, 0), qrows_get(&q, i, 1));
        const char *type = qrows_get(&q, i, 2);
        strlist_push_owned(type && strcmp(type, "VIEW") == 0 ? &c->lake_views : &c->lake_tables, k);
    }
    qrows_free(&q);
    sql = (tarn_buf){0};
    buf_puts(&sql, "SELECT schema_name FROM information_schema.schemata WHERE catalog_name = ");
    quote_literal(&sql, c->lake);
    rc = query_rows(&q, c->s, buf_cstr(&sql));
    buf_free(&sql);
    if (rc)
        return rc;
    for (size_t i = 0; i < q.nrows; i++)
        strlist_push_owned(&c->lake_schemas, lower_dup(qrows_get(&q, i, 0)));
    qrows_free(&q);
    return 0;
}

/* ---- checking what models read --------------------------------------- */

/* Names a model's own setup statements create (CREATE TEMP TABLE x …):
 * its query may read them although they do not exist yet. */
static void local_names(strlist *out, const tarn_model *m)
{
    for (size_t i = 0; i + 1 < m->body.n; i++) {
        sql_tokens tk;
        if (sql_tokenize(&tk, m->body.items[i].text) != 0) {
            tarn_error_clear();
            continue;
        }
        size_t j = 0;
        if (tk.n > 0 && sql_tok_is_kw(&tk.toks[0], "CREATE")) {
            j = 1;
            if (j + 1 < tk.n && sql_tok_is_kw(&tk.toks[j], "OR"))
                j += 2;
            while (j < tk.n &&
                   (sql_tok_is_kw(&tk.toks[j], "TEMP") || sql_tok_is_kw(&tk.toks[j], "TEMPORARY") ||
                    sql_tok_is_kw(&tk.toks[j], "TABLE") || sql_tok_is_kw(&tk.toks[j], "VIEW") ||
                    sql_tok_is_kw(&tk.toks[j], "MACRO")))
                j++;
            if (j + 2 < tk.n && sql_tok_is_kw(&tk.toks[j], "IF"))
                j += 3;
            /* the last part of a possibly qualified name */
            while (j + 2 < tk.n && tk.toks[j + 1].type == SQL_TOK_OP &&
                   strcmp(tk.toks[j + 1].text, ".") == 0)
                j += 2;
            if (j < tk.n && (tk.toks[j].type == SQL_TOK_IDENT || tk.toks[j].type == SQL_TOK_QIDENT))
                strlist_push_owned(out, lower_dup(tk.toks[j].text));
        }
        sql_tokens_free(&tk);
    }
}

static void ref_text(tarn_buf *b, const table_ref *r)
{
    if (r->catalog)
        buf_printf(b, "%s.", r->catalog);
    if (r->schema)
        buf_printf(b, "%s.", r->schema);
    buf_puts(b, r->table);
}

/* Classifies a reference that is not a model's target, once per name. */
static const source_entry *classify_source(run_ctx *c, const table_ref *r)
{
    const source_entry *known = run_source(c, r);
    if (known)
        return known;
    c->sources = xrealloc(c->sources, (c->nsources + 1) * sizeof(source_entry));
    source_entry *e = &c->sources[c->nsources++];
    memset(e, 0, sizeof(*e));
    e->key = ref_key(r);
    const char *schema = r->schema ? r->schema : "main";
    char *k = change_table_key(schema, r->table);
    int lake_table = strlist_find(&c->lake_tables, k) >= 0;
    int lake_view = strlist_find(&c->lake_views, k) >= 0;
    free(k);
    int in_lake = r->catalog && strcasecmp(r->catalog, c->lake) == 0;
    if (!in_lake) {
        /* Does DuckDB resolve it as written (a config/ view, a file...)? */
        tarn_buf probe = {0};
        buf_puts(&probe, "SELECT * FROM ");
        quote_qualified(&probe, r->catalog, r->schema, r->table);
        buf_puts(&probe, " LIMIT 0");
        int rc = query_exec(c->s, buf_cstr(&probe), NULL);
        buf_free(&probe);
        if (rc == 0) {
            e->kind = SRC_DUCKDB;
            return e;
        }
        tarn_error_clear();
        if (r->catalog) {
            e->kind = SRC_MISSING;
            return e;
        }
    }
    e->kind = lake_table ? SRC_LAKE : lake_view ? SRC_LAKE_VIEW : SRC_MISSING;
    if (e->kind != SRC_MISSING) {
        e->schema = xstrdup(schema);
        e->table = xstrdup(r->table);
    }
    return e;
}

static void check_model_reads(run_ctx *c, size_t mi, const unsigned char *sel, diag_list *d)
{
    const tarn_model *m = &c->p->models[mi];
    int manual = m->annot.strategy == STRAT_MANUAL;
    strlist local = {0};
    local_names(&local, m);
    for (size_t s = 0; s < m->body.n; s++) {
        const model_stmt *st = &m->body.items[s];
        for (size_t i = 0; i < st->refs.n; i++) {
            const table_ref *r = &st->refs.items[i];
            if (r->is_file)
                continue;
            int line = body_line_of(st, r->offset == REF_NO_OFFSET ? 0 : r->offset);
            long up = project_ref_model(c->p, r);
            if (up < 0)
                up = project_ref_current_view(c->p, r); /* made by that model's build */
            if (up == (long)mi)
                continue;
            if (up >= 0) {
                const tarn_model *um = &c->p->models[up];
                if (!sel[up] && !run_has_table(c, um->schema, um->table)) {
                    char *fix =
                        xasprintf("build it first, or select it too: tarn run +%s", m->name);
                    diag_add(d, m->path, line, fix,
                             "%s reads %s, which %s builds but which is not in lake \"%s\" yet",
                             m->name, um->name, um->path, c->lake);
                    free(fix);
                }
                continue;
            }
            if (!r->catalog && !r->schema) {
                char *l = lower_dup(r->table);
                int is_local = strlist_find(&local, l) >= 0;
                free(l);
                if (is_local)
                    continue;
            }
            const source_entry *e = classify_source(c, r);
            if (e->kind == SRC_MISSING && !manual) {
                tarn_buf name = {0};
                ref_text(&name, r);
                char *fix = xasprintf(
                    "define it in config/ (e.g. config/sources.sql: CREATE VIEW %s AS FROM "
                    "read_csv('data/….csv')), or fix the name",
                    buf_cstr(&name));
                diag_add(d, m->path, line, fix,
                         "table %s does not exist: no model builds it, config/ does not define "
                         "it and lake \"%s\" has no such table",
                         buf_cstr(&name), c->lake);
                free(fix);
                buf_free(&name);
            }
        }
    }
    strlist_free(&local);
}

/* ---- the run --------------------------------------------------------- */

void run_emit(run_ctx *c, build_event_type type, size_t model, size_t index)
{
    if (!c->o->on_event)
        return;
    build_event ev = {.type = type,
                      .project = c->p,
                      .summary = c->sum,
                      .result = type == BUILD_MODEL_START || type == BUILD_MODEL_FINISH
                                    ? &c->sum->results[model]
                                    : NULL,
                      .index = index};
    c->o->on_event(c->o->ctx, &ev);
}

/* A model is skipped when something it reads failed or was skipped in
 * this run; the reason names the first such upstream model. */
static int skip_reason(run_ctx *c, size_t mi, const unsigned char *sel, model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    for (size_t i = 0; i < m->nup; i++) {
        size_t u = m->up[i].model;
        const model_result *ur = &c->sum->results[u];
        if (!sel[u] || ur->unchanged || (ur->status != MODEL_FAILED && ur->status != MODEL_SKIPPED))
            continue;
        r->error = xasprintf("upstream %s %s", c->p->models[u].name,
                             ur->status == MODEL_FAILED ? "failed" : "was skipped");
        return 1;
    }
    return 0;
}

void run_record_alone(run_ctx *c, size_t mi, const model_result *r)
{
    strlist recs = {0};
    records_model(&recs, c->cat, c->sum->run_id, &c->p->models[mi], r, "[]");
    for (size_t i = 0; i < recs.n; i++)
        if (query_exec(c->s, recs.items[i], NULL) != 0)
            tarn_error_clear();
    strlist_free(&recs);
}

void run_result_prepare(run_ctx *c, size_t mi, char *why)
{
    const tarn_model *m = &c->p->models[mi];
    model_result *r = &c->sum->results[mi];
    r->run_reason = why;
    free(r->warning);
    r->warning = change_warning(&c->chg, mi);
    r->config_hash = c->chg.config_hash[mi];
    r->source_files = c->chg.files_json[mi];
    r->target_version = change_version(&c->chg, m->schema, m->table);
}

/* Whether model mi builds: 0 when it is skipped (its upstream failed, or
 * nothing it depends on changed; recorded and reported here), 1 when it
 * builds (its run reason set). */
int run_decide(run_ctx *c, size_t mi, size_t index)
{
    build_summary *out = c->sum;
    const tarn_model *m = &c->p->models[mi];
    model_result *r = &out->results[mi];
    char *why = NULL;
    if (!skip_reason(c, mi, c->o->selected, r)) {
        why = change_reason(&c->chg, mi, c->o, NULL);
        r->unchanged = why == NULL;
    }
    if (!why) {
        r->status = MODEL_SKIPPED;
        r->started_at = clock_epoch_s();
        if (r->unchanged) {
            /* one INSERT for all of them, at the end of the run */
            if (c->unchanged_rows.len)
                buf_puts(&c->unchanged_rows, ", ");
            else
                records_model_insert(&c->unchanged_rows, c->cat);
            records_model_values(&c->unchanged_rows, out->run_id, m, r, "[]");
            out->unchanged++;
        } else {
            run_record_alone(c, mi, r);
            out->skipped++;
        }
        run_emit(c, BUILD_MODEL_FINISH, mi, index);
        return 0;
    }
    if (c->o->slices || c->from_start[mi]) {
        free(why);
        why = c->o->slices
                  ? xstrdup("backfill")
                  : xasprintf("first run (every slice from start=%s)", m->annot.partition_start);
    }
    run_result_prepare(c, mi, why);
    return 1;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Adds the build of one slice `one` to the model's result `r`, and frees
 * what `one` holds. */
static void fold_slice(model_result *r, model_result *one)
{
    if (r->partitions.n == 0)
        r->started_at = one->started_at;
    /* a failed slice fails the model, whatever the slices after it did */
    if (r->partitions.n == 0 || r->status == MODEL_SUCCESS)
        r->status = one->status;
    r->no_change = (r->partitions.n == 0 || r->no_change) && one->no_change;
    if (one->status == MODEL_SUCCESS && !one->no_change)
        r->snapshot_id = one->snapshot_id;
    else if (r->snapshot_id < 0)
        r->snapshot_id = one->snapshot_id;
    r->rows_written += one->rows_written;
    r->rows_deleted += one->rows_deleted;
    r->duration_ms += one->duration_ms;
    r->query_ms += one->query_ms;
    r->physical_partitions = one->physical_partitions;
    r->partition_rows = xrealloc(r->partition_rows, (r->partitions.n + 1) * sizeof(int64_t));
    r->partition_rows[r->partitions.n] = one->partition_rows ? one->partition_rows[0] : 0;
    strlist_push(&r->partitions, one->partitions.n ? one->partitions.items[0] : "");
    if (!r->upstream) {
        r->upstream = one->upstream;
        r->nupstream = one->nupstream;
        one->upstream = NULL;
        one->nupstream = 0;
    }
    free(r->tests_json);
    r->tests_json = one->tests_json;
    one->tests_json = NULL;
    if (one->error && !r->error) { /* the first failure's, named by its slice */
        r->error = one->partitions.n && strncmp(one->error, "partition ", 10) != 0
                       ? xasprintf("partition %s: %s", one->partitions.items[0], one->error)
                       : one->error;
        if (r->error == one->error)
            one->error = NULL;
    }
    if (one->warning) {
        char *w = r->warning ? xasprintf("%s\n%s", r->warning, one->warning) : one->warning;
        if (w == one->warning)
            one->warning = NULL;
        free(r->warning);
        r->warning = w;
    }
    one->run_reason = NULL; /* r's */
    build_result_free(one);
}

/* A partitioned model's slices, each a build and a snapshot of its own,
 * so that one bad slice fails alone and a run stopped halfway resumes with
 * the slices left (`tarn backfill`, or the next run). A changed model
 * rebuilds, besides the slices the run asks for, every slice other SQL
 * built (the slices rebuilt carry the new model hash); its first failure
 * stops it (the new SQL is wrong). Otherwise every slice is tried. */
static void build_slices(run_ctx *c, size_t mi, model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    strlist all = {0};
    strlist_copy(&all, &c->partitions[mi]);
    int rebuild = r->run_reason && strcmp(r->run_reason, REASON_FULL_REBUILD) == 0;
    const strlist *stale = &c->chg.stale[mi];
    for (size_t i = 0; i < stale->n && !c->o->slices && rebuild; i++)
        if (strlist_find(&all, stale->items[i]) < 0)
            strlist_push(&all, stale->items[i]);
    qsort(all.items, all.n, sizeof(char *), cmp_str);
    strlist saved = c->partitions[mi];
    int failed = 0;
    for (size_t i = 0; i < all.n && !(failed && rebuild) && !build_cancel_signal(); i++) {
        if (c->committed_slices && strlist_find(c->committed_slices, all.items[i]) >= 0)
            continue; /* a lost worker committed it in this run */
        c->partitions[mi] = (strlist){0};
        strlist_push(&c->partitions[mi], all.items[i]);
        model_result one = {.model = mi,
                            .snapshot_id = -1,
                            .run_reason = r->run_reason,
                            .config_hash = r->config_hash,
                            .source_files = r->source_files,
                            .target_version = change_version(&c->chg, m->schema, m->table)};
        model_build(c, mi, &one);
        failed |= one.status != MODEL_SUCCESS;
        if (one.status == MODEL_SUCCESS && !one.no_change)
            change_set_version(&c->chg, m->schema, m->table, one.snapshot_id);
        if (c->o->on_slice) {
            build_event ev = {.type = BUILD_MODEL_FINISH,
                              .project = c->p,
                              .summary = c->sum,
                              .result = &one,
                              .slice = all.items[i],
                              .slice_index = i + 1,
                              .slice_total = all.n};
            c->o->on_slice(c->o->ctx, &ev);
        }
        fold_slice(r, &one);
        strlist_free(&c->partitions[mi]);
    }
    c->partitions[mi] = saved;
    strlist_free(&all);
}

/* Builds model mi, decided to build (its START event already out). */
void run_execute(run_ctx *c, size_t mi, size_t index)
{
    build_summary *out = c->sum;
    const tarn_model *m = &c->p->models[mi];
    model_result *r = &out->results[mi];
    int rebuild =
        c->chg.stale[mi].n && r->run_reason && strcmp(r->run_reason, REASON_FULL_REBUILD) == 0;
    if (m->annot.grain && c->partitions[mi].n &&
        (c->partitions[mi].n > 1 || c->o->slices || rebuild))
        build_slices(c, mi, r);
    else
        model_build(c, mi, r);
    if (r->status == MODEL_SUCCESS) {
        out->succeeded++;
        if (!r->no_change)
            change_set_version(&c->chg, m->schema, m->table, r->snapshot_id);
    } else if (r->status == MODEL_CANCELLED) {
        out->cancelled++;
    } else {
        out->failed++;
    }
    run_emit(c, BUILD_MODEL_FINISH, mi, index);
    r->config_hash = r->source_files = NULL; /* owned by c->chg */
}

/* A model the stopped run never started: recorded as skipped, not run. */
void run_not_run(run_ctx *c, size_t mi, size_t index)
{
    model_result *r = &c->sum->results[mi];
    r->status = MODEL_SKIPPED;
    r->unchanged = 0;
    r->started_at = clock_epoch_s();
    free(r->error);
    r->error = xstrdup("not run: the run was stopped");
    run_record_alone(c, mi, r);
    c->sum->not_run++;
    run_emit(c, BUILD_MODEL_FINISH, mi, index);
}

static void run_model(run_ctx *c, size_t mi, size_t index)
{
    if (build_cancel_signal()) {
        run_not_run(c, mi, index);
        return;
    }
    if (!run_decide(c, mi, index))
        return;
    run_emit(c, BUILD_MODEL_START, mi, index);
    run_execute(c, mi, index);
}

/* ---- tarn test: data tests on what is published ---------------------- */

/* Runs model mi's data tests on its table at the run's start snapshot,
 * and records them (tarn_test_result). A model not built yet fails. */
static void test_model(run_ctx *c, size_t mi, size_t index)
{
    const tarn_model *m = &c->p->models[mi];
    model_result *r = &c->sum->results[mi];
    run_emit(c, BUILD_MODEL_START, mi, index);
    r->started_at = clock_epoch_s();
    double t0 = clock_mono_ms();
    int rc = 0;
    if (!run_has_table(c, m->schema, m->table)) {
        rc = tarn_error_set(TARN_EINVALID,
                            "%s is not built yet (lake \"%s\" has no table %s): "
                            "tarn run %s first",
                            m->name, c->lake, m->name, m->name);
    } else {
        tarn_buf t = {0};
        quote_qualified(&t, c->lake, m->schema, m->table);
        buf_printf(&t, " AT (VERSION => %lld)", (long long)c->sum->start_snapshot);
        rc = datatest_run(c, mi, buf_cstr(&t), r);
        buf_free(&t);
    }
    r->duration_ms = r->query_ms = clock_mono_ms() - t0;
    r->status = rc ? MODEL_FAILED : MODEL_SUCCESS;
    if (rc)
        r->error = xstrdup(tarn_error_last());
    tarn_error_clear();
    strlist recs = {0};
    records_tests(&recs, c->cat, c->sum->run_id, m, r, c->sum->start_snapshot);
    for (size_t i = 0; i < recs.n; i++)
        if (query_exec(c->s, recs.items[i], NULL) != 0)
            tarn_error_clear();
    strlist_free(&recs);
    if (rc)
        c->sum->failed++;
    else
        c->sum->succeeded++;
    run_emit(c, BUILD_MODEL_FINISH, mi, index);
}

/* ---- -j N: queries evaluated ahead (prefetch.h) ---------------------- */

typedef enum { RS_WAITING = 0, RS_READY, RS_COMPUTING, RS_COMPUTED, RS_DONE } run_state;

typedef struct {
    unsigned char *state;     /* run_state per model */
    unsigned char *worker_ok; /* a worker may evaluate it (prefetchable, not refused) */
    size_t *index;            /* its position in the run's events */
    size_t next_index, remaining;
} par_run;

static int upstream_done(const run_ctx *c, const par_run *pr, size_t mi)
{
    const tarn_model *m = &c->p->models[mi];
    for (size_t i = 0; i < m->nup; i++) {
        size_t u = m->up[i].model;
        if (c->o->selected[u] && pr->state[u] != RS_DONE)
            return 0;
    }
    return 1;
}

/* Whether a worker can evaluate model mi's query ahead: a lone query
 * (no setup statements, which run in the session), one partition slice at
 * most (or a dynamic model's every value), no {watermark} (it depends on
 * the build's own table), and no lake view read (a view reads the lake as
 * it is, not at a pinned snapshot). Manual models run their own
 * statements in the session. */
static int prefetchable(const run_ctx *c, size_t mi)
{
    const tarn_model *m = &c->p->models[mi];
    model_strategy k = m->annot.strategy;
    if (m->body.n != 1 || c->partitions[mi].n > 1 || c->chg.stale[mi].n ||
        (k != STRAT_REPLACE && k != STRAT_APPEND && k != STRAT_MERGE && k != STRAT_HISTORY))
        return 0;
    const model_stmt *st = &m->body.items[0];
    for (size_t i = 0; i < st->refs.n; i++) {
        const source_entry *e = run_source(c, &st->refs.items[i]);
        if (e && e->kind == SRC_LAKE_VIEW)
            return 0;
    }
    return 1;
}

static void par_finish(par_run *pr, size_t mi)
{
    pr->state[mi] = RS_DONE;
    pr->remaining--;
}

/* Decides every waiting model whose upstream is done. */
static void par_decide(run_ctx *c, par_run *pr)
{
    for (size_t k = 0; k < c->sum->nrun; k++) {
        size_t mi = c->sum->run_order[k];
        if (pr->state[mi] != RS_WAITING || !upstream_done(c, pr, mi))
            continue;
        pr->index[mi] = ++pr->next_index;
        if (run_decide(c, mi, pr->index[mi]))
            pr->state[mi] = RS_READY;
        else
            par_finish(pr, mi);
    }
}

/* Hands ready models to free workers — all but the first ready one in
 * run order, which the main thread evaluates itself (no staging). */
static void par_dispatch(run_ctx *c, par_run *pr)
{
    int first = 1;
    for (size_t k = 0; k < c->sum->nrun && prefetch_has_idle(c->pf); k++) {
        size_t mi = c->sum->run_order[k];
        if (pr->state[mi] != RS_READY)
            continue;
        if (first) {
            first = 0;
            continue;
        }
        if (!pr->worker_ok[mi])
            continue;
        model_result *r = &c->sum->results[mi];
        const tarn_model *m = &c->p->models[mi];
        const char *part = c->partitions[mi].n ? c->partitions[mi].items[0] : NULL;
        char *pinned = pin_statement(c, mi, &m->body.items[0], part, r);
        /* a time grain's build defines tarn_partition() before its query */
        char *prelude = m->annot.grain && m->annot.grain != GRAIN_DYNAMIC
                            ? cg_partition_macro(m->annot.grain)
                            : NULL;
        if (prefetch_submit(c->pf, mi, prelude, pinned) == 0) {
            pr->state[mi] = RS_COMPUTING;
            run_emit(c, BUILD_MODEL_START, mi, pr->index[mi]);
        } else {
            tarn_error_clear(); /* the build pins and evaluates it, and reports */
            pr->worker_ok[mi] = 0;
        }
        free(pinned);
        free(prelude);
    }
}

static int par_first(const run_ctx *c, const par_run *pr, run_state st, size_t *mi)
{
    for (size_t k = 0; k < c->sum->nrun; k++)
        if (pr->state[c->sum->run_order[k]] == st) {
            *mi = c->sum->run_order[k];
            return 1;
        }
    return 0;
}

/* The run with workers: the main thread builds, in this order of
 * preference, a model whose query a worker has evaluated (its rows wait
 * in memory), a ready model itself, or waits for a worker. */
static void run_parallel(run_ctx *c)
{
    size_t n = c->p->nmodels ? c->p->nmodels : 1;
    par_run pr = {.state = xcalloc(n, 1),
                  .worker_ok = xcalloc(n, 1),
                  .index = xcalloc(n, sizeof(size_t)),
                  .remaining = c->sum->nrun};
    for (size_t k = 0; k < c->sum->nrun; k++)
        pr.worker_ok[c->sum->run_order[k]] = (unsigned char)prefetchable(c, c->sum->run_order[k]);
    while (pr.remaining && !build_cancel_signal()) {
        size_t mi;
        while (prefetch_next_done(c->pf, &mi, 0))
            pr.state[mi] = RS_COMPUTED;
        par_decide(c, &pr);
        par_dispatch(c, &pr);
        if (par_first(c, &pr, RS_COMPUTED, &mi)) {
            c->sum->results[mi].prefetch = PREFETCH_FAILED; /* until the build uses it */
            run_execute(c, mi, pr.index[mi]);
            prefetch_release(c->pf, mi);
        } else if (par_first(c, &pr, RS_READY, &mi)) {
            run_emit(c, BUILD_MODEL_START, mi, pr.index[mi]);
            run_execute(c, mi, pr.index[mi]);
        } else if (prefetch_next_done(c->pf, &mi, 1)) {
            pr.state[mi] = RS_COMPUTED;
            continue;
        } else {
            break; /* nothing ready or running: cannot happen in a DAG */
        }
        par_finish(&pr, mi);
    }
    /* Whatever is left runs one at a time (there should be nothing, unless
     * the run was stopped: then none of it runs). */
    for (size_t k = 0; k < c->sum->nrun; k++) {
        size_t mi = c->sum->run_order[k];
        if (pr.state[mi] == RS_WAITING)
            run_model(c, mi, ++pr.next_index);
        else if (pr.state[mi] != RS_DONE)
            run_not_run(c, mi, pr.index[mi]);
    }
    free(pr.state);
    free(pr.worker_ok);
    free(pr.index);
}

static void ctx_free(run_ctx *c)
{
    strlist_free(&c->lake_tables);
    strlist_free(&c->lake_views);
    strlist_free(&c->lake_schemas);
    for (size_t i = 0; i < c->nsources; i++) {
        free(c->sources[i].key);
        free(c->sources[i].schema);
        free(c->sources[i].table);
    }
    free(c->sources);
    free(c->built_snapshot);
    change_free(&c->chg);
    buf_free(&c->unchanged_rows);
    if (c->partitions)
        for (size_t i = 0; i < c->p->nmodels; i++)
            strlist_free(&c->partitions[i]);
    free(c->partitions);
    free(c->from_start);
}

int64_t run_now(const run_ctx *c)
{
    return c->o->now > 0 ? c->o->now : (int64_t)c->sum->started_at;
}

/* What a run reads before it writes anything: config/, the lake's
 * snapshot and tables, each model's slices and sources. */
static int prepare_reads(run_ctx *c, const unsigned char *sel)
{
    tarn_project *p = c->p;
    build_summary *sum = c->sum;
    int rc = c->o->config_ran ? 0 : build_run_config(p, c->s);
    if (rc)
        return rc;
    c->lake = p->lake_alias;
    c->cat = tarn_session_catalog_prefix(c->s, c->lake);
    if (!rc)
        rc = tarn_session_snapshot(c->s, c->lake, &sum->start_snapshot);
    if (!rc)
        rc = load_lake_tables(c);
    if (rc)
        return rc;
    int64_t now = run_now(c);
    for (size_t k = 0; k < sum->nrun; k++) {
        size_t mi = sum->run_order[k];
        rc = build_partitions(&c->partitions[mi], &p->models[mi], c->o, now);
        if (!rc && !c->o->test_only)
            rc = first_from_start(c, mi, now);
        if (rc)
            return rc;
    }
    diag_list d = {0};
    for (size_t k = 0; k < sum->nrun && !c->o->test_only; k++)
        check_model_reads(c, sum->run_order[k], sel, &d);
    rc = diag_raise(&d);
    diag_free(&d);
    return rc;
}

/* --on-workers: the catalog must take writes from several processes. */
static int check_shared(run_ctx *c)
{
    int shared = 0;
    int rc = tarn_session_catalog_shared(c->s, c->lake, &shared);
    if (rc || shared)
        return rc;
    return tarn_error_set(TARN_EINVALID,
                          "--on-workers: lake \"%s\" has its catalog in a DuckDB file, which one "
                          "process writes at a time, so workers cannot share it; attach the lake "
                          "with a PostgreSQL catalog in config/ (ATTACH "
                          "'ducklake:postgres:dbname=… host=…' AS %s (DATA_PATH '…'), README \"A "
                          "catalog in PostgreSQL\"), or run without --on-workers",
                          c->lake, c->lake);
}

static int prepare(run_ctx *c, const unsigned char *sel)
{
    tarn_project *p = c->p;
    build_summary *sum = c->sum;
    int rc = prepare_reads(c, sel);
    if (!rc && c->o->on_workers)
        rc = check_shared(c);
    if (rc)
        return rc;
    rc = records_ensure(c->s, c->cat);
    if (!rc && c->o->on_workers)
        rc = queue_ensure(c->s, c->cat);
    if (!rc)
        rc = records_mark_interrupted(c->s, c->cat, &sum->interrupted_runs);
    if (!rc && !c->o->test_only)
        rc = change_load(&c->chg, p, c->s, c->lake, c->cat, sel);
    if (rc)
        return rc;
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT COALESCE(max(run_id), 0) + 1 FROM ");
    quote_prefixed(&sql, c->cat, "tarn_run");
    rc = query_int64(&sum->run_id, c->s, buf_cstr(&sql));
    buf_free(&sql);
    if (rc)
        return rc;
    char *ins = records_run_start(c->cat, sum, c->o->selectors ? c->o->selectors : "",
                                  c->o->tarn_version ? c->o->tarn_version : "", c->o->trigger,
                                  c->o->occurrence, c->p->target);
    rc = query_exec(c->s, ins, NULL);
    free(ins);
    return rc;
}

/* -j N: N-1 workers, when some selected model can use one. */
static void start_workers(run_ctx *c)
{
    int want = c->o->jobs - 1, useful = 0;
    c->sum->jobs = 1;
    if (c->o->test_only || c->o->on_workers)
        return;
    for (size_t k = 0; k < c->sum->nrun && !useful; k++)
        useful = prefetchable(c, c->sum->run_order[k]);
    if (want < 1 || !useful || c->sum->nrun < 2)
        return;
    if (prefetch_open(&c->pf, c->s, c->p, want) != 0) {
        c->sum->jobs_note = xasprintf("one model at a time: %s", tarn_error_last());
        tarn_error_clear();
        c->pf = NULL;
        return;
    }
    c->sum->jobs = want + 1;
}

/* The run's context and summary before anything runs (build_run and
 * run_ctx_open). */
static void ctx_init(run_ctx *c, build_summary *out, tarn_project *p, tarn_session *s,
                     const build_opts *o)
{
    memset(out, 0, sizeof(*out));
    out->started_at = clock_epoch_s();
    out->results = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(model_result));
    out->run_order = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(size_t));
    for (size_t k = 0; k < p->nmodels; k++) {
        size_t mi = p->order[k];
        out->results[mi].model = mi;
        out->results[mi].snapshot_id = -1;
        if (o->selected[mi])
            out->run_order[out->nrun++] = mi;
    }
    *c = (run_ctx){.p = p, .s = s, .o = o, .sum = out};
    c->built_snapshot = xmalloc((p->nmodels ? p->nmodels : 1) * sizeof(int64_t));
    for (size_t i = 0; i < p->nmodels; i++)
        c->built_snapshot[i] = -1;
    c->partitions = xcalloc(p->nmodels ? p->nmodels : 1, sizeof(strlist));
    c->from_start = xcalloc(p->nmodels ? p->nmodels : 1, 1);
}

int run_ctx_open(run_ctx *c, build_summary *sum, tarn_project *p, tarn_session *s,
                 const build_opts *o)
{
    ctx_init(c, sum, p, s, o);
    int rc = prepare_reads(c, o->selected);
    if (!rc)
        rc = change_load(&c->chg, p, s, c->lake, c->cat, o->selected);
    if (rc)
        run_ctx_close(c);
    return rc;
}

void run_ctx_close(run_ctx *c)
{
    ctx_free(c);
    build_summary_free(c->sum, c->p->nmodels);
}

int build_run(build_summary *out, tarn_project *p, tarn_session *s, const build_opts *o)
{
    run_ctx c;
    ctx_init(&c, out, p, s, o);
    double t0 = clock_mono_ms();
    int rc = prepare(&c, o->selected);
    if (rc) {
        ctx_free(&c);
        return rc;
    }
    start_workers(&c);
    run_emit(&c, BUILD_RUN_START, 0, 0);
    if (o->test_only)
        for (size_t k = 0; k < out->nrun; k++)
            test_model(&c, out->run_order[k], k + 1);
    else if (o->on_workers)
        run_on_workers(&c);
    else if (c.pf)
        run_parallel(&c);
    else
        for (size_t k = 0; k < out->nrun; k++)
            run_model(&c, out->run_order[k], k + 1);
    prefetch_close(c.pf);
    c.pf = NULL;
    if (c.unchanged_rows.len && query_exec(s, buf_cstr(&c.unchanged_rows), NULL) != 0)
        tarn_error_clear();
    out->duration_ms = clock_mono_ms() - t0;
    int64_t end = out->start_snapshot;
    if (tarn_session_snapshot(s, c.lake, &end) != 0)
        tarn_error_clear();
    out->stop_signal = build_cancel_signal();
    char *fin = records_run_finish(c.cat, out, end);
    if (query_exec(s, fin, NULL) != 0)
        tarn_error_clear();
    free(fin);
    run_emit(&c, BUILD_RUN_FINISH, 0, 0);
    ctx_free(&c);
    return 0;
}

void build_result_free(model_result *r)
{
    strlist_free(&r->partitions);
    free(r->partition_rows);
    for (size_t j = 0; j < r->nupstream; j++) {
        free(r->upstream[j].table);
        free(r->upstream[j].model);
    }
    free(r->upstream);
    free(r->tests_json);
    free(r->error);
    free(r->valid_at);
    free(r->schema_change);
    free(r->watermark_from);
    free(r->watermark_to);
    free(r->covered_through);
    free(r->run_reason);
    free(r->warning);
    memset(r, 0, sizeof(*r));
}

void build_summary_free(build_summary *sum, size_t nmodels)
{
    if (sum->results)
        for (size_t i = 0; i < nmodels; i++)
            build_result_free(&sum->results[i]);
    free(sum->results);
    free(sum->run_order);
    free(sum->jobs_note);
    memset(sum, 0, sizeof(*sum));
}

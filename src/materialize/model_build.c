/*
 * model_build.c — one model build: one transaction, one snapshot (see
 * build.h for the shape, codegen.h for each strategy's statements). The
 * steps its strategies share are model_steps.c's.
 */
#include "materialize/codegen.h"
#include "materialize/datatest.h"
#include "materialize/guard.h"
#include "materialize/records.h"
#include "materialize/model_int.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/clock.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/textmap.h"

#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- strategies ------------------------------------------------------ */

/* Works around a lake-layer bug: when a write fails inside BEGIN, the
 * cleanup that follows fails too and its "Current transaction is aborted"
 * replaces DuckDB's own message (a Conversion Error, say). After the
 * rollback, running the model's query alone gives that message back. */
static char *recover_error(build_state *b, const char *msg)
{
    if (!b->last_query || !strstr(msg, "Current transaction is aborted"))
        return NULL;
    /* hash(t) reads every column: a plain count(*) would let DuckDB skip
     * the failing expression. */
    char *sql = xasprintf("SELECT bit_xor(hash(t)) FROM (\n%s\n) AS t", b->last_query);
    char *out = NULL;
    if (query_exec(b->c->s, sql, NULL) != 0) {
        const tarn_model *m = b->m;
        mb_error_at(m, &m->body.items[m->body.n - 1], TARN_ERROR);
        out = xstrdup(tarn_error_last());
    }
    tarn_error_clear();
    free(sql);
    return out;
}

/* A replace whose query returns no rows would empty a table that has
 * rows: as with a merge, an empty result is most often a source gone
 * empty (an extract that failed), and replacing would pass the loss on
 * to every model downstream. The rows there were counted before the
 * build's BEGIN (count_before_build), so the replace itself streams the
 * query once, as before. */
static int build_replace(build_state *b)
{
    const tarn_model *m = b->m;
    char *q = mb_query_text(b, NULL);
    char *sql = cg_replace(b->target, q);
    int rc = mb_run(b, sql, &b->r->rows_written, 1);
    free(sql);
    free(q);
    if (!rc && b->had_rows > 0 && b->r->rows_written == 0) {
        char *what = xasprintf("replacing would empty %s, which has %lld rows", m->name,
                               (long long)b->had_rows);
        rc = mb_empty_refused(m, what);
        free(what);
    }
    return rc;
}

/* What a strategy that keeps its table's rows would lose by building
 * over a table it cannot read, and the remedy (`name`: the model). */
static char *unreadable_remedy(model_strategy k, const char *name)
{
    if (k == STRAT_HISTORY)
        return xstrdup("a history table is the record of its versions and cannot be built "
                       "over while it cannot be read: restore the file (dropping the table "
                       "starts its history over)");
    const char *what = k == STRAT_APPEND        ? "an append keeps the rows it appended before"
                       : k == STRAT_INCREMENTAL ? "an incremental build keeps the rows of the "
                                                  "ranges it built before"
                                                : "a merge keeps the rows already in its table";
    const char *then = k == STRAT_INCREMENTAL ? "it then reads every row of its sources again"
                                              : "it then holds only what the query returns now";
    return xasprintf("%s and cannot build over a table it cannot read: restore the file, or "
                     "rebuild the table from the query with `tarn run --full-refresh %s` (%s)",
                     what, name, then);
}

/* A build that keeps the rows already in its table (merge, history,
 * append, incremental) cannot build over a table it cannot read: fails
 * before its BEGIN with the lake's error (naming the data file) and the
 * remedy, rather than with a statement of the build that seems to blame
 * the model's SQL (or, for an append, an aborted transaction). */
static int unreadable_refused(const build_state *b)
{
    const tarn_model *m = b->m;
    char *why = xstrdup(tarn_error_last());
    char *remedy = unreadable_remedy(m->annot.strategy, m->name);
    int rc = tarn_error_set(TARN_EINVALID, "%s: %s; %s", m->path, why, remedy);
    free(remedy);
    free(why);
    return rc;
}

/* Counts, before the build's BEGIN, the rows of the table the empty
 * check guards (build_replace, mb_check_empty, check_restart_emptied)
 * into b->had_rows: a read that fails inside the transaction aborts it.
 * A count reads the files' footers, not the rows, and fails when a file
 * is missing or corrupt. -1 is no check: a first build, allow_empty, a
 * partitioned model, or a table that cannot be read and that the build
 * replaces (a replace, any --full-refresh), which is meant to mend it.
 * A merge, history, append or incremental build keeps its table's rows:
 * it fails here when they cannot be read (unreadable_refused). */
static int count_before_build(build_state *b)
{
    const tarn_model *m = b->m;
    model_strategy k = m->annot.strategy;
    int keeps = b->exists && (k == STRAT_MERGE || k == STRAT_HISTORY || k == STRAT_APPEND ||
                              k == STRAT_INCREMENTAL);
    int guard = !m->annot.allow_empty && !b->c->o->allow_empty && k != STRAT_MANUAL &&
                (((k == STRAT_REPLACE || k == STRAT_MERGE) && b->exists) ||
                 (k == STRAT_HISTORY && b->exists && m->annot.deletes_close) || b->restarted);
    b->had_rows = -1;
    if (m->annot.grain || (!keeps && !guard))
        return 0;
    int64_t had = -1;
    char *sql = xasprintf("SELECT count(*) FROM %s", b->target);
    int rc = query_int64(&had, b->c->s, sql);
    free(sql);
    if (rc != 0) {
        if (keeps)
            return unreadable_refused(b);
        tarn_error_clear();
        return 0;
    }
    b->had_rows = guard ? had : -1;
    return 0;
}

/* An append inserts by position, so the SELECT's columns are checked
 * against the table's first (a zero-row probe: the query is not run
 * twice). When they differ and on_schema_change allows, the rows are
 * staged and reshaped to the table's columns. */
static int build_append(build_state *b)
{
    char *q = mb_query_text(b, NULL);
    if (!b->exists) {
        char *sql = cg_replace(b->target, q);
        int rc = mb_run(b, sql, &b->r->rows_written, 1);
        free(sql);
        free(q);
        return rc;
    }
    b->staged = 1;
    char *probe = xasprintf("CREATE OR REPLACE TEMP TABLE _tarn_stage AS SELECT * FROM (\n%s\n) "
                            "LIMIT 0",
                            q);
    int rc = mb_run(b, probe, NULL, 0);
    free(probe);
    strlist cols = {0};
    if (!rc)
        rc = mb_stage_columns(b, &cols);
    strlist before = {0};
    strlist_copy(&before, &cols);
    if (!rc)
        rc = mb_check_columns(b, &cols, NULL, 0);
    int reshape = !rc && b->r->schema_change != NULL;
    char *sql = NULL;
    if (reshape) {
        /* stage the rows for real and reshape them as the probe was (a
         * sync already altered the table: keep what the probe said) */
        char *note = b->r->schema_change;
        b->r->schema_change = NULL;
        rc = mb_stage(b, NULL);
        strlist_free(&cols);
        strlist_copy(&cols, &before);
        if (!rc)
            rc = mb_check_columns(b, &cols, NULL, 0);
        free(b->r->schema_change);
        b->r->schema_change = note;
        sql = cg_append(b->target, "SELECT * FROM " CG_STAGE);
    } else {
        sql = cg_append(b->target, q);
    }
    if (!rc)
        rc = mb_run(b, sql, &b->r->rows_written, 1);
    free(sql);
    free(q);
    strlist_free(&cols);
    strlist_free(&before);
    return rc;
}

static int build_merge(build_state *b)
{
    int rc = mb_stage(b, NULL);
    strlist cols = {0};
    if (!rc)
        rc = mb_stage_columns(b, &cols);
    if (!rc)
        rc = mb_check_keys(b, &cols);
    if (!rc)
        rc = mb_check_empty(b);
    if (!rc && !b->exists) {
        char *sql = cg_create_from_stage(b->target, NULL, 0);
        rc = mb_run(b, sql, &b->r->rows_written, 1);
        free(sql);
    } else if (!rc) {
        rc = mb_check_columns(b, &cols, NULL, 0);
        if (!rc)
            rc = mb_merge_staged(b, &cols);
    }
    strlist_free(&cols);
    return rc;
}

/* ---- the build ------------------------------------------------------- */

static char *extra_info(build_state *b, double total_ms)
{
    const tarn_model *m = b->m;
    const model_result *r = b->r;
    json_t *o = json_object();
    json_object_set_new(o, "tarn_version", json_string(b->c->o->tarn_version));
    json_object_set_new(o, "run_id", json_integer(b->c->sum->run_id));
    json_object_set_new(o, "model", json_string(m->name));
    json_object_set_new(o, "path", json_string(m->path));
    char *t = xasprintf("%s.%s.%s", b->c->lake, m->schema, m->table);
    json_object_set_new(o, "target", json_string(t));
    free(t);
    /* the project's target (--target), as dbt's target.name */
    json_object_set_new(o, "run_target",
                        json_string(b->c->p->target ? b->c->p->target : "default"));
    json_object_set_new(o, "strategy", json_string(annot_strategy_label(&m->annot)));
    if (m->annot.key.n) {
        json_t *k = json_array();
        for (size_t i = 0; i < m->annot.key.n; i++)
            json_array_append_new(k, json_string(m->annot.key.items[i]));
        json_object_set_new(o, "key", k);
    }
    json_t *parts = json_array();
    for (size_t i = 0; i < r->partitions.n; i++)
        json_array_append_new(parts, json_string(r->partitions.items[i]));
    json_object_set_new(o, "partitions", parts);
    if (m->annot.grain) {
        json_object_set_new(o, "partitioned", json_string(grain_name(m->annot.grain)));
        json_object_set_new(o, "partition_column", json_string(m->annot.partition_column));
        json_object_set_new(o, "physical_partitioning", json_boolean(r->physical_partitions));
    }
    json_object_set_new(o, "rows_written", json_integer(r->rows_written));
    json_object_set_new(o, "rows_deleted", json_integer(r->rows_deleted));
    build_details_merge(o, m, r);
    char *up = pin_upstream_json(r);
    json_object_set_new(o, "upstream", json_loads(up, 0, NULL));
    free(up);
    json_object_set_new(o, "model_hash", json_string(m->hash));
    if (r->run_reason)
        json_object_set_new(o, "run_reason", json_string(r->run_reason));
    if (r->config_hash)
        json_object_set_new(o, "config_hash", json_string(r->config_hash));
    if (r->source_files)
        json_object_set_new(o, "source_files", json_loads(r->source_files, 0, NULL));
    if (r->tests_json)
        json_object_set_new(o, "tests", json_loads(r->tests_json, 0, NULL));
    json_t *tm = json_object();
    json_object_set_new(tm, "started_at", json_real(r->started_at));
    json_object_set_new(tm, "query_ms", json_real(r->query_ms));
    json_object_set_new(tm, "total_ms", json_real(total_ms));
    json_object_set_new(o, "timings", tm);
    char *s = json_dumps(o, JSON_COMPACT);
    json_decref(o);
    return s;
}

static void cleanup_temps(build_state *b)
{
    if (b->staged) {
        query_exec(b->c->s, "DROP TABLE IF EXISTS " CG_STAGE, NULL);
        query_exec(b->c->s, "DROP TABLE IF EXISTS " CG_KEYS, NULL);
    }
    if (b->m->annot.grain && b->m->annot.grain != GRAIN_DYNAMIC)
        query_exec(b->c->s, "DROP MACRO IF EXISTS temp.main.tarn_partition", NULL);
    tarn_error_clear();
}

/* A history table rebuilt under another strategy loses its
 * <table>_current view with its valid_from/valid_to columns. */
static int leave_history(build_state *b)
{
    const char *was = NULL;
    if (b->exists || !b->existed || b->m->annot.strategy == STRAT_HISTORY ||
        !change_strategy_changed(&b->c->chg, b->mi, &was) || strncmp(was, "history", 7) != 0)
        return 0;
    char *view = xasprintf("%s" CG_CURRENT_SUFFIX, b->m->table);
    tarn_buf sql = {0};
    buf_puts(&sql, "DROP VIEW IF EXISTS ");
    quote_qualified(&sql, b->c->lake, b->m->schema, view);
    int rc = mb_run(b, buf_cstr(&sql), NULL, 0);
    buf_free(&sql);
    free(view);
    b->altered = 1;
    return rc;
}

/* Whether the build starts the table over (rebuilds it from scratch):
 * with --full-refresh a merge, append or incremental model, or any model
 * whose strategy changed (the remedy a refused change names) — a history
 * table is the record and a partitioned one is rebuilt slice by slice, so
 * they do not otherwise; a changed incremental model (its SQL or
 * annotations); and a table replace built that history now writes
 * (replace's rows are its query's: nothing is lost). Never a manual
 * model: its script is its own. */
static int starts_over(build_state *b)
{
    const tarn_model *m = b->m;
    const char *was = NULL;
    int changed = change_strategy_changed(&b->c->chg, b->mi, &was);
    model_strategy k = m->annot.strategy;
    if (!b->exists || k == STRAT_MANUAL)
        return 0;
    if (b->c->o->full_refresh)
        return changed || (!m->annot.grain &&
                           (k == STRAT_APPEND || k == STRAT_MERGE || k == STRAT_INCREMENTAL));
    if (k == STRAT_INCREMENTAL && b->r->run_reason &&
        strcmp(b->r->run_reason, REASON_FULL_REBUILD) == 0)
        return 1;
    return changed && k == STRAT_HISTORY && strncmp(was, "replace", 7) == 0;
}

/* A table started over (--full-refresh, a changed strategy) is replaced
 * whatever its strategy, so an empty result meets the replace's check:
 * it would empty a table that has rows (counted before the BEGIN). */
static int check_restart_emptied(build_state *b)
{
    const model_result *r = b->r;
    if (!b->restarted || b->had_rows <= 0 || r->rows_written > 0 || r->rows_opened > 0)
        return 0;
    char *what = xasprintf("rebuilding %s from scratch would empty it, which has %lld rows",
                           b->m->name, (long long)b->had_rows);
    int rc = mb_empty_refused(b->m, what);
    free(what);
    return rc;
}

static int build_body(build_state *b)
{
    run_ctx *c = b->c;
    const tarn_model *m = b->m;
    int rc = 0;
    if (m->annot.grain && m->annot.grain != GRAIN_DYNAMIC) {
        char *sql = cg_partition_macro(m->annot.grain);
        rc = mb_run(b, sql, NULL, 0);
        free(sql);
    }
    char *skey = xstrdup(m->schema);
    for (char *p = skey; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    if (!rc && strlist_find(&c->lake_schemas, skey) < 0) {
        tarn_buf sql = {0};
        buf_puts(&sql, "CREATE SCHEMA IF NOT EXISTS ");
        quote_qualified(&sql, c->lake, NULL, m->schema);
        rc = mb_run(b, buf_cstr(&sql), NULL, 0);
        buf_free(&sql);
    }
    free(skey);
    if (m->annot.strategy == STRAT_MANUAL)
        return rc ? rc : build_manual(b);
    if (rc)
        return rc;
    /* A partitioned model runs its setup before each slice, with that
     * slice's {partition}. */
    /* An incremental model runs its setup once it knows its {watermark}. */
    if (!m->annot.grain && m->annot.strategy != STRAT_INCREMENTAL)
        rc = mb_run_setup(b, NULL);
    if (!rc)
        rc = guard_strategy(b);
    if (!rc)
        rc = leave_history(b);
    if (rc)
        return rc;
    if (m->annot.grain)
        rc = build_partitioned(b);
    else if (m->annot.strategy == STRAT_REPLACE)
        rc = build_replace(b);
    else if (m->annot.strategy == STRAT_APPEND)
        rc = build_append(b);
    else if (m->annot.strategy == STRAT_MERGE)
        rc = build_merge(b);
    else if (m->annot.strategy == STRAT_HISTORY)
        rc = build_history(b);
    else
        rc = build_incremental(b);
    if (!rc)
        rc = check_restart_emptied(b);
    /* Name the model's query: the error is about its SQL or its rows. A
     * setup statement's error already names its own line. */
    if (rc && strncmp(tarn_error_last(), m->path, strlen(m->path)) != 0)
        rc = mb_error_at(m, &m->body.items[m->body.n - 1], rc);
    /* Data tests see the table as this build leaves it, before the commit. */
    if (!rc && (m->annot.ntests || (m->annot.strategy == STRAT_HISTORY && m->annot.key.n))) {
        double t0 = clock_mono_ms();
        rc = datatest_run(c, b->mi, b->target, b->r);
        b->r->query_ms += clock_mono_ms() - t0;
    }
    return rc;
}

/* The statements recording build result `r` (records.h), with the
 * upstream snapshots it read. */
static void build_records(strlist *out, run_ctx *c, const tarn_model *m, const model_result *r)
{
    char *up = pin_upstream_json(r);
    records_model(out, c->cat, c->sum->run_id, m, r, up);
    free(up);
}

/* A successful build's records commit with its snapshot, in the same
 * catalog transaction, naming it by id (a literal: a subquery for it cost
 * DuckDB half a millisecond per build). On a catalog others write too the
 * commit may be renumbered past theirs: there the records name the
 * snapshot the commit makes, read in its catalog transaction. */
static int queue_records(run_ctx *c, const tarn_model *m, model_result *r)
{
    int shared = 0;
    int rc = tarn_session_pending_snapshot(c->s, c->lake, &r->snapshot_id);
    if (!rc)
        rc = tarn_session_catalog_shared(c->s, c->lake, &shared);
    if (rc)
        return rc;
    char *snap = shared ? tarn_session_commit_snapshot_sql(c->cat, r->snapshot_id) : NULL;
    r->commit_snapshot_sql = snap;
    strlist recs = {0};
    build_records(&recs, c, m, r);
    r->commit_snapshot_sql = NULL;
    free(snap);
    if (c->on_commit)
        c->on_commit(c->commit_ctx, c, r, &recs);
    for (size_t i = 0; i < recs.n && !rc; i++)
        rc = tarn_session_commit_sql(c->s, c->lake, recs.items[i]);
    strlist_free(&recs);
    return rc;
}

/* A build that changed something: the commit message with its extra
 * information, the run records queued in the transaction, COMMIT, and the
 * snapshot it made. */
static int commit_build(build_state *b, double t0)
{
    run_ctx *c = b->c;
    const tarn_model *m = b->m;
    model_result *r = b->r;
    char *extra = extra_info(b, clock_mono_ms() - t0);
    char *msg = xasprintf("tarn: build %s (%s)", m->name, annot_strategy_label(&m->annot));
    char *sql = cg_commit_message(c->lake, msg, extra);
    int rc = query_exec(c->s, sql, NULL);
    free(sql);
    free(msg);
    free(extra);
    if (!rc) {
        r->status = MODEL_SUCCESS;
        r->duration_ms = clock_mono_ms() - t0 + b->worker_ms;
        rc = queue_records(c, m, r);
    }
    if (!rc)
        rc = query_exec(c->s, "COMMIT", NULL);
    if (!rc)
        rc = tarn_session_snapshot(c->s, c->lake, &r->snapshot_id);
    return rc;
}

/* A build that changed nothing: rolled back (when it began), and
 * recorded as a success at the current snapshot. */
static int record_unchanged(build_state *b, double t0, int began)
{
    run_ctx *c = b->c;
    model_result *r = b->r;
    int rc = began ? query_exec(c->s, "ROLLBACK", NULL) : 0;
    r->status = MODEL_SUCCESS;
    if (!rc)
        rc = tarn_session_snapshot(c->s, c->lake, &r->snapshot_id);
    r->duration_ms = clock_mono_ms() - t0 + b->worker_ms;
    if (!rc) {
        strlist recs = {0};
        build_records(&recs, c, b->m, r);
        for (size_t i = 0; i < recs.n && !rc; i++)
            rc = query_exec(c->s, recs.items[i], NULL);
        strlist_free(&recs);
    }
    return rc;
}

/* A failed or stopped build: its error (the user's, where recover_error
 * finds it), rolled back, and recorded on its own, outside the
 * rolled-back transaction. */
static void record_failure(build_state *b, int began, int rc)
{
    run_ctx *c = b->c;
    const tarn_model *m = b->m;
    model_result *r = b->r;
    int stopped = build_cancel_signal() != 0;
    r->conflict = !stopped && rc == TARN_ECONFLICT;
    r->lost = !stopped && rc == TARN_ELOST;
    r->no_change = 0;
    r->status = stopped ? MODEL_CANCELLED : MODEL_FAILED;
    r->snapshot_id = -1;
    r->error = stopped ? xstrdup("cancelled: the run was stopped, the build rolled back")
                       : xstrdup(*tarn_error_last() ? tarn_error_last() : "the build failed");
    tarn_error_clear();
    if (began)
        query_exec(c->s, "ROLLBACK", NULL);
    tarn_error_clear();
    char *real = m->annot.strategy != STRAT_MANUAL && !stopped ? recover_error(b, r->error) : NULL;
    if (real) {
        free(r->error);
        r->error = real;
    }
    cleanup_temps(b);
    /* a worker builds it again: the attempt that follows records the build
     * (a failure here would say the run failed it) */
    if (c->builds_again && (r->conflict || r->lost))
        return;
    strlist recs = {0};
    build_records(&recs, c, m, r);
    for (size_t i = 0; i < recs.n; i++)
        if (query_exec(c->s, recs.items[i], NULL) != 0)
            tarn_error_clear();
    strlist_free(&recs);
}

/* A built model: its snapshot, and its table and schema known to the run
 * from now on. */
static void note_built(build_state *b)
{
    run_ctx *c = b->c;
    const tarn_model *m = b->m;
    cleanup_temps(b);
    c->built_snapshot[b->mi] = b->r->snapshot_id;
    if (!run_has_table(c, m->schema, m->table))
        strlist_push_owned(&c->lake_tables, change_table_key(m->schema, m->table));
    char *skey = change_table_key(m->schema, "");
    skey[strlen(skey) - 1] = 0;
    if (strlist_find(&c->lake_schemas, skey) < 0)
        strlist_push(&c->lake_schemas, skey);
    free(skey);
}

int model_build(run_ctx *c, size_t mi, model_result *r)
{
    const tarn_model *m = &c->p->models[mi];
    build_state b = {.c = c, .mi = mi, .m = m, .r = r};
    tarn_buf t = {0};
    quote_qualified(&t, c->lake, m->schema, m->table);
    b.target = buf_detach(&t);
    b.exists = b.existed = run_has_table(c, m->schema, m->table);
    /* a table started over is replaced (DDL), so such a build always
     * commits, even with no rows: left "unchanged" it would keep the old
     * table a --full-refresh asked to rebuild */
    if (starts_over(&b))
        b.exists = 0, b.altered = b.restarted = 1;
    r->started_at = clock_epoch_s();
    r->snapshot_id = -1;
    double t0 = clock_mono_ms();
    /* an append model over the rows it already appended builds nothing */
    int same_input = mb_append_same_input(&b);
    int rc = same_input ? 0 : count_before_build(&b);
    if (!rc && !same_input)
        rc = query_exec(c->s, "BEGIN", NULL);
    int began = !same_input && rc == 0;
    if (!rc && !same_input)
        rc = build_body(&b);
    /* A build that provably changed nothing (no row written or deleted in
     * an existing table, no DDL) commits no snapshot: DuckLake makes no
     * snapshot for an empty transaction, and an empty one would carry no
     * changes_made. It is recorded as a success at the current snapshot. */
    r->no_change = !rc && b.existed && !b.altered && m->annot.strategy != STRAT_MANUAL &&
                   (m->annot.strategy != STRAT_REPLACE || m->annot.grain) && r->rows_written <= 0 &&
                   r->rows_deleted <= 0 && r->rows_closed <= 0;
    /* A stopped run commits nothing more: the interrupt may have come
     * between two queries, so the build is checked before its commit. */
    if (!rc && build_cancel_signal())
        rc = tarn_error_set(TARN_ERROR, "stopped");
    if (!rc)
        rc = r->no_change ? record_unchanged(&b, t0, began) : commit_build(&b, t0);
    r->duration_ms = clock_mono_ms() - t0 + b.worker_ms;
    if (rc)
        record_failure(&b, began, rc);
    else
        note_built(&b);
    free(b.target);
    free(b.last_query);
    free(b.watermark_sql);
    c->watermark_sql = NULL;
    return 0;
}

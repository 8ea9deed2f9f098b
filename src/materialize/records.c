/*
 * records.c — the tarn_run / tarn_model_run / tarn_partition tables (see
 * records.h).
 */
#include "materialize/records.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/proc.h"
#include "util/quote.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int records_create_tables(tarn_session *s, const char *cat, const char *const (*defs)[2], size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tarn_buf b = {0};
        buf_puts(&b, "CREATE TABLE IF NOT EXISTS ");
        quote_prefixed(&b, cat, defs[i][0]);
        buf_printf(&b, " %s", defs[i][1]);
        int rc = query_exec(s, buf_cstr(&b), NULL);
        /* Two processes creating it at once on PostgreSQL: the one that
         * waited fails on PostgreSQL's catalog once the other committed,
         * and then finds the table there. */
        for (int again = 0; rc && again < 3 && strstr(tarn_error_last(), "already exists");
             again++) {
            tarn_error_clear();
            rc = query_exec(s, buf_cstr(&b), NULL);
        }
        buf_free(&b);
        if (rc)
            return tarn_error_prefix(rc, "creating %s", defs[i][0]);
    }
    return 0;
}

int records_ensure(tarn_session *s, const char *cat)
{
    static const char *const defs[][2] = {
        {"tarn_run", "(run_id BIGINT NOT NULL, started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, "
                     "status VARCHAR, selectors VARCHAR, start_snapshot_id BIGINT, "
                     "end_snapshot_id BIGINT, models_total INTEGER, models_succeeded INTEGER, "
                     "models_failed INTEGER, models_skipped INTEGER, tarn_version VARCHAR, "
                     "models_unchanged INTEGER, host VARCHAR, pid BIGINT, process_start VARCHAR, "
                     "\"trigger\" VARCHAR, occurrence VARCHAR, target VARCHAR, heartbeat_at "
                     "TIMESTAMPTZ)"},
        {"tarn_model_run",
         "(run_id BIGINT NOT NULL, model VARCHAR NOT NULL, target VARCHAR, path VARCHAR, "
         "strategy VARCHAR, status VARCHAR, snapshot_id BIGINT, rows_written BIGINT, "
         "rows_deleted BIGINT, partitions VARCHAR, upstream VARCHAR, model_hash VARCHAR, "
         "started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ, duration_ms DOUBLE PRECISION, query_ms "
         "DOUBLE PRECISION, "
         "error VARCHAR, note VARCHAR, tests VARCHAR, details VARCHAR, run_reason VARCHAR, "
         "config_hash VARCHAR, target_version BIGINT, source_files VARCHAR, strategy_spec "
         "VARCHAR)"},
        {"tarn_partition", "(model VARCHAR NOT NULL, target VARCHAR, \"partition\" VARCHAR NOT "
                           "NULL, status VARCHAR, snapshot_id BIGINT, \"rows\" BIGINT, run_id "
                           "BIGINT, updated_at TIMESTAMPTZ, error VARCHAR, model_hash VARCHAR)"},
        {"tarn_test_result",
         "(run_id BIGINT NOT NULL, model VARCHAR NOT NULL, path VARCHAR, line INTEGER, test "
         "VARCHAR NOT NULL, builtin BOOLEAN, severity VARCHAR, status VARCHAR, violations "
         "BIGINT, examples VARCHAR, sample VARCHAR, sample_rows INTEGER, sample_dropped INTEGER, "
         "snapshot_id BIGINT, recorded_at TIMESTAMPTZ)"},
    };
    int rc = records_create_tables(s, cat, defs, sizeof(defs) / sizeof(defs[0]));
    if (rc)
        return rc;
    /* Columns added after the first release of these tables: a lake built
     * by an older tarn gets them on its next run. */
    static const char *const added[][2] = {
        {"tarn_model_run", "note VARCHAR"},
        {"tarn_model_run", "tests VARCHAR"},
        {"tarn_model_run", "details VARCHAR"},
        {"tarn_model_run", "run_reason VARCHAR"},
        {"tarn_model_run", "config_hash VARCHAR"},
        {"tarn_model_run", "target_version BIGINT"},
        {"tarn_model_run", "source_files VARCHAR"},
        {"tarn_run", "models_unchanged INTEGER"},
        {"tarn_model_run", "strategy_spec VARCHAR"},
        {"tarn_partition", "model_hash VARCHAR"},
        {"tarn_run", "host VARCHAR"},
        {"tarn_run", "pid BIGINT"},
        {"tarn_run", "process_start VARCHAR"},
        {"tarn_run", "\"trigger\" VARCHAR"},
        {"tarn_run", "occurrence VARCHAR"},
        {"tarn_run", "target VARCHAR"},
        {"tarn_run", "heartbeat_at TIMESTAMPTZ"},
    };
    for (size_t i = 0; i < sizeof(added) / sizeof(added[0]); i++) {
        tarn_buf b = {0};
        buf_puts(&b, "ALTER TABLE ");
        quote_prefixed(&b, cat, added[i][0]);
        buf_printf(&b, " ADD COLUMN IF NOT EXISTS %s", added[i][1]);
        rc = query_exec(s, buf_cstr(&b), NULL);
        buf_free(&b);
        if (rc)
            return tarn_error_prefix(rc, "upgrading %s", added[i][0]);
    }
    return 0;
}

static void put_time(tarn_buf *b, double t)
{
    buf_printf(b, "to_timestamp(%.6f)", t);
}

static void put_int(tarn_buf *b, int64_t v, int null_if_negative)
{
    if (null_if_negative && v < 0)
        buf_puts(b, "NULL");
    else
        buf_printf(b, "%lld", (long long)v);
}

char *records_run_start(const char *cat, const build_summary *sum, const char *selectors,
                        const char *version, const char *trigger, const char *occurrence,
                        const char *target)
{
    tarn_buf b = {0};
    buf_puts(&b, "INSERT INTO ");
    quote_prefixed(&b, cat, "tarn_run");
    /* Columns named, so that a lake whose tables gained columns from a
     * later tarn still takes this one's rows. */
    buf_printf(&b,
               " (run_id, started_at, finished_at, status, selectors, start_snapshot_id, "
               "end_snapshot_id, models_total, models_succeeded, models_failed, models_skipped, "
               "tarn_version, models_unchanged, host, pid, process_start, \"trigger\", occurrence, "
               "target) "
               "VALUES (%lld, ",
               (long long)sum->run_id);
    put_time(&b, sum->started_at);
    buf_puts(&b, ", NULL, 'running', ");
    quote_literal(&b, selectors);
    buf_printf(&b, ", %lld, NULL, %zu, 0, 0, 0, ", (long long)sum->start_snapshot, sum->nrun);
    quote_literal(&b, version);
    char *host, *start;
    long pid;
    proc_self(&host, &pid, &start);
    buf_puts(&b, ", 0, ");
    quote_literal(&b, host);
    buf_printf(&b, ", %ld, ", pid);
    quote_literal(&b, start);
    buf_puts(&b, ", ");
    quote_literal(&b, trigger ? trigger : "manual");
    buf_puts(&b, ", ");
    if (occurrence)
        quote_literal(&b, occurrence);
    else
        buf_puts(&b, "NULL");
    buf_puts(&b, ", ");
    quote_literal(&b, target ? target : "default");
    buf_puts(&b, ")");
    free(host);
    free(start);
    return buf_detach(&b);
}

/* How long a run of another host on a shared catalog may go without a sign
 * of life before it counts as gone: TARN_RUN_STALE_SECONDS; by default a
 * day for a run that never renewed its heartbeat (its start, and the
 * builds it recorded, are all it shows: a tarn before the heartbeat, or
 * a catalog one process writes), and RECORDS_BEAT_STALE_S for one that
 * did (its process renews it every records_beat_every() seconds while it
 * runs, so a long build shows life too). */
#define RECORDS_BEAT_STALE_S 300.0
static double stale_seconds(int beats)
{
    const char *v = getenv("TARN_RUN_STALE_SECONDS");
    char *end = NULL;
    double d = v && *v ? strtod(v, &end) : 0;
    return v && *v && end && !*end && d > 0 ? d : beats ? RECORDS_BEAT_STALE_S : 86400;
}

double records_beat_every(void)
{
    const char *v = getenv("TARN_RUN_HEARTBEAT_SECONDS");
    char *end = NULL;
    double d = v && *v ? strtod(v, &end) : 0;
    if (v && *v && end && !*end && d > 0)
        return d < 0.05 ? 0.05 : d;
    /* a few beats inside the window the next run judges by */
    double every = stale_seconds(1) / 5;
    return every > 30 ? 30 : every < 0.05 ? 0.05 : every;
}

char *records_run_beat_sql(const char *cat, int64_t run_id)
{
    tarn_buf b = {0};
    buf_puts(&b, "UPDATE ");
    quote_prefixed(&b, cat, "tarn_run");
    buf_printf(&b, " SET heartbeat_at = now() WHERE run_id = %lld AND status = 'running'",
               (long long)run_id);
    return buf_detach(&b);
}

/* Whether the 'running' row r.i is a run that is gone. Its own host's
 * process table says (pid and start time). Another host's pids cannot be
 * asked: on a DuckDB file whoever reads the catalog holds its lock, which
 * a live run would hold, so the run is gone; on a shared (PostgreSQL)
 * catalog it is gone only when its last sign of life (column 4: seconds
 * since; column 5: whether it beats) is older than stale_seconds(). */
static int run_gone(const qrows *r, size_t i, int shared)
{
    const char *pid = qrows_get(r, i, 2);
    int alive = proc_alive(qrows_get(r, i, 1), pid ? strtol(pid, NULL, 10) : 0, qrows_get(r, i, 3));
    if (alive >= 0 || !shared)
        return alive != 1;
    const char *idle = qrows_get(r, i, 4), *beats = qrows_get(r, i, 5);
    return idle && strtod(idle, NULL) > stale_seconds(beats && strcmp(beats, "true") == 0);
}

/* Whether catalog table `table` has column `col` (no: also when it is not
 * there at all). */
static int has_column(tarn_session *s, const char *alias, const char *cat, const char *table,
                      const char *col)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT * FROM ");
    quote_prefixed(&q, cat, table);
    buf_puts(&q, " WHERE 1 = 0");
    qrows r;
    int rc = catalog_rows(&r, s, alias, buf_cstr(&q));
    buf_free(&q);
    if (rc) {
        tarn_error_clear();
        return 0;
    }
    int found = 0;
    for (size_t i = 0; i < r.ncols && !found; i++)
        found = strcmp(r.names[i], col) == 0;
    qrows_free(&r);
    return found;
}

int records_dead_runs(int64_t **ids, size_t *n, tarn_session *s, const char *alias, const char *cat)
{
    *ids = NULL;
    *n = 0;
    int shared = 0;
    int rc = tarn_session_catalog_shared(s, alias, &shared);
    if (rc)
        return rc;
    tarn_buf q = {0};
    /* a lake an older tarn made has no heartbeat column until a run adds it */
    const char *beat =
        has_column(s, alias, cat, "tarn_run", "heartbeat_at") ? "r.heartbeat_at" : "NULL";
    buf_printf(&q,
               "SELECT run_id, host, pid, process_start, epoch(now()) - epoch(greatest(started_at, "
               "%s, (SELECT max(greatest(m.started_at, m.finished_at)) FROM ",
               beat);
    quote_prefixed(&q, cat, "tarn_model_run");
    buf_printf(&q, " m WHERE m.run_id = r.run_id))), %s IS NOT NULL FROM ", beat);
    quote_prefixed(&q, cat, "tarn_run");
    buf_puts(&q, " r WHERE status = 'running' ORDER BY run_id");
    qrows r;
    rc = query_rows(&r, s, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    *ids = xcalloc(r.nrows ? r.nrows : 1, sizeof(int64_t));
    for (size_t i = 0; i < r.nrows; i++)
        if (run_gone(&r, i, shared))
            (*ids)[(*n)++] = strtoll(qrows_get(&r, i, 0), NULL, 10);
    qrows_free(&r);
    return 0;
}

int records_mark_interrupted(tarn_session *s, const char *alias, const char *cat, size_t *marked)
{
    int64_t *ids;
    size_t n;
    *marked = 0;
    int rc = records_dead_runs(&ids, &n, s, alias, cat);
    for (size_t i = 0; !rc && i < n; i++) {
        tarn_buf q = {0};
        buf_puts(&q, "UPDATE ");
        quote_prefixed(&q, cat, "tarn_run");
        buf_printf(&q, " SET status = 'interrupted' WHERE run_id = %lld AND status = 'running'",
                   (long long)ids[i]);
        rc = query_exec(s, buf_cstr(&q), NULL);
        buf_free(&q);
        *marked += !rc;
    }
    free(ids);
    return rc ? tarn_error_prefix(rc, "marking interrupted runs") : 0;
}

char *records_run_finish(const char *cat, const build_summary *sum, int64_t end_snapshot)
{
    tarn_buf b = {0};
    buf_puts(&b, "UPDATE ");
    quote_prefixed(&b, cat, "tarn_run");
    buf_puts(&b, " SET finished_at = ");
    put_time(&b, sum->started_at + sum->duration_ms / 1000.0);
    buf_printf(&b,
               ", status = '%s', end_snapshot_id = %lld, models_succeeded = %zu, "
               "models_failed = %zu, models_skipped = %zu, models_unchanged = %zu WHERE run_id = "
               "%lld",
               sum->stop_signal ? "cancelled"
               : sum->failed    ? "failed"
                                : "success",
               (long long)end_snapshot, sum->succeeded, sum->failed, sum->skipped, sum->unchanged,
               (long long)sum->run_id);
    return buf_detach(&b);
}

static json_t *json_text_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

char *build_details_json(const tarn_model *m, const model_result *r)
{
    const model_annot *a = &m->annot;
    if (a->strategy != STRAT_HISTORY && a->strategy != STRAT_INCREMENTAL && !r->schema_change)
        return NULL;
    json_t *o = json_object();
    if (r->schema_change)
        json_object_set_new(o, "schema_change", json_string(r->schema_change));
    if (a->strategy == STRAT_HISTORY) {
        json_object_set_new(o, "rows_opened", json_integer(r->rows_opened));
        json_object_set_new(o, "rows_closed", json_integer(r->rows_closed));
        json_object_set_new(o, "valid_at", json_text_or_null(r->valid_at));
        json_t *t = json_array();
        for (size_t i = 0; i < a->track.n; i++)
            json_array_append_new(t, json_string(a->track.items[i]));
        json_object_set_new(o, "track", t);
        json_object_set_new(o, "deletes", json_string(a->deletes_close ? "close" : "keep"));
    } else if (a->strategy == STRAT_INCREMENTAL) {
        json_object_set_new(o, "watermark_column", json_string(a->watermark));
        json_object_set_new(o, "watermark_from", json_text_or_null(r->watermark_from));
        json_object_set_new(o, "watermark_to", json_text_or_null(r->watermark_to));
        json_object_set_new(o, "covered_through", json_text_or_null(r->covered_through));
        json_object_set_new(o, "lookback", json_text_or_null(a->inc_lookback));
        json_object_set_new(o, "full_refresh", json_boolean(r->full_refresh));
    }
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    return s;
}

void build_details_merge(json_t *o, const tarn_model *m, const model_result *r)
{
    char *details = build_details_json(m, r);
    json_t *d = details ? json_loads(details, 0, NULL) : NULL;
    if (d)
        json_object_update(o, d);
    json_decref(d);
    free(details);
}

/* The snapshot id column: a successful build's snapshot (inside its
 * commit, the one being committed: tarn_session_pending_snapshot). */
static void put_snapshot(tarn_buf *b, const model_result *r)
{
    if (r->status != MODEL_SUCCESS || r->snapshot_id < 0)
        buf_puts(b, "NULL");
    else if (r->commit_snapshot_sql)
        buf_puts(b, r->commit_snapshot_sql);
    else
        buf_printf(b, "%lld", (long long)r->snapshot_id);
}

void records_model_insert(tarn_buf *b, const char *cat)
{
    buf_puts(b, "INSERT INTO ");
    quote_prefixed(b, cat, "tarn_model_run");
    buf_puts(b, " (run_id, model, target, path, strategy, status, snapshot_id, rows_written, "
                "rows_deleted, partitions, upstream, model_hash, started_at, finished_at, "
                "duration_ms, query_ms, error, note, tests, details, run_reason, config_hash, "
                "target_version, source_files, strategy_spec) VALUES ");
}

void records_model_values(tarn_buf *out, int64_t run_id, const tarn_model *m, const model_result *r,
                          const char *upstream_json)
{
    tarn_buf b = {0};
    double finished = r->started_at + r->duration_ms / 1000.0;
    buf_printf(&b, "(%lld, ", (long long)run_id);
    quote_literal(&b, m->name);
    buf_puts(&b, ", ");
    quote_literal(&b, m->name);
    buf_puts(&b, ", ");
    quote_literal(&b, m->path);
    buf_puts(&b, ", ");
    quote_literal(&b, annot_strategy_label(&m->annot));
    buf_puts(&b, ", ");
    quote_literal(&b, model_status_name(r->status));
    buf_puts(&b, ", ");
    put_snapshot(&b, r);
    buf_puts(&b, ", ");
    put_int(&b, r->status == MODEL_SUCCESS ? r->rows_written : -1, 1);
    buf_puts(&b, ", ");
    put_int(&b, r->status == MODEL_SUCCESS ? r->rows_deleted : -1, 1);
    buf_puts(&b, ", ");
    if (m->annot.grain) {
        /* the list as JSON text, made here: the statement also goes to a
         * PostgreSQL catalog, which has no DuckDB list literal */
        json_t *list = json_array();
        for (size_t i = 0; i < r->partitions.n; i++)
            json_array_append_new(list, json_string(r->partitions.items[i]));
        char *text = json_dumps(list, JSON_COMPACT);
        if (text)
            quote_literal(&b, text);
        else
            buf_puts(&b, "NULL");
        free(text);
        json_decref(list);
    } else {
        buf_puts(&b, "NULL");
    }
    buf_puts(&b, ", ");
    quote_literal(&b, upstream_json);
    buf_puts(&b, ", ");
    quote_literal(&b, m->hash);
    buf_puts(&b, ", ");
    put_time(&b, r->started_at);
    buf_puts(&b, ", ");
    put_time(&b, finished);
    buf_printf(&b, ", %.3f, %.3f, ", r->duration_ms, r->query_ms);
    quote_literal(&b, r->error);
    buf_puts(&b, r->no_change   ? ", 'no change: no snapshot written', "
                 : r->unchanged ? ", 'unchanged', "
                                : ", NULL, ");
    quote_literal(&b, r->tests_json);
    buf_puts(&b, ", ");
    char *details = build_details_json(m, r);
    quote_literal(&b, details);
    free(details);
    buf_puts(&b, ", ");
    quote_literal(&b, r->run_reason);
    buf_puts(&b, ", ");
    quote_literal(&b, r->config_hash);
    buf_puts(&b, ", ");
    if (r->status == MODEL_SUCCESS && r->no_change)
        put_int(&b, r->target_version, 1);
    else
        put_snapshot(&b, r);
    buf_puts(&b, ", ");
    quote_literal(&b, r->source_files);
    buf_puts(&b, ", ");
    char *spec = annot_strategy_spec(&m->annot);
    quote_literal(&b, spec);
    free(spec);
    buf_puts(&b, ")");
    buf_append(out, b.ptr, b.len);
    buf_free(&b);
}

static void put_json_int(tarn_buf *b, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (json_is_integer(v))
        buf_printf(b, "%lld", (long long)json_integer_value(v));
    else
        buf_puts(b, "NULL");
}

static void put_json_text(tarn_buf *b, json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    quote_literal(b, json_is_string(v) ? json_string_value(v) : NULL);
}

void records_tests(strlist *out, const char *cat, int64_t run_id, const tarn_model *m,
                   const model_result *r, int64_t snapshot_id)
{
    json_t *a = r->tests_json ? json_loads(r->tests_json, 0, NULL) : NULL;
    if (!json_is_array(a) || json_array_size(a) == 0) {
        json_decref(a);
        return;
    }
    tarn_buf b = {0};
    buf_puts(&b, "INSERT INTO ");
    quote_prefixed(&b, cat, "tarn_test_result");
    buf_puts(&b,
             " (run_id, model, path, line, test, builtin, severity, status, violations, "
             "examples, sample, sample_rows, sample_dropped, snapshot_id, recorded_at) VALUES ");
    size_t i;
    json_t *t;
    json_array_foreach(a, i, t)
    {
        buf_printf(&b, "%s(%lld, ", i ? ", " : "", (long long)run_id);
        quote_literal(&b, m->name);
        buf_puts(&b, ", ");
        quote_literal(&b, m->path);
        buf_puts(&b, ", ");
        put_json_int(&b, t, "line");
        buf_puts(&b, ", ");
        put_json_text(&b, t, "test");
        buf_printf(&b, ", %s, ", json_is_true(json_object_get(t, "builtin")) ? "true" : "false");
        put_json_text(&b, t, "severity");
        buf_puts(&b, ", ");
        put_json_text(&b, t, "status");
        buf_puts(&b, ", ");
        put_json_int(&b, t, "violations");
        buf_puts(&b, ", ");
        put_json_text(&b, t, "examples");
        buf_puts(&b, ", ");
        json_t *sample = json_object_get(t, "sample");
        char *st =
            json_is_array(sample) ? json_dumps(sample, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
        quote_literal(&b, st);
        free(st);
        buf_puts(&b, ", ");
        put_json_int(&b, t, "sample_rows");
        buf_puts(&b, ", ");
        put_json_int(&b, t, "sample_dropped");
        buf_puts(&b, ", ");
        if (snapshot_id >= 0 && r->commit_snapshot_sql)
            buf_puts(&b, r->commit_snapshot_sql);
        else
            put_int(&b, snapshot_id, 1);
        buf_puts(&b, ", ");
        put_time(&b, r->started_at + r->duration_ms / 1000.0);
        buf_puts(&b, ")");
    }
    json_decref(a);
    strlist_push_owned(out, buf_detach(&b));
}

void records_model(strlist *out, const char *cat, int64_t run_id, const tarn_model *m,
                   const model_result *r, const char *upstream_json)
{
    tarn_buf b = {0};
    double finished = r->started_at + r->duration_ms / 1000.0;
    records_model_insert(&b, cat);
    records_model_values(&b, run_id, m, r, upstream_json);
    strlist_push_owned(out, buf_detach(&b));
    records_tests(out, cat, run_id, m, r,
                  r->status == MODEL_SUCCESS && !r->no_change ? r->snapshot_id : -1);
    if (!m->annot.grain || r->status == MODEL_SKIPPED)
        return;
    for (size_t i = 0; i < r->partitions.n; i++) {
        const char *part = r->partitions.items[i];
        /* Insert the partition's row if it has none, then update it: on
         * failure the last good snapshot and row count are kept. */
        buf_puts(&b, "INSERT INTO ");
        quote_prefixed(&b, cat, "tarn_partition");
        buf_puts(&b, " (model, target, \"partition\", status, snapshot_id, \"rows\", run_id, "
                     "updated_at, error) SELECT ");
        quote_literal(&b, m->name);
        buf_puts(&b, ", ");
        quote_literal(&b, m->name);
        buf_puts(&b, ", ");
        quote_literal(&b, part);
        buf_puts(&b, ", NULL, NULL, NULL, NULL, NULL, NULL WHERE NOT EXISTS (SELECT 1 FROM ");
        quote_prefixed(&b, cat, "tarn_partition");
        buf_puts(&b, " WHERE model = ");
        quote_literal(&b, m->name);
        buf_puts(&b, " AND \"partition\" = ");
        quote_literal(&b, part);
        buf_puts(&b, ")");
        strlist_push_owned(out, buf_detach(&b));
        buf_puts(&b, "UPDATE ");
        quote_prefixed(&b, cat, "tarn_partition");
        buf_printf(&b,
                   " SET status = '%s', run_id = %lld, updated_at = ", model_status_name(r->status),
                   (long long)run_id);
        put_time(&b, finished);
        buf_puts(&b, ", error = ");
        quote_literal(&b, r->error);
        if (r->status == MODEL_SUCCESS) {
            buf_puts(&b, ", snapshot_id = ");
            put_snapshot(&b, r);
            buf_printf(&b, ", \"rows\" = %lld",
                       (long long)(r->partition_rows ? r->partition_rows[i] : 0));
            /* the SQL that built it: a slice built by other SQL is stale */
            buf_puts(&b, ", model_hash = ");
            quote_literal(&b, m->hash);
        }
        buf_puts(&b, " WHERE model = ");
        quote_literal(&b, m->name);
        buf_puts(&b, " AND \"partition\" = ");
        quote_literal(&b, part);
        strlist_push_owned(out, buf_detach(&b));
    }
}

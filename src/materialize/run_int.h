/*
 * run_int.h — what the runner (runner.c and its parts run_reads.c,
 * run_slices.c, run_steps.c, run_parallel.c) shares with the per-model
 * build (model_build.c), the reference rewriting (pin.c), the runs over
 * workers (remote.c, worker.c) and the run's heartbeat (run_beat.c).
 * Internal to materialize/.
 */
#ifndef TARN_MATERIALIZE_RUN_INT_H
#define TARN_MATERIALIZE_RUN_INT_H

#include "materialize/build.h"
#include "materialize/change.h"
#include "materialize/prefetch.h"
#include "util/buf.h"

#include <stdlib.h>

/* How a table reference that is not a model's target resolves. */
typedef enum {
    SRC_DUCKDB = 0, /* a DuckDB object (config/ view, temp table, file...) */
    SRC_LAKE,       /* a lake table tarn does not build: pinned at the run's start */
    SRC_LAKE_VIEW,  /* a lake view: qualified, not pinned (views have no versions) */
    SRC_MISSING,
} source_kind;

typedef struct {
    char *key; /* catalog.schema.table as written, lower case */
    source_kind kind;
    char *schema, *table; /* in the lake, for SRC_LAKE / SRC_LAKE_VIEW */
} source_entry;

typedef struct run_ctx run_ctx;

struct run_ctx {
    tarn_project *p;
    tarn_session *s;
    const build_opts *o;
    const char *lake; /* the lake's alias */
    const char *cat;  /* its catalog prefix in the session (tarn_session_catalog_prefix) */
    build_summary *sum;
    strlist lake_tables; /* "schema.table", lower case: base tables now in the lake */
    strlist lake_views;
    strlist lake_schemas;
    source_entry *sources;
    size_t nsources;
    int64_t *built_snapshot;   /* per model: its snapshot in this run, or -1 */
    strlist *partitions;       /* per model: the slices this run builds */
    const char *watermark_sql; /* the building model's {watermark}: a typed literal, or
                                  NULL (replaced by SQL NULL) */
    change_ctx chg;            /* change detection */
    tarn_buf unchanged_rows;   /* one INSERT of the models skipped as unchanged */
    prefetch *pf;              /* -j > 1: the workers, or NULL */
    unsigned char *from_start; /* per model: a first build of every slice from its start= */
    /* a worker's build (worker.c): statements it adds to each successful
     * build's commit (the job's guard and done mark), and the slices of
     * the model a lost worker committed already in this run (not built
     * again); NULL for a run in one process */
    void (*on_commit)(void *ctx, run_ctx *c, const model_result *r, strlist *out);
    void *commit_ctx;
    const strlist *committed_slices;
    /* a worker's build that is built again when it fails on a conflict or
     * a lost catalog connection (model_result.conflict, .lost): such a
     * failure is not recorded, the next attempt's record is the build's */
    int builds_again;
};

/* Whether lake table schema.table is a base table of the lake now
 * (c->lake_tables, which run_reads.c loads). */
static inline int run_has_table(const run_ctx *c, const char *schema, const char *table)
{
    char *k = change_table_key(schema, table);
    int found = strlist_find(&c->lake_tables, k) >= 0;
    free(k);
    return found;
}

/* A run's context without the run (`tarn compile`, compile.c): config/
 * run (unless o->config_ran), the lake's snapshot and tables, sources and
 * slices of the selected models, change records; nothing recorded. 0, or
 * < 0 (nothing to close). */
int run_ctx_open(run_ctx *c, build_summary *sum, tarn_project *p, tarn_session *s,
                 const build_opts *o);
void run_ctx_close(run_ctx *c);
/* The run's time, epoch seconds: build_opts.now, else when it started. */
static inline int64_t run_now(const run_ctx *c)
{
    return c->o->now > 0 ? c->o->now : (int64_t)c->sum->started_at;
}
const source_entry *run_source(const run_ctx *c, const table_ref *r);

/* The run's steps, for the run over workers (remote.c) and a worker's
 * build (worker.c), as build_run takes them for each model: */
/* a model event to o->on_event */
void run_emit(run_ctx *c, build_event_type type, size_t model, size_t index);
/* whether model mi builds: 0 when skipped (upstream failed, or unchanged;
 * recorded and reported), 1 with its run reason set */
int run_decide(run_ctx *c, size_t mi, size_t index);
/* a model's result made ready to build for reason `why` (taken) */
void run_result_prepare(run_ctx *c, size_t mi, char *why);
/* builds a decided model (slices, one at a time), counts and reports it */
void run_execute(run_ctx *c, size_t mi, size_t index);
/* a model the stopped run never started, recorded and reported */
void run_not_run(run_ctx *c, size_t mi, size_t index);
/* a result's records written on their own (not in a build's commit) */
void run_record_alone(run_ctx *c, size_t mi, const model_result *r);
/* the build of one slice `one` added to its model's result r, as a run
 * built slice by slice reports the model (what `one` holds is freed) */
void run_fold_slice(model_result *r, model_result *one);

/* What a run reads before it writes (run_reads.c): config/ (unless
 * o->config_ran), the lake's snapshot and tables, each selected model's
 * slices, and every table a model reads checked to exist. */
int run_prepare_reads(run_ctx *c, const unsigned char *sel);
/* A model with start= and no table yet: every slice from its start to
 * now (run_slices.c). */
int run_first_from_start(run_ctx *c, size_t mi, int64_t now);
/* One model of a run in order: not run when the run was stopped, else
 * decided and, when it builds, built. */
void run_one(run_ctx *c, size_t mi, size_t index);
/* -j N (run_parallel.c): the N-1 prefetch workers started when some
 * selected model can use one (c->pf, else NULL), and the run with them. */
void run_start_workers(run_ctx *c);
void run_parallel(run_ctx *c);

/* A run's heartbeat (run_beat.c): on a catalog several processes share,
 * a thread renewing the run's tarn_run row until stopped; NULL (nothing
 * to stop) on a DuckDB file, or when no link to the catalog opens. */
typedef struct run_beat run_beat;
run_beat *run_beat_start(run_ctx *c);
void run_beat_stop(run_beat *b);

/* The run over `tarn worker` processes (remote.c): every model enqueued,
 * each decided as build_run decides it once its upstream is done, built by
 * a worker, followed and reported here. */
void run_on_workers(run_ctx *c);

/* Builds model `mi` into r (status, figures, error). Returns 0 whether it
 * succeeded or failed; the outcome is r->status. */
int model_build(run_ctx *c, size_t mi, model_result *r);

/* The text of statement `st` of model `mi` with its lake references
 * qualified and pinned, {partition} replaced by `partition` (NULL: no
 * placeholder allowed) and {watermark} by c->watermark_sql. Reads are
 * added to r->upstream. */
char *pin_statement(run_ctx *c, size_t mi, const model_stmt *st, const char *partition,
                    model_result *r);

/* The same; with pin_self 0 the model's own table is qualified but read
 * as the transaction has it (data tests check what the build wrote). */
char *pin_statement_ex(run_ctx *c, size_t mi, const model_stmt *st, const char *partition,
                       model_result *r, int pin_self);

/* The JSON list of r->upstream (caller frees). */
char *pin_upstream_json(const model_result *r);

#endif

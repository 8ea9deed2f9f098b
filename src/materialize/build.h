/*
 * build.h — running a project's models into the lake (design §5).
 *
 * build_run() takes a loaded project, a session and the selected models,
 * and builds them in DAG order. Each model build is one DuckLake snapshot:
 *
 *     BEGIN
 *       setup statements, then the strategy's statements (codegen.h)
 *       CALL ducklake_set_commit_message(lake, 'tarn', 'tarn: build <model> (<strategy>)',
 *                                        extra_info => '<JSON>')
 *       run records, queued with tarn_session_commit_sql (records.h)
 *     COMMIT
 *
 * so the table's new state, the commit message and tarn's records are
 * committed together or not at all. A build that fails is rolled back (the
 * lake stays at its previous snapshot) and recorded on its own; the models
 * downstream of it are skipped, its siblings still build.
 *
 * Reads are pinned: every reference to a lake table is rewritten to
 * "lake"."schema"."table" AT (VERSION => n), with n the snapshot the
 * upstream model's build produced in this run, or the lake's snapshot at
 * the start of the run for everything not rebuilt. A run therefore reads
 * one consistent state of the lake, and each build records exactly which
 * snapshots it read.
 *
 * Change detection (change.h): a selected model whose SQL, config,
 * inputs and table are as at its last successful build is skipped as
 * unchanged (recorded, no snapshot); every build records its run_reason.
 *
 * Parallelism (-j N, prefetch.h): builds commit one at a time — a lake
 * has one writer, and a build's transaction is the session's — but up to
 * N-1 worker threads evaluate the queries of models whose upstream models
 * are built, each on its own connection, while the main thread builds. A
 * failure skips only its downstream; independent models go on.
 */
#ifndef TARN_MATERIALIZE_BUILD_H
#define TARN_MATERIALIZE_BUILD_H

#include "project/project.h"
#include "tarn/session.h"
#include "util/buf.h"
#include "util/strlist.h"

#include <stdint.h>

typedef enum {
    MODEL_PENDING = 0,
    MODEL_SUCCESS,
    MODEL_FAILED,
    MODEL_SKIPPED,
    MODEL_CANCELLED, /* its build was rolled back because the run was stopped */
} model_status;

const char *model_status_name(model_status s);

/* Stopping a run (Ctrl-C, SIGTERM). build_cancel, safe from any thread,
 * asks the run to stop: the build in flight fails before it commits (its
 * transaction is rolled back and it is recorded `cancelled`), and the
 * models not started yet are recorded as not run. The caller also
 * interrupts the session's running query (tarn_session_interrupt). */
void build_cancel(int sig);
/* The signal build_cancel was given, or 0. */
int build_cancel_signal(void);

/* An upstream table a build read, and the snapshot it read it at. */
typedef struct {
    char *table; /* schema.table in the lake */
    char *model; /* the model that builds it, or NULL for a lake source */
    int64_t snapshot_id;
    int64_t version; /* the last snapshot that changed it, as of snapshot_id */
} upstream_read;

/* -j: a model's query evaluated ahead by a worker (prefetch.h) or not. */
typedef enum {
    PREFETCH_NONE = 0, /* no worker took it: evaluated in the session */
    PREFETCH_USED,     /* the build read the worker's rows */
    PREFETCH_FAILED,   /* the worker failed (or ran another text): evaluated in the session */
} prefetch_use;

/* "none", "used", "failed" */
const char *prefetch_use_name(prefetch_use u);

typedef struct {
    size_t model;
    model_status status;
    int64_t snapshot_id; /* the build's snapshot; -1 when none */
    int64_t rows_written;
    int64_t rows_deleted;
    strlist partitions;
    int64_t *partition_rows; /* per partition */
    upstream_read *upstream;
    size_t nupstream;
    double started_at;       /* epoch seconds */
    double duration_ms;      /* the build's, plus a worker's evaluating its query (-j) */
    double query_ms;         /* time in statements that evaluate the model's SQL */
    int physical_partitions; /* partitioned: laid out by DuckLake partitioning */
    int no_change;           /* succeeded without changing the table: no snapshot */
    char *tests_json;        /* data test results: JSON array, or NULL */
    char *error;             /* why it failed, or why it was skipped */
    int conflict;            /* it failed on a conflict of its commit with another's */
    int lost;                /* it failed on a catalog connection lost (TARN_ELOST): its
                                commit may have landed */
    /* history: versions opened (new and changed keys) and closed (changed
     * keys, and missing keys with deletes=close); rows_written counts the
     * opened ones. valid_at is this build's valid_from/valid_to. */
    int64_t rows_opened, rows_closed;
    char *valid_at;
    /* incremental: the covered-through mark before and after the build
     * (text; NULL before a first or full-refresh build, or for an empty
     * table), and whether it was a full refresh. */
    char *watermark_from, *watermark_to; /* incremental: the range [from, to) this build read
                                            (from NULL: from the start; to NULL: no upper
                                            bound, a numeric or string watermark) */
    char *covered_through;               /* … the newest watermark the table now holds (below
                                            the frontier): where the next build starts */
    int full_refresh;
    /* on_schema_change: what the build did about SELECT columns that
     * differ from the table's ("added x; dropped y", "ignored …"), or NULL */
    char *schema_change;
    /* change detection (change.h) */
    char *run_reason;        /* why it ran, or NULL */
    int unchanged;           /* skipped: nothing it depends on changed */
    const char *config_hash; /* its inputs, recorded with the build */
    const char *source_files;
    int64_t target_version; /* no_change: its table's version; else -1 */
    prefetch_use prefetch;  /* -j: whether a worker's evaluation of its query was used */
    char *warning;          /* what the run warns about this model, or NULL */
    /* while a build's records are made for its commit on a catalog other
     * processes write too (PostgreSQL): the SQL of the snapshot the commit
     * makes, for its records to name (a commit that finds newer snapshots
     * is renumbered past them, and snapshot_id is then not its id);
     * NULL otherwise. Not owned. */
    const char *commit_snapshot_sql;
} model_result;

typedef enum {
    BUILD_RUN_START,
    BUILD_MODEL_START,
    BUILD_MODEL_FINISH,
    BUILD_RUN_FINISH,
} build_event_type;

typedef struct build_summary build_summary;

typedef struct {
    build_event_type type;
    const tarn_project *project;
    const build_summary *summary;
    const model_result *result; /* model events */
    size_t index;               /* model events: 1-based position in the run */
    /* to build_opts.on_slice, a BUILD_MODEL_FINISH of one slice: the slice,
     * its 1-based position among the model's slices this run builds, and
     * their number; result is the slice's own (NULL slice otherwise) */
    const char *slice;
    size_t slice_index, slice_total;
} build_event;

struct build_summary {
    int64_t run_id;
    int64_t start_snapshot;
    size_t *run_order; /* the selected models, in build order */
    size_t nrun;
    model_result *results; /* one per project model; only the selected are used */
    size_t succeeded, failed, skipped, unchanged;
    size_t cancelled, not_run; /* a stopped run: builds rolled back, models not started */
    int stop_signal;           /* the signal that stopped the run (SIGINT, SIGTERM), or 0 */
    size_t interrupted_runs;   /* earlier runs found dead ('running' forever), now marked */
    int jobs;        /* queries evaluated at once: -j, or 1 when workers could not start */
    char *jobs_note; /* why the run went one model at a time although -j > 1, or NULL */
    double started_at;
    double duration_ms;
};

typedef struct {
    const unsigned char *selected; /* one byte per model */
    const char *partition;         /* --partition */
    const char *from, *to;         /* --from / --to */
    int jobs;                      /* -j: queries evaluated at once (prefetch.h) */
    int full_refresh;              /* --full-refresh: rebuild from scratch (build.h) */
    int allow_empty;               /* --allow-empty: as the annotation on every model */
    int force;                     /* --force: build even what is unchanged */
    const char *selectors;         /* the selector text, for the run record */
    const char *trigger;           /* what started the run: NULL (manual), "scheduler", … */
    int64_t now;                   /* the run's time (epoch s; 0: the clock): the current
                                      slice, an incremental model's frontier */
    const char *occurrence;        /* a scheduler run: the occurrences it serves, or NULL */
    int config_ran;                /* the caller ran config/ in the session already */
    int test_only;                 /* `tarn test`: run the selected models' data tests on their
                                      published tables (at the run's start snapshot), build nothing */
    const strlist *slices;         /* `tarn backfill`: exactly these slices of the selected
                                      partitioned models, each its own build and snapshot */
    const char *tarn_version;
    int on_workers; /* --on-workers: build on `tarn worker` processes (queue.h) */
    void (*on_event)(void *ctx, const build_event *ev);
    void (*on_slice)(void *ctx, const build_event *ev); /* each slice of a model built slice by
                                                           slice; may be NULL */
    /* what the run tells the user besides its events (--on-workers: no
     * worker is alive to take its jobs); may be NULL */
    void (*on_notice)(void *ctx, const char *msg);
    void *ctx;
} build_opts;

/* Runs config/ in `s`, then builds the selected models (with
 * o->test_only, runs their data tests instead: each model's result is
 * success when no error-severity test failed, failed otherwise, with the
 * tests in tests_json and the run recorded with trigger "test"). Returns 0 when the
 * run took place (model failures are in the summary), or < 0 for a project
 * or usage error that stopped it before anything was built (a config
 * statement failing, a missing source, a bad --partition). */
int build_run(build_summary *out, tarn_project *p, tarn_session *s, const build_opts *o);
void build_summary_free(build_summary *sum, size_t nmodels);
/* Frees what one result holds (config_hash and source_files are not its). */
void build_result_free(model_result *r);

/* The strategy-specific figures of result `r` of model `m` as a JSON
 * object (caller frees): history rows_opened, rows_closed, valid_at;
 * incremental watermark_column, watermark_from, watermark_to,
 * full_refresh. NULL for the other strategies. */
char *build_details_json(const tarn_model *m, const model_result *r);
/* The same figures added to JSON object `o` (a jansson json_t), for the
 * commit's extra info and the --json events alike. */
struct json_t;
void build_details_merge(struct json_t *o, const tarn_model *m, const model_result *r);

/* For `tarn plan`, what a run would do with one selected model. */
typedef struct {
    char *reason;   /* why it would run, or NULL: skipped as unchanged */
    char *fails;    /* why it would fail before writing ("strategy changed (history →
                       replace)"), or NULL */
    char *skip;     /* why it would be skipped although changed (an upstream would fail) */
    char *nothing;  /* why it would be skipped although its inputs have new versions: an
                       append model whose inputs hold the rows its last build read (reason
                       is then NULL), or NULL */
    char *warning;  /* what the run would warn about, or NULL */
    char *cost;     /* what a full rebuild would take ("would rebuild 366 slices"), or NULL */
    char *range;    /* what it would read or build: a partitioned model's slices when they are
                       more than the current one (a first run from start=, a lookback), an
                       incremental model's range; or NULL */
    strlist slices; /* a time-partitioned model's slices (a first run: every one from start=) */
} plan_entry;

/* For `tarn plan`: what each selected model would do (*out: one entry per
 * model, free with build_plan_free). A model downstream of one that would
 * run counts as "upstream changed". `s` must have the lake attached
 * (config/'s ATTACH), or `lake_attached` 0: every model runs for the
 * first time. */
int build_plan(plan_entry **out, tarn_project *p, tarn_session *s, const build_opts *o,
               int lake_attached);
void build_plan_free(plan_entry *plan, size_t nmodels);

/* `tarn compile` (compile.c): the SQL a build of model `mi` would run now
 * into `out` — BEGIN, the setup statements and the query with every lake
 * read pinned to its snapshot, the strategy's statements, COMMIT — reading
 * the lake (its tables, snapshot, an incremental model's mark) and
 * writing nothing. `s` has config/ run and the lake attached (read-only
 * will do; o->config_ran set); o->partition/from/to pick slices. */
int build_compile(tarn_buf *out, tarn_project *p, tarn_session *s, const build_opts *o, size_t mi);

/* Runs the project's config/ statements; an error names file and line. */
int build_run_config(tarn_project *p, tarn_session *s);

/* The partitions a run builds for model `m` (for `tarn plan` too): the
 * backfill's slices, the --partition (for a time grain it may also be a
 * point in time of another grain: the slice containing it), the --from/--to
 * range, or the current slice at `now` (and the lookback=N slices before
 * it). A run builds several slices one at a time, each its own snapshot. For a dynamic model
 * without --partition the list is empty, meaning every value the SELECT yields (--from/--to do not
 * apply to it). */
int build_partitions(strlist *out, const tarn_model *m, const build_opts *o, int64_t now);

#endif

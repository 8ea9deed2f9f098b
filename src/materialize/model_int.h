/*
 * model_int.h — the state of one model build and the steps its strategies
 * share (model_steps.c), for model_build.c and the strategies that live
 * in their own files: history (SCD type 2, history.c), incremental
 * (incremental.c), partitioned (partition.c), manual (manual.c).
 * Internal to materialize/.
 */
#ifndef TARN_MATERIALIZE_MODEL_INT_H
#define TARN_MATERIALIZE_MODEL_INT_H

#include "materialize/run_int.h"

#include "project/query.h"

/* The state of one build. */
typedef struct {
    run_ctx *c;
    size_t mi;
    const tarn_model *m;
    model_result *r;
    char *target;        /* "lake"."schema"."table" */
    int exists;          /* the target is a table in the lake */
    int existed;         /* … before this build */
    int altered;         /* the build changed the table's or the lake's definitions */
    int restarted;       /* the build starts its table over (a rebuild from scratch) */
    int staged;          /* TEMP tables were made (to drop afterwards) */
    char *last_query;    /* the last pinned text of the model's query */
    char *watermark_sql; /* incremental: what {watermark} becomes (c->watermark_sql) */
    double worker_ms;    /* -j: a worker's time evaluating the query (part of the duration) */
    int64_t had_rows;    /* the rows the empty check guards, counted before the build's BEGIN;
                            -1: no check (model_build.c, count_before_build) */
} build_state;

/* Runs a statement; adds its time to the query time when `timed`. */
int mb_run(build_state *b, const char *sql, int64_t *count, int timed);

/* Puts "file:line: " before the current error of statement `st` of
 * model m, the line being where DuckDB's position maps in the file (with
 * an excerpt of it), else where the statement starts. Returns rc. */
int mb_error_at(const tarn_model *m, const model_stmt *st, int rc);
int mb_run_rows(build_state *b, qrows *out, const char *sql);

/* The target table's columns, in order. */
int mb_target_columns(build_state *b, strlist *out);

/* Runs the model's setup statements (all but the trailing query). */
int mb_run_setup(build_state *b, const char *partition);

/* The pinned text of the model's query (caller frees); kept as the last
 * query, for error recovery. */
char *mb_query_text(build_state *b, const char *partition);
/* Stages the model's query in CG_STAGE. */
int mb_stage(build_state *b, const char *partition);
/* The staged columns, in order. */
int mb_stage_columns(build_state *b, strlist *out);

/* The staged columns plus `extra` must be the table's, in order; else
 * the model's on_schema_change decides (and `stage` is updated to the
 * columns to write). */
int mb_check_columns(build_state *b, strlist *stage, const char *const *extra, size_t nextra);
/* Each key column is a staged column, and no non-NULL key is staged twice
 * (the error names the keys; nothing has been written yet). */
int mb_check_keys(build_state *b, const strlist *cols);
/* Merges the staged rows into the existing table by the model's key: the
 * keys whose rows changed are deleted and their staged rows inserted. */
int mb_merge_staged(build_state *b, const strlist *cols);

/* append_input.c: 1 when append model b would run only for new versions
 * of tables it reads that hold the rows its last build read (its run
 * reason then says so, and its reads are in b->r->upstream); 0 otherwise.
 * Runs before the build's BEGIN. */
int mb_append_same_input(build_state *b);
/* For `tarn plan`: 1 when append model mi, run for `reason`, would append
 * nothing (as mb_append_same_input would find, the lake only read); -1
 * when that depends on tables models that would run first (will_run)
 * build; 0 when it would append. */
int append_plan_same_input(const change_ctx *cc, tarn_session *s, const char *lake, size_t mi,
                           const char *reason, const unsigned char *will_run);

/* guard.c: fails the build, before it writes, when its table has rows and
 * was built with a strategy this one would lose or duplicate rows of
 * (guard.h); nothing to check on a first build or with --full-refresh. */
int guard_strategy(build_state *b);

/* An empty SELECT meeting a merge or history table that has rows fails
 * the build (naming what it would close), unless the model says
 * allow_empty or the run --allow-empty. The stage holds the query's rows;
 * the table's were counted before the build's BEGIN (b->had_rows; a
 * history's current versions are counted here). */
int mb_check_empty(build_state *b);
/* The error of an empty result meeting a table that has rows (`what`
 * says what it would do to them); nothing has been committed. */
int mb_empty_refused(const tarn_model *m, const char *what);

/* manual.c: the model's own script; fails when it wrote a lake object
 * that is neither its table nor one its writes= names. */
int build_manual(build_state *b);

/* history.c: SCD type 2 (see codegen.h). */
int build_history(build_state *b);
/* incremental.c: the range [from, frontier), replaced or merged by key. */
int build_incremental(build_state *b);
/* … what a build would read, for tarn compile and tarn plan: the filter on
 * the watermark column (NULL: every row), what {watermark} becomes (NULL:
 * SQL NULL) and a sentence saying which range and why (callers free). */
int inc_describe(build_state *b, int rebuild, char **filter, char **mark_sql, char **note);
/* partition.c: the slices of a partitioned model (--partition, or all). */
int build_partitioned(build_state *b);

#endif

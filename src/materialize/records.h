/*
 * records.h — tarn's run records, kept in the lake's catalog database
 * beside the ducklake_* tables (design §5):
 *
 *   tarn_run        one row per `tarn run`: when, selectors, status
 *                   (running, success, failed, cancelled, interrupted), counts,
 *                   the process (host, pid, process_start) that ran it, and
 *                   its trigger (manual, scheduler, backfill) with the
 *                   occurrence a scheduler run serves
 *   tarn_model_run  one row per model per run: status, snapshot, rows,
 *                   partitions, upstream snapshots (and table versions) read,
 *                   hash, timings, error, note (e.g. a build that changed
 *                   nothing wrote no snapshot; 'unchanged' for a model skipped
 *                   by change detection), data test results, strategy details
 *                   (JSON: history rows_opened/rows_closed, incremental
 *                   watermark_from/to), and what change detection compares
 *                   (change.h): run_reason, config_hash, target_version (its
 *                   table's version after the build), source_files (file
 *                   fingerprints), strategy_spec (how the table is
 *                   written: "merge key=id", annot_strategy_spec; the next
 *                   build compares it, guard.h)
 *   tarn_partition  the current state of every partition of every
 *                   partitioned model: status, last good snapshot and rows,
 *                   last error, and the model hash of the build that last
 *                   wrote it (a changed model rebuilds the slices built by
 *                   other SQL) — one query answers "which slices are built"
 *   tarn_test_result one row per data test per run (builds and `tarn test`):
 *                   model, path:line of its annotation, test, builtin (tarn's
 *                   own checks of a history table), severity (error, warn),
 *                   status (pass, fail, warn), violations, examples, and for a
 *                   failure `sample`: up to 20 violating rows as a JSON array
 *                   of objects (at most 50 KB: rows dropped, never cut;
 *                   sample_rows / sample_dropped), the snapshot it checked
 *
 * A successful build's rows are queued with tarn_session_commit_sql and so
 * commit in the same catalog transaction as its snapshot; a failed or
 * skipped build's rows are written on their own. DuckLake ignores tables it
 * does not know, so the lake stays one stock DuckDB + ducklake opens.
 */
#ifndef TARN_MATERIALIZE_RECORDS_H
#define TARN_MATERIALIZE_RECORDS_H

#include "materialize/build.h"
#include "util/buf.h"

/* Creates the tables in the catalog (`cat`: tarn_session_catalog_prefix) if missing. */
int records_ensure(tarn_session *s, const char *cat);

/* Creates each table defs[i][0] (columns defs[i][1], a parenthesized
 * column list) in the catalog with prefix `cat` when it is missing. */
int records_create_tables(tarn_session *s, const char *cat, const char *const (*defs)[2], size_t n);

/* INSERT of the tarn_run row at the start of a run (status 'running'),
 * with what triggered it ("manual" for NULL, "scheduler", "backfill") and,
 * for the scheduler, the occurrences it serves (text, or NULL), and the
 * project's target (`--target`; NULL: "default"). */
char *records_run_start(const char *cat, const build_summary *sum, const char *selectors,
                        const char *version, const char *trigger, const char *occurrence,
                        const char *target);
/* The runs recorded 'running' whose process is gone: *n run ids into *ids
 * (caller frees). A killed run (kill -9, power loss) never reaches
 * records_run_finish. A run of this host is judged by its pid and process
 * start (tarn_run's host, pid, process_start). Another host's pids cannot
 * be asked: on a DuckDB-file catalog its run is gone (whoever can read the
 * catalog holds its lock, which a live run holds); on a catalog several
 * processes share (PostgreSQL, lake `alias`) it is gone once nothing
 * of it (its start, the builds it recorded in tarn_model_run, its
 * heartbeat: tarn_run.heartbeat_at, renewed while it runs) is newer than
 * TARN_RUN_STALE_SECONDS (default 300 for a run with a heartbeat, 86400
 * for one without), and left alone until then. */
int records_dead_runs(int64_t **ids, size_t *n, tarn_session *s, const char *alias,
                      const char *cat);
/* A run's heartbeat on a shared catalog: how often its process renews it
 * (TARN_RUN_HEARTBEAT_SECONDS; by default a fifth of the time without one
 * after which another host's run counts as gone, at most 30 s), and the
 * statement that renews it (tarn_run.heartbeat_at, for a link to the
 * catalog, tarn_catlink_exec). */
double records_beat_every(void);
char *records_run_beat_sql(const char *cat, int64_t run_id);
/* Marks those runs 'interrupted' (the next run does, before its own);
 * *marked: how many. */
int records_mark_interrupted(tarn_session *s, const char *alias, const char *cat, size_t *marked);

/* UPDATE of the tarn_run row at its end. */
char *records_run_finish(const char *cat, const build_summary *sum, int64_t end_snapshot);

/* The statements recording model result `r` (of model `m`, run `run_id`):
 * its tarn_model_run row and, for a partitioned model, the tarn_partition
 * upserts. A success names r->snapshot_id (inside a build's commit, the
 * snapshot being committed: tarn_session_pending_snapshot). */
void records_model(strlist *out, const char *cat, int64_t run_id, const tarn_model *m,
                   const model_result *r, const char *upstream_json);

/* The tarn_test_result rows of result `r`'s data tests (r->tests_json;
 * nothing when it has none): one per test, with its failing rows' sample,
 * and the snapshot it checked (-1: none, a build rolled back). */
void records_tests(strlist *out, const char *cat, int64_t run_id, const tarn_model *m,
                   const model_result *r, int64_t snapshot_id);

/* The same tarn_model_run row as a VALUES tuple "(…)" appended to `b`,
 * after records_model_insert's "INSERT INTO … VALUES " (several rows, comma
 * separated, make one statement: the models skipped as unchanged). */
void records_model_insert(tarn_buf *b, const char *cat);
void records_model_values(tarn_buf *b, int64_t run_id, const tarn_model *m, const model_result *r,
                          const char *upstream_json);

#endif

/*
 * codegen.h — the SQL text of each write strategy (pure string building,
 * unit-tested in tests/unit/test_codegen.c).
 *
 * Every name goes through quote_ident/quote_literal. The model's query is
 * spliced in on its own lines, so that a trailing `--` comment in it can
 * never swallow what follows.
 *
 *   replace      CREATE OR REPLACE TABLE t AS <query>
 *   append       INSERT INTO t SELECT * FROM (<query>)
 *   merge        stage the query in a TEMP table; fail on duplicate keys;
 *                keys whose rows changed = (stage EXCEPT t) ∪ (t's rows with
 *                a staged key EXCEPT stage); DELETE those keys from t
 *                (NULL-safe: IS NOT DISTINCT FROM); INSERT their staged
 *                rows. Unchanged rows are not rewritten, so the cost follows
 *                the changed rows, not the table.
 *   partitioned  per slice P: stage the query with {partition} = P; fail
 *                if a row lies outside P; DELETE WHERE _tarn_partition = P;
 *                INSERT the staged rows with _tarn_partition = P.
 *   history      (SCD type 2) the table is the query's columns plus
 *                valid_from, valid_to (NULL: current) and is_current.
 *                Stage the query; fail on duplicate keys; the keys whose
 *                tracked columns differ from their current row (or that
 *                have none) = the merge's EXCEPT over key + tracked columns
 *                against the current rows; with deletes=close, also the
 *                current keys missing from the stage. UPDATE those keys'
 *                current rows to closed (valid_to = the run's time) and
 *                INSERT the staged rows of the changed and new keys as
 *                current (valid_from = the run's time). Unchanged keys are
 *                not touched. A view <table>_current shows the current rows.
 *   incremental  stage the query's rows whose watermark column is past the
 *                table's max (unless the query uses {watermark} itself);
 *                append them, or merge them by key=.
 */
#ifndef TARN_MATERIALIZE_CODEGEN_H
#define TARN_MATERIALIZE_CODEGEN_H

#include "project/partition.h"
#include "util/buf.h"
#include "util/strlist.h"

/* The column a partitioned table carries its slice identity in. */
#define CG_PARTITION_COLUMN "_tarn_partition"
/* The TEMP tables a build stages rows and keys in. */
#define CG_STAGE "temp.main._tarn_stage"
#define CG_KEYS "temp.main._tarn_keys"

/* "lake"."schema"."table" */
void cg_target(tarn_buf *b, const char *lake, const char *schema, const char *table);

char *cg_replace(const char *target, const char *query);
char *cg_append(const char *target, const char *query);
char *cg_stage(const char *query);
/* CREATE OR REPLACE TABLE t AS SELECT * FROM stage (a first build, or a
 * full refresh, of a staged model);
 * with `partition_expr`, the column _tarn_partition = that expression. */
char *cg_create_from_stage(const char *target, const char *partition_expr, int empty);
/* INSERT INTO t SELECT *[, <partition_expr>] FROM stage. */
char *cg_insert_from_stage(const char *target, const char *partition_expr);

/* Non-NULL keys staged more than once: one row per key, its text
 * ("id=3, region=eu") and count, at most `limit`, plus the total number of
 * such keys in every row. */
char *cg_duplicate_keys(const strlist *key, int limit);
/* CREATE TEMP TABLE of the keys whose rows differ between stage and t. */
char *cg_changed_keys(const char *target, const strlist *cols, const strlist *key);
char *cg_delete_keys(const char *target, const strlist *key);
char *cg_insert_keys(const char *target, const strlist *key);
/* The same inside one slice of a partitioned table: the rows of `slice`
 * (a subquery, for cg_changed_keys' target), the delete limited to them,
 * the insert giving the staged rows that slice's identity. */
char *cg_slice_rows(const char *target, const char *slice);
char *cg_delete_keys_in(const char *target, const strlist *key, const char *slice);
char *cg_insert_keys_in(const char *target, const strlist *key, const char *slice);

/* The expression that gives a row's slice identity for grain `g` from its
 * column `col` (strftime for time grains, CAST AS VARCHAR for dynamic). */
char *cg_partition_expr(part_grain g, const char *col);
/* Rows of the stage outside slice `identity`: count and one example. */
char *cg_outside_partition(part_grain g, const char *col, const char *identity);
char *cg_delete_partitions(const char *target, const strlist *identities);
/* CREATE OR REPLACE TEMP MACRO tarn_partition(ts) for a time grain. */
char *cg_partition_macro(part_grain g);

/* The columns a history table adds to the query's, and its view's suffix. */
#define CG_VALID_FROM "valid_from"
#define CG_VALID_TO "valid_to"
#define CG_IS_CURRENT "is_current"
#define CG_CURRENT_SUFFIX "_current"

/* CREATE OR REPLACE TEMP TABLE stage AS SELECT * FROM (<query>) WHERE
 * <where> (an incremental build's range). */
char *cg_stage_where(const char *query, const char *where);
/* The table's watermark: max(col) as text, and its type. */
char *cg_watermark(const char *target, const char *col);

/* CREATE OR REPLACE TABLE t AS SELECT *, <ts> valid_from, NULL valid_to, true
 * is_current FROM stage (`ts` is a TIMESTAMP SQL expression). */
char *cg_history_create(const char *target, const char *ts);
/* CREATE TEMP TABLE _tarn_keys (key…, _tarn_open BOOLEAN): the keys whose
 * current version ends in this build; _tarn_open = a staged version
 * replaces it (a changed or new key), false = the key is gone from the
 * query (deletes_close only). */
char *cg_history_keys(const char *target, const strlist *key, const strlist *track,
                      int deletes_close);
/* UPDATE t SET valid_to = ts, is_current = false for the current rows of
 * the keys in _tarn_keys. */
char *cg_history_close(const char *target, const strlist *key, const char *ts);
/* INSERT the staged rows of the keys in _tarn_keys with _tarn_open, as
 * current from ts. */
char *cg_history_open(const char *target, const strlist *key, const char *ts);
/* CREATE OR REPLACE VIEW lake.schema.<table>_current over the current
 * rows (the query's columns and valid_from). The view reads the table by
 * schema.table, so it works under any alias of the lake. */
char *cg_history_view(const char *lake, const char *schema, const char *table);

char *cg_commit_message(const char *lake, const char *message, const char *extra_json);

#endif

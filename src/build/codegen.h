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
 */
#ifndef TARN_BUILD_CODEGEN_H
#define TARN_BUILD_CODEGEN_H

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
/* CREATE TABLE t AS SELECT * FROM stage (first build of a staged model);
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

/* The expression that gives a row's slice identity for grain `g` from its
 * column `col` (strftime for time grains, CAST AS VARCHAR for dynamic). */
char *cg_partition_expr(part_grain g, const char *col);
/* Rows of the stage outside slice `identity`: count and one example. */
char *cg_outside_partition(part_grain g, const char *col, const char *identity);
char *cg_delete_partitions(const char *target, const strlist *identities);
/* CREATE OR REPLACE TEMP MACRO tarn_partition(ts) for a time grain. */
char *cg_partition_macro(part_grain g);

char *cg_commit_message(const char *lake, const char *message, const char *extra_json);

#endif

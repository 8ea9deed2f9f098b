/*
 * write.h — INSERT, DELETE and UPDATE on a lake table, inside the open
 * lake transaction.
 *
 * Inserted rows are first collected in a TEMP "stage" table shaped like the
 * lake table (same types, defaults and NOT NULL constraints), so DuckDB
 * itself applies INSERT's rules (column lists, BY NAME, DEFAULT, casts).
 * Then, as DuckLake does: at most the table's inlining limit of rows go
 * into the catalog's inlined-data table, more become one Parquet file.
 * Deletes find the (file, position) or inlined row id of every matching
 * row through the table's identity scan and record them as pending; the
 * commit turns them into delete files, inlined deletions or ended files.
 */
#ifndef TARN_LAKE_WRITE_H
#define TARN_LAKE_WRITE_H

#include "lake/colstats_set.h"
#include "lake/filestats.h"
#include "lake/handle.h"
#include "lake/txn.h"
#include "util/buf.h"

#include <stdint.h>

/* The name of the stage table, quoted (static). */
const char *lk_stage_name(void);

/* Creates the stage table for `t`; with_rowid adds __tarn_rowid BIGINT
 * (rows that keep their DuckLake row id: the new images of an UPDATE). */
int lk_stage_create(lk_lake *lake, duckdb_connection con, const lk_table *t, int with_rowid);

/* Writes the stage's rows into table `table_id` of the open transaction;
 * *count gets the number of rows. */
int lk_insert_stage(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t *count);
/* The same, always to Parquet (never inlined): the rows a MERGE inserts,
 * which DuckLake writes to a file whatever their number. */
int lk_insert_stage_file(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t *count);
/* The same when the caller knows the stage's row count (`known`; -1: count them). */
int lk_insert_stage_known(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t known,
                          int64_t *count);
/* A RETURNING list for an INSERT of one row into the stage that returns
 * the statistics of the row (colstats.h), so the row needs no query of its
 * own afterwards; NULL when the table has nested columns (their figures
 * take subqueries). Caller frees. */
char *lk_insert_returning(lk_lake *lake, int64_t table_id);
/* lk_insert_stage_known for a stage filled by an INSERT that returned
 * lk_insert_returning's list: `row` is its result (its row count is the
 * stage's). */
int lk_insert_stage_returned(lk_lake *lake, duckdb_connection con, int64_t table_id,
                             const duck_table *row, int64_t *count);

/* Inserts the rows of `query` (positionally, cast to the table's types)
 * into `table_id`, evaluating the query exactly once. The result streams
 * into one Parquet file; when it has at most the inlining limit of rows,
 * they are read back, inlined, and the file deleted (as DuckLake, which
 * buffers rows up to the limit). Partitioned tables, and tables with a type
 * Parquet does not keep exactly (HUGEINT, UHUGEINT, TIMETZ), stage the
 * result first instead when inlining is on. */
int lk_insert_query(lk_lake *lake, duckdb_connection con, int64_t table_id, const char *query,
                    int64_t *count);

/* Records inlined-data table ducklake_inlined_data_<id>_<sv> of `t`'s
 * current columns (its ducklake_inlined_data_tables row and CREATE TABLE)
 * and adds it to `t`'s model. */
void lk_write_inlined_table(lk_lake *lake, lk_table *t, int64_t sv);

/* 1 when the transaction holds pending inlined rows for `table_id`. */
int lk_write_pending_exists(lk_lake *lake, duckdb_connection con, int64_t table_id);
/* Appends the commit statements that move pending inlined rows into each
 * table's newest inlined-data table (made first when the table has none). */
void lk_write_move_pending(lk_lake *lake, duckdb_connection con);

/* Records the ducklake_file_partition_value rows of data file `file_id`
 * of table `table_id`: values[k] for partition key k (NULL: SQL NULL). */
void lk_write_partition_values(lk_txn *txn, int64_t file_id, int64_t table_id, char *const *values,
                               size_t n);

/* Records ducklake_file_column_stats rows for data file `file_id` from the
 * stats DuckDB measured writing it (`fs`), filling `st` (leaves of the
 * table) with them. HUGEINT bounds are not kept: Parquet holds them as
 * DOUBLE. */
void lk_write_file_stats(lk_txn *txn, int64_t table_id, int64_t file_id, const lk_file_stats *fs,
                         lk_stats_set *st);

/* The SQL expression of partition key k over the table's columns. */
int lk_write_key_expr(tarn_buf *b, const lk_table *t, const lk_partkey *k);

/* Appends the hive directories of one partition, "<key>=<value>/" per key
 * of the table's spec, `values` being the keys' values as text (NULL for
 * SQL NULL); nothing when the table's hive_file_pattern option is false. */
void lk_write_hive_dir(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                       const char *const *values);

/* A hive directory value: unreserved characters as is, others %XX, NULL
 * as DuckDB's __HIVE_DEFAULT_PARTITION__. Never produces '/' or "..". */
void lk_write_hive_value(tarn_buf *b, const char *v);

/* Drops the TEMP tables a write statement used; rows of pending inserts
 * still in the stage first go to their pending-insert table. `lake` may
 * be NULL (no transaction). */
void lk_write_cleanup(lk_lake *lake, duckdb_connection con);

/* Makes the pending-insert table of rows an insert left in the stage
 * (txn.h, staged_pins_sql), if any: before anything replaces the stage
 * or reads the pending rows other than an autocommit commit. */
int lk_write_pins_settle(lk_lake *lake, duckdb_connection con);

/* Marks as deleted every row of `table_id` that `match_sql` selects.
 * match_sql is a SELECT over the table's identity scan (see scan.h) that
 * yields __tarn_fid and __tarn_pos; *count gets the number of rows. */
int lk_delete_matching(lk_lake *lake, duckdb_connection con, int64_t table_id,
                       const char *match_sql, int64_t *count);

#endif

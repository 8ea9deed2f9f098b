/*
 * maintain_int.h — what the maintenance functions (maintain*.c) share:
 * argument and option helpers, result building, writing the Parquet files
 * a maintenance commit produces (with DuckLake's internal row-id and
 * snapshot-id columns) and registering them, and resolving file paths
 * inside the lake's data path. Not part of libtarn's API.
 */
#ifndef TARN_LAKE_MAINTAIN_INT_H
#define TARN_LAKE_MAINTAIN_INT_H

#include "lake/args.h"
#include "lake/txn.h"
#include "util/buf.h"

#include <stdint.h>

/* One call of a maintenance function. */
typedef struct {
    duckdb_connection con;
    int explicit_txn; /* called inside BEGIN … COMMIT */
    lk_lake *lake;
    const lk_args *a;
    const char *fn; /* its name, for messages */
    int checkpoint; /* a step of CHECKPOINT (lk_maintain_checkpoint) */
} mt_call;

/* ---- arguments and options (maintain.c) ---- */

/* Fails unless every named argument is one of `names` (NULL-terminated). */
int mt_check_named(const mt_call *c, const char *const *names);

/* The catalog at snapshot `snap`, or, when it was expired, at the first
 * snapshot left after it: the layout the snapshots that still see a file
 * (or inlined row) written at `snap` read it with. */
int mt_catalog_load(lk_catalog *out, const mt_call *c, int64_t snap);
/* Fails when named argument `name` is given as NULL. */
int mt_non_null(const mt_call *c, const char *name);
/* A boolean named argument: 1, 0, or `dflt` when absent. */
int mt_bool(const mt_call *c, const char *name, int dflt);
/* 0 when the table's auto_compact option is set to anything but true
 * (maintenance then leaves the table alone). */
int mt_auto_compact(const mt_call *c, const lk_table *t);
/* The lake option `key` for a table (table, then schema, then global
 * scope); NULL when unset (malloc'd). schema_id/table_id < 0: global. */
char *mt_option(const mt_call *c, const char *key, int64_t schema_id, int64_t table_id);

/* 1 when a CHECKPOINT inside BEGIN … COMMIT leaves table t alone (the
 * transaction deleted or updated its rows); flushes: the step is the flush
 * of inlined rows (see maintain.c for the conflict it records). */
int mt_checkpoint_skips(const mt_call *c, const lk_table *t, int flushes);

/* ---- results (maintain.c) ---- */

/* Rows of a result built as VALUES: cells are SQL literal text. */
typedef struct {
    size_t ncols;
    const char *const *names;
    const char *const *types;
    tarn_buf values;
    size_t nrows;
} mt_result;

void mt_result_row(mt_result *r, const char *const *literals);
/* *out gets SELECT … over the rows (typed, empty when none); frees r. */
char *mt_result_sql(mt_result *r);
/* A cell: `s` as an SQL literal, or an integer (malloc'd). */
char *mt_lit(const char *s);
char *mt_int(int64_t v);

/* ---- statistics (maintain_restats.c) ---- */

/* Appends to the commit the statements that make table t's statistics
 * exact again (record_count, column bounds) when the rewrite of this call
 * left it without deletions; nothing when the transaction wrote to it. */
int mt_restats(const mt_call *c, const lk_table *t);

/* ---- writing files (maintain_files.c) ---- */

/* A data file to write: the rows of `source`, a SELECT whose columns are
 * named like t's columns plus __rid and __snap (row id, snapshot id). */
typedef struct {
    const lk_table *t;   /* the layout written (names, types, field ids) */
    const lk_table *cur; /* the table now (its directory) */
    const char *source;
    const char *order_by; /* ORDER BY of the rows in the file */
    int with_rid, with_snap;
    const char *subdir;   /* hive directories under the table's, or "" */
    int64_t partition_id; /* -1: none */
    char **part_values;   /* one per partition key (NULL value: NULL) */
    size_t nparts;
    int64_t begin_snapshot;
    int64_t partial_max;   /* -1: NULL */
    int64_t row_id_start;  /* -1: NULL */
    lk_table_delta *stats; /* merge the file's column stats into it, or NULL */
} mt_file_spec;

typedef struct {
    int64_t file_id, record_count, file_size;
    char *abs_path; /* as read by this session */
} mt_written;

/* Writes the file, registers it (data file row, column stats, partition
 * values) in the open transaction. A source without rows writes nothing:
 * out->file_id is then -1. */
int mt_write_data_file(const mt_call *c, const mt_file_spec *spec, mt_written *out);
void mt_written_free(mt_written *w);

/* Writes a delete file for data file `data_file_id` (read as
 * `data_path`) holding the (pos, snap) rows of `positions` (a SELECT),
 * with the snapshot of each deletion embedded, and registers it with
 * begin_snapshot = the smallest snapshot and partial_max = the largest
 * (with_partial_max) or NULL (what DuckLake's flush of deleted inlined
 * rows writes). Nothing is written without positions; *count gets their
 * number. */
int mt_write_delete_file(const mt_call *c, const lk_table *cur, int64_t data_file_id,
                         const char *data_path, const char *positions, int with_partial_max,
                         int64_t *count);
/* Removes delete file `delete_file_id` from the catalog at once (it is
 * being replaced) and schedules its Parquet file for deletion. */
int mt_drop_delete_file_now(const mt_call *c, int64_t delete_file_id);

/* Appends the statements that remove data files `ids` from the catalog at
 * once (rows, stats, partition values, delete files) and schedule their
 * Parquet files for deletion. */
int mt_drop_files_now(const mt_call *c, const int64_t *ids, size_t n);

/* ---- paths (maintain_files.c) ---- */

/* The path of a file stored as `full` (absolute, as read) in the form
 * ducklake_files_scheduled_for_deletion keeps: relative to the data path
 * when inside it. *rel gets 1 when relative. */
char *mt_data_relative(const lk_lake *lake, const char *full, int *rel);
/* 1 when `path` (which may not exist) lies inside the lake's data path,
 * after resolving symbolic links and "..": the only files maintenance may
 * delete. */
int mt_inside_data_path(const lk_lake *lake, const char *path);
/* SQL expression of the absolute path of a ducklake_data_file /
 * ducklake_delete_file row aliased `f`; the query needs the joins of
 * mt_file_path_joins after its FROM (they bring the table row `t` and the
 * schema row `s`, alive or not). */
void mt_file_path_sql(tarn_buf *b, const lk_lake *lake, const char *f);
void mt_file_path_joins(tarn_buf *b, const lk_lake *lake, const char *f);

/* ---- compaction (maintain_compact.c) ---- */

typedef struct {
    int64_t id, record_count, row_id_start, begin, partial_max, size; /* -1: NULL */
    char *group;               /* schema version, partition spec and values */
    char *path;                /* as read */
    char *subdir;              /* hive directories of a relative path, or "" */
    int ever_deleted;          /* has or had a delete file */
    int64_t del_id, del_count; /* live delete file, -1 none */
    char *del_path;
    int64_t inlined_deleted; /* positions in ducklake_inlined_delete_T */
    int64_t mapping_id;      /* a registered file's name mapping, -1 none */
} cand;

typedef struct {
    cand *v;
    size_t n;
} cand_list;

/* The table's live files (size_filter: more conditions on the data file
 * `d`), in the order DuckLake considers them. */
int mt_load_cands(const mt_call *c, const lk_table *t, const char *size_filter, cand_list *out);
void mt_cands_free(cand_list *l);
/* A table's live files taken group by group (files of one group compact
 * together), in their order. */
typedef struct {
    cand_list l;
    cand **g;    /* the current group's files that the compaction keeps */
    char *done;  /* files already in a group */
    size_t next; /* where the next group starts its search */
} mt_groups;
typedef int (*mt_keep_fn)(const cand *f, const void *arg);
/* mt_load_cands into it (mt_groups_free it whatever this returns). */
int mt_groups_load(mt_groups *it, const mt_call *c, const lk_table *t, const char *size_filter);
/* The next group: its files that keep(f, arg) accepts into it->g, their
 * number into *ng. 0 when no group is left. */
int mt_groups_next(mt_groups *it, size_t *ng, mt_keep_fn keep, const void *arg);
void mt_groups_free(mt_groups *it);
/* Writes the new file of one compaction of sources src[0..n) (rewrite:
 * without their deleted rows) and registers it; *created tells whether
 * any row was left to write. */
int mt_write_compacted(const mt_call *c, const lk_table *t, cand *const *src, size_t n, int rewrite,
                       int *created);
/* A result row (schema, table, files processed, files created). */
void mt_compact_result(mt_result *res, const mt_call *c, const lk_table *t, size_t processed,
                       int created);
extern const char *const MT_COMPACT_NAMES[4];
extern const char *const MT_COMPACT_TYPES[4];
/* The table named by a compaction's second argument, or NULL. */
const char *mt_table_arg(const mt_call *c);
/* One compaction's steps on one table: `options` reads the table's options
 * before its work starts (NULL: none), `table` does the work. */
typedef struct {
    int (*options)(const mt_call *c, const lk_table *t, void *st);
    int (*table)(const mt_call *c, const lk_table *t, void *st, mt_result *res);
    void *st;
} mt_compaction;
/* The frame both compactions share, after their arguments are checked:
 * opens the write, runs `k` on each table the call names that
 * auto_compact and the checkpoint leave to it (options, then
 * mt_table_begin, the work, mt_table_end), ends the write and sets *out to
 * the result rows. */
int mt_compact_tables(char **out, const mt_call *c, const mt_compaction *k);
/* Records change token kind:table_id. */
void mt_change(const mt_call *c, const char *kind, int64_t table_id);

/* ---- the functions ---- */

int mt_flush_inlined(char **out, const mt_call *c);
int mt_merge_adjacent(char **out, const mt_call *c);
int mt_rewrite_files(char **out, const mt_call *c);
int mt_expire_snapshots(char **out, const mt_call *c);
int mt_cleanup_old_files(char **out, const mt_call *c);
int mt_delete_orphans(char **out, const mt_call *c);

/* Opens the lake transaction a rewriting maintenance function commits,
 * and ends it: commit, or roll back on failure or with dry_run => true.
 * Inside BEGIN … COMMIT the function's changes join the open transaction
 * (they become part of its snapshot, as in DuckLake). */
int mt_write_begin(const mt_call *c);
int mt_write_end(const mt_call *c, int rc);

/* Inside BEGIN … COMMIT, around the work on one table: mt_table_begin
 * fails when the transaction already deleted rows of `t` (the function
 * rewrites the committed ones), mt_table_end notes the table as rewritten
 * when the work recorded anything (txn.h: maintained). No-ops outside. */
int mt_table_begin(const mt_call *c, const lk_table *t, size_t *mark);
void mt_table_end(const mt_call *c, const lk_table *t, size_t mark);

/* Fails inside BEGIN … COMMIT and on a read-only lake: for the functions
 * that change the catalog without a snapshot. */
int mt_no_open_txn(const mt_call *c);

/* The tables a function applies to: the one named by (schema, table), or
 * every table of `schema`, or every table (both NULL). */
int mt_tables(const mt_call *c, const char *schema, const char *table, const lk_table ***out,
              size_t *n);

#endif

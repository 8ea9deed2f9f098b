/*
 * scan.h — the SQL that reads one lake table at one snapshot.
 *
 * A DuckLake table at snapshot S is: the rows of its live Parquet data
 * files (columns matched by field id, files written under older schemas
 * included), minus the positions listed in their delete files (and in the
 * inlined-deletion table), plus its inlined rows live at S — plus, inside
 * a transaction, the transaction's own pending rows and deletions.
 * lk_scan_sql turns that into one DuckDB SELECT over read_parquet() and
 * the catalog database, which becomes the table's view or a subquery.
 */
#ifndef TARN_LAKE_SCAN_H
#define TARN_LAKE_SCAN_H

#include "lake/handle.h"
#include "lake/namemap.h"
#include "lake/prune.h"
#include "util/buf.h"

enum {
    LK_SCAN_ROWID = 1,    /* add a `rowid` column (DuckLake's row lineage id) */
    LK_SCAN_IDENTITY = 2, /* add __tarn_fid (data file id, -1 inlined, -2 pending
                             inlined), __tarn_pos (position in the file, or row id),
                             __tarn_rsnap (snapshot that wrote the row) */
    /* DuckLake's virtual columns (with LK_SCAN_ROWID; each left out when the
     * table has a column of that name, which wins as in DuckDB): */
    LK_SCAN_SNAPSHOT = 4,      /* snapshot_id: the snapshot that inserted the row (NULL: not
                                  committed yet) */
    LK_SCAN_FILENAME = 8,      /* filename: its data file, inlined table, or
                                  __ducklake_inlined_transaction_local_data */
    LK_SCAN_FILE_ROW = 16,     /* file_row_number: its position there */
    LK_SCAN_FILE_INDEX = 32,   /* file_index: the place of that source in the table's list:
                                  files, inlined tables, the transaction's inlined rows */
    LK_SCAN_LOCAL_ROWIDS = 64, /* rows the open transaction inserted show DuckLake's
                                  transaction-local row ids (10^18 + n), as a user reads them */
};
#define LK_SCAN_VIRTUAL                                                                            \
    (LK_SCAN_SNAPSHOT | LK_SCAN_FILENAME | LK_SCAN_FILE_ROW | LK_SCAN_FILE_INDEX)

/* *out (malloc'd) gets a SELECT producing the table's columns, in order,
 * with their DuckDB types. `snapshot` < 0 means the session's view
 * (committed catalog or the open transaction's working state). `cat` is the
 * catalog the table was found in (its schema gives the table's directory). */
int lk_scan_sql(char **out, lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                const lk_table *t, int64_t snapshot, int flags);

/* lk_scan_sql leaving out the committed files whose column statistics
 * prove that no row of theirs satisfies `prune` (prune.h; NULL: none), for
 * a query that filters the table so and runs now (a view keeps every file). */
int lk_scan_sql_pruned(char **out, lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                       const lk_table *t, int64_t snapshot, int flags, const lk_prune *prune);

/* `flags` without the virtual columns table `t` has a real column of (a
 * real column wins, as in DuckDB): the ones its scan adds. */
int lk_scan_virtual_flags(const lk_table *t, int flags);

/* The lake's cache of what scans read from the catalog (each table's
 * committed files, the column names and ended rows of inlined tables;
 * scan_cache.c): lk_scan_cache_commit drops what a successful commit changed (before the
 * views are rebuilt); lk_scan_cache_forget drops everything (maintenance,
 * reloads, another process's commit); lk_scan_cache_drop one table. */
struct lk_txn;
void lk_scan_cache_commit(lk_lake *lake, const struct lk_txn *txn);
void lk_scan_cache_forget(lk_lake *lake);
/* After a commit that renumbered its new tables (and the forget that
 * follows it): their inlined-data tables, under their final names, are
 * known as lk_scan_cache_commit knows new ones (empty unless rows went in,
 * no row ended), so their views read no empty catalog table. */
void lk_scan_cache_note_renumbered(lk_lake *lake, const struct lk_txn *txn);
void lk_scan_cache_drop(lk_lake *lake, int64_t table_id);

/* Reads into the cache what the views of all of `cat`'s committed tables
 * need, in a few queries over every table instead of several per table
 * (attaching a lake, rebuilding every view). Errors are left to the
 * per-table reads. */
int lk_scan_prefill(lk_lake *lake, duckdb_connection con, const lk_catalog *cat);

/* Appends the table's columns ("expr AS name, …") as read from alias d, a
 * read_parquet of file `path` whose columns name mapping `m` gives
 * (namemap.h): by name, hive values from the path, defaults for columns
 * the file lacks. */
void lk_scan_mapped_columns(tarn_buf *b, const lk_table *t, const lk_namemap *m, const char *path);

/* Appends an expression converting `expr`, a value of column layout `src`
 * (an older version of the column), to layout `dst`, matching nested
 * children by column id. */
void lk_scan_rebuild(tarn_buf *b, const char *expr, const lk_column *dst, const lk_column *src);

#endif

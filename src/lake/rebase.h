/*
 * rebase.h — moving a committing transaction onto the snapshots other
 * writers committed after the one it began on (rebase.c).
 */
#ifndef TARN_LAKE_REBASE_H
#define TARN_LAKE_REBASE_H

#include "lake/txn.h"

/* The counters of a snapshot row. */
typedef struct {
    int64_t snapshot_id, schema_version, next_catalog_id, next_file_id;
} lk_snap_counters;

/* How a transaction moves: its provisional snapshot id, schema version,
 * file ids and row ids become those after the newest snapshot. */
typedef struct lk_rebase_s {
    int active;
    int64_t from_snapshot, to_snapshot;
    int64_t schema_version, next_catalog_id, next_file_id; /* of the new snapshot */
    int64_t sv_shift, file_shift;
    int64_t cat_shift; /* how far this transaction's new catalog ids move */
    int64_t *row_tables, *row_shifts, *row_bases; /* per table with new rows */
    size_t nrows;
    strlist inlined_tables; /* inlined-data and -delete tables of the changed tables */
    strlist dup_inlined;    /* inlined-data tables this made that another made first */
    int *had_stats;         /* per delta: its ducklake_table_stats row exists now */
    char *theirs;           /* the newer snapshots' changes_made, comma-joined */
} lk_rebase;

/* The newest snapshot's counters (read inside the catalog transaction). */
int lk_rebase_newest(lk_snap_counters *out, lk_lake *lake, duckdb_connection con);

/* Inside the catalog transaction, with newer snapshots than the
 * transaction's: reads what they changed and applies DuckLake's conflict
 * rules (a conflict: TARN_ECONFLICT with DuckLake's message), then plans
 * the move onto `newest` (rb). Sets the deltas' had_stats_row from the
 * newest stats. */
int lk_rebase_prepare(lk_rebase *rb, lk_lake *lake, duckdb_connection con,
                      const lk_snap_counters *newest);
/* After the batch ran: the file-level rule (a delete from a data file
 * another transaction deleted from), which needs this transaction's rows. */
int lk_rebase_check_files(const lk_rebase *rb, lk_lake *lake, duckdb_connection con);
/* The final id of provisional data or delete file id `id`. */
int64_t lk_rebase_file_id(const lk_rebase *rb, const lk_txn *txn, int64_t id);
/* A row group of ducklake_data_file or ducklake_delete_file with each
 * row's first value (its id) moved (malloc'd), or NULL when nothing moves. */
char *lk_rebase_rows(const lk_rebase *rb, const lk_txn *txn, const char *table, const char *rows);
/* The statements that move this transaction's rows (appended to `out` as
 * SQL, one per element), to run after the batch. */
void lk_rebase_sql(strlist *out, const lk_rebase *rb, const lk_txn *txn, const char *meta,
                   const char *own);
/* changes_made with the ids of this transaction's new catalog objects
 * moved by cat_shift (malloc'd), or NULL when nothing moves. */
char *lk_rebase_changes(const lk_rebase *rb, const lk_txn *txn);
/* The next_row_id the commit writes for delta `d`. */
int64_t lk_rebase_next_row_id(const lk_rebase *rb, const lk_table_delta *d);
void lk_rebase_free(lk_rebase *rb);

#endif

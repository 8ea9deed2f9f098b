/*
 * lake.h — the top of the lake layer: attaching (creating when absent),
 * reloading and detaching a DuckLake lake, and the transaction of a lake
 * as the layers above see it — begun, committed or rolled back with the
 * lake's caches and views brought up to date (lake.c).
 *
 * Below it: handle.h (the attached lake and what it knows), txn.h and
 * commit.h (the transaction's pending state and its commit as catalog
 * rows), write.h and deletes.h (data and delete files), scan.h (the SQL of
 * a table at a snapshot), views.h (the alias database's views).
 */
#ifndef TARN_LAKE_LAKE_H
#define TARN_LAKE_LAKE_H

#include "lake/handle.h"
#include "lake/views.h"

#include <duckdb.h>

typedef struct {
    const char *path; /* catalog file path (after 'ducklake:') */
    const char *alias;
    const char *data_path; /* NULL: not given */
    int read_only;
    int64_t snapshot_version;     /* -1: not given */
    const char *snapshot_time;    /* NULL: not given */
    int64_t inline_limit;         /* -1: not given */
    const char *metadata_catalog; /* NULL: __ducklake_metadata_<alias> */
    const char *metadata_schema;  /* NULL: the catalog database's default schema */
    int automatic_migration;
    int override_data_path; /* DATA_PATH replaces the stored one for this session */
    int no_create;          /* CREATE_IF_NOT_EXISTS false: a missing lake is an error */
    int write_dvs;          /* WRITE_DELETION_VECTORS: DELETEs write deletion vectors */
} lk_attach_opts;

/* Forgets what the lake knows besides its catalog model (handle.h's facts
 * and the scan cache): after maintenance, a reload, a commit by another
 * process, or a commit that renumbered ids. They are read again when next
 * needed. */
void lk_lake_caches_forget(lk_lake *lake);

/* Attaches (creating when absent) the lake described by `opts`. */
int lk_lake_attach(lk_lake **out, duckdb_connection con, const lk_attach_opts *opts);
/* Detaches both databases and frees the lake. */
void lk_lake_detach(lk_lake *lake, duckdb_connection con);

/* Reloads lake->cat from the catalog (latest or pinned snapshot) and
 * rebuilds the views. */
int lk_lake_reload(lk_lake *lake, duckdb_connection con);
/* Brings the lake up to date with the commits other processes made since
 * it read its catalog: the model reloaded, and the views their changes
 * call for rebuilt (catchup.c); nothing when no one committed. Not inside
 * a transaction. */
int lk_lake_catch_up(lk_lake *lake, duckdb_connection con);
/* Runs a statement on the lake's catalog database that is not DuckLake's
 * (tarn's own tables beside the ducklake_* ones: CREATE TABLE, INSERT, …)
 * when that database is not DuckDB's (PostgreSQL): sent there, its tables
 * then readable in the session under the catalog's name. 0 in *handled
 * (nothing run) for a DuckDB-file catalog, where DuckDB runs it. */
int lk_lake_catalog_stmt(lk_lake *lake, duckdb_connection con, const char *sql, int *handled);

/* The lake's transaction as the layers above see it. Begin opens one
 * unless one is open (explicit_txn: inside BEGIN … COMMIT); commit makes
 * its snapshot (or, for a failed or empty transaction, rolls it back) and
 * brings the session's catalog model, caches and views to the new state;
 * rollback deletes the files it wrote and restores the views. */
int lk_lake_begin(lk_lake *lake, duckdb_connection con, int explicit_txn);
int lk_lake_commit(lk_lake *lake, duckdb_connection con);
void lk_lake_rollback(lk_lake *lake, duckdb_connection con);

#endif

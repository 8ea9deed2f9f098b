/*
 * txn.h — a DuckLake transaction in progress.
 *
 * tarn's lake transaction is its own state, not a DuckDB transaction: the
 * catalog database may only be written by one DuckDB transaction at a time,
 * and reads inside a lake transaction must see its uncommitted writes. So:
 *   - DDL edits a working copy of the catalog model (txn->cat);
 *   - new Parquet files (data and delete) are written straight away and
 *     listed in txn->files / txn->dels;
 *   - small inserts (inlined rows) and deletions wait in TEMP tables;
 *   - the catalog rows each change will need are recorded as they are
 *     decided (lk_txn_row, grouped per catalog table), with ids allocated
 *     from the snapshot counters, and so are the other catalog statements
 *     (lk_txn_sql: UPDATE … SET end_snapshot, DELETE, INSERT … SELECT …).
 * Views are rebuilt from this state after each statement, so reads see it.
 * COMMIT writes everything in one catalog transaction that also inserts
 * the ducklake_snapshot row; ROLLBACK drops the state and deletes the
 * files it wrote. Only one process can hold a DuckDB catalog file open for
 * writing, so the ids a transaction allocates are the ids it commits.
 */
#ifndef TARN_LAKE_TXN_H
#define TARN_LAKE_TXN_H

#include "lake/handle.h"
#include "lake/colstats_set.h"
#include "lake/namemap.h"
#include "util/buf.h"
#include "util/strlist.h"

#include <stdint.h>

/* A Parquet data file written by this transaction. */
typedef struct {
    int64_t table_id, file_id;
    char *path;     /* path relative to the table directory */
    char *abs_path; /* path as read by this session */
    int64_t record_count, file_size, footer_size, row_id_start;
    int rowids_embedded;      /* UPDATE images: the file carries its rows' ids */
    int has_mapping;          /* a file registered by ducklake_add_data_files: its */
    int64_t mapping_id;       /* columns by name (namemap.h), and a rollback keeps it */
    char *del_name, *del_abs; /* its delete file written at a DELETE, or NULL, */
    int64_t del_count, del_size, del_footer; /* with its positions and sizes */
} lk_pending_file;

/* A data file a maintenance function wrote inside BEGIN … COMMIT: read by
 * the transaction as the committed file it becomes (row ids and snapshots
 * embedded), in place of what it replaces (lk_txn.replaced_*). */
typedef struct {
    int64_t table_id, file_id, row_id_start, record_count, begin, partial_max; /* -1: none */
    char *abs_path;
    char *del_path; /* its delete file (rows already deleted), or NULL */
    int del_has_snap;
} lk_maint_file;

/* Provisional ids and the ids they become at commit (renumber.c). */
typedef struct {
    int64_t *from, *to;
    size_t n;
} lk_idmap;

/* Adds `id` to the set ids[0..n) unless it is there; 1 when added. */
int lk_ids_add(int64_t **ids, size_t *n, int64_t id);

/* One entry of the commit batch: a catalog statement, or the rows of one
 * catalog table, written at commit as one multi-row INSERT (txn.c). */
typedef struct {
    char *sql;             /* the statement; NULL for a row group */
    char *table;           /* a row group's catalog table ("ducklake_column") */
    tarn_buf rows;         /* its rows: "(…), (…)" */
    lk_catdb_write *write; /* a mixed write (sql and table NULL) */
} lk_txn_stmt;

/* Table-level effects accumulated for ducklake_table_stats. */
typedef struct {
    int64_t table_id;
    int64_t added_records, added_bytes, next_row_id;
    int64_t base_row_id;  /* next_row_id before this transaction */
    int pending_holes;    /* rows this transaction inserted were deleted or updated again */
    int64_t inline_start; /* at commit: first row id of the new inlined rows (see renumber.c) */
    int reorder_rows;     /* the new files take row ids before the new inlined rows */
    int had_stats_row;    /* a ducklake_table_stats row existed before */
    int stats_inserted;   /* this transaction inserted the column stats rows */
    int inlined;          /* rows were inlined (next_file_id is bumped once) */
    int got_file;         /* a Parquet data file was written */
    int64_t pending_rows; /* rows in its pending-insert table (write.c) */
    lk_stats_set stats;   /* column stats of this commit's writes, merged at commit */
    int touched;
} lk_table_delta;

struct lk_txn {
    lk_catalog cat;        /* working model; cat.snapshot_id is the base snapshot */
    int64_t snapshot_id;   /* the snapshot this transaction will commit */
    int64_t base_snapshot; /* the snapshot it began on (newer than the session's catalog
                            * when others committed since the session read it) */
    int catalog_changed;   /* bumps schema_version */
    int64_t schema_bumps;  /* more bumps: inlined-data tables made at commit */
    int explicit_txn;      /* BEGIN … COMMIT (else one statement) */
    int failed;            /* a statement failed: COMMIT only rolls back */
    char *conflict;        /* COMMIT fails with this message (a CHECKPOINT's conflict) */
    int committed;         /* set by lk_txn_commit once its snapshot is committed */
    int rebased;           /* committed on top of other writers' newer snapshots (rebase.h) */
    char *other_changes;   /* then: those snapshots' changes_made, comma-joined */
    int64_t file_id_bumps; /* next_file_id increments without a file (inlined inserts) */
    lk_txn_stmt *stmts;    /* the commit batch, in order (lk_txn_row, lk_txn_sql) */
    size_t nstmts;
    size_t open_rows;     /* stmts[open_rows..] are the row groups new rows may join */
    tarn_buf changes;     /* changes_made, built at commit from the lists below */
    char **change_tokens; /* in DuckLake's emission order at commit */
    size_t nchange_tokens;
    lk_pending_file *files;
    size_t nfiles;
    char **written; /* every file written (for rollback) */
    size_t nwritten;
    lk_table_delta *deltas;
    size_t ndeltas;
    int64_t *pins; /* tables with pending inlined rows (a TEMP table each) */
    size_t npins;
    /* The first rows of one table's pending inserts may still be the
     * insert stage's (write.c): staged_pins_sql is the SELECT of them in
     * pending-insert layout, and no TEMP table exists yet for
     * staged_pins_table. An autocommit INSERT's commit reads them from the
     * stage; anything else that needs the table makes it first
     * (lk_write_pins_settle). */
    int64_t staged_pins_table;
    char *staged_pins_sql;
    int has_deletes;                     /* the pending-deletion TEMP tables hold rows */
    int stage_rowid;                     /* the insert stage carries __tarn_rowid (UPDATE images) */
    char *author, *message, *extra_info; /* ducklake_set_commit_message */
    int has_message;
    int options_changed; /* set_option ran inside the transaction (lk_lake_option_pending) */
    /* The first catalog id this transaction numbers its new objects from.
     * With one writer (a DuckDB file) it is next_catalog_id when the
     * transaction began. With several (PostgreSQL) it is a provisional
     * range of this transaction's own, far above any committed id, so no
     * row it writes names another writer's new object; the commit numbers
     * them from final_catalog_id, or from the newest snapshot's
     * next_catalog_id when another writer committed meanwhile (renumber.c,
     * rebase.c). */
    int64_t base_catalog_id;
    int64_t final_catalog_id;    /* next_catalog_id when the transaction began */
    int64_t cat_shift, sv_shift; /* how far the commit's move shifted new ids (rebase.h) */
    struct lk_idorder *ids;      /* DuckLake's catalog-map operations (idorder.h) */
    lk_idmap renum;              /* commit-time catalog id renumbering (renumber.h) */
    int64_t base_file_id;        /* next_file_id when the transaction began */
    int64_t *del_file_ids;       /* delete files written (ids in allocation order) */
    size_t ndel_file_ids;
    int64_t *big_del_files; /* committed files a DELETE statement removed more rows */
    size_t nbig_del_files;  /* of than the inlining limit from (they get a delete file) */
    lk_idmap file_renum;    /* commit-time file id renumbering (renumber.h) */
    /* Name mappings this transaction made (ducklake_add_data_files). DuckLake
     * numbers them at commit from next_file_id before the data files, in the
     * order made, so their ids are final when made: base_file_id + k. */
    lk_namemap_set new_maps;
    /* Views to rebuild after the current statement (inside BEGIN … COMMIT,
     * where reads must see pending changes) and at commit: */
    int64_t *dirty; /* tables the statement changed */
    size_t ndirty;
    char **dropped; /* "schema\0table" of tables it dropped */
    size_t ndropped;
    int views_all;    /* the statement changed schemas or lake views */
    int64_t *touched; /* every table whose view shows pending state */
    size_t ntouched;
    int views_all_ever;      /* some statement needed every view rebuilt */
    int schemas_created;     /* schemas new to the session: the statement created them, or
                              * others did before the transaction began (alias schemas) */
    strlist meta_ops;        /* "+name" / "-name": catalog tables the commit creates / drops */
    int64_t *schema_changed; /* tables whose schema this transaction changed */
    size_t nschema_changed;
    int64_t *sort_changed; /* tables whose sort order was set, reset or renamed (sort.h) */
    size_t nsort_changed;
    /* Tables a maintenance function rewrote inside BEGIN … COMMIT: their
     * committed files or inlined rows are gone at commit, so reads keep
     * showing those (the same rows) and deletions of them are refused. */
    int64_t *maintained;
    size_t nmaintained;
    lk_maint_file *mfiles; /* the files they wrote */
    size_t nmfiles;
    int64_t *replaced_files; /* committed data files they replaced */
    size_t nreplaced_files;
    strlist replaced_inlined; /* inlined-data tables they flushed */
    /* Catalog ids of objects created and dropped here (a table, its
     * partition spec and sort order): DuckLake never numbers them, so the
     * commit gives the others the ids without them (renumber.c). */
    int64_t *forgotten;
    size_t nforgotten;
};

/* Starts a transaction on `lake` (explicit: BEGIN; else one statement),
 * from the latest committed snapshot. The layers above begin, commit and
 * roll back through lake.h (lk_lake_begin/commit/rollback), which keep the
 * lake's caches and views in step; the commit itself is commit.h's. */
int lk_txn_begin(lk_lake *lake, duckdb_connection con, int explicit_txn);
/* Whether committing now makes a snapshot: a transaction that changed
 * nothing in the lake makes none (it commits only its callers' rows). */
int lk_txn_makes_snapshot(const lk_txn *txn);
/* Ends lake's open transaction without committing: deletes the files it
 * wrote, sets lake->txn to NULL and hands the transaction back (NULL when
 * none was open) for the caller to restore views from, then free. */
lk_txn *lk_txn_discard(lk_lake *lake);
/* Drops an ended transaction's TEMP tables and frees it (NULL: nothing). */
void lk_txn_free(lk_lake *lake, lk_txn *txn, duckdb_connection con);

/* The catalog as this session sees it: the working model inside a
 * transaction, the committed one otherwise. */
const lk_catalog *lk_txn_catalog(lk_lake *lake);

/* Records a change token (e.g. "inserted_into_table:3"); duplicates are
 * ignored. */
void lk_txn_change(lk_txn *txn, const char *token);
/* Records one row of catalog table `table` (e.g. "ducklake_column"):
 * `fmt` (printf-style) makes its VALUES tuple "(…)". The commit inserts a
 * table's rows in the order recorded, as one multi-row INSERT per table
 * between two lk_txn_sql statements (see txn.c). */
void lk_txn_row(lk_txn *txn, const char *table, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Records the ducklake_files_scheduled_for_deletion row of file `file_id`
 * (a data or delete file the commit stops using): `path` as stored,
 * relative to the data path when `relative`. */
void lk_txn_schedule_deletion(lk_txn *txn, int64_t file_id, const char *path, int relative);
/* Appends one catalog statement (printf-style) to the commit batch: any
 * SQL but a plain row insert (UPDATE, DELETE, INSERT … SELECT, DDL). The
 * rows recorded before it are written before it, the rows recorded after
 * it after it. */
void lk_txn_sql(lk_txn *txn, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends a mixed catalog write (catdb.h) to the batch, as lk_txn_sql
 * does: INSERT INTO table (unquoted) the rows of `select`, which reads
 * the session's own tables; or UPDATE table SET cols[i] = exprs[i]
 * [WHERE where], with expressions DuckDB evaluates. Strings are copied. */
void lk_txn_insert_select(lk_txn *txn, const char *table, const char *select);
void lk_txn_update_mixed(lk_txn *txn, const char *table, const char *const *cols,
                         const char *const *exprs, size_t n, const char *where);
/* Allocates ids from the snapshot counters. */
int64_t lk_txn_new_catalog_id(lk_txn *txn);
int64_t lk_txn_new_file_id(lk_txn *txn);
/* Whether transaction `txn` of `lake` created table `t` (of its working
 * catalog): its live row begins in `txn` and the committed catalog has no
 * table of its id (a rename begins a new row too, under the old id). */
int lk_txn_created_table(const lk_lake *lake, const lk_txn *txn, const lk_table *t);
/* The table delta for `table_id` (created on first use, reading the
 * committed ducklake_table_stats row). */
lk_table_delta *lk_txn_delta(lk_lake *lake, duckdb_connection con, int64_t table_id);
/* The table delta for `table_id` when there is one (no query, none made). */
lk_table_delta *lk_txn_find_delta(lk_txn *txn, int64_t table_id);
/* Remembers a file this transaction wrote (deleted on rollback). */
void lk_txn_wrote(lk_txn *txn, const char *abs_path);

/* Notes that the commit creates (op '+') or drops ('-') catalog table
 * `name`, so that the lake's list of them stays right without a query. */
void lk_txn_meta_table(lk_txn *txn, char op, const char *name);

/* Notes that table `table_id`'s schema changes in this transaction (a new
 * ducklake_schema_versions row). */
void lk_txn_schema_changed(lk_txn *txn, int64_t table_id);

/* The schema_version the transaction commits with. */
int64_t lk_txn_schema_version(const lk_txn *txn);

/* Notes that table `table_id`'s view must be rebuilt (its rows or its
 * definition changed in this transaction). */
void lk_txn_view_dirty(lk_txn *txn, int64_t table_id);
/* Notes that table schema.name is gone (its view must be dropped). */
void lk_txn_view_dropped(lk_txn *txn, const char *schema, const char *name);
/* Notes a change that needs every view of the lake rebuilt (schemas, lake
 * views, renames). */
void lk_txn_views_all(lk_txn *txn);

/* Forgets everything the transaction holds for table `table_id`, which it
 * created and now drops: its written files (deleted now), pending inlined
 * rows and deletions, table delta, change tokens and notes. The catalog
 * rows it recorded stay in the batch (the caller deletes them there). */
void lk_txn_forget_table(lk_lake *lake, duckdb_connection con, int64_t table_id);
/* Removes change token `token` (no-op when absent). */
void lk_txn_unchange(lk_txn *txn, const char *token);

/* Whether the transaction holds pending deletions of rows of table
 * `table_id` (DELETE, UPDATE). */
int lk_txn_table_deleted(lk_lake *lake, duckdb_connection con, int64_t table_id);
/* Whether it holds pending deletions of committed inlined rows of table
 * `table_id`. */
int lk_txn_table_inline_deleted(lk_lake *lake, duckdb_connection con, int64_t table_id);
/* Fails when a maintenance function rewrote table `table_id` earlier in
 * the transaction (its rows cannot be deleted or updated until COMMIT). */
int lk_txn_check_not_maintained(const lk_txn *txn, const char *table_name, int64_t table_id);

/* Creates the TEMP tables that hold pending deletions (on the
 * transaction's first delete; scans only join them from then on). */
int lk_txn_prepare_deletes(lk_lake *lake, duckdb_connection con);

/* Names of the TEMP tables holding pending rows, quoted for SQL (owned by
 * the caller). */
char *lk_txn_pending_inserts(lk_lake *lake, int64_t table_id);
char *lk_txn_pending_deletes(lk_lake *lake);        /* (table_id, file_id, pos) */
char *lk_txn_pending_inline_deletes(lk_lake *lake); /* (table_id, row_id) */

#endif

/*
 * session.h — a tarn SQL session: one DuckDB instance in which DuckLake
 * lakes can be attached and used with ordinary DuckDB SQL.
 *
 * A session runs one statement at a time (tarn_session_exec). Plain DuckDB
 * statements run as they are; statements that touch an attached lake
 * (ATTACH 'ducklake:…', DDL and DML on lake tables, AT (…) time travel,
 * the ducklake_* functions, BEGIN/COMMIT/ROLLBACK) are carried out by
 * tarn's DuckLake implementation. Results reach the caller through a sink.
 */
#ifndef TARN_SESSION_H
#define TARN_SESSION_H

#include "tarn/output.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tarn_session tarn_session;

/* Receives one statement's result. Every callback is optional. Cells are
 * DuckDB's CAST(x AS VARCHAR) of each value, NULL for SQL NULL; they are
 * only valid during the call. */
typedef struct {
    void (*begin)(void *ctx, size_t ncols, const char *const *names);
    void (*row)(void *ctx, const char *const *cells);
    void (*end)(void *ctx);
    void (*count)(void *ctx, int64_t n);
    /* The statement prints as `kind`, not as its first keyword says
     * (EXECUTE of a prepared query prints its rows). */
    void (*kind)(void *ctx, tarn_output_kind kind);
    void *ctx;
} tarn_sink;

/* Opens a session (a fresh in-memory DuckDB). *out is owned by the caller:
 * close it with tarn_session_close. */
int tarn_session_open(tarn_session **out);
void tarn_session_close(tarn_session *s);
/* Closes what tarn keeps open for the whole process (the in-memory DuckDB
 * database it parses SQL and reads delete files with). Call it once, as
 * main returns: from an atexit handler it would run after the thread-local
 * destructors, when closing DuckDB touches freed memory. */
void tarn_process_end(void);

/* Runs one SQL statement (no trailing ';' needed) and delivers its result
 * to `sink` (which may be NULL). On failure returns < 0 with the message in
 * tarn_error_last(); the session stays usable. */
int tarn_session_exec(tarn_session *s, const char *sql, const tarn_sink *sink);

/* With `on`, the cells of a query's rows are each value's JSON text
 * (DuckDB's to_json: numbers and booleans bare, strings quoted, lists and
 * structs as JSON), NULL still for SQL NULL: what `--format json` prints,
 * typed as `duckdb -json` prints them. Off by default. */
void tarn_session_set_json_cells(tarn_session *s, int on);

/* Asks the statement the session is running to stop (it fails with an
 * interrupt error); callable from any thread, e.g. one watching for
 * Ctrl-C. A statement not yet started is not affected. */
void tarn_session_interrupt(tarn_session *s);

/* The name under which lake `alias`'s catalog database is attached in the
 * session's DuckDB (quote it as an identifier), so that callers can keep
 * their own tables beside the ducklake_* ones (tarn's run records). NULL
 * when no lake has that alias. Owned by the session. */
const char *tarn_session_catalog_name(tarn_session *s, const char *alias);

/* What qualifies a table of lake `alias`'s catalog in SQL, where tarn keeps
 * its own tables (tarn_run, tarn_model_run, …) beside the ducklake_* ones:
 * the catalog database and, when the lake was attached with
 * METADATA_SCHEMA, that schema, quoted ("db"."schema"). Append a table with
 * quote_prefixed (util/quote.h). NULL when no lake has that alias. Owned by
 * the session. */
const char *tarn_session_catalog_prefix(tarn_session *s, const char *alias);

/* Runs query `sql` over tarn's own tables in lake `alias`'s catalog
 * (named with tarn_session_catalog_prefix) in the catalog database itself,
 * not in the session's DuckDB: write SQL that DuckDB and PostgreSQL both
 * run. A PostgreSQL catalog answers there without sending its rows over to
 * DuckDB. Rows go to `sink`. */
int tarn_session_catalog_query(tarn_session *s, const char *alias, const char *sql,
                               const tarn_sink *sink);

/* Queues `sql` to run inside the catalog transaction that commits lake
 * `alias`'s open transaction (between BEGIN and COMMIT in the session), so
 * that it is committed atomically with the snapshot — or not at all. Fails
 * when the lake has no open transaction. */
int tarn_session_commit_sql(tarn_session *s, const char *alias, const char *sql);

/* The snapshot id the session reads lake `alias` at (its open
 * transaction's base snapshot, or the latest committed one). */
int tarn_session_snapshot(tarn_session *s, const char *alias, int64_t *out);

/* The snapshot id lake `alias`'s open transaction commits as if it commits
 * now: its base snapshot + 1, or its base snapshot when it has changed
 * nothing in the lake (DuckLake makes no snapshot then). Lets rows queued
 * with tarn_session_commit_sql name their snapshot as a literal. Fails
 * when the lake has no open transaction. */
int tarn_session_pending_snapshot(tarn_session *s, const char *alias, int64_t *out);

/* What lake `alias`'s open transaction has changed so far, as the
 * ducklake_snapshot_changes tokens it would commit ("created_table:
 * \"s\".\"t\"", "inserted_into_table:4", "dropped_schema:2", …; ids are
 * those of the base snapshot for objects that existed before): *n strings
 * into *out (caller frees each and the array). Fails when the lake has no
 * open transaction. */
int tarn_session_pending_changes(tarn_session *s, const char *alias, char ***out, size_t *n);

/* ---- what a lake's catalog says, for the layers above ----
 * They never name the catalog's tables: these answer from the lake's
 * committed catalog at the session's snapshot. */

/* Each live table's content version (the newest snapshot that changed its
 * rows or columns, or created it; maintenance that only rewrote its files
 * does not count): *n keys "schema.table" (lower case) and versions, both
 * arrays malloc'd (caller frees each key and both arrays). */
int tarn_session_table_versions(tarn_session *s, const char *alias, char ***keys,
                                int64_t **versions, size_t *n);

/* The live objects of lake `alias`: *n names (lower case), "schema.table"
 * for a table or a view, "schema" for a schema, each with its kind in
 * *kinds (TARN_LAKE_TABLE, TARN_LAKE_VIEW, TARN_LAKE_SCHEMA); arrays
 * malloc'd (caller frees each name and both arrays). */
enum { TARN_LAKE_TABLE, TARN_LAKE_VIEW, TARN_LAKE_SCHEMA };
int tarn_session_lake_objects(tarn_session *s, const char *alias, char ***names, int **kinds,
                              size_t *n);

/* The committed object with catalog id `id` (a schema id when
 * `schema_only`): *kind "table", "view" or "schema", its schema and name
 * in lower case (*name NULL for a schema), malloc'd. TARN_ENOTFOUND when
 * no live object has that id. */
int tarn_session_object_name(tarn_session *s, const char *alias, int64_t id, int schema_only,
                             char **kind, char **schema, char **name);

/* *out: whether lake `alias` has a live table schema.table (names
 * compared as DuckDB compares identifiers, ignoring case); 0 also when no
 * lake is attached as `alias`. */
int tarn_session_table_exists(tarn_session *s, const char *alias, const char *schema,
                              const char *table, int *out);

/* *out: whether table schema.table of lake `alias` has a live partition
 * spec (0 when there is no such table). */
int tarn_session_table_partitioned(tarn_session *s, const char *alias, const char *schema,
                                   const char *table, int *out);

/* ---- readers: the session's DuckDB on other threads ----
 *
 * A tarn_session runs one statement at a time, and a lake's open
 * transaction is C state of the session. What can run beside it is a
 * read: a reader is a second DuckDB connection to the session's database,
 * which sees what the session committed (its lakes' views and catalogs,
 * the DuckDB objects it made outside TEMP, attached databases) but none of
 * its per-connection state (TEMP objects, settings, USE, its open
 * transaction). tarn_session_reader_sql turns a statement into the text a
 * reader runs to do what the session would. `tarn run -j N` uses readers
 * to evaluate models' queries while the session writes. */
typedef struct tarn_reader tarn_reader;

/* Opens a reader on `s`'s database (on the session's thread). *out is
 * owned by the caller: close it with tarn_reader_close, before the
 * session. */
int tarn_reader_open(tarn_reader **out, tarn_session *s);
void tarn_reader_close(tarn_reader *r);

/* Runs `sql` (one or more statements) on the reader, discarding results.
 * Any one thread may use a reader at a time; the error is in that
 * thread's tarn_error_last(). */
int tarn_reader_exec(tarn_reader *r, const char *sql);

/* Asks the reader's running statement to stop (from any thread). */
void tarn_reader_interrupt(tarn_reader *r);

/* The text a reader runs to do what statement `sql` does in the session
 * now: its lake reads rewritten as tarn_session_exec rewrites them (AT
 * clauses, rowid, ducklake_* functions; a lake's views name the snapshot
 * they read, so the reader needs nothing else to see what the session
 * committed). Only for
 * statements the session hands to DuckDB: queries, SET/RESET, USE, and
 * CREATE/DROP of objects outside the lakes; anything the lake carries out
 * itself fails (TARN_EUNSUPPORTED), as does a call inside BEGIN … COMMIT
 * (a reader cannot see the open transaction). *out: caller frees. */
int tarn_session_reader_sql(tarn_session *s, const char *sql, char **out);

/* ---- links: tarn's shared tables in a catalog several processes write ----
 *
 * A link is a connection of its own to lake `alias`'s catalog database,
 * for tables of tarn's that processes share there (the job queue of `tarn
 * worker`): each statement runs at once in its own transaction, on the
 * database itself (PostgreSQL's SQL: `SELECT … FOR UPDATE SKIP LOCKED`,
 * RETURNING), beside the session's lake transaction, from any one thread
 * at a time. Tables are named as in tarn_session_catalog_name's prefix.
 * Only a PostgreSQL catalog has links: a DuckDB-file catalog is written by
 * one process (TARN_EINVALID). A link outlives the session it came from. */
typedef struct tarn_catlink tarn_catlink;

/* *out: whether lake `alias`'s catalog is one several processes may write
 * at once (PostgreSQL); 0 for a DuckDB file. Fails when no such lake. */
int tarn_session_catalog_shared(tarn_session *s, const char *alias, int *out);
int tarn_catlink_open(tarn_catlink **out, tarn_session *s, const char *alias);
void tarn_catlink_close(tarn_catlink *l);
/* Brings lake `alias` up to date with what other processes committed
 * since the session read its catalog (its model and views; nothing when
 * no one did). Not inside a transaction. */
int tarn_session_catch_up(tarn_session *s, const char *alias);
/* Runs one statement; a query's rows (and the changed-row count) go to
 * `sink` (may be NULL). */
int tarn_catlink_exec(tarn_catlink *l, const char *sql, const tarn_sink *sink);
/* An SQL expression for the snapshot the commit it runs in makes, for a
 * row the commit carries (tarn_session_commit_sql) on a catalog several
 * processes write: a commit moved onto others' snapshots gets another id
 * than `provisional`. Tables qualified by prefix `cat`. Malloc'd. */
char *tarn_session_commit_snapshot_sql(const char *cat, int64_t provisional);

#endif

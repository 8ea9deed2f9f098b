/*
 * catdb.h — the catalog database of a lake, behind one interface.
 *
 * A DuckLake catalog is a SQL database holding the ducklake_* tables. The
 * lake layer talks to it only through these calls: run a statement, read a
 * result, begin / commit / roll back the catalog transaction of a commit,
 * ask whether a table exists, the database's name in SQL, and opening and
 * closing the database itself. A backend is one lk_catdb_ops table:
 *   - "duckdb" (catdb.c): a DuckDB database file attached in the
 *     session's DuckDB instance under an internal name, reached through
 *     the session's connection (DuckLake's default `ducklake:file`);
 *   - "postgres" (catdb_pg.c): a PostgreSQL database through libpq
 *     (`ducklake:postgres:dbname=… host=…`). The statements the lake
 *     issues are plain SQL over the ducklake_* tables, qualified by
 *     lk_catdb_name(); the backend sends them to PostgreSQL with that
 *     prefix turned into the PostgreSQL schema, and makes every catalog
 *     table readable in the session's DuckDB under lk_catdb_name() (a view
 *     over __tarn_pg_scan, duck/pgscan.h) for the mixed statements.
 *
 * Where the tables are: a database, and in it a schema (DuckLake's
 * METADATA_SCHEMA; the database's default schema when none is given, so
 * that several lakes can share one catalog database). lk_catdb_name() is
 * the prefix that qualifies a catalog table in SQL, the schema included.
 *
 * Ownership: an lk_catdb belongs to its lake (lk_lake.db), owns its names
 * (lk_catdb_release) and borrows the connection it was opened with. Errors go through
 * tarn_error_set() with the backend's message, as duck.h's calls do.
 */
#ifndef TARN_LAKE_CATDB_H
#define TARN_LAKE_CATDB_H

#include "duck/duck.h"
#include "util/buf.h"

#include <duckdb.h>
#include <stdint.h>

typedef struct lk_catdb lk_catdb;

/* Called after each statement the lake runs on its catalog (when set):
 * its text and how long it took, for DuckLake's DuckLakeMetadata log.
 * ctx: what the setter gave (lk_catdb.log_ctx). */
typedef void (*lk_catdb_log_fn)(void *ctx, const lk_catdb *db, const char *sql, double elapsed_ms);

/* A catalog write whose values DuckDB computes (it reads the session's
 * TEMP tables, or uses DuckDB's functions): INSERT INTO table <select>
 * (select's columns in the table's order), or UPDATE table SET cols[i] =
 * exprs[i] [WHERE where], the expressions over the table's columns
 * (unqualified) and anything DuckDB reads. A DuckDB file runs it as that
 * SQL; PostgreSQL gets the values DuckDB computed (catdb_pg.c). */
typedef struct {
    char *table;  /* the catalog table, unquoted */
    char *select; /* an insert's rows; NULL for an update */
    size_t nset;  /* an update's SET list */
    char **cols, **exprs;
    char *where; /* an update's condition; NULL: every row */
} lk_catdb_write;

typedef struct {
    const char *kind; /* "duckdb", "postgres" */
    int (*open)(lk_catdb *db, duckdb_connection con, const char *path, int read_only);
    void (*close)(lk_catdb *db, duckdb_connection con);
    int (*exec)(lk_catdb *db, duckdb_connection con, const char *sql);
    int (*exec_count)(lk_catdb *db, duckdb_connection con, const char *sql, int64_t *changed);
    int (*query)(duck_table *out, lk_catdb *db, duckdb_connection con, const char *sql);
    int (*mixed_exec)(lk_catdb *db, duckdb_connection con, const char *sql);
    int (*mixed_query)(duck_table *out, lk_catdb *db, duckdb_connection con, const char *sql);
    int (*table_exists)(lk_catdb *db, duckdb_connection con, const char *table);
    int (*tables)(duck_table *out, lk_catdb *db, duckdb_connection con);
    int (*prepare_new)(lk_catdb *db, duckdb_connection con);
    /* the catalog transaction; NULL: BEGIN / COMMIT / ROLLBACK through exec */
    int (*begin)(lk_catdb *db, duckdb_connection con);
    int (*commit)(lk_catdb *db, duckdb_connection con);
    int (*rollback)(lk_catdb *db, duckdb_connection con);
    /* a mixed write; NULL: its SQL runs through exec (the database is
     * DuckDB's, so a batch may hold it) */
    int (*mixed_write)(lk_catdb *db, duckdb_connection con, const lk_catdb_write *w);
    /* brings what DuckDB reads of the catalog up to date with its tables
     * (NULL: nothing to do) */
    int (*refresh)(lk_catdb *db, duckdb_connection con);
    /* serializes the catalog part of commits by every tarn writer of this
     * catalog until the catalog transaction ends (NULL: one writer only) */
    int (*lock_commits)(lk_catdb *db, duckdb_connection con);
    /* a condition true of the rows the open catalog transaction inserted
     * or updated (NULL: none can be told apart) */
    const char *own_rows;
} lk_catdb_ops;

struct lk_catdb {
    const lk_catdb_ops *ops;
    char *name;          /* "database"[."schema"]: what qualifies a catalog table in SQL */
    char *raw_name;      /* the database's name, unquoted */
    char *schema;        /* the schema's name, unquoted; NULL: the database's default */
    lk_catdb_log_fn log; /* NULL: no log (set by the session while the log is on) */
    void *log_ctx;
    char *conninfo;         /* postgres: libpq's connection string */
    struct lk_catdb_pg *pg; /* postgres: the connection and the views made (catdb_pg.c) */
    char *pg_name;          /* postgres: the quoted schema qualifying the tables there */
    /* postgres: inside BEGIN … COMMIT the views are not made or dropped
     * (the session's DuckDB transaction writes the lake's views, and it may
     * write one database only); views_behind: a refresh waits for the
     * next one outside it */
    int views_held, views_behind;
};

/* The DuckDB-file backend over a catalog database attached as `database`,
 * its tables in `schema` (NULL: the database's default schema, main). */
void lk_catdb_duckdb(lk_catdb *db, const char *database, const char *schema);
/* The PostgreSQL backend (catdb_pg.c): the catalog's tables are in schema
 * `schema` (NULL: public, as DuckLake's default there) of the database
 * `conninfo` names (libpq's keywords or URI); in the session's DuckDB they
 * read as views in the in-memory database `database`. */
void lk_catdb_postgres(lk_catdb *db, const char *database, const char *schema,
                       const char *conninfo);
/* Whether a catalog path names a PostgreSQL catalog ("postgres:…"); the
 * connection string after the prefix. */
const char *lk_catdb_postgres_conninfo(const char *path);
/* Frees the names (the database is closed by lk_catdb_close). */
void lk_catdb_release(lk_catdb *db);

/* Opens the catalog database at `path` (a DuckDB file, created when
 * missing) read-write or read-only; closes it (quietly, also when it was
 * never opened). */
int lk_catdb_open(lk_catdb *db, duckdb_connection con, const char *path, int read_only);
void lk_catdb_close(lk_catdb *db, duckdb_connection con);

/* The prefix qualifying the catalog's tables in SQL: the quoted database,
 * and the quoted schema when one was given ("db"."schema"). */
const char *lk_catdb_name(const lk_catdb *db);
/* The catalog database's name, unquoted (its name in duckdb_databases()). */
const char *lk_catdb_database(const lk_catdb *db);

/* Runs one catalog statement (or a batch of them) / reads a result as
 * text. con: the session's DuckDB connection (backends that are not DuckDB
 * use their own). */
int lk_catdb_exec(lk_catdb *db, duckdb_connection con, const char *sql);
int lk_catdb_query(duck_table *out, lk_catdb *db, duckdb_connection con, const char *sql);
/* lk_catdb_query of the SQL that fmt and its arguments make (printf). */
int lk_catdb_queryf(duck_table *out, lk_catdb *db, duckdb_connection con, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Runs one statement; *changed (optional) gets the rows it changed. */
int lk_catdb_exec_count(lk_catdb *db, duckdb_connection con, const char *sql, int64_t *changed);
/* A one-row, one-column query, as duck_query_int64 / duck_query_string:
 * *is_null (optional) tells SQL NULL, no row is TARN_ENOTFOUND; the string
 * is malloc'd (NULL for SQL NULL). */
int lk_catdb_query_int64(int64_t *out, int *is_null, lk_catdb *db, duckdb_connection con,
                         const char *sql);
int lk_catdb_query_string(char **out, lk_catdb *db, duckdb_connection con, const char *sql);
/* The same of the SQL that fmt and its arguments make (printf): numbers
 * and lk_catdb_name() go in as they are, names and strings quoted first
 * (quote_ident, quote_literal). */
int lk_catdb_query_int64f(int64_t *out, int *is_null, lk_catdb *db, duckdb_connection con,
                          const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int lk_catdb_query_stringf(char **out, lk_catdb *db, duckdb_connection con, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A statement or query that reads catalog tables together with the
 * session's own (TEMP tables, read_parquet, DuckDB's functions), so it runs
 * in the session's DuckDB: the backend makes its tables readable there
 * under lk_catdb_name() (a DuckDB file is attached there already). The SQL
 * of a table's view reads inlined rows the same way (scan_inlined.c).
 * Writes of catalog rows never go this way: they are recorded in the
 * transaction and run by lk_catdb_exec in the commit's batch. */
int lk_catdb_mixed_exec(lk_catdb *db, duckdb_connection con, const char *sql);
int lk_catdb_mixed_query(duck_table *out, lk_catdb *db, duckdb_connection con, const char *sql);
/* After a statement that made or dropped catalog tables outside a
 * commit: DuckDB reads them under lk_catdb_name() from then on. */
int lk_catdb_refresh(lk_catdb *db, duckdb_connection con);
/* Runs a mixed write (see lk_catdb_write). */
int lk_catdb_mixed_write(lk_catdb *db, duckdb_connection con, const lk_catdb_write *w);
/* Whether mixed writes are plain SQL for this catalog (lk_catdb_write_sql),
 * so they may join a batch of statements. */
int lk_catdb_mixed_native(const lk_catdb *db);
/* The SQL of a mixed write run in DuckDB. */
void lk_catdb_write_sql(tarn_buf *b, const lk_catdb *db, const lk_catdb_write *w);
void lk_catdb_write_free(lk_catdb_write *w);
/* The catalog is PostgreSQL's: its inlined-data tables have DuckLake's
 * PostgreSQL column types (types.c, scan_inlined.c). */
int lk_catdb_is_postgres(const lk_catdb *db);
/* A catalog statement as the backend's database runs it (caller frees):
 * for PostgreSQL, the lk_catdb_name() prefix turned into its schema; for a
 * DuckDB file, the statement as it is. */
char *lk_catdb_backend_sql(const lk_catdb *db, const char *sql);
/* Whether the catalog's schema holds table `table` (unquoted name). */
int lk_catdb_table_exists(lk_catdb *db, duckdb_connection con, const char *table);
/* The names of the tables in the catalog's schema (one column, table_name). */
int lk_catdb_tables(duck_table *out, lk_catdb *db, duckdb_connection con);
/* Makes the place a new lake's tables go: a METADATA_SCHEMA is created
 * when missing, as DuckLake creates it. */
int lk_catdb_prepare_new(lk_catdb *db, duckdb_connection con);

/* Inside the catalog transaction of a commit: waits until no other tarn
 * writer of this catalog is in the catalog part of its commit, and keeps
 * them out until this transaction ends (PostgreSQL: a transaction-scoped
 * advisory lock keyed by the catalog's schema; a DuckDB file has one
 * writer process, so nothing). Whether the backend has such a lock. */
int lk_catdb_lock_commits(lk_catdb *db, duckdb_connection con);
int lk_catdb_has_commit_lock(const lk_catdb *db);
/* The SQL condition true of exactly the rows the open catalog transaction
 * inserted or updated (PostgreSQL: xmin is the transaction's id), or NULL
 * when the backend cannot tell them from other writers' rows. */
const char *lk_catdb_own_rows(const lk_catdb *db);

/* The catalog transaction of a commit. */
int lk_catdb_begin(lk_catdb *db, duckdb_connection con);
int lk_catdb_commit(lk_catdb *db, duckdb_connection con);
int lk_catdb_rollback(lk_catdb *db, duckdb_connection con);

#endif

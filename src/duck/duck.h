/*
 * duck.h — the thin layer over the DuckDB C library that the rest of tarn
 * talks to: run a statement, read a small result as strings, read one
 * scalar. Every failure goes through tarn_error_set() with DuckDB's own
 * message, so callers only add context.
 *
 * Results are read as text (every column cast to VARCHAR) because that is
 * how catalog rows are compared, stored and printed; the typed data plane
 * (Parquet, views) stays inside DuckDB and never passes through C.
 */
#ifndef TARN_DUCK_H
#define TARN_DUCK_H

#include <duckdb.h>
#include <stddef.h>
#include <stdint.h>

/* A fully read result: ncols column names and nrows*ncols cells, row-major.
 * A NULL cell is SQL NULL. Owns all its strings. */
typedef struct {
    size_t nrows, ncols;
    char **names;
    char **cells;
} duck_table;

/* Runs `sql`, discarding any result. */
int duck_exec(duckdb_connection con, const char *sql);
/* Runs `sql`; on success *rows_changed (if non-NULL) gets DuckDB's count. */
int duck_exec_count(duckdb_connection con, const char *sql, int64_t *rows_changed);

/* Runs `sql` and reads every row into *out, each column rendered as DuckDB's
 * CAST(x AS VARCHAR). `sql` must be a query usable as a subquery. */
int duck_table_query(duck_table *out, duckdb_connection con, const char *sql);
/* duck_table_query for a result shown to the user: a NUL byte in a value
 * reads `\0`, as DuckDB's shell shows it (the cells are C strings). */
int duck_table_query_shown(duck_table *out, duckdb_connection con, const char *sql);
/* duck_table_query with each cell the value's JSON text (to_json). */
int duck_table_query_json(duck_table *out, duckdb_connection con, const char *sql);
/* Like duck_table_query for a statement that cannot be a subquery (MERGE …
 * RETURNING): runs it as it is, each value cast to VARCHAR by DuckDB. */
int duck_table_query_stmt(duck_table *out, duckdb_connection con, const char *sql);
/* Reads an already executed result whose columns are all VARCHAR. */
int duck_table_from_result(duck_table *out, duckdb_result *res);
static inline const char *duck_table_get(const duck_table *t, size_t r, size_t c)
{
    return t->cells[r * t->ncols + c];
}
/* Cell (r, c) as an integer (-1 for SQL NULL) / as a malloc'd copy (NULL
 * for SQL NULL). */
int64_t duck_table_int64(const duck_table *t, size_t r, size_t c);
char *duck_table_dup(const duck_table *t, size_t r, size_t c);
void duck_table_free(duck_table *t);

/* Runs a one-row, one-column query. *is_null (optional) tells SQL NULL;
 * a query with no row is TARN_ENOTFOUND. */
int duck_query_int64(int64_t *out, int *is_null, duckdb_connection con, const char *sql);

/* tarn's own DuckDB functions (duck_fn.c): registers the table function
 * `name` of `nargs` VARCHAR arguments with its bind, init and scan
 * callbacks (again, if the database has it already: that replaces it). */
int duck_table_function_register(duckdb_connection con, const char *name, size_t nargs,
                                 duckdb_table_function_bind_t bind,
                                 duckdb_table_function_init_t init, duckdb_table_function_t fn);
/* Same, returning a malloc'd string (NULL for SQL NULL). */
int duck_query_string(char **out, duckdb_connection con, const char *sql);

/* 1 when schema `schema` of database `db` (unquoted names) holds a table
 * `name`, 0 when not (or when the catalog cannot be read). The names are
 * quoted here. */
int duck_table_exists(duckdb_connection con, const char *db, const char *schema, const char *name);

/* Registers setting `name` (of `type`, default `dflt` as text, or none
 * when NULL) on the database of `con`: SET, RESET and current_setting()
 * then know it. Fails when the database already has it. */
int duck_register_setting(duckdb_connection con, const char *name, const char *description,
                          duckdb_type type, const char *dflt);

/* Copies DuckDB's error from a failed result into tarn's error slot. */
int duck_error_from_result(duckdb_result *res, const char *sql);

/* How many columns query `sql` returns: bound (prepared), not run. */
int duck_query_columns(size_t *out, duckdb_connection con, const char *sql);

/* Settings every tarn DuckDB database opens with: errors as JSON, so that
 * duck_error_from_result can read their position in `sql`. */
void duck_configure(duckdb_config cfg);

/* Opens a new in-memory DuckDB database with tarn's settings
 * (duck_configure) and no extension fetched or loaded automatically: tarn
 * is the DuckLake implementation, a catalog is plain DuckDB, and these
 * machines have no route out. */
int duck_open(duckdb_database *out);

/* A connection to a private in-memory DuckDB database, opened on first
 * use and kept for the process: for queries that only parse SQL
 * (json_serialize_sql), which must not run on a user's connection (inside
 * its transaction, or under its PRAGMA enable_verification, they abort
 * the transaction). NULL with the error set when it cannot be opened. */
duckdb_connection duck_parser_con(void);
/* That database, for a module that needs a connection of its own (one
 * used from other threads); NULL with the error set as above. */
duckdb_database duck_parser_db(void);
/* Closes that database (connections made to it must be closed first).
 * Call it before the process exits, not from an atexit handler; a process
 * that never calls it just leaves the database to the exit. */
void duck_parser_close(void);

#endif

/*
 * render.h — prints statement results for `tarn sql` (and, later, `tarn
 * show`) as an aligned table, canonical CSV or JSON lines.
 *
 * A renderer is fed one statement at a time:
 *
 *     render_start(r, n, kind);            before tarn_session_exec
 *     tarn_session_exec(s, sql, render_sink(r));
 *     render_finish(r)  or  render_error(r, tarn_error_last());
 *
 * The sink only collects; nothing reaches the stream until the statement
 * has succeeded or failed. That is what lets a statement that fails after
 * delivering some rows still print exactly `#error` in CSV (the golden
 * format), and the table format needs every row to size its columns.
 *
 * What is printed follows the statement's output kind (sql_output_kind),
 * not whichever callbacks the session happened to call: a NONE statement
 * prints nothing even if DuckDB returned rows, as the golden README says.
 */
#ifndef TARN_CLI_RENDER_H
#define TARN_CLI_RENDER_H

#include "tarn/session.h"

#include <stdint.h>
#include <stdio.h>

typedef enum {
    RENDER_TABLE = 0,
    RENDER_CSV,
    RENDER_JSON,
    RENDER_LINE, /* `col = value`, one line per column, rows apart (duckdb -line) */
    /* JSON with typed values (numbers, booleans, null, nested values), as
     * `duckdb -json` gives them. Plain RENDER_JSON renders every value as
     * DuckDB's text of it (CAST AS VARCHAR): the stable form `tarn sql
     * --format json` prints for programs, which DuckDB's own sqllogictest
     * runner compares (../shared/ducklake-suite reads tarn that way). */
    RENDER_JSON_TYPED,
} render_format;

typedef struct render render;

/* "table", "csv", "json", "line" or "json-typed" → *out; TARN_EINVALID (with a message)
 * else. */
int render_format_parse(render_format *out, const char *name);

/* A renderer writing to `out` (not closed by render_free). */
render *render_new(render_format fmt, FILE *out);
void render_free(render *r);

/* Ties the renderer to the session it prints: JSON then asks the session
 * for typed cells (tarn_session_set_json_cells) and prints numbers,
 * booleans, null and nested values as JSON. Call before the first
 * statement, and again is not needed after render_set_format. */
void render_use_session(render *r, tarn_session *s);
/* Another format from the next statement on (`.mode`). */
void render_set_format(render *r, render_format fmt);
render_format render_get_format(const render *r);

/* Fits tables into `width` columns (0: no limit), as the duckdb shell
 * does on a terminal: the widest columns are cut, their values ending in
 * '…'. */
void render_set_width(render *r, size_t width);

/* The terminal's width when `f` is one (COLUMNS, else the tty's size), else
 * 0. */
size_t render_terminal_width(FILE *f);

/* Starts statement number `stmt` (1-based, used by JSON) of kind `kind`,
 * dropping anything collected for the previous one. */
void render_start(render *r, int stmt, tarn_output_kind kind);

/* The statement (a NONE one) is a CREATE, which DuckDB answers with an
 * empty row set of one column, "Count": JSON prints that row set (a
 * sqllogictest `query` of a CREATE compares it), the table and CSV
 * formats print nothing, as for any NONE statement and as DuckDB's CLI. */
void render_set_created(render *r);

/* A line printed before the statement's `N rows affected` in the table
 * format (the statement's first line, so a script's counts can be placed);
 * NULL for none. Set after render_start, which clears it. */
void render_set_label(render *r, const char *label);

/* The sink to pass to tarn_session_exec; it feeds the functions below.
 * Owned by the renderer. */
const tarn_sink *render_sink(render *r);

/* The sink callbacks, callable directly too (e.g. by `tarn show`). */
void render_begin(render *r, size_t ncols, const char *const *names);
void render_row(render *r, const char *const *cells);
void render_end(render *r);
void render_count(render *r, int64_t n);

/* The statement succeeded: prints its result according to its kind. */
void render_finish(render *r);
/* The statement failed with `msg`: prints the format's error marker (CSV
 * `#error`, a JSON error object; nothing for tables, whose errors are for
 * people and go to stderr through the caller). */
void render_error(render *r, const char *msg);

#endif

/*
 * duck.c — statement execution and text results over the DuckDB C API.
 */
#include "duck/duck.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/strlist.h"
#include "util/quote.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* The session runs DuckDB with errors_as_json (duck_configure), so that an
 * error carries its position as a number and no "LINE 1: …" excerpt of the
 * SQL it ran (often tarn's generated SQL, never to be shown). The message
 * is given back in DuckDB's usual form, "<Type> Error: <message>"; a parser
 * error comes as "Parser Error: {…}". */
static int error_from_json(const char *msg, const char *sql)
{
    const char *brace = strchr(msg, '{');
    if (!brace || (brace != msg && strncmp(brace - 2, ": ", 2) != 0))
        return 0;
    json_t *o = json_loads(brace, 0, NULL);
    const char *type = o ? json_string_value(json_object_get(o, "exception_type")) : NULL;
    const char *text = o ? json_string_value(json_object_get(o, "exception_message")) : NULL;
    if (!text) {
        json_decref(o);
        return 0;
    }
    if (type && *type && strcmp(type, "Invalid") != 0)
        tarn_error_set(TARN_ERROR, "%s Error: %s", type, text);
    else
        tarn_error_set(TARN_ERROR, "%s", text);
    const char *pos = json_string_value(json_object_get(o, "position"));
    if (pos && sql)
        tarn_error_set_position(sql, strtol(pos, NULL, 10));
    json_decref(o);
    return 1;
}

int duck_error_from_result(duckdb_result *res, const char *sql)
{
    const char *msg = duckdb_result_error(res);
    if (msg && error_from_json(msg, sql))
        return TARN_ERROR;
    return tarn_error_set(TARN_ERROR, "%s", msg ? msg : "unknown DuckDB error");
}

int duck_query_columns(size_t *out, duckdb_connection con, const char *sql)
{
    duckdb_prepared_statement st;
    int rc = 0;
    if (duckdb_prepare(con, sql, &st) != DuckDBSuccess) {
        const char *msg = duckdb_prepare_error(st);
        if (!msg || !error_from_json(msg, sql))
            rc = tarn_error_set(TARN_ERROR, "%s", msg ? msg : "unknown DuckDB error");
        else
            rc = TARN_ERROR;
    } else {
        *out = (size_t)duckdb_prepared_statement_column_count(st);
    }
    duckdb_destroy_prepare(&st);
    return rc;
}

void duck_configure(duckdb_config cfg)
{
    duckdb_set_config(cfg, "errors_as_json", "true");
}

int duck_open(duckdb_database *out)
{
    duckdb_config cfg;
    duckdb_create_config(&cfg);
    duckdb_set_config(cfg, "autoinstall_known_extensions", "false");
    duckdb_set_config(cfg, "autoload_known_extensions", "false");
    duck_configure(cfg);
    char *err = NULL;
    int ok = duckdb_open_ext(NULL, out, cfg, &err) == DuckDBSuccess;
    duckdb_destroy_config(&cfg);
    if (ok)
        return 0;
    int rc = tarn_error_set(TARN_ERROR, "cannot open DuckDB: %s", err ? err : "?");
    duckdb_free(err);
    return rc;
}

int duck_exec_count(duckdb_connection con, const char *sql, int64_t *rows_changed)
{
    duckdb_result res;
    if (duckdb_query(con, sql, &res) != DuckDBSuccess) {
        int rc = duck_error_from_result(&res, sql);
        duckdb_destroy_result(&res);
        return rc;
    }
    if (rows_changed)
        *rows_changed = (int64_t)duckdb_rows_changed(&res);
    duckdb_destroy_result(&res);
    return 0;
}

int duck_exec(duckdb_connection con, const char *sql)
{
    return duck_exec_count(con, sql, NULL);
}

static void table_push_row(duck_table *t, size_t *cap)
{
    if (t->nrows + 1 > *cap) {
        *cap = *cap ? *cap * 2 : 16;
        t->cells = xrealloc(t->cells, *cap * t->ncols * sizeof(char *));
    }
    t->nrows++;
}

/* A value's text; with show_nul a NUL byte becomes the two characters
 * `\0` (the cells are C strings, and DuckDB's shell shows it so). */
static char *cell_text(const char *p, size_t n, int show_nul)
{
    if (!show_nul || !memchr(p, 0, n))
        return xstrndup(p, n);
    tarn_buf b = {0};
    for (size_t i = 0; i < n; i++) {
        if (p[i])
            buf_putc(&b, p[i]);
        else
            buf_puts(&b, "\\0");
    }
    if (!b.ptr)
        return xstrdup("");
    return buf_detach(&b);
}

static int table_from_result(duck_table *out, duckdb_result *res, int show_nul)
{
    memset(out, 0, sizeof(*out));
    out->ncols = duckdb_column_count(res);
    out->names = xcalloc(out->ncols, sizeof(char *));
    for (size_t c = 0; c < out->ncols; c++)
        out->names[c] = xstrdup(duckdb_column_name(res, c));
    size_t cap = 0;
    duckdb_data_chunk chunk;
    while ((chunk = duckdb_fetch_chunk(*res)) != NULL) {
        idx_t n = duckdb_data_chunk_get_size(chunk);
        for (idx_t r = 0; r < n; r++) {
            table_push_row(out, &cap);
            char **row = out->cells + (out->nrows - 1) * out->ncols;
            for (size_t c = 0; c < out->ncols; c++) {
                duckdb_vector vec = duckdb_data_chunk_get_vector(chunk, c);
                uint64_t *valid = duckdb_vector_get_validity(vec);
                if (valid && !duckdb_validity_row_is_valid(valid, r)) {
                    row[c] = NULL;
                    continue;
                }
                duckdb_string_t *s = (duckdb_string_t *)duckdb_vector_get_data(vec) + r;
                row[c] = cell_text(duckdb_string_t_data(s), duckdb_string_t_length(*s), show_nul);
            }
        }
        duckdb_destroy_data_chunk(&chunk);
    }
    return 0;
}

int duck_table_from_result(duck_table *out, duckdb_result *res)
{
    return table_from_result(out, res, 0);
}

static int table_query(duck_table *out, duckdb_connection con, const char *sql, int show_nul)
{
    memset(out, 0, sizeof(*out));
    char *wrapped = show_nul == 2 ? xasprintf("SELECT to_json(COLUMNS(*))::VARCHAR FROM (%s)", sql)
                                  : xasprintf("SELECT COLUMNS(*)::VARCHAR FROM (%s)", sql);
    duckdb_result res;
    int rc = 0;
    if (duckdb_query(con, wrapped, &res) != DuckDBSuccess)
        rc = duck_error_from_result(&res, wrapped);
    else
        rc = table_from_result(out, &res, show_nul);
    duckdb_destroy_result(&res);
    free(wrapped);
    return rc;
}

int duck_table_query(duck_table *out, duckdb_connection con, const char *sql)
{
    return table_query(out, con, sql, 0);
}

int duck_table_query_json(duck_table *out, duckdb_connection con, const char *sql)
{
    /* 2: JSON text (a NUL byte is \u0000 in it already) */
    return table_query(out, con, sql, 2);
}

int duck_table_query_shown(duck_table *out, duckdb_connection con, const char *sql)
{
    return table_query(out, con, sql, 1);
}

int duck_table_query_stmt(duck_table *out, duckdb_connection con, const char *sql)
{
    memset(out, 0, sizeof(*out));
    duckdb_result res;
    if (duckdb_query(con, sql, &res) != DuckDBSuccess) {
        int rc = duck_error_from_result(&res, sql);
        duckdb_destroy_result(&res);
        return rc;
    }
    out->ncols = duckdb_column_count(&res);
    out->names = xcalloc(out->ncols ? out->ncols : 1, sizeof(char *));
    for (size_t c = 0; c < out->ncols; c++)
        out->names[c] = xstrdup(duckdb_column_name(&res, c));
    size_t cap = 0, n = duckdb_row_count(&res);
    for (size_t r = 0; r < n; r++) {
        table_push_row(out, &cap);
        char **row = out->cells + (out->nrows - 1) * out->ncols;
        for (size_t c = 0; c < out->ncols; c++) {
            if (duckdb_value_is_null(&res, c, r)) {
                row[c] = NULL;
                continue;
            }
            duckdb_string v = duckdb_value_string(&res, c, r);
            row[c] = xstrndup(v.data, v.size);
            duckdb_free(v.data);
        }
    }
    duckdb_destroy_result(&res);
    return 0;
}

int64_t duck_table_int64(const duck_table *t, size_t r, size_t c)
{
    const char *v = duck_table_get(t, r, c);
    return v ? strtoll(v, NULL, 10) : -1;
}

char *duck_table_dup(const duck_table *t, size_t r, size_t c)
{
    const char *v = duck_table_get(t, r, c);
    return v ? xstrdup(v) : NULL;
}

void duck_table_free(duck_table *t)
{
    strv_free(t->names, t->ncols);
    strv_free(t->cells, t->nrows * t->ncols);
    memset(t, 0, sizeof(*t));
}

int duck_query_string(char **out, duckdb_connection con, const char *sql)
{
    duck_table t;
    *out = NULL;
    int rc = duck_table_query(&t, con, sql);
    if (rc)
        return rc;
    if (t.nrows == 0 || t.ncols == 0) {
        duck_table_free(&t);
        return tarn_error_set(TARN_ENOTFOUND, "query returned no row");
    }
    const char *v = duck_table_get(&t, 0, 0);
    *out = v ? xstrdup(v) : NULL;
    duck_table_free(&t);
    return 0;
}

int duck_query_int64(int64_t *out, int *is_null, duckdb_connection con, const char *sql)
{
    char *s = NULL;
    int rc = duck_query_string(&s, con, sql);
    if (rc)
        return rc;
    if (is_null)
        *is_null = s == NULL;
    *out = s ? strtoll(s, NULL, 10) : 0;
    free(s);
    return 0;
}

int duck_table_exists(duckdb_connection con, const char *db, const char *schema, const char *name)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT count(*) FROM duckdb_tables() WHERE database_name = ");
    quote_literal(&b, db);
    buf_puts(&b, " AND schema_name = ");
    quote_literal(&b, schema);
    buf_puts(&b, " AND table_name = ");
    quote_literal(&b, name);
    int64_t n = 0;
    int rc = duck_query_int64(&n, NULL, con, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        tarn_error_clear();
    return !rc && n > 0;
}

static duckdb_database parser_db;
static duckdb_connection parser_con;
static pthread_once_t parser_once = PTHREAD_ONCE_INIT;

void duck_parser_close(void)
{
    if (parser_con)
        duckdb_disconnect(&parser_con);
    if (parser_db)
        duckdb_close(&parser_db);
}

static void parser_open(void)
{
    if (duckdb_open(NULL, &parser_db) != DuckDBSuccess)
        return;
    if (duckdb_connect(parser_db, &parser_con) != DuckDBSuccess) {
        duckdb_close(&parser_db);
        parser_con = NULL;
        return;
    }
    /* closed by duck_parser_close, never from atexit: exit() runs the
     * thread-local destructors first, and DuckDB's block allocator keeps
     * per-thread state that closing the database then frees a second time */
}

duckdb_connection duck_parser_con(void)
{
    pthread_once(&parser_once, parser_open);
    if (!parser_con)
        tarn_error_set(TARN_ERROR, "cannot open DuckDB's in-memory database to parse SQL");
    return parser_con;
}

duckdb_database duck_parser_db(void)
{
    return duck_parser_con() ? parser_db : NULL;
}

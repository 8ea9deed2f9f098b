/*
 * catdb.c — the catalog database interface (see catdb.h): the calls every
 * backend shares, and the DuckDB-file backend, whose catalog is a database
 * attached in the session's DuckDB instance, so its statements run on the
 * session's connection as they are.
 *
 * Catalog rows: none of its own. It runs the catalog queries and statements
 * that the other lake files build; each of those says which rows it reads
 * and writes.
 */
#include "lake/catdb.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a writer waits for the readers of its catalog file (tarn serve's
 * per-request reads, tarn history, a read-only ATTACH): they hold it for a
 * short read, and a build that fails because a page was being loaded
 * would make serving and building exclusive. TARN_CATALOG_WAIT_MS
 * changes it (0: fail at once). A writer holding the file is not waited
 * for: its lock is held for a whole build. */
static long reader_wait_ms(void)
{
    const char *e = getenv("TARN_CATALOG_WAIT_MS");
    return e && *e ? strtol(e, NULL, 10) : 10000;
}

static int attach_waiting(duckdb_connection con, const char *sql, const char *path, int read_only)
{
    int rc = duck_exec(con, sql);
    double until = clock_mono_ms() + (double)reader_wait_ms();
    /* A reader's lock is waited for; so is no lock at all, met when the
     * reader let go between the failed ATTACH and the look at the file
     * (it is tried again soon); a writer's lock fails at once. */
    while (rc != 0 && !read_only && strstr(tarn_error_last(), "Could not set lock on file") &&
           clock_mono_ms() < until) {
        fs_lock held = fs_lock_held(path);
        if (held == FS_LOCK_WRITE)
            break;
        tarn_error_clear();
        long ms = held == FS_LOCK_READ ? 50 : 5;
        nanosleep(&(struct timespec){.tv_nsec = ms * 1000 * 1000}, NULL);
        rc = duck_exec(con, sql);
    }
    return rc;
}

static int file_open(lk_catdb *db, duckdb_connection con, const char *path, int read_only)
{
    tarn_buf b = {0};
    buf_puts(&b, "ATTACH ");
    quote_literal(&b, path);
    buf_puts(&b, " AS ");
    quote_ident(&b, db->raw_name);
    /* DuckLake attaches its DuckDB catalog at the latest storage version:
     * the inlined-data table of a VARIANT column needs DuckDB 1.5's */
    buf_puts(&b,
             read_only ? " (READ_ONLY, STORAGE_VERSION 'latest')" : " (STORAGE_VERSION 'latest')");
    int rc = attach_waiting(con, buf_cstr(&b), path, read_only);
    buf_free(&b);
    return rc;
}

static void file_close(lk_catdb *db, duckdb_connection con)
{
    tarn_buf b = {0};
    buf_puts(&b, "DETACH DATABASE IF EXISTS ");
    quote_ident(&b, db->raw_name);
    duck_exec(con, buf_cstr(&b)); /* IF EXISTS: nothing to do when it was never attached */
    buf_free(&b);
}

static int file_exec(lk_catdb *db, duckdb_connection con, const char *sql)
{
    (void)db;
    return duck_exec(con, sql);
}

static int file_exec_count(lk_catdb *db, duckdb_connection con, const char *sql, int64_t *changed)
{
    (void)db;
    return duck_exec_count(con, sql, changed);
}

static int file_query(duck_table *out, lk_catdb *db, duckdb_connection con, const char *sql)
{
    (void)db;
    return duck_table_query(out, con, sql);
}

/* duckdb_tables()'s filter for the catalog's schema */
static void file_schema_where(tarn_buf *b, const lk_catdb *db)
{
    buf_puts(b, " WHERE database_name = ");
    quote_literal(b, db->raw_name);
    buf_puts(b, " AND schema_name = ");
    quote_literal(b, db->schema ? db->schema : "main");
}

static int file_table_exists(lk_catdb *db, duckdb_connection con, const char *table)
{
    return duck_table_exists(con, db->raw_name, db->schema ? db->schema : "main", table);
}

static int file_tables(duck_table *out, lk_catdb *db, duckdb_connection con)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT table_name FROM duckdb_tables()");
    file_schema_where(&b, db);
    int rc = duck_table_query(out, con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static int file_prepare_new(lk_catdb *db, duckdb_connection con)
{
    if (!db->schema)
        return 0;
    char *sql = xasprintf("CREATE SCHEMA IF NOT EXISTS %s", db->name);
    int rc = duck_exec(con, sql);
    free(sql);
    return rc;
}

static const lk_catdb_ops DUCKDB_OPS = {
    .kind = "duckdb",
    .open = file_open,
    .close = file_close,
    .exec = file_exec,
    .exec_count = file_exec_count,
    .query = file_query,
    .mixed_exec = file_exec, /* the file is attached in the session's DuckDB */
    .mixed_query = file_query,
    .table_exists = file_table_exists,
    .tables = file_tables,
    .prepare_new = file_prepare_new,
};

void lk_catdb_duckdb(lk_catdb *db, const char *database, const char *schema)
{
    memset(db, 0, sizeof *db);
    db->ops = &DUCKDB_OPS;
    db->log = NULL;
    db->log_ctx = NULL;
    db->raw_name = xstrdup(database);
    db->schema = schema ? xstrdup(schema) : NULL;
    tarn_buf b = {0};
    quote_ident(&b, database);
    if (schema) {
        buf_putc(&b, '.');
        quote_ident(&b, schema);
    }
    db->name = buf_detach(&b);
}

void lk_catdb_release(lk_catdb *db)
{
    free(db->name);
    free(db->raw_name);
    free(db->schema);
    free(db->conninfo);
    free(db->pg_name);
    db->name = db->raw_name = db->schema = db->conninfo = db->pg_name = NULL;
}

const char *lk_catdb_name(const lk_catdb *db)
{
    return db->name;
}

const char *lk_catdb_database(const lk_catdb *db)
{
    return db->raw_name;
}

int lk_catdb_open(lk_catdb *db, duckdb_connection con, const char *path, int read_only)
{
    return db->ops->open(db, con, path, read_only);
}

void lk_catdb_close(lk_catdb *db, duckdb_connection con)
{
    db->ops->close(db, con);
}

/* Every statement and query reaches the catalog through the calls below,
 * so they are where a statement is timed for the log (catdb.h). */
static double log_start(const lk_catdb *db)
{
    return db->log ? clock_mono_ms() : 0;
}

static int log_end(const lk_catdb *db, const char *sql, double start, int rc)
{
    if (db->log) {
        tarn_error_saved err = tarn_error_save(); /* the hook must not clear an error */
        db->log(db->log_ctx, db, sql, clock_mono_ms() - start);
        tarn_error_restore(&err);
    }
    return rc;
}

int lk_catdb_exec(lk_catdb *db, duckdb_connection con, const char *sql)
{
    double t = log_start(db);
    return log_end(db, sql, t, db->ops->exec(db, con, sql));
}

int lk_catdb_mixed_exec(lk_catdb *db, duckdb_connection con, const char *sql)
{
    double t = log_start(db);
    return log_end(db, sql, t, db->ops->mixed_exec(db, con, sql));
}

int lk_catdb_mixed_query(duck_table *out, lk_catdb *db, duckdb_connection con, const char *sql)
{
    double t = log_start(db);
    return log_end(db, sql, t, db->ops->mixed_query(out, db, con, sql));
}

int lk_catdb_exec_count(lk_catdb *db, duckdb_connection con, const char *sql, int64_t *changed)
{
    double t = log_start(db);
    return log_end(db, sql, t, db->ops->exec_count(db, con, sql, changed));
}

int lk_catdb_query(duck_table *out, lk_catdb *db, duckdb_connection con, const char *sql)
{
    double t = log_start(db);
    return log_end(db, sql, t, db->ops->query(out, db, con, sql));
}

int lk_catdb_query_string(char **out, lk_catdb *db, duckdb_connection con, const char *sql)
{
    duck_table t;
    int rc = lk_catdb_query(&t, db, con, sql);
    if (rc)
        return rc;
    if (t.nrows == 0 || t.ncols == 0)
        rc = tarn_error_set(TARN_ENOTFOUND, "the catalog query returned no row");
    else
        *out = duck_table_get(&t, 0, 0) ? xstrdup(duck_table_get(&t, 0, 0)) : NULL;
    duck_table_free(&t);
    return rc;
}

int lk_catdb_query_int64(int64_t *out, int *is_null, lk_catdb *db, duckdb_connection con,
                         const char *sql)
{
    char *s = NULL;
    int rc = lk_catdb_query_string(&s, db, con, sql);
    if (rc)
        return rc;
    if (is_null)
        *is_null = s == NULL;
    *out = s ? strtoll(s, NULL, 10) : 0;
    free(s);
    return 0;
}

/* The SQL that fmt and ap make, run as lk_catdb_query into *t, or else as
 * lk_catdb_query_string into *str, or else as lk_catdb_query_int64 into
 * *num (the printf forms below differ in that only). */
static int query_vformat(duck_table *t, char **str, int64_t *num, int *is_null, lk_catdb *db,
                         duckdb_connection con, const char *fmt, va_list ap)
{
    tarn_buf sql = {0};
    buf_vprintf(&sql, fmt, ap);
    const char *q = buf_cstr(&sql);
    int rc = t     ? lk_catdb_query(t, db, con, q)
             : str ? lk_catdb_query_string(str, db, con, q)
                   : lk_catdb_query_int64(num, is_null, db, con, q);
    buf_free(&sql);
    return rc;
}

int lk_catdb_queryf(duck_table *out, lk_catdb *db, duckdb_connection con, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = query_vformat(out, NULL, NULL, NULL, db, con, fmt, ap);
    va_end(ap);
    return rc;
}

int lk_catdb_query_int64f(int64_t *out, int *is_null, lk_catdb *db, duckdb_connection con,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = query_vformat(NULL, NULL, out, is_null, db, con, fmt, ap);
    va_end(ap);
    return rc;
}

int lk_catdb_query_stringf(char **out, lk_catdb *db, duckdb_connection con, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = query_vformat(NULL, out, NULL, NULL, db, con, fmt, ap);
    va_end(ap);
    return rc;
}

int lk_catdb_table_exists(lk_catdb *db, duckdb_connection con, const char *table)
{
    return db->ops->table_exists(db, con, table);
}

int lk_catdb_tables(duck_table *out, lk_catdb *db, duckdb_connection con)
{
    return db->ops->tables(out, db, con);
}

int lk_catdb_prepare_new(lk_catdb *db, duckdb_connection con)
{
    return db->ops->prepare_new(db, con);
}

int lk_catdb_lock_commits(lk_catdb *db, duckdb_connection con)
{
    return db->ops->lock_commits ? db->ops->lock_commits(db, con) : 0;
}

int lk_catdb_has_commit_lock(const lk_catdb *db)
{
    return db->ops->lock_commits != NULL;
}

const char *lk_catdb_own_rows(const lk_catdb *db)
{
    return db->ops->own_rows;
}

int lk_catdb_begin(lk_catdb *db, duckdb_connection con)
{
    return db->ops->begin ? db->ops->begin(db, con) : lk_catdb_exec(db, con, "BEGIN TRANSACTION");
}

int lk_catdb_commit(lk_catdb *db, duckdb_connection con)
{
    return db->ops->commit ? db->ops->commit(db, con) : lk_catdb_exec(db, con, "COMMIT");
}

int lk_catdb_rollback(lk_catdb *db, duckdb_connection con)
{
    return db->ops->rollback ? db->ops->rollback(db, con) : lk_catdb_exec(db, con, "ROLLBACK");
}

void lk_catdb_write_sql(tarn_buf *b, const lk_catdb *db, const lk_catdb_write *w)
{
    if (w->select) {
        buf_printf(b, "INSERT INTO %s.", db->name);
        quote_ident(b, w->table);
        buf_printf(b, " %s", w->select);
        return;
    }
    buf_printf(b, "UPDATE %s.", db->name);
    quote_ident(b, w->table);
    buf_puts(b, " SET ");
    for (size_t i = 0; i < w->nset; i++)
        buf_printf(b, "%s%s = %s", i ? ", " : "", w->cols[i], w->exprs[i]);
    if (w->where)
        buf_printf(b, " WHERE %s", w->where);
}

void lk_catdb_write_free(lk_catdb_write *w)
{
    free(w->table);
    free(w->select);
    strv_free(w->cols, w->nset);
    strv_free(w->exprs, w->nset);
    free(w->where);
    memset(w, 0, sizeof *w);
}

int lk_catdb_mixed_native(const lk_catdb *db)
{
    return db->ops->mixed_write == NULL;
}

int lk_catdb_mixed_write(lk_catdb *db, duckdb_connection con, const lk_catdb_write *w)
{
    if (db->ops->mixed_write)
        return db->ops->mixed_write(db, con, w);
    tarn_buf b = {0};
    lk_catdb_write_sql(&b, db, w);
    int rc = lk_catdb_exec(db, con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

int lk_catdb_is_postgres(const lk_catdb *db)
{
    return strcmp(db->ops->kind, "postgres") == 0;
}

int lk_catdb_refresh(lk_catdb *db, duckdb_connection con)
{
    return db->ops->refresh ? db->ops->refresh(db, con) : 0;
}

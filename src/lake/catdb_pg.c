/*
 * catdb_pg.c — the PostgreSQL catalog backend (see catdb.h): a DuckLake
 * catalog in a PostgreSQL database, reached through libpq (duck/pgscan.h).
 *
 * The catalog's tables live in a PostgreSQL schema (METADATA_SCHEMA,
 * public by default, as DuckLake's). The lake layer writes its catalog
 * SQL once, qualified by lk_catdb_name(): here that name is an in-memory
 * DuckDB database holding one view per PostgreSQL catalog table, each a
 * __tarn_pg_scan of it, so the mixed statements (catalog tables beside the
 * session's TEMP tables and read_parquet) and the views of lake tables
 * run in DuckDB unchanged. A plain catalog statement goes to PostgreSQL
 * with the same prefix turned into the PostgreSQL schema.
 *
 * The views follow the tables: made when the catalog is opened and after
 * each catalog commit (a commit may create or drop inlined-data tables).
 * The catalog transaction is PostgreSQL's own (BEGIN … COMMIT on the
 * backend's connection); the views' scans run on that connection too, so
 * a mixed statement inside it sees its rows.
 */
#include "lake/catdb.h"

#include "duck/pgscan.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdlib.h>
#include <string.h>

struct lk_catdb_pg {
    duck_pg *pg;
    strlist views; /* the catalog tables that have their view in DuckDB */
};

/* The statement for PostgreSQL: every `name.` (lk_catdb_name and a dot)
 * becomes `pg_schema.`. The name is a quoted identifier: it appears in
 * tarn's SQL only as that prefix. */
static char *to_pg(const lk_catdb *db, const char *sql)
{
    tarn_buf b = {0};
    size_t n = strlen(db->name);
    const char *p = sql, *hit;
    while ((hit = strstr(p, db->name)) != NULL) {
        buf_append(&b, p, (size_t)(hit - p));
        if (hit[n] == '.')
            buf_puts(&b, db->pg_name);
        else
            buf_append(&b, hit, n);
        p = hit + n;
    }
    buf_puts(&b, p);
    return buf_detach(&b);
}

static int pg_exec_count(lk_catdb *db, duckdb_connection con, const char *sql, int64_t *changed)
{
    (void)con;
    char *q = to_pg(db, sql);
    int rc = duck_pg_exec_count(db->pg->pg, q, changed);
    free(q);
    return rc;
}

static int pg_exec(lk_catdb *db, duckdb_connection con, const char *sql)
{
    return pg_exec_count(db, con, sql, NULL);
}

static int pg_query(duck_table *out, lk_catdb *db, duckdb_connection con, const char *sql)
{
    (void)con;
    char *q = to_pg(db, sql);
    int rc = duck_pg_query(out, db->pg->pg, q);
    free(q);
    return rc;
}

/* The tables of the catalog's schema: pg_tables, not information_schema
 * (which checks privileges row by row: several times slower, and every
 * commit lists the tables again) */
static void schema_where(tarn_buf *b, const lk_catdb *db)
{
    buf_puts(b, " FROM pg_catalog.pg_tables WHERE schemaname = ");
    quote_literal(b, db->schema ? db->schema : "public");
}

static int pg_tables(duck_table *out, lk_catdb *db, duckdb_connection con)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT tablename::text AS table_name");
    schema_where(&b, db);
    buf_puts(&b, " ORDER BY 1");
    int rc = duck_pg_query(out, db->pg->pg, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

static int pg_table_exists(lk_catdb *db, duckdb_connection con, const char *table)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT count(*)");
    schema_where(&b, db);
    buf_puts(&b, " AND tablename = ");
    quote_literal(&b, table);
    duck_table t;
    int rc = duck_pg_query(&t, db->pg->pg, buf_cstr(&b));
    buf_free(&b);
    if (rc)
        return rc;
    int n = t.nrows && duck_table_get(&t, 0, 0) ? atoi(duck_table_get(&t, 0, 0)) : 0;
    duck_table_free(&t);
    return n > 0;
}

/* CREATE OR REPLACE VIEW name.table AS a scan of the PostgreSQL table. */
static int make_view(lk_catdb *db, duckdb_connection con, const char *table)
{
    tarn_buf inner = {0};
    buf_printf(&inner, "SELECT * FROM %s.", db->pg_name);
    quote_ident(&inner, table);
    tarn_buf b = {0};
    buf_printf(&b, "CREATE OR REPLACE VIEW %s.", db->name);
    quote_ident(&b, table);
    buf_puts(&b, " AS SELECT * FROM __tarn_pg_scan(");
    quote_literal(&b, duck_pg_handle(db->pg->pg));
    buf_puts(&b, ", ");
    quote_literal(&b, buf_cstr(&inner));
    buf_putc(&b, ')');
    int rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    buf_free(&inner);
    return rc;
}

static int drop_view(lk_catdb *db, duckdb_connection con, const char *table)
{
    tarn_buf b = {0};
    buf_printf(&b, "DROP VIEW IF EXISTS %s.", db->name);
    quote_ident(&b, table);
    int rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

/* Brings the DuckDB views in step with PostgreSQL's tables: a view for
 * each new table, none for a dropped one. */
static int sync_views(lk_catdb *db, duckdb_connection con)
{
    if (db->views_held) {
        db->views_behind = 1;
        return 0;
    }
    duck_table t;
    int rc = pg_tables(&t, db, con);
    if (rc)
        return rc;
    strlist now = {0};
    for (size_t r = 0; r < t.nrows; r++)
        strlist_push(&now, duck_table_get(&t, r, 0));
    duck_table_free(&t);
    for (size_t i = 0; i < now.n && !rc; i++)
        if (strlist_find(&db->pg->views, now.items[i]) < 0) {
            rc = make_view(db, con, now.items[i]);
            if (!rc)
                strlist_push(&db->pg->views, now.items[i]);
        }
    for (size_t i = db->pg->views.n; i-- > 0 && !rc;)
        if (strlist_find(&now, db->pg->views.items[i]) < 0) {
            rc = drop_view(db, con, db->pg->views.items[i]);
            strlist_remove(&db->pg->views, i);
        }
    strlist_free(&now);
    if (!rc)
        db->views_behind = 0;
    return rc;
}

/* The catalog's tables as the lake sees them: those readable in DuckDB.
 * The views are brought up to date first, so a table another writer just
 * made (an inlined-data table) is listed only once it can be read. */
static int pg_tables_readable(duck_table *out, lk_catdb *db, duckdb_connection con)
{
    int rc = sync_views(db, con);
    if (rc)
        return rc;
    memset(out, 0, sizeof(*out));
    out->ncols = 1;
    out->nrows = db->pg->views.n;
    out->names = xmalloc(sizeof(char *));
    out->names[0] = xstrdup("table_name");
    out->cells = xmalloc((out->nrows + 1) * sizeof(char *));
    for (size_t i = 0; i < out->nrows; i++)
        out->cells[i] = xstrdup(db->pg->views.items[i]);
    return 0;
}

static int pg_open(lk_catdb *db, duckdb_connection con, const char *path, int read_only)
{
    (void)path;
    db->pg = xcalloc(1, sizeof *db->pg);
    int rc = duck_pg_connect(&db->pg->pg, db->conninfo);
    if (!rc && read_only)
        rc = duck_pg_exec(db->pg->pg, "SET default_transaction_read_only = on");
    if (!rc)
        rc = duck_pg_register(con);
    if (!rc) {
        tarn_buf b = {0};
        buf_puts(&b, "ATTACH ':memory:' AS ");
        quote_ident(&b, db->raw_name);
        if (db->schema)
            buf_printf(&b, "; CREATE SCHEMA %s", db->name);
        rc = duck_exec(con, buf_cstr(&b));
        buf_free(&b);
    }
    if (!rc)
        rc = sync_views(db, con);
    return rc;
}

static void pg_close(lk_catdb *db, duckdb_connection con)
{
    if (!db->pg)
        return;
    tarn_buf b = {0};
    buf_puts(&b, "DETACH DATABASE IF EXISTS ");
    quote_ident(&b, db->raw_name);
    duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    duck_pg_close(db->pg->pg);
    strlist_free(&db->pg->views);
    free(db->pg);
    db->pg = NULL;
}

static int pg_mixed_exec(lk_catdb *db, duckdb_connection con, const char *sql)
{
    (void)db;
    return duck_exec(con, sql);
}

static int pg_mixed_query(duck_table *out, lk_catdb *db, duckdb_connection con, const char *sql)
{
    (void)db;
    return duck_table_query(out, con, sql);
}

static int pg_prepare_new(lk_catdb *db, duckdb_connection con)
{
    if (!db->schema)
        return 0;
    char *sql = xasprintf("CREATE SCHEMA IF NOT EXISTS %s", db->pg_name);
    int rc = duck_pg_exec(db->pg->pg, sql);
    free(sql);
    return rc;
}

static int pg_begin(lk_catdb *db, duckdb_connection con)
{
    return duck_pg_exec(db->pg->pg, "BEGIN");
}

static int pg_commit(lk_catdb *db, duckdb_connection con)
{
    int rc = duck_pg_exec(db->pg->pg, "COMMIT");
    return rc ? rc : sync_views(db, con);
}

static int pg_rollback(lk_catdb *db, duckdb_connection con)
{
    return duck_pg_exec(db->pg->pg, "ROLLBACK");
}

/* One lock per catalog schema of the database: 'tarn' and the schema's
 * hash are the two keys of a transaction-scoped advisory lock, released
 * by the COMMIT or ROLLBACK that ends the catalog transaction. */
static int pg_lock_commits(lk_catdb *db, duckdb_connection con)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT pg_advisory_xact_lock(1952543342, hashtext(");
    quote_literal(&b, db->schema ? db->schema : "public");
    buf_puts(&b, "))");
    int rc = duck_pg_exec(db->pg->pg, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

/* The columns of a catalog table in PostgreSQL, in order, with their
 * types (format_type) and whether they are bytea. */
typedef struct {
    duck_table t; /* name, type */
    size_t n;
} pg_columns;

static int table_columns(pg_columns *out, lk_catdb *db, const char *table)
{
    tarn_buf rel = {0}, q = {0};
    buf_printf(&rel, "%s.", db->pg_name);
    quote_ident(&rel, table);
    buf_puts(&q, "SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute WHERE "
                 "attrelid = ");
    quote_literal(&q, buf_cstr(&rel));
    buf_puts(&q, "::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum");
    int rc = duck_pg_query(&out->t, db->pg->pg, buf_cstr(&q));
    out->n = rc ? 0 : out->t.nrows;
    buf_free(&rel);
    buf_free(&q);
    return rc;
}

static int is_bytea(const pg_columns *c, size_t i)
{
    return strcmp(duck_table_get(&c->t, i, 1), "bytea") == 0;
}

/* A value DuckDB computed as PostgreSQL SQL: bytea from its hex. */
static void pg_value(tarn_buf *b, const char *v, int bytea)
{
    if (!v) {
        buf_puts(b, "NULL");
    } else if (bytea) {
        buf_puts(b, "decode(");
        quote_literal(b, v);
        buf_puts(b, ", 'hex')");
    } else {
        quote_literal(b, v);
    }
}

#define ROWS_PER_STATEMENT 500

/* INSERT … SELECT: DuckDB runs the SELECT (bytea columns as hex), the
 * rows go to PostgreSQL as literals, 500 to a statement. */
static int pg_insert_select(lk_catdb *db, duckdb_connection con, const lk_catdb_write *w,
                            const pg_columns *cols)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT ");
    for (size_t i = 0; i < cols->n; i++)
        buf_printf(&q, "%s%sq.c%zu%s", i ? ", " : "", is_bytea(cols, i) ? "hex(" : "", i,
                   is_bytea(cols, i) ? ")" : "");
    buf_printf(&q, " FROM (%s) AS q(", w->select);
    for (size_t i = 0; i < cols->n; i++)
        buf_printf(&q, "%sc%zu", i ? ", " : "", i);
    buf_putc(&q, ')');
    duck_table rows;
    int rc = duck_table_query(&rows, con, buf_cstr(&q));
    buf_free(&q);
    for (size_t r = 0; !rc && r < rows.nrows; r += ROWS_PER_STATEMENT) {
        tarn_buf b = {0};
        buf_printf(&b, "INSERT INTO %s.", db->pg_name);
        quote_ident(&b, w->table);
        buf_puts(&b, " VALUES ");
        for (size_t k = r; k < rows.nrows && k < r + ROWS_PER_STATEMENT; k++) {
            buf_puts(&b, k > r ? ", (" : "(");
            for (size_t c = 0; c < rows.ncols; c++) {
                if (c)
                    buf_puts(&b, ", ");
                pg_value(&b, duck_table_get(&rows, k, c), is_bytea(cols, c));
            }
            buf_putc(&b, ')');
        }
        rc = duck_pg_exec(db->pg->pg, buf_cstr(&b));
        buf_free(&b);
    }
    duck_table_free(&rows); /* (zeroed when the query failed) */
    return rc;
}

static const char *column_type(const pg_columns *cols, const char *name)
{
    for (size_t i = 0; i < cols->n; i++)
        if (strcmp(duck_table_get(&cols->t, i, 0), name) == 0)
            return duck_table_get(&cols->t, i, 1);
    return NULL;
}

/* UPDATE: DuckDB reads the table (with each row's ctid) and computes the
 * new values of the rows WHERE picks; one PostgreSQL UPDATE … FROM
 * (VALUES …) sets them, row by ctid (the rows cannot move in between:
 * this transaction holds them). */
static int pg_update(lk_catdb *db, duckdb_connection con, const lk_catdb_write *w,
                     const pg_columns *cols)
{
    tarn_buf inner = {0}, q = {0};
    buf_printf(&inner, "SELECT ctid::text AS __tarn_ctid, * FROM %s.", db->pg_name);
    quote_ident(&inner, w->table);
    buf_puts(&q, "SELECT __tarn_ctid");
    for (size_t i = 0; i < w->nset; i++) {
        const char *ty = column_type(cols, w->cols[i]);
        buf_printf(&q, ", %s(%s)", ty && strcmp(ty, "bytea") == 0 ? "hex" : "", w->exprs[i]);
    }
    buf_puts(&q, " FROM __tarn_pg_scan(");
    quote_literal(&q, duck_pg_handle(db->pg->pg));
    buf_puts(&q, ", ");
    quote_literal(&q, buf_cstr(&inner));
    buf_puts(&q, ") AS ");
    quote_ident(&q, w->table);
    if (w->where)
        buf_printf(&q, " WHERE %s", w->where);
    duck_table rows;
    int rc = duck_table_query(&rows, con, buf_cstr(&q));
    buf_free(&q);
    buf_free(&inner);
    if (rc)
        return rc;
    for (size_t r = 0; !rc && r < rows.nrows; r += ROWS_PER_STATEMENT) {
        tarn_buf b = {0};
        buf_printf(&b, "UPDATE %s.", db->pg_name);
        quote_ident(&b, w->table);
        buf_puts(&b, " AS __t SET ");
        for (size_t i = 0; i < w->nset; i++) {
            const char *ty = column_type(cols, w->cols[i]);
            int bytea = ty && strcmp(ty, "bytea") == 0;
            buf_puts(&b, i ? ", " : "");
            quote_ident(&b, w->cols[i]);
            buf_printf(&b, bytea ? " = decode(__v.c%zu, 'hex')" : " = CAST(__v.c%zu AS %s)", i,
                       ty ? ty : "text");
        }
        buf_puts(&b, " FROM (VALUES ");
        for (size_t k = r; k < rows.nrows && k < r + ROWS_PER_STATEMENT; k++) {
            buf_puts(&b, k > r ? ", (" : "(");
            for (size_t c = 0; c < rows.ncols; c++) {
                if (c)
                    buf_puts(&b, ", ");
                pg_value(&b, duck_table_get(&rows, k, c), 0);
            }
            buf_putc(&b, ')');
        }
        buf_puts(&b, ") AS __v(__tarn_ctid");
        for (size_t i = 0; i < w->nset; i++)
            buf_printf(&b, ", c%zu", i);
        buf_puts(&b, ") WHERE __t.ctid = __v.__tarn_ctid::tid");
        rc = duck_pg_exec(db->pg->pg, buf_cstr(&b));
        buf_free(&b);
    }
    duck_table_free(&rows);
    return rc;
}

static int pg_mixed_write(lk_catdb *db, duckdb_connection con, const lk_catdb_write *w)
{
    pg_columns cols;
    int rc = table_columns(&cols, db, w->table);
    if (rc)
        return rc;
    rc = w->select ? pg_insert_select(db, con, w, &cols) : pg_update(db, con, w, &cols);
    duck_table_free(&cols.t);
    return rc;
}

static const lk_catdb_ops POSTGRES_OPS = {
    .kind = "postgres",
    .open = pg_open,
    .close = pg_close,
    .exec = pg_exec,
    .exec_count = pg_exec_count,
    .query = pg_query,
    .mixed_exec = pg_mixed_exec,
    .mixed_query = pg_mixed_query,
    .table_exists = pg_table_exists,
    .tables = pg_tables_readable,
    .prepare_new = pg_prepare_new,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .mixed_write = pg_mixed_write,
    .refresh = sync_views,
    .lock_commits = pg_lock_commits,
    .own_rows = "xmin = pg_current_xact_id()::xid",
};

void lk_catdb_postgres(lk_catdb *db, const char *database, const char *schema, const char *conninfo)
{
    lk_catdb_duckdb(db, database, schema); /* the names in DuckDB */
    db->ops = &POSTGRES_OPS;
    db->conninfo = xstrdup(conninfo);
    tarn_buf b = {0};
    quote_ident(&b, schema ? schema : "public");
    db->pg_name = buf_detach(&b);
}

const char *lk_catdb_postgres_conninfo(const char *path)
{
    return strncmp(path, "postgres:", 9) == 0 ? path + 9 : NULL;
}

char *lk_catdb_backend_sql(const lk_catdb *db, const char *sql)
{
    return lk_catdb_is_postgres(db) ? to_pg(db, sql) : xstrdup(sql);
}

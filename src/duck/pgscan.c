/*
 * pgscan.c — PostgreSQL connections through libpq and the DuckDB table
 * function __tarn_pg_scan over them (see pgscan.h).
 *
 * Connections are kept in a registry under their handle ("pg1", …), so a
 * scan finds its connection by name and a closed connection is never
 * reached: the registry lock is held until the connection's own lock is,
 * and closing takes both. Scans read through a cursor declared in the
 * scan's init (not its bind: DuckDB may execute a bound statement twice),
 * closed when read to the end or when DuckDB drops the scan.
 */
#include "duck/pgscan.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/hex.h"

#include <libpq-fe.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct duck_pg {
    PGconn *conn;
    pthread_mutex_t lock; /* one round trip at a time */
    int in_block;         /* in a transaction block when last heard from */
    int lost_block;       /* the connection dropped inside one (pg_ready) */
    char handle[24];
    unsigned long cursors; /* names the next cursor */
    duck_pg *next;         /* the registry */
};

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static duck_pg *registry;
static unsigned long next_handle = 1;

/* PostgreSQL's message without its "ERROR:  " prefix and trailing newline,
 * with the key a unique violation names (its detail: "Key (a, b)=(1, x)
 * already exists."). */
static int pg_error(PGconn *conn, const PGresult *res, const char *what)
{
    const char *m = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;
    const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    const char *detail = res ? PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL) : NULL;
    char *msg = xstrdup(m ? m : PQerrorMessage(conn));
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
        msg[--n] = '\0';
    int unique = state && strcmp(state, "23505") == 0 && detail;
    /* a failure of the connection itself, not of the statement */
    int code = PQstatus(conn) == CONNECTION_BAD ? TARN_ELOST : TARN_ERROR;
    int rc = tarn_error_set(code, "PostgreSQL %s: %s%s%s", what, msg, unique ? ": " : "",
                            unique ? detail : "");
    free(msg);
    return rc;
}

/* What every connection is set to, also after a reconnect: the text forms
 * value_text() parses. */
static const char SETUP_SQL[] =
    "SET TimeZone = 'UTC'; SET DateStyle = 'ISO, YMD'; SET IntervalStyle = 'postgres'; "
    "SET client_encoding = 'UTF8'; SET extra_float_digits = 1; SET client_min_messages = warning";

static int setup_connection(PGconn *conn)
{
    PGresult *res = PQexec(conn, SETUP_SQL);
    int rc = PQresultStatus(res) == PGRES_COMMAND_OK
                 ? 0
                 : pg_error(conn, res, "connection setup failed");
    PQclear(res);
    return rc;
}

static int starts_with_word(const char *sql, const char *word)
{
    while (*sql == ' ' || *sql == '\n' || *sql == '\t')
        sql++;
    return strncasecmp(sql, word, strlen(word)) == 0;
}

/* Called with the connection locked, before a round trip of `sql`. A
 * connection the server or the network dropped is opened again, so a
 * long-running worker or scheduler outlives a PostgreSQL restart or a
 * terminated backend. A transaction block it was in died with it, and
 * PostgreSQL rolled it back: every statement the caller meant for that
 * block fails until it rolls back, so none of them runs outside it. */
static int pg_ready(duck_pg *pg, const char *sql)
{
    if (PQstatus(pg->conn) == CONNECTION_BAD) {
        PQreset(pg->conn);
        if (PQstatus(pg->conn) != CONNECTION_OK)
            return pg_error(pg->conn, NULL, "connection lost, and reconnecting failed");
        int rc = setup_connection(pg->conn);
        if (rc)
            return rc;
        pg->lost_block = pg->in_block;
        pg->in_block = 0;
    }
    if (pg->lost_block) {
        if (!starts_with_word(sql, "ROLLBACK"))
            return tarn_error_set(TARN_ELOST,
                                  "PostgreSQL: the connection to the catalog was lost inside a "
                                  "transaction, which PostgreSQL rolled back");
        pg->lost_block = 0;
    }
    return 0;
}

/* After a round trip: whether the connection is inside a transaction block
 * now (kept as it was when the connection dropped during the trip). */
static void pg_note_block(duck_pg *pg)
{
    if (PQstatus(pg->conn) != CONNECTION_OK)
        return;
    PGTransactionStatusType st = PQtransactionStatus(pg->conn);
    pg->in_block = st == PQTRANS_INTRANS || st == PQTRANS_INERROR;
}

int duck_pg_connect(duck_pg **out, const char *conninfo)
{
    *out = NULL;
    PGconn *conn = PQconnectdb(conninfo);
    if (!conn)
        return tarn_error_set(TARN_ERROR, "PostgreSQL: out of memory connecting");
    if (PQstatus(conn) != CONNECTION_OK) {
        int rc = pg_error(conn, NULL, "connection failed");
        PQfinish(conn);
        return rc;
    }
    int rc = setup_connection(conn);
    if (rc) {
        PQfinish(conn);
        return rc;
    }
    duck_pg *pg = xcalloc(1, sizeof *pg);
    pg->conn = conn;
    pthread_mutex_init(&pg->lock, NULL);
    pthread_mutex_lock(&registry_lock);
    snprintf(pg->handle, sizeof pg->handle, "pg%lu", next_handle++);
    pg->next = registry;
    registry = pg;
    pthread_mutex_unlock(&registry_lock);
    *out = pg;
    return 0;
}

void duck_pg_close(duck_pg *pg)
{
    if (!pg)
        return;
    pthread_mutex_lock(&registry_lock);
    for (duck_pg **p = &registry; *p; p = &(*p)->next)
        if (*p == pg) {
            *p = pg->next;
            break;
        }
    pthread_mutex_lock(&pg->lock); /* waits for a scan's round trip */
    pthread_mutex_unlock(&pg->lock);
    pthread_mutex_unlock(&registry_lock);
    PQfinish(pg->conn);
    pthread_mutex_destroy(&pg->lock);
    free(pg);
}

const char *duck_pg_handle(const duck_pg *pg)
{
    return pg->handle;
}

/* The connection named `handle`, locked (NULL when it was closed). */
static duck_pg *pg_acquire(const char *handle)
{
    pthread_mutex_lock(&registry_lock);
    duck_pg *pg = registry;
    while (pg && strcmp(pg->handle, handle) != 0)
        pg = pg->next;
    if (pg)
        pthread_mutex_lock(&pg->lock);
    pthread_mutex_unlock(&registry_lock);
    return pg;
}

/* PQexec with the connection locked and ready. A dropped connection shows
 * only when used: outside a transaction block, a statement that changes
 * nothing when it fails that way (`harmless`: a read, a BEGIN, a cursor
 * over a read) is sent once more on a new connection. A write is not: it
 * may have committed before the connection went. */
static PGresult *pg_exec(duck_pg *pg, const char *sql, int harmless)
{
    int in_block = pg->in_block;
    PGresult *res = PQexec(pg->conn, sql);
    if (PQstatus(pg->conn) == CONNECTION_BAD && harmless && !in_block && pg_ready(pg, sql) == 0) {
        PQclear(res);
        res = PQexec(pg->conn, sql);
    }
    pg_note_block(pg);
    return res;
}

/* One round trip of `sql`: its result, or NULL with *rc set when it could
 * not be sent (pg_ready). */
static PGresult *pg_run(duck_pg *pg, const char *sql, int *rc)
{
    pthread_mutex_lock(&pg->lock);
    PGresult *res = NULL;
    *rc = pg_ready(pg, sql);
    if (!*rc)
        res = pg_exec(pg, sql, starts_with_word(sql, "SELECT") || starts_with_word(sql, "BEGIN"));
    pthread_mutex_unlock(&pg->lock);
    return res;
}

int duck_pg_exec_count(duck_pg *pg, const char *sql, int64_t *changed)
{
    int rc;
    PGresult *res = pg_run(pg, sql, &rc);
    if (rc)
        return rc;
    ExecStatusType st = PQresultStatus(res);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && st != PGRES_EMPTY_QUERY)
        rc = pg_error(pg->conn, res, "error");
    else if (changed)
        *changed = strtoll(PQcmdTuples(res), NULL, 10);
    PQclear(res);
    return rc;
}

int duck_pg_exec(duck_pg *pg, const char *sql)
{
    return duck_pg_exec_count(pg, sql, NULL);
}

int duck_pg_in_transaction(duck_pg *pg)
{
    PGTransactionStatusType st = PQtransactionStatus(pg->conn);
    return st == PQTRANS_INTRANS || st == PQTRANS_INERROR;
}

/* PostgreSQL type oids (pg_type.dat; stable across versions) */
enum {
    OID_BOOL = 16,
    OID_BYTEA = 17,
    OID_NAME = 19,
    OID_INT8 = 20,
    OID_INT2 = 21,
    OID_INT4 = 23,
    OID_TEXT = 25,
    OID_OID = 26,
    OID_FLOAT4 = 700,
    OID_FLOAT8 = 701,
    OID_BPCHAR = 1042,
    OID_VARCHAR = 1043,
    OID_DATE = 1082,
    OID_TIMESTAMP = 1114,
    OID_TIMESTAMPTZ = 1184,
    OID_UUID = 2950,
};

/* bytea's hex text (`\x0a1b…`, bytea_output = hex) into raw bytes (in place
 * is not possible with the libpq buffer: `out` has room for strlen/2). */
static size_t bytea_decode(char *out, const char *text)
{
    size_t n = 0;
    if (text[0] == '\\' && text[1] == 'x')
        for (const char *p = text + 2; p[0] && p[1]; p += 2)
            out[n++] = (char)(hex_digit_value(p[0]) * 16 + hex_digit_value(p[1]));
    return n;
}

/* DuckDB's text of a BLOB: printable ASCII as is, other bytes \xNN. */
static void blob_text(tarn_buf *b, const char *raw, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)raw[i];
        if (c >= 32 && c < 127 && c != '\\')
            buf_putc(b, (char)c);
        else
            buf_printf(b, "\\x%02X", c);
    }
}

/* days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant) */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "YYYY-MM-DD" with an optional " BC" at the very end of `text` */
static int parse_ymd(int64_t *days, const char **rest, const char *text)
{
    long long y;
    int mo, d, n = 0;
    if (sscanf(text, "%lld-%d-%d%n", &y, &mo, &d, &n) != 3 || mo < 1 || mo > 12 || d < 1 || d > 31)
        return -1;
    size_t len = strlen(text);
    if (len >= 3 && strcmp(text + len - 3, " BC") == 0)
        y = 1 - y; /* 1 BC is year 0 */
    *days = days_from_civil(y, mo, d);
    *rest = text + n;
    return 0;
}

/* PostgreSQL's "infinity" (1) and "-infinity" (-1); 0 for any other text. */
static int infinity_sign(const char *text)
{
    return strcmp(text, "infinity") == 0 ? 1 : strcmp(text, "-infinity") == 0 ? -1 : 0;
}

int duck_pg_parse_date(int32_t *days, const char *text)
{
    int inf = infinity_sign(text);
    if (inf) {
        *days = inf * INT32_MAX;
        return 0;
    }
    int64_t d;
    const char *rest;
    if (parse_ymd(&d, &rest, text))
        return -1;
    *days = (int32_t)d;
    return 0;
}

int duck_pg_parse_timestamp(int64_t *micros, const char *text)
{
    int inf = infinity_sign(text);
    if (inf) {
        *micros = inf * INT64_MAX;
        return 0;
    }
    int64_t days;
    const char *p;
    if (parse_ymd(&days, &p, text))
        return -1;
    int h = 0, mi = 0, s = 0, n = 0;
    if (sscanf(p, " %d:%d:%d%n", &h, &mi, &s, &n) != 3)
        return -1;
    p += n;
    int64_t frac = 0;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (digits < 6) {
                frac = frac * 10 + (*p - '0');
                digits++;
            }
        for (; digits < 6; digits++)
            frac *= 10;
    }
    int64_t offset = 0; /* seconds east of UTC */
    if (*p == '+' || *p == '-') {
        int sign = *p == '-' ? -1 : 1, oh = 0, om = 0, os = 0;
        sscanf(p + 1, "%d:%d:%d", &oh, &om, &os);
        offset = sign * (oh * 3600 + om * 60 + os);
    }
    *micros = ((days * 86400 + h * 3600 + mi * 60 + s) - offset) * 1000000 + frac;
    return 0;
}

int duck_pg_parse_uuid(uint64_t *upper, uint64_t *lower, const char *text)
{
    uint64_t v[2] = {0, 0};
    int nib = 0;
    for (const char *p = text; *p; p++) {
        if (*p == '-')
            continue;
        int x = hex_digit_value(*p);
        if (x < 0 || nib >= 32)
            return -1;
        v[nib / 16] = v[nib / 16] << 4 | (uint64_t)x;
        nib++;
    }
    if (nib != 32)
        return -1;
    *upper = v[0] ^ ((uint64_t)1 << 63); /* DuckDB orders UUIDs as signed hugeints */
    *lower = v[1];
    return 0;
}

/* One value of PostgreSQL's text as DuckDB's CAST(x AS VARCHAR) gives it. */
static char *value_text(Oid type, const char *v, int len)
{
    switch (type) {
    case OID_BOOL:
        return xstrdup(v[0] == 't' ? "true" : "false");
    case OID_FLOAT4:
    case OID_FLOAT8:
        if (strcmp(v, "Infinity") == 0)
            return xstrdup("inf");
        if (strcmp(v, "-Infinity") == 0)
            return xstrdup("-inf");
        if (strcmp(v, "NaN") == 0)
            return xstrdup("nan");
        break;
    case OID_BYTEA: {
        char *raw = xmalloc((size_t)len / 2 + 1);
        size_t n = bytea_decode(raw, v);
        tarn_buf b = {0};
        blob_text(&b, raw, n);
        free(raw);
        return buf_detach(&b);
    }
    default:
        break;
    }
    return xstrdup(v);
}

int duck_pg_query(duck_table *out, duck_pg *pg, const char *sql)
{
    memset(out, 0, sizeof *out);
    int rc;
    PGresult *res = pg_run(pg, sql, &rc);
    if (rc)
        return rc;
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        rc = pg_error(pg->conn, res, "error");
        PQclear(res);
        return rc;
    }
    size_t nr = (size_t)PQntuples(res), nc = (size_t)PQnfields(res);
    out->nrows = nr;
    out->ncols = nc;
    out->names = xcalloc(nc ? nc : 1, sizeof *out->names);
    out->cells = xcalloc(nr * nc + 1, sizeof *out->cells);
    for (size_t c = 0; c < nc; c++)
        out->names[c] = xstrdup(PQfname(res, (int)c));
    for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < nc; c++)
            if (!PQgetisnull(res, (int)r, (int)c))
                out->cells[r * nc + c] =
                    value_text(PQftype(res, (int)c), PQgetvalue(res, (int)r, (int)c),
                               PQgetlength(res, (int)r, (int)c));
    PQclear(res);
    return 0;
}

/* ------------------------------------------------------------------------
 * __tarn_pg_scan(handle, sql)
 */

#define FETCH_ROWS 2048

typedef struct {
    char *handle;
    char *sql;
    size_t ncols;
    Oid *types;
} scan_bind;

typedef struct {
    char *handle;
    char cursor[48];
    int open; /* the cursor is declared and not yet read to its end */
} scan_state;

static void scan_bind_free(void *p)
{
    scan_bind *b = p;
    free(b->handle);
    free(b->sql);
    free(b->types);
    free(b);
}

static duckdb_type duck_type_of(Oid t)
{
    switch (t) {
    case OID_BOOL:
        return DUCKDB_TYPE_BOOLEAN;
    case OID_INT2:
        return DUCKDB_TYPE_SMALLINT;
    case OID_INT4:
        return DUCKDB_TYPE_INTEGER;
    case OID_INT8:
    case OID_OID:
        return DUCKDB_TYPE_BIGINT;
    case OID_FLOAT4:
        return DUCKDB_TYPE_FLOAT;
    case OID_FLOAT8:
        return DUCKDB_TYPE_DOUBLE;
    case OID_BYTEA:
        return DUCKDB_TYPE_BLOB;
    case OID_UUID:
        return DUCKDB_TYPE_UUID;
    case OID_TIMESTAMPTZ:
        return DUCKDB_TYPE_TIMESTAMP_TZ;
    case OID_TIMESTAMP:
        return DUCKDB_TYPE_TIMESTAMP;
    case OID_DATE:
        return DUCKDB_TYPE_DATE;
    default:
        return DUCKDB_TYPE_VARCHAR; /* PostgreSQL's text; the SQL around casts it */
    }
}

static char *param_string(duckdb_bind_info info, idx_t i)
{
    duckdb_value v = duckdb_bind_get_parameter(info, i);
    char *s = v ? duckdb_get_varchar(v) : NULL;
    char *r = s ? xstrdup(s) : NULL;
    if (s)
        duckdb_free(s);
    if (v)
        duckdb_destroy_value(&v);
    return r;
}

/* PostgreSQL's planner estimate of the rows of `sql` (EXPLAIN plans, does not
 * run it), or -1. DuckDB orders joins and picks hash-join build sides by
 * its scans' cardinalities; without one a PostgreSQL catalog table counts
 * as one row and a lake table inlined there joins unlike the same table
 * in a DuckDB-file catalog. Called with the connection locked. */
static long long planner_rows(duck_pg *pg, const char *sql)
{
    tarn_buf q = {0};
    buf_printf(&q, "EXPLAIN %s", sql);
    PGresult *res = PQexec(pg->conn, buf_cstr(&q));
    buf_free(&q);
    long long n = -1;
    if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0) {
        const char *r = strstr(PQgetvalue(res, 0, 0), " rows=");
        if (r)
            n = strtoll(r + 6, NULL, 10);
    }
    PQclear(res);
    return n;
}

static void scan_bind_fn(duckdb_bind_info info)
{
    scan_bind *b = xcalloc(1, sizeof *b);
    b->handle = param_string(info, 0);
    b->sql = param_string(info, 1);
    if (!b->handle || !b->sql) {
        duckdb_bind_set_error(info, "__tarn_pg_scan: NULL argument");
        scan_bind_free(b);
        return;
    }
    duck_pg *pg = pg_acquire(b->handle);
    if (!pg) {
        duckdb_bind_set_error(info, "the PostgreSQL catalog connection is closed");
        scan_bind_free(b);
        return;
    }
    /* the columns of the query, described without running it */
    PGresult *res = PQprepare(pg->conn, "", b->sql, 0, NULL);
    if (PQresultStatus(res) == PGRES_COMMAND_OK) {
        PQclear(res);
        res = PQdescribePrepared(pg->conn, "");
    }
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        pg_error(pg->conn, res, "error");
        pthread_mutex_unlock(&pg->lock);
        duckdb_bind_set_error(info, tarn_error_last());
        PQclear(res);
        scan_bind_free(b);
        return;
    }
    long long rows = planner_rows(pg, b->sql);
    pthread_mutex_unlock(&pg->lock);
    if (rows >= 0)
        duckdb_bind_set_cardinality(info, (idx_t)rows, false);
    b->ncols = (size_t)PQnfields(res);
    b->types = xcalloc(b->ncols ? b->ncols : 1, sizeof *b->types);
    for (size_t c = 0; c < b->ncols; c++) {
        b->types[c] = PQftype(res, (int)c);
        duckdb_logical_type lt = duckdb_create_logical_type(duck_type_of(b->types[c]));
        duckdb_bind_add_result_column(info, PQfname(res, (int)c), lt);
        duckdb_destroy_logical_type(&lt);
    }
    PQclear(res);
    duckdb_bind_set_bind_data(info, b, scan_bind_free);
}

/* Closes the scan's cursor unless it was read to its end. A cursor of a
 * transaction that ended (or failed) is gone already: closing it there
 * would fail, and inside a later transaction block abort it. */
static void scan_close(scan_state *s, duck_pg *pg)
{
    if (!s->open)
        return;
    s->open = 0;
    if (PQtransactionStatus(pg->conn) == PQTRANS_INERROR)
        return;
    char sql[80];
    snprintf(sql, sizeof sql, "CLOSE %s", s->cursor);
    PQclear(PQexec(pg->conn, sql));
}

static void scan_state_free(void *p)
{
    scan_state *s = p;
    if (s->open) {
        duck_pg *pg = pg_acquire(s->handle);
        if (pg) {
            scan_close(s, pg);
            pthread_mutex_unlock(&pg->lock);
        }
    }
    free(s->handle);
    free(s);
}

static void scan_init_fn(duckdb_init_info info)
{
    scan_bind *b = duckdb_init_get_bind_data(info);
    scan_state *s = xcalloc(1, sizeof *s);
    s->handle = xstrdup(b->handle);
    duck_pg *pg = pg_acquire(b->handle);
    if (!pg) {
        duckdb_init_set_error(info, "the PostgreSQL catalog connection is closed");
        scan_state_free(s);
        return;
    }
    if (pg_ready(pg, b->sql) != 0) {
        pthread_mutex_unlock(&pg->lock);
        duckdb_init_set_error(info, tarn_error_last());
        scan_state_free(s);
        return;
    }
    snprintf(s->cursor, sizeof s->cursor, "__tarn_scan_%lu", ++pg->cursors);
    /* WITH HOLD: outside a transaction block the cursor outlives the
     * statement's implicit transaction */
    tarn_buf q = {0};
    buf_printf(&q, "DECLARE %s NO SCROLL CURSOR %s FOR %s", s->cursor,
               PQtransactionStatus(pg->conn) == PQTRANS_IDLE ? "WITH HOLD" : "", b->sql);
    PGresult *res = pg_exec(pg, buf_cstr(&q), 1);
    buf_free(&q);
    if (PQresultStatus(res) != PGRES_COMMAND_OK) {
        pg_error(pg->conn, res, "error");
        pthread_mutex_unlock(&pg->lock);
        duckdb_init_set_error(info, tarn_error_last());
        PQclear(res);
        scan_state_free(s);
        return;
    }
    PQclear(res);
    s->open = 1;
    pthread_mutex_unlock(&pg->lock);
    duckdb_init_set_init_data(info, s, scan_state_free);
}

/* Row r's value of column c into the output vector. 0, or -1 when the
 * text is not a value of the column's type. */
static int put_value(duckdb_vector vec, Oid type, idx_t r, const char *v, int len)
{
    void *data = duckdb_vector_get_data(vec);
    switch (type) {
    case OID_BOOL:
        ((bool *)data)[r] = v[0] == 't';
        return 0;
    case OID_INT2:
        ((int16_t *)data)[r] = (int16_t)strtol(v, NULL, 10);
        return 0;
    case OID_INT4:
        ((int32_t *)data)[r] = (int32_t)strtol(v, NULL, 10);
        return 0;
    case OID_INT8:
    case OID_OID:
        ((int64_t *)data)[r] = strtoll(v, NULL, 10);
        return 0;
    case OID_FLOAT4:
        ((float *)data)[r] = strtof(v, NULL); /* strtof reads NaN, Infinity */
        return 0;
    case OID_FLOAT8:
        ((double *)data)[r] = strtod(v, NULL);
        return 0;
    case OID_BYTEA: {
        char *raw = xmalloc((size_t)len / 2 + 1);
        size_t n = bytea_decode(raw, v);
        duckdb_vector_assign_string_element_len(vec, r, raw, n);
        free(raw);
        return 0;
    }
    case OID_UUID: {
        uint64_t hi, lo;
        if (duck_pg_parse_uuid(&hi, &lo, v))
            return -1;
        ((duckdb_hugeint *)data)[r] = (duckdb_hugeint){.lower = lo, .upper = (int64_t)hi};
        return 0;
    }
    case OID_TIMESTAMPTZ:
    case OID_TIMESTAMP: {
        int64_t us;
        if (duck_pg_parse_timestamp(&us, v))
            return -1;
        ((int64_t *)data)[r] = us;
        return 0;
    }
    case OID_DATE: {
        int32_t d;
        if (duck_pg_parse_date(&d, v))
            return -1;
        ((int32_t *)data)[r] = d;
        return 0;
    }
    default:
        duckdb_vector_assign_string_element_len(vec, r, v, (idx_t)len);
        return 0;
    }
}

static void scan_fn(duckdb_function_info info, duckdb_data_chunk output)
{
    scan_bind *b = duckdb_function_get_bind_data(info);
    scan_state *s = duckdb_function_get_init_data(info);
    duckdb_data_chunk_set_size(output, 0);
    if (!s->open)
        return;
    duck_pg *pg = pg_acquire(s->handle);
    if (!pg) {
        duckdb_function_set_error(info, "the PostgreSQL catalog connection is closed");
        return;
    }
    char sql[96];
    snprintf(sql, sizeof sql, "FETCH FORWARD %d FROM %s", FETCH_ROWS, s->cursor);
    PGresult *res = PQexec(pg->conn, sql);
    if (PQresultStatus(res) != PGRES_TUPLES_OK) {
        pg_error(pg->conn, res, "error");
        s->open = 0;
        pthread_mutex_unlock(&pg->lock);
        duckdb_function_set_error(info, tarn_error_last());
        PQclear(res);
        return;
    }
    int nr = PQntuples(res);
    if (nr < FETCH_ROWS)
        scan_close(s, pg);
    pthread_mutex_unlock(&pg->lock);
    for (size_t c = 0; c < b->ncols; c++) {
        duckdb_vector vec = duckdb_data_chunk_get_vector(output, c);
        uint64_t *valid = NULL;
        for (int r = 0; r < nr; r++) {
            if (PQgetisnull(res, r, (int)c)) {
                if (!valid) {
                    duckdb_vector_ensure_validity_writable(vec);
                    valid = duckdb_vector_get_validity(vec);
                }
                duckdb_validity_set_row_invalid(valid, (idx_t)r);
            } else if (put_value(vec, b->types[c], (idx_t)r, PQgetvalue(res, r, (int)c),
                                 PQgetlength(res, r, (int)c))) {
                char msg[160];
                snprintf(msg, sizeof msg, "PostgreSQL value '%.60s' of column %s is not readable",
                         PQgetvalue(res, r, (int)c), PQfname(res, (int)c));
                duckdb_function_set_error(info, msg);
                PQclear(res);
                return;
            }
        }
    }
    duckdb_data_chunk_set_size(output, (idx_t)nr);
    PQclear(res);
}

int duck_pg_register(duckdb_connection con)
{
    return duck_table_function_register(con, "__tarn_pg_scan", 2, scan_bind_fn, scan_init_fn,
                                        scan_fn);
}

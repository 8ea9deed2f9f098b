/*
 * pgscan.h — PostgreSQL through libpq, for the PostgreSQL catalog backend
 * (lake/catdb_pg.c): a connection, statements, results read as text the
 * way duck.h reads DuckDB's, and the DuckDB table function
 *
 *   __tarn_pg_scan(handle VARCHAR, sql VARCHAR)
 *
 * which streams the rows of a PostgreSQL query into DuckDB with typed
 * columns, so that SQL run in DuckDB (a view over the catalog's tables,
 * a statement joining them with TEMP tables) reads PostgreSQL's rows.
 * DuckDB's own postgres extension cannot be installed on these machines.
 *
 * The handle names a connection opened here (duck_pg_handle); the scan
 * runs on that connection, so it sees the rows of the transaction open
 * on it. It reads through a cursor, 2,048 rows per round trip (one
 * DuckDB vector). A connection serializes its round trips (one mutex),
 * so DuckDB's threads may scan it while the session waits on DuckDB.
 *
 * Column types: int2/int4/int8/oid, bool, float4/float8, text/varchar/
 * bpchar/name, bytea, uuid, timestamptz, timestamp and date become the
 * DuckDB types of the same values; any other type arrives as VARCHAR
 * (PostgreSQL's text of it) for the SQL around the scan to cast.
 *
 * Every connection is set to TimeZone UTC and DateStyle ISO, so a
 * timestamptz's text is the one DuckDB gives (in UTC).
 */
#ifndef TARN_DUCK_PGSCAN_H
#define TARN_DUCK_PGSCAN_H

#include "duck/duck.h"

#include <duckdb.h>
#include <stdint.h>

typedef struct duck_pg duck_pg;

/* Connects with libpq's `conninfo` (keywords or a postgres:// URI). */
int duck_pg_connect(duck_pg **out, const char *conninfo);
/* Closes the connection (NULL: nothing); scans of it fail from then on. */
void duck_pg_close(duck_pg *pg);
/* The name __tarn_pg_scan takes for this connection ("pg1", …). */
const char *duck_pg_handle(const duck_pg *pg);

/* Runs one statement or several (`;`-separated, PostgreSQL's simple
 * protocol: outside a BEGIN they are one implicit transaction). *changed
 * (optional) gets the rows the last one changed. */
int duck_pg_exec(duck_pg *pg, const char *sql);
int duck_pg_exec_count(duck_pg *pg, const char *sql, int64_t *changed);
/* Reads every row of a query as text, each value as DuckDB's
 * CAST(x AS VARCHAR) gives it (booleans true/false, bytea as DuckDB's
 * BLOB text, infinities inf/-inf/nan). */
int duck_pg_query(duck_table *out, duck_pg *pg, const char *sql);
/* Whether the connection is inside a transaction block (BEGIN). */
int duck_pg_in_transaction(duck_pg *pg);

/* Registers __tarn_pg_scan in con's database (once; later calls do
 * nothing). */
int duck_pg_register(duckdb_connection con);

/* PostgreSQL's text of a value (DateStyle ISO, TimeZone UTC) as DuckDB's
 * value: microseconds since 1970-01-01 (timestamp and timestamptz,
 * `infinity` as DuckDB's infinity), days since 1970-01-01 (date), the
 * UUID as DuckDB stores it (top bit flipped). 0 on success. */
int duck_pg_parse_timestamp(int64_t *micros, const char *text);
int duck_pg_parse_date(int32_t *days, const char *text);
int duck_pg_parse_uuid(uint64_t *upper, uint64_t *lower, const char *text);

#endif

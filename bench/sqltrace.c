/*
 * sqltrace.c — an LD_PRELOAD shim that logs every duckdb_query() a process
 * makes, with its wall time, to see which SQL tarn runs for a statement.
 *
 *   cc -O2 -shared -fPIC -isystem deps/include bench/sqltrace.c -o bench/out/sqltrace.so -ldl
 *   TARN_SQLTRACE=/tmp/trace.txt LD_PRELOAD=$PWD/bench/out/sqltrace.so build/tarn sql -c '…'
 *
 * Each line of the log: `<milliseconds>\t<state>\t<SQL, newlines as spaces,
 * cut at TARN_SQLTRACE_MAX characters (default 400)>`; state is ok or ERR,
 * with "/w" added for a query made by another thread than the first one
 * traced (tarn run -j: a worker's), whose time overlaps the main thread's. Not used by
 * lake_bench.sh itself; it is the tool for finding where time goes.
 */
#define _GNU_SOURCE
#include <duckdb.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef duckdb_state (*query_fn)(duckdb_connection, const char *, duckdb_result *);

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

duckdb_state duckdb_query(duckdb_connection con, const char *sql, duckdb_result *res)
{
    static query_fn real;
    static pthread_t first;
    static FILE *log;
    static long max = 400;
    if (!real) {
        real = (query_fn)dlsym(RTLD_NEXT, "duckdb_query");
        first = pthread_self();
        const char *path = getenv("TARN_SQLTRACE");
        log = path ? fopen(path, "a") : stderr;
        const char *m = getenv("TARN_SQLTRACE_MAX");
        if (m)
            max = atol(m);
    }
    double t0 = now_ms();
    duckdb_state st = real(con, sql, res);
    double t1 = now_ms();
    if (log) {
        flockfile(log);
        fprintf(log, "%.3f\t%s%s\t", t1 - t0, st == DuckDBSuccess ? "ok" : "ERR",
                pthread_equal(first, pthread_self()) ? "" : "/w");
        long i = 0;
        for (const char *p = sql; *p && i < max; p++, i++)
            fputc(*p == '\n' || *p == '\t' ? ' ' : *p, log);
        if (sql[i])
            fputs(" …", log);
        fputc('\n', log);
        fflush(log);
        funlockfile(log);
    }
    return st;
}

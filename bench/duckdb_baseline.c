/*
 * duckdb_baseline.c — a pure-DuckDB reference process for bench/lake_bench.sh.
 *
 *   duckdb_baseline SQL [SQL...]
 *
 * Opens an in-memory DuckDB database with the same configuration tarn uses
 * (extension autoload/autoinstall off, everything else default), runs each
 * argument as one statement and prints, for each, `elapsed_s=<wall seconds>`
 * (CLOCK_MONOTONIC around duckdb_query, result destroyed inside the interval),
 * then `maxrss_kb=<peak RSS of this process>` from getrusage. Exit status 1
 * if a statement fails (its error goes to stderr). With DUCKDB_BASELINE_PRINT=1
 * the rows of each result are printed too (tab-separated), e.g. for EXPLAIN.
 */
#define _POSIX_C_SOURCE 200809L

#include <duckdb.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s SQL [SQL...]\n", argv[0]);
        return 2;
    }
    duckdb_config cfg;
    duckdb_database db;
    duckdb_connection con;
    char *err = NULL;
    if (duckdb_create_config(&cfg) == DuckDBError)
        return 1;
    duckdb_set_config(cfg, "autoinstall_known_extensions", "false");
    duckdb_set_config(cfg, "autoload_known_extensions", "false");
    if (duckdb_open_ext(NULL, &db, cfg, &err) == DuckDBError) {
        fprintf(stderr, "open: %s\n", err ? err : "?");
        duckdb_free(err);
        duckdb_destroy_config(&cfg);
        return 1;
    }
    duckdb_destroy_config(&cfg);
    if (duckdb_connect(db, &con) == DuckDBError) {
        duckdb_close(&db);
        return 1;
    }
    const char *pr = getenv("DUCKDB_BASELINE_PRINT");
    int print = pr && *pr == '1';
    int rc = 0;
    for (int i = 1; i < argc && !rc; i++) {
        duckdb_result res;
        double t0 = now_s();
        duckdb_state st = duckdb_query(con, argv[i], &res);
        if (st == DuckDBError) {
            fprintf(stderr, "error: %s\n", duckdb_result_error(&res));
            rc = 1;
        }
        for (idx_t r = 0; print && !rc && r < duckdb_row_count(&res); r++) {
            for (idx_t c = 0; c < duckdb_column_count(&res); c++) {
                char *v = duckdb_value_varchar(&res, c, r);
                printf("%s%s", c ? "\t" : "", v ? v : "NULL");
                duckdb_free(v);
            }
            putchar('\n');
        }
        duckdb_destroy_result(&res);
        double t1 = now_s();
        if (!rc)
            printf("elapsed_s=%.6f\n", t1 - t0);
    }
    duckdb_disconnect(&con);
    duckdb_close(&db);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("maxrss_kb=%ld\n", ru.ru_maxrss);
    return rc;
}

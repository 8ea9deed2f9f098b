/*
 * cmd_init.c — `tarn init [DIR]`: scaffolds a project that runs as is:
 * a lake in the project folder, one CSV source, a staging model and a
 * daily mart. `tarn run` in it builds two tables on the first try.
 */
#include "cli/cli.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char cmd_init_usage[] =
    "usage: tarn init [DIR]\n"
    "\n"
    "Creates a tarn project in DIR (default: the current folder), which must\n"
    "not hold one already:\n"
    "\n"
    "  config/catalog.sql    attaches the lake (lake.ducklake, data in lake/)\n"
    "  config/sources.sql    raw.orders, a view over data/orders.csv\n"
    "  data/orders.csv       a few sample rows\n"
    "  models/staging/stg_orders.sql, models/marts/orders_daily.sql\n"
    "  tests/                for custom data tests\n"
    "  .env, .gitignore\n"
    "\n"
    "Then: cd DIR && tarn run && tarn show marts.orders_daily\n";

typedef struct {
    const char *path;
    const char *text;
} init_file;

static const init_file files[] = {
    {"config/catalog.sql",
     "-- The lake this project builds into. Relative paths are relative to the\n"
     "-- project folder. tarn runs every file in config/ before building.\n"
     "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');\n"},
    {"config/sources.sql",
     "-- Raw inputs, as DuckDB views. Models read them by name (raw.orders).\n"
     "CREATE SCHEMA IF NOT EXISTS raw;\n"
     "CREATE OR REPLACE VIEW raw.orders AS\n"
     "    FROM read_csv('data/orders.csv', header = true,\n"
     "                  columns = {'order_id': 'INTEGER', 'customer': 'VARCHAR',\n"
     "                             'amount': 'DECIMAL(10,2)', 'ordered_at': 'TIMESTAMP'});\n"},
    {"data/orders.csv", "order_id,customer,amount,ordered_at\n"
                        "1,alice,12.50,2024-05-01 09:15:00\n"
                        "2,bob,7.00,2024-05-01 11:40:00\n"
                        "3,alice,3.25,2024-05-02 14:05:00\n"
                        "4,carol,20.00,2024-05-02 18:30:00\n"
                        "5,bob,5.75,2024-05-03 08:00:00\n"},
    {"models/staging/stg_orders.sql",
     "-- Orders with clean names. No annotation: the table staging.stg_orders is\n"
     "-- replaced by this SELECT's rows on every run where something it depends\n"
     "-- on changed (its SQL, config/, data/orders.csv).\n"
     "SELECT order_id, lower(customer) AS customer, amount, ordered_at\n"
     "FROM raw.orders\n"
     "WHERE amount > 0\n"},
    {"models/marts/orders_daily.sql",
     "-- One row per day, merged by day: days in the SELECT are replaced, others kept.\n"
     "-- materialize key=order_date\n"
     "-- tags daily\n"
     "SELECT CAST(ordered_at AS DATE) AS order_date,\n"
     "       count(*) AS orders,\n"
     "       sum(amount) AS revenue\n"
     "FROM staging.stg_orders\n"
     "GROUP BY ALL\n"
     "ORDER BY order_date\n"},
    {"tests/README.md", "Custom data tests: one SELECT of violating rows per .sql file.\n"},
    {".env", "# Variables for ${NAME} in config/ files (the environment wins).\n"},
    {".gitignore", "/lake/\n/lake.ducklake\n/lake.ducklake.wal\n"},
};

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int cmd_init(int argc, char **argv)
{
    const char *dir = ".";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(cmd_init_usage, stdout);
            return CLI_OK;
        }
        if (argv[i][0] == '-' && argv[i][1]) {
            cli_errorf("unknown option '%s'", argv[i]);
            fputs("Try 'tarn init --help'.\n", stderr);
            return CLI_USAGE;
        }
        if (i > 1) {
            cli_errorf("give one DIR");
            return CLI_USAGE;
        }
        dir = argv[i];
    }
    size_t n = sizeof(files) / sizeof(files[0]);
    /* Refuse before writing anything: never half-overwrite a project. */
    for (size_t i = 0; i < n; i++) {
        char *p = xasprintf("%s/%s", dir, files[i].path);
        int e = exists(p);
        free(p);
        if (e) {
            cli_errorf("%s/%s already exists: tarn init only creates new projects", dir,
                       files[i].path);
            return CLI_USAGE;
        }
    }
    for (size_t i = 0; i < n; i++) {
        char *p = xasprintf("%s/%s", dir, files[i].path);
        char *slash = strrchr(p, '/');
        *slash = 0;
        int rc = fs_mkdir_p(p);
        *slash = '/';
        FILE *f = rc == 0 ? fopen(p, "wx") : NULL;
        if (!f || fputs(files[i].text, f) < 0 || fclose(f) != 0) {
            if (rc)
                cli_errorf("%s", tarn_error_last());
            else
                cli_errorf("cannot write %s: %s", p, strerror(errno));
            free(p);
            return CLI_FAILED;
        }
        free(p);
    }
    fprintf(stderr,
            "tarn: created a project in %s\n"
            "  next: cd %s && tarn run && tarn show marts.orders_daily\n",
            dir, dir);
    return CLI_OK;
}

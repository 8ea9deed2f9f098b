/*
 * cli.h — what the pieces of the `tarn` program share: the exit codes of
 * design §6, the version string, and the entry point of every command.
 *
 * Each command lives in its own src/cli/cmd_<name>.c and exposes one
 * `int cmd_<name>(int argc, char **argv)` (argv[0] is the command name,
 * as if it were its own program). main.c lists them in a table; adding a
 * command is one prototype here and one row there.
 */
#ifndef TARN_CLI_H
#define TARN_CLI_H

#include "tarn/version.h"

/* Exit codes (design §6): success, a statement/model/test failed, usage or
 * project error. */
enum {
    CLI_OK = 0,
    CLI_FAILED = 1,
    CLI_USAGE = 2,
};

int cmd_sql(int argc, char **argv);
extern const char cmd_sql_usage[];
int cmd_maintain(int argc, char **argv);
extern const char cmd_maintain_usage[];
/* `tarn maintain expire` of the project's lake (cmd_expire.c) */
int cmd_maintain_expire_project(int argc, char **argv);
int cmd_pin(int argc, char **argv);
extern const char cmd_pin_usage[];
int cmd_runs(int argc, char **argv);
extern const char cmd_runs_usage[];
int cmd_scheduler(int argc, char **argv);
extern const char cmd_scheduler_usage[];
int cmd_schedule(int argc, char **argv);
extern const char cmd_schedule_usage[];
int cmd_backfill(int argc, char **argv);
extern const char cmd_backfill_usage[];
int cmd_partitions(int argc, char **argv);
extern const char cmd_partitions_usage[];
int cmd_test(int argc, char **argv);
extern const char cmd_test_usage[];
int cmd_worker(int argc, char **argv);
extern const char cmd_worker_usage[];
int cmd_workers(int argc, char **argv);
extern const char cmd_workers_usage[];
int cmd_serve(int argc, char **argv);
extern const char cmd_serve_usage[];
int cmd_lake(int argc, char **argv);
extern const char cmd_lake_usage[];

/* Prints "tarn: <message>\n" on stderr, flushing stdout first so that the
 * two streams interleave in order when they share a terminal or file. */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints one --json event: object `o` (whose reference it takes) with its
 * "schema_version" set, on one line of stdout, flushed at once so a reader
 * follows the run as it goes. */
struct json_t;
void cli_json_event(struct json_t *o, int schema_version);

/* The project commands (issue 4): each in its cmd_<name>.c. */
int cmd_init(int argc, char **argv);
extern const char cmd_init_usage[];
int cmd_run(int argc, char **argv);
extern const char cmd_run_usage[];
int cmd_plan(int argc, char **argv);
extern const char cmd_plan_usage[];
int cmd_history(int argc, char **argv);
extern const char cmd_history_usage[];
int cmd_show(int argc, char **argv);
extern const char cmd_show_usage[];
int cmd_lineage(int argc, char **argv);
int cmd_compile(int argc, char **argv);
extern const char cmd_compile_usage[];
extern const char cmd_lineage_usage[];

#endif

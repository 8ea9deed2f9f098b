/*
 * main.c — the `tarn` program's entry point: picks the command named by
 * argv[1] from a table and hands it the rest of the arguments.
 *
 * The table is the single list of commands: usage text, `tarn help CMD`
 * and dispatch all come from it, so a new command (run, plan, history,
 * show, lineage, maintain, init, …) is a cmd_<name>.c file plus one row.
 */
#include "cli/cli.h"
#include "tarn/session.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary; /* one line for `tarn help` */
    const char *usage;   /* full text for `tarn help NAME`; may be NULL */
} cli_command;

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const cli_command commands[] = {
    {"init", cmd_init, "create a project that runs as is", cmd_init_usage},
    {"run", cmd_run, "build the project's models into the lake", cmd_run_usage},
    {"plan", cmd_plan, "what `tarn run` would build, without running it", cmd_plan_usage},
    {"compile", cmd_compile,
     "the SQL tarn would run to build a model: reads pinned, strategy's statements",
     cmd_compile_usage},
    {"history", cmd_history, "model builds, newest first", cmd_history_usage},
    {"show", cmd_show, "rows of a model's table, now or at a snapshot", cmd_show_usage},
    {"lineage", cmd_lineage, "the model graph as text, dot or json", cmd_lineage_usage},
    {"sql", cmd_sql, "run DuckDB SQL (REPL when interactive)", cmd_sql_usage},
    {"maintain", cmd_maintain, "expire snapshots, clean up files, compact, flush inlined rows",
     cmd_maintain_usage},
    {"backfill", cmd_backfill, "build a partitioned model's slices over a range, resumably",
     cmd_backfill_usage},
    {"partitions", cmd_partitions, "each slice of a partitioned model: state, rows, snapshot",
     cmd_partitions_usage},
    {"pin", cmd_pin, "keep a snapshot from expiry (a model's last good build, or by id)",
     cmd_pin_usage},
    {"test", cmd_test, "run the data tests on what is published, building nothing", cmd_test_usage},
    {"runs", cmd_runs, "the runs, newest first; `runs show ID`: one run's models", cmd_runs_usage},
    {"scheduler", cmd_scheduler, "build the scheduled models when they are due, tick after tick",
     cmd_scheduler_usage},
    {"schedule", cmd_schedule, "each scheduled model's rule, next occurrence and last fire",
     cmd_schedule_usage},
    {"worker", cmd_worker, "build the models of runs submitted with `tarn run --on-workers`",
     cmd_worker_usage},
    {"workers", cmd_workers, "the live workers: what each builds, its last heartbeat",
     cmd_workers_usage},
    {"serve", cmd_serve, "the web view: graph, runs, every model's history", cmd_serve_usage},
    {"lake", cmd_lake, "upgrade an older DuckLake catalog (0.1 to 0.4) to 1.0", cmd_lake_usage},
    {"version", cmd_version, "print the version", NULL},
    {"help", cmd_help, "show this help, or `tarn help COMMAND`", NULL},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

void cli_json_event(json_t *o, int schema_version)
{
    json_object_set_new(o, "schema_version", json_integer(schema_version));
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
    if (text) {
        puts(text);
        fflush(stdout);
        free(text);
    }
    json_decref(o);
}

void cli_errorf(const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fputs("tarn: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static const cli_command *command_find(const char *name)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

static void usage_print(FILE *f)
{
    fputs("usage: tarn COMMAND [ARGS...]\n\ncommands:\n", f);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fputs("\noptions:\n  --version  same as `tarn version`\n"
          "  --help     same as `tarn help`\n",
          f);
}

static int cmd_version(int argc, char **argv)
{
    puts("tarn " TARN_VERSION);
    return CLI_OK;
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        usage_print(stdout);
        return CLI_OK;
    }
    const cli_command *c = command_find(argv[1]);
    if (!c) {
        cli_errorf("unknown command '%s'", argv[1]);
        usage_print(stderr);
        return CLI_USAGE;
    }
    if (c->usage)
        fputs(c->usage, stdout);
    else
        printf("usage: tarn %s\n  %s\n", c->name, c->summary);
    return CLI_OK;
}

/* Global flags are spelled like commands so that they share the table. */
static const char *command_alias(const char *arg)
{
    if (strcmp(arg, "--version") == 0 || strcmp(arg, "-V") == 0)
        return "version";
    if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0)
        return "help";
    return arg;
}

/* `tarn -C DIR CMD …` and `tarn --target T CMD …`, as git's -C: options
 * before the command, for every command. Returns how many arguments they
 * took, or -1 (reported). */
static int global_options(int argc, char **argv)
{
    int i = 1;
    while (i < argc) {
        const char *a = argv[i];
        int dir = strcmp(a, "-C") == 0 || strcmp(a, "--project") == 0;
        int target = strcmp(a, "-t") == 0 || strcmp(a, "--target") == 0;
        if (!dir && !target)
            break;
        if (i + 1 >= argc) {
            cli_errorf("option %s needs a value", a);
            return -1;
        }
        if (dir && chdir(argv[i + 1]) != 0) {
            cli_errorf("cannot use project folder %s: %s", argv[i + 1], strerror(errno));
            return -1;
        }
        if (target)
            setenv("TARN_TARGET", argv[i + 1], 1);
        i += 2;
    }
    return i - 1;
}

static int run(int argc, char **argv)
{
    int g = global_options(argc, argv);
    if (g < 0)
        return CLI_USAGE;
    argc -= g;
    argv += g;
    if (argc < 2) {
        usage_print(stderr);
        return CLI_USAGE;
    }
    const cli_command *c = command_find(command_alias(argv[1]));
    if (!c) {
        cli_errorf("unknown command '%s'", argv[1]);
        usage_print(stderr);
        return CLI_USAGE;
    }
    int rc = c->run(argc - 1, argv + 1);
    /* A full disk or closed pipe shows up only when stdout is flushed;
     * report it rather than exit 0 with output lost. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_errorf("error writing standard output");
        return rc ? rc : CLI_FAILED;
    }
    return rc;
}

int main(int argc, char **argv)
{
    int rc = run(argc, argv);
    tarn_process_end();
    return rc;
}

/*
 * cmd_lake.c — `tarn lake`: commands on a lake's catalog file itself.
 *
 *   upgrade PATH [--dry-run | --confirm]
 *       migrate a catalog written by an older DuckLake (0.1 … 0.4) to the
 *       1.0 format tarn reads and writes (tarn/upgrade.h).
 *
 * The catalog file is read directly, not opened as a lake: the lake layer
 * refuses every version but 1.0, which is the point of this command.
 * Because the upgrade is one-way (the DuckDB/DuckLake that
 * wrote the lake cannot open it afterwards), it only happens with
 * --confirm; without it the steps are shown and nothing changes.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"

#include "tarn/error.h"
#include "tarn/upgrade.h"
#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char cmd_lake_usage[] =
    "usage: tarn lake upgrade [PATH] [--dry-run | --confirm] [-C DIR] [--target NAME]\n"
    "\n"
    "  upgrade   migrate the DuckLake catalog file PATH (or 'ducklake:PATH'), written\n"
    "            by DuckLake 0.1, 0.2, 0.3 or 0.4, to DuckLake 1.0, in one\n"
    "            transaction. The change is one-way: the DuckDB version that\n"
    "            wrote the lake cannot open it afterwards.\n"
    "\n"
    "            Without PATH: the lake of the project tarn runs in.\n"
    "\n"
    "  --dry-run   show the steps (run, then rolled back), change nothing\n"
    "  --confirm   do the upgrade; without it (or --dry-run) nothing is changed\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit status: 0 done (or already 1.0), 1 failed, 2 usage error or not confirmed.\n";

typedef struct {
    cli_common common; /* -C, --target: the project whose lake it is */
    const char *action, *path;
    char *project_path; /* the project's lake, when no PATH is given */
    int dry_run, confirm;
} lake_opts;

/* Returns 1 for --help, 0 when fine, -1 on a usage error (reported). */
static int parse(lake_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        int c = cli_opt_common(argc, argv, &i, &o->common, 0);
        if (c < 0)
            return -1;
        if (c > 0) {
            continue;
        } else if (strcmp(a, "--dry-run") == 0) {
            o->dry_run = 1;
        } else if (strcmp(a, "--confirm") == 0) {
            o->confirm = 1;
        } else if (a[0] != '-' && !o->action) {
            o->action = a;
        } else if (a[0] != '-' && !o->path) {
            o->path = a;
        } else {
            cli_errorf(a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
            return -1;
        }
    }
    if (!o->action || strcmp(o->action, "upgrade") != 0) {
        cli_errorf(o->action ? "unknown action '%s'" : "an action is needed%s",
                   o->action ? o->action : "");
        return -1;
    }
    if (o->dry_run && o->confirm) {
        cli_errorf("--dry-run and --confirm exclude each other");
        return -1;
    }
    if (o->path && strncmp(o->path, "ducklake:", 9) == 0)
        o->path += 9;
    return 0;
}

static void print_steps(const char *report)
{
    for (const char *p = report; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        printf("  %.*s\n", (int)n, p);
        p += n + (nl != NULL);
    }
}

/* Runs the upgrade (or its dry run) and prints the steps and the outcome. */
static int upgrade(const lake_opts *o, const char *version)
{
    char *steps = NULL;
    /* The steps are shown in every case, from a rolled-back run, so that
     * even a refused upgrade tells what it would change. */
    int real = o->confirm;
    if (tarn_upgrade_run(&steps, o->path, version, real) != 0) {
        cli_errorf("%s", tarn_error_last());
        return CLI_FAILED;
    }
    printf("%s:\n", real ? "steps done" : "steps");
    print_steps(steps ? steps : "");
    free(steps);
    if (o->dry_run) {
        puts("dry run: nothing was changed");
        return CLI_OK;
    }
    if (!real) {
        cli_errorf("not upgraded: the upgrade to DuckLake 1.0 is one-way (the DuckDB/DuckLake "
                   "version that wrote this %s lake cannot open it afterwards); run again with "
                   "--confirm to upgrade, or --dry-run to only see the steps",
                   version);
        return CLI_USAGE;
    }
    char *now = NULL;
    if (tarn_upgrade_version(&now, o->path) != 0) {
        cli_errorf("%s", tarn_error_last());
        return CLI_FAILED;
    }
    printf("upgraded \"%s\" to DuckLake %s\n", o->path, now);
    free(now);
    return CLI_OK;
}

static int run_upgrade(const lake_opts *o)
{
    struct stat st;
    if (stat(o->path, &st) != 0) {
        /* ATTACH would create an empty database there */
        cli_errorf("no lake catalog at '%s'", o->path);
        return CLI_FAILED;
    }
    char *version = NULL;
    int rc = CLI_FAILED;
    if (tarn_upgrade_version(&version, o->path) != 0) {
        cli_errorf("%s", tarn_error_last());
    } else {
        printf("\"%s\" is a DuckLake %s catalog\n", o->path, version);
        if (strcmp(version, "1.0") == 0) {
            puts("already 1.0: nothing to do");
            rc = CLI_OK;
        } else {
            rc = upgrade(o, version);
        }
    }
    free(version);
    return rc;
}

/* o->path from the project tarn runs in (its config/ ATTACH). */
static int project_lake_path(lake_opts *o)
{
    if (cli_project_chdir(o->common.dir) != CLI_OK)
        return CLI_USAGE;
    if (!cli_in_project()) {
        cli_errorf("upgrade needs the catalog file: tarn lake upgrade PATH (or run it inside a "
                   "project)");
        return CLI_USAGE;
    }
    cli_project cp;
    int rc = cli_project_open_common(&cp, &o->common);
    if (rc != CLI_OK)
        return rc;
    const char *path = cp.p->lake_path;
    o->project_path = xstrdup(strncmp(path, "ducklake:", 9) == 0 ? path + 9 : path);
    o->path = o->project_path;
    cli_project_close(&cp);
    return CLI_OK;
}

int cmd_lake(int argc, char **argv)
{
    lake_opts o = {0};
    int p = parse(&o, argc, argv);
    if (p != 0) {
        fputs(cmd_lake_usage, p > 0 ? stdout : stderr);
        cli_common_free(&o.common);
        return p > 0 ? CLI_OK : CLI_USAGE;
    }
    if (!o.path) {
        int rc = project_lake_path(&o);
        cli_common_free(&o.common);
        if (rc != CLI_OK)
            return rc;
    }
    cli_common_free(&o.common);
    int rc = run_upgrade(&o);
    free(o.project_path);
    return rc;
}

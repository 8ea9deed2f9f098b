/*
 * cmd_serve.c — `tarn serve`: the web view of the project (web/web.h) on
 * localhost, read-only by default: every request opens the lake's catalog
 * read-only for its own length, so `tarn run` works in a terminal beside
 * it. --allow-runs adds the page's "run now" (POST /api/runs starts `tarn
 * run`); --schedule also runs `tarn scheduler` beside the server, stopped
 * with it, so one command serves the view and builds on schedule.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"

#include "tarn/error.h"
#include "web/web.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char cmd_serve_usage[] =
    "usage: tarn serve [-C DIR] [--port 8080] [--host 127.0.0.1] [--allow-runs] [--schedule]\n"
    "                  [--allow-host NAME,…]\n"
    "\n"
    "Serves the web view of the project: the model graph coloured by each model's last build,\n"
    "the runs and each run's builds (data tests with samples of their failing rows), and\n"
    "every model's history: its snapshots, its rows and schema at any version with the\n"
    "AT (VERSION => n) clause that reads them, and what changed between two versions. The\n"
    "data is also served as JSON under /api/ (see the README). The lake is opened read-only\n"
    "for each request, so `tarn run` works while it serves; while a build holds the lake\n"
    "the page says it is busy and retries.\n"
    "\n"
    "  -C, --project DIR   the project folder (default: the current one)\n"
    "  --port N            the port (default 8080; 0 picks a free one)\n"
    "  --host ADDR         the address to listen on (default 127.0.0.1, this machine only)\n"
    "  --allow-runs        the page gets a \"run now\" button (POST /api/runs starts tarn run)\n"
    "  --schedule          also run `tarn scheduler`, which builds scheduled models when due\n"
    "  --allow-host NAMES  host names the page may be opened under besides localhost and IP\n"
    "                      addresses (comma-separated): requests naming another host are\n"
    "                      refused, so that no other site's page can reach the lake\n"
    "                      through a name of its own that resolves here (DNS rebinding)\n"
    "\n"
    "Ctrl-C or SIGTERM stops it.\n";

typedef struct {
    const char *dir, *host, *allowed_hosts;
    long port;
    int allow_runs, schedule;
} serve_opts;

static int parse(serve_opts *o, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, cmd_serve_usage))
            return 1;
        if (strcmp(a, "--allow-runs") == 0) {
            o->allow_runs = 1;
        } else if (strcmp(a, "--schedule") == 0) {
            o->schedule = 1;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--port", &val)) != 0) {
            char *end = NULL;
            errno = 0;
            o->port = m > 0 ? strtol(val, &end, 10) : -1;
            if (m < 0 || errno || *end || o->port < 0 || o->port > 65535) {
                if (m > 0)
                    cli_errorf("--port takes a port number (0 to 65535), not '%s'", val);
                return -1;
            }
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--host", &val)) != 0) {
            if (m < 0)
                return -1;
            o->host = val;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--allow-host", &val)) != 0) {
            if (m < 0)
                return -1;
            o->allowed_hosts = val;
        } else if ((m = cli_opt_value(argc, argv, &i, "-C", "--project", &val)) != 0) {
            if (m < 0)
                return -1;
            o->dir = val;
        } else {
            cli_errorf(a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
            return -1;
        }
    }
    return 0;
}

/* `tarn scheduler` in the project folder, as a child; its pid, or -1. */
static pid_t start_scheduler(const char *exe)
{
    pid_t pid = fork();
    if (pid == 0) {
        /* serve blocks SIGINT/SIGTERM to sigwait for them; the mask
         * survives exec, and the scheduler must get them */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execl(exe, "tarn", "scheduler", (char *)NULL);
        _exit(127);
    }
    return pid;
}

int cmd_serve(int argc, char **argv)
{
    serve_opts o = {.host = "127.0.0.1", .port = 8080};
    int p = parse(&o, argc, argv);
    if (p != 0) {
        return cli_parse_result(p, "serve");
    }
    /* Loading the project once up front reports a broken project or a
     * missing folder before serving; each request loads it again. */
    cli_project cp;
    int status = cli_project_open(&cp, o.dir);
    if (status != CLI_OK)
        return status;
    char *alias = strdup(cp.p->lake_alias);
    size_t nmodels = cp.p->nmodels;
    cli_project_close(&cp);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = '\0';
    /* The server's thread inherits the blocked signals; this thread waits
     * for them. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    web_opts wo = {.host = o.host,
                   .port = (int)o.port,
                   .allow_runs = o.allow_runs,
                   .tarn_exe = exe,
                   .allowed_hosts = o.allowed_hosts};
    web_server *w = NULL;
    if (web_server_start(&w, &wo) != 0) {
        cli_report(tarn_error_last());
        free(alias);
        return CLI_USAGE;
    }
    int v6 = strchr(o.host, ':') != NULL;
    printf("tarn: serving %zu models of lake \"%s\" on http://%s%s%s:%d/ (%s; Ctrl-C stops)\n",
           nmodels, alias, v6 ? "[" : "", o.host, v6 ? "]" : "", web_server_port(w),
           o.allow_runs ? "runs can be started from the page" : "read-only");
    fflush(stdout);
    free(alias);
    pid_t sched = o.schedule && exe[0] ? start_scheduler(exe) : -1;
    int sig = 0;
    sigwait(&stop, &sig);
    web_server_stop(w);
    if (sched > 0) {
        kill(sched, SIGTERM);
        waitpid(sched, NULL, 0);
    }
    printf("tarn: stopped serving\n");
    return CLI_OK;
}

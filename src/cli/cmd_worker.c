/*
 * cmd_worker.c — `tarn worker`: builds the models of runs submitted with
 * `tarn run --on-workers` (materialize/worker.h), and `tarn workers`: the
 * workers of a lake, what each builds, its last heartbeat
 * (materialize/queue.h).
 *
 * `--concurrency N` runs N workers as N processes (NAME-1 … NAME-N), each
 * with its own DuckDB and sessions: a build uses DuckDB's threads, and a
 * process that dies takes only its own build with it. The parent forwards
 * SIGTERM / Ctrl-C to them and exits when they have.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/status.h"
#include "materialize/build.h"
#include "materialize/queue.h"
#include "materialize/worker.h"
#include "project/query.h"
#include "tarn/error.h"
#include "tarn/version.h"
#include "util/buf.h"
#include "util/proc.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

const char cmd_worker_usage[] =
    "usage: tarn worker [-C DIR] [--target NAME] [--id NAME] [--concurrency N] [--lease SECONDS]\n"
    "\n"
    "Builds the models of runs submitted with `tarn run --on-workers`, on the lake's\n"
    "PostgreSQL catalog: claims a model whose upstream is built in its run, builds it as\n"
    "`tarn run` does (one snapshot, reads pinned to the run's upstream builds), and claims\n"
    "the next. It holds a lease on the model while it builds and renews it; a worker that\n"
    "dies loses it, and another worker builds the model again once the lease expires. Any\n"
    "number of workers, on any machines that reach the catalog and the data path, serve\n"
    "one lake.\n"
    "\n"
    "  -C, --project DIR     the project folder (the submitter's project)\n"
    "  -t, --target NAME     as `tarn run --target`\n"
    "  --id NAME             the worker's name (default: HOST-PID); with --concurrency N,\n"
    "                        its workers are NAME-1 … NAME-N\n"
    "  --concurrency N       run N workers (N processes; default 1)\n"
    "  --lease SECONDS       how long a claim holds without a heartbeat (default 30;\n"
    "                        renewed every third of it)\n"
    "  -q, --quiet           log only failed builds and errors\n"
    "  -h, --help            show this help\n"
    "\n"
    "SIGTERM or Ctrl-C ends it after the build in flight; a second one stops that build\n"
    "(rolled back, back in the queue for another worker).\n";

const char cmd_workers_usage[] =
    "usage: tarn workers [-C DIR] [--target NAME] [--all] [--json]\n"
    "\n"
    "The live workers of the project's lake: each one's host and pid, what it builds (run\n"
    "and model), when it started and its last heartbeat. A worker is live while its\n"
    "heartbeat is within its lease. --all lists the stopped and lost ones too.\n";

static volatile sig_atomic_t stop_count;
static pid_t *children;
static int nchildren;

static void on_stop(int sig)
{
    stop_count++;
    if (children) { /* the parent: its workers stop */
        for (int i = 0; i < nchildren; i++)
            if (children[i] > 0)
                kill(children[i], sig);
        return;
    }
    if (stop_count > 1)
        build_cancel(sig);
    worker_stop();
}

typedef struct {
    cli_common common;
    const char *id;
    long concurrency;
    double lease_s;
    int all, json;
} worker_cli;

static int parse(worker_cli *o, int argc, char **argv, const char *usage, int is_worker)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, usage))
            return 1;
        if ((m = cli_opt_common(argc, argv, &i, &o->common, 0)) != 0) {
            if (m < 0)
                return -1;
        } else if (!is_worker && strcmp(a, "--all") == 0) {
            o->all = 1;
        } else if (!is_worker && strcmp(a, "--json") == 0) {
            o->json = 1;
        } else if (is_worker && cli_opt_quiet(a)) {
            continue;
        } else if (is_worker && (m = cli_opt_value(argc, argv, &i, NULL, "--id", &val)) != 0) {
            if (m < 0)
                return -1;
            if (!*val) {
                cli_errorf("--id takes a name");
                return -1;
            }
            o->id = val;
        } else if (is_worker &&
                   (m = cli_opt_value(argc, argv, &i, NULL, "--concurrency", &val)) != 0) {
            if (m < 0 || cli_opt_int("--concurrency", val, &o->concurrency) < 0)
                return -1;
            if (o->concurrency > 64) {
                cli_errorf("--concurrency takes 1 to 64, not %ld", o->concurrency);
                return -1;
            }
        } else if (is_worker && (m = cli_opt_value(argc, argv, &i, NULL, "--lease", &val)) != 0) {
            char *end = NULL;
            double d = m < 0 ? 0 : strtod(val, &end);
            if (m < 0 || !end || *end || !(d >= 0.5 && d <= 86400)) {
                cli_errorf("--lease takes seconds from 0.5 to 86400, not '%s'", m < 0 ? "" : val);
                return -1;
            }
            o->lease_s = d;
        } else {
            cli_errorf(a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
            return -1;
        }
    }
    return 0;
}

static void log_line(void *ctx, const char *line)
{
    const char *id = ctx;
    if (cli_quiet() && !strstr(line, "failed") && !strstr(line, "cannot"))
        return;
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char when[32];
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    fprintf(stderr, "tarn worker %s %s: %s\n", id, when, line);
    fflush(stderr);
}

/* One worker in this process: until stopped. */
static int serve_one(worker_cli *o, const char *id)
{
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    cli_project cp;
    cli_common here = o->common;
    here.dir = NULL; /* the parent changed into it */
    int status = cli_project_open_common(&cp, &here);
    if (status != CLI_OK) {
        tarn_error_clear();
        return status;
    }
    int rc = build_run_config(cp.p, cp.s);
    if (!rc) {
        const char *poll = getenv("TARN_QUEUE_POLL_MS");
        worker_opts wo = {.id = id,
                          .lease_s = o->lease_s,
                          .poll_s = (poll ? strtod(poll, NULL) : 200) / 1000.0,
                          .concurrency = (int)o->concurrency,
                          .max_attempts = 3,
                          .version = TARN_VERSION,
                          .log = log_line,
                          .ctx = (void *)id};
        if (wo.poll_s <= 0)
            wo.poll_s = 0.2;
        rc = worker_serve(cp.p, cp.s, &wo);
    }
    if (rc) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        status = CLI_USAGE;
    }
    cli_project_close(&cp);
    return status;
}

int cmd_worker(int argc, char **argv)
{
    worker_cli o = {.concurrency = 1, .lease_s = 30};
    int p = parse(&o, argc, argv, cmd_worker_usage, 1);
    if (p != 0) {
        cli_common_free(&o.common);
        return cli_parse_result(p, "worker");
    }
    int status = cli_project_chdir(o.common.dir);
    if (status != CLI_OK) {
        cli_common_free(&o.common);
        return status;
    }
    char *base;
    if (o.id) {
        base = xstrdup(o.id);
    } else {
        char *host, *start;
        long pid;
        proc_self(&host, &pid, &start);
        base = xasprintf("%s-%ld", host, pid);
        free(host);
        free(start);
    }
    if (o.concurrency <= 1) {
        status = serve_one(&o, base);
        free(base);
        cli_common_free(&o.common);
        return status;
    }
    /* N processes, forked before any DuckDB exists in this one */
    fflush(NULL);
    children = xcalloc((size_t)o.concurrency, sizeof(pid_t));
    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    for (long k = 0; k < o.concurrency; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            free(children);
            children = NULL;
            char *id = xasprintf("%s-%ld", base, k + 1);
            int st = serve_one(&o, id);
            free(id);
            _exit(st);
        }
        if (pid < 0) {
            cli_errorf("cannot start worker %ld: fork failed", k + 1);
            status = CLI_FAILED;
            break;
        }
        children[nchildren++] = pid;
    }
    int worst = status;
    for (int i = 0; i < nchildren; i++) {
        int st = 0;
        while (waitpid(children[i], &st, 0) < 0)
            ;
        int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        if (code > worst)
            worst = code;
    }
    free(children);
    children = NULL;
    free(base);
    cli_common_free(&o.common);
    return worst;
}

/* ---- tarn workers ---- */

static void print_workers(const qrows *r, const worker_cli *o)
{
    json_t *arr = o->json ? json_array() : NULL;
    int any = 0;
    for (size_t i = 0; i < r->nrows; i++) {
        const char *state = qrows_get(r, i, 3) ? qrows_get(r, i, 3) : "";
        double age = qrows_get(r, i, 8) ? strtod(qrows_get(r, i, 8), NULL) : 1e9;
        double lease = qrows_get(r, i, 9) ? strtod(qrows_get(r, i, 9), NULL) : 30;
        int live = strcmp(state, "stopped") != 0 && queue_worker_alive(age, 0, lease);
        if (!live && !o->all)
            continue;
        const char *shown = live ? state : strcmp(state, "stopped") == 0 ? "stopped" : "lost";
        const char *model = qrows_get(r, i, 5);
        if (arr) {
            json_t *w = json_object();
            json_object_set_new(w, "worker", json_string(qrows_get(r, i, 0)));
            json_object_set_new(w, "host",
                                json_string(qrows_get(r, i, 1) ? qrows_get(r, i, 1) : ""));
            json_object_set_new(
                w, "pid",
                json_integer(qrows_get(r, i, 2) ? strtoll(qrows_get(r, i, 2), NULL, 10) : 0));
            json_object_set_new(w, "state", json_string(shown));
            json_object_set_new(w, "run_id",
                                qrows_get(r, i, 4) && live && model
                                    ? json_integer(strtoll(qrows_get(r, i, 4), NULL, 10))
                                    : json_null());
            json_object_set_new(w, "model", model && live ? json_string(model) : json_null());
            json_object_set_new(w, "started_at",
                                json_string(qrows_get(r, i, 6) ? qrows_get(r, i, 6) : ""));
            json_object_set_new(w, "heartbeat_at",
                                json_string(qrows_get(r, i, 7) ? qrows_get(r, i, 7) : ""));
            json_object_set_new(w, "heartbeat_age_s", json_real(age));
            json_array_append_new(arr, w);
            continue;
        }
        if (!any)
            printf("%-24s %-16s %8s  %-8s  %-32s  %-19s  %s\n", "WORKER", "HOST", "PID", "STATE",
                   "BUILDING", "STARTED (UTC)", "HEARTBEAT");
        any = 1;
        char building[128] = "-";
        if (model && live)
            snprintf(building, sizeof(building), "%s (run %s)", model,
                     qrows_get(r, i, 4) ? qrows_get(r, i, 4) : "?");
        printf("%-24s %-16s %8s  %-8s  %-32s  %-19s  %.1fs ago\n", qrows_get(r, i, 0),
               qrows_get(r, i, 1) ? qrows_get(r, i, 1) : "",
               qrows_get(r, i, 2) ? qrows_get(r, i, 2) : "", shown, building,
               qrows_get(r, i, 6) ? qrows_get(r, i, 6) : "", age);
    }
    if (arr) {
        char *t = json_dumps(arr, JSON_COMPACT | JSON_PRESERVE_ORDER);
        puts(t);
        free(t);
        json_decref(arr);
    } else if (!any) {
        printf(o->all ? "no worker has served this lake\n"
                      : "no live workers (start one: tarn worker -C DIR)\n");
    }
}

int cmd_workers(int argc, char **argv)
{
    worker_cli o = {0};
    int p = parse(&o, argc, argv, cmd_workers_usage, 0);
    if (p != 0) {
        cli_common_free(&o.common);
        return cli_parse_result(p, "workers");
    }
    cli_project cp;
    int status = cli_project_open_common(&cp, &o.common);
    cli_common_free(&o.common);
    if (status != CLI_OK)
        return status;
    status = cli_project_attach(&cp);
    tarn_catlink *l = NULL;
    int rc = status == CLI_OK ? tarn_catlink_open(&l, cp.s, cp.p->lake_alias) : 0;
    if (status == CLI_OK && rc) {
        cli_errorf("lake \"%s\" has its catalog in a DuckDB file: workers need a PostgreSQL "
                   "catalog (README \"Builds over workers\")",
                   cp.p->lake_alias);
        tarn_error_clear();
        status = CLI_USAGE;
    }
    if (l) {
        const char *cat = tarn_session_catalog_prefix(cp.s, cp.p->lake_alias);
        qrows r;
        rc = queue_workers(&r, l, cat);
        if (rc && strstr(tarn_error_last(), "does not exist")) {
            tarn_error_clear();
            r = (qrows){0};
            rc = 0;
        }
        if (rc) {
            cli_report(tarn_error_last());
            tarn_error_clear();
            status = CLI_FAILED;
        } else {
            print_workers(&r, &o);
            qrows_free(&r);
        }
        tarn_catlink_close(l);
    }
    cli_project_close(&cp);
    return status;
}

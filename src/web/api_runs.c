/*
 * api_runs.c — the runs: GET /api/runs (newest first: trigger, status,
 * start, duration, built / unchanged / skipped / failed), GET /api/runs/ID
 * (the run and each model's build in it: status, rows, snapshot,
 * run_reason, the upstream snapshots it read, its data tests with their
 * samples of violating rows, the error) and, with `tarn serve
 * --allow-runs`, POST /api/runs, which starts `tarn run` as a process of
 * its own (it takes the lake's catalog as any run does; the view stays a
 * reader). Reads tarn_run and tarn_model_run.
 */
#include "web/api.h"
#include "web/weblake.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int api_int_arg(long long *out, web_reply *r, const char *text, const char *what)
{
    char *end = NULL;
    errno = 0;
    long long v = text && *text ? strtoll(text, &end, 10) : -1;
    if (!text || !*text || errno || *end || v < 0) {
        reply_error(r, 400, "%s must be a non-negative integer, not '%s'", what,
                    text ? text : "(missing)");
        return -1;
    }
    *out = v;
    return 0;
}

static const char run_cols[] =
    "run_id AS id, coalesce(\"trigger\", 'manual') AS \"trigger\", status, "
    "strftime(started_at, '%Y-%m-%dT%H:%M:%SZ') AS started_at, "
    "round(epoch(finished_at) - epoch(started_at), 3) AS duration_s, models_total AS total, "
    "models_succeeded AS built, models_unchanged AS unchanged, models_skipped AS skipped, "
    "models_failed AS failed, selectors, start_snapshot_id, end_snapshot_id, occurrence, "
    "tarn_version";
static const char run_types[] = "isssfiiiiisiiss";

void api_runs(web_reply *r, const web_req *q)
{
    long long limit = 100;
    const char *a = q->arg(q, "limit");
    if (a && api_int_arg(&limit, r, a, "limit") != 0)
        return;
    web_lake l;
    if (web_lake_open(&l, r) != 0)
        return;
    json_t *runs = NULL;
    int rc = 0;
    if (l.has_runs) {
        char *t = NULL;
        web_records_table(&t, &l, "tarn_run");
        char *sql =
            xasprintf("SELECT %s FROM %s ORDER BY run_id DESC LIMIT %lld", run_cols, t, limit);
        rc = web_rows(&runs, l.s, sql, run_types);
        free(sql);
        free(t);
    } else {
        runs = json_array();
    }
    if (rc != 0) {
        reply_error(r, 500, "%s", tarn_error_last());
        tarn_error_clear();
    } else {
        reply_json(r, 200, json_pack("{s:o}", "runs", runs));
    }
    web_lake_close(&l);
}

static const char model_cols[] =
    "model, target, strategy, status, rows_written AS \"rows\", rows_deleted, snapshot_id AS "
    "snapshot, run_reason, upstream, tests, error, note, round(duration_ms) AS duration_ms, "
    "partitions, details, strftime(started_at, '%Y-%m-%dT%H:%M:%SZ') AS started_at";
static const char model_types[] = "ssssiiisjjssfsjs";

void api_run(web_reply *r, const web_req *q, const char *id)
{
    (void)q;
    long long run_id;
    if (api_int_arg(&run_id, r, id, "a run id") != 0)
        return;
    web_lake l;
    if (web_lake_open(&l, r) != 0)
        return;
    json_t *run = NULL, *models = NULL;
    int rc = 0;
    if (l.has_runs) {
        char *t = NULL, *mt = NULL;
        web_records_table(&t, &l, "tarn_run");
        web_records_table(&mt, &l, "tarn_model_run");
        char *sql = xasprintf("SELECT %s FROM %s WHERE run_id = %lld", run_cols, t, run_id);
        rc = web_row(&run, l.s, sql, run_types);
        free(sql);
        if (rc == 0 && run) {
            sql = xasprintf("SELECT %s FROM %s WHERE run_id = %lld ORDER BY started_at, model",
                            model_cols, mt, run_id);
            rc = web_rows(&models, l.s, sql, model_types);
            free(sql);
        }
        free(t);
        free(mt);
    }
    if (rc != 0) {
        reply_error(r, 500, "%s", tarn_error_last());
        tarn_error_clear();
    } else if (!run) {
        reply_error(r, 404, "no run %lld in lake \"%s\"", run_id, l.p->lake_alias);
    } else {
        json_object_set_new(run, "models", models);
        models = NULL;
        reply_json(r, 200, run);
        run = NULL;
    }
    json_decref(run);
    json_decref(models);
    web_lake_close(&l);
}

void api_run_start(web_reply *r, const web_req *q)
{
    if (!q->allow_runs) {
        reply_error(r, 403,
                    "runs are not started from the web view unless tarn serve has "
                    "--allow-runs");
        return;
    }
    /* A build in flight (this page's last "Run now", the scheduler, a
     * terminal) holds the lake: a second run would only fail on its lock. */
    web_lake l;
    web_reply probe = {0};
    if (web_lake_open(&l, &probe) != 0) {
        if (probe.status == 503)
            reply_error(r, 409,
                        "a build is running (it holds the lake): try again when it is done");
        else
            *r = probe, probe = (web_reply){0};
        reply_free(&probe);
        return;
    }
    web_lake_close(&l);
    /* Twice forked, so that the run is nobody's zombie when it ends and a
     * stopped server leaves it running. */
    pid_t pid = fork();
    if (pid < 0) {
        reply_error(r, 500, "cannot start tarn run: %s", strerror(errno));
        return;
    }
    if (pid == 0) {
        setsid();
        if (fork() != 0)
            _exit(0);
        /* what the run prints goes where tarn serve's own messages go, so
         * that a run that fails to start (the lake held by another
         * writer) is seen in serve's terminal, not lost */
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        dup2(2, 1);
        fprintf(stderr, "tarn serve: a run started from the page (tarn run)\n");
        /* the server's signal mask (SIGINT/SIGTERM blocked, cmd_serve.c)
         * survives exec: a run must be stoppable as any other */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execl(q->tarn_exe, "tarn", "run", (char *)NULL);
        _exit(127);
    }
    waitpid(pid, NULL, 0);
    reply_json(r, 202, json_pack("{s:b}", "started", 1));
}

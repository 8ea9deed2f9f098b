/*
 * cmd_run.c — `tarn run`: builds the selected models into the lake.
 *
 * Human output goes to stderr: on a terminal a live line for the model
 * being built, then one line per finished model and a summary naming what
 * failed and what was skipped, and why. With --json, stdout carries one
 * JSON object per event (run_start, model_start, model_finish, run_finish,
 * or error), each with "schema_version", and nothing else.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/status.h"
#include "cli/stop.h"

#include "materialize/build.h"
#include "project/select.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/clock.h"

#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_JSON_SCHEMA_VERSION 1

const char cmd_run_usage[] =
    "usage: tarn run [SELECTOR...] [--exclude SEL...] [--target NAME] [-j N] [--partition P | "
    "--from A --to B]\n"
    "                [--full-refresh] [--allow-empty] [--force] [--now TIME] [--on-workers] "
    "[--json]\n"
    "                [-C DIR]\n"
    "\n"
    "Builds the selected models (all by default) into the project's lake, in\n"
    "dependency order, each as one DuckLake snapshot. A failed model stops\n"
    "the models downstream of it, not its siblings. A model whose SQL, config,\n"
    "input tables and files and own table are as at its last successful build\n"
    "is skipped as unchanged; each build records why it ran (run_reason).\n"
    "\n"
    "Selectors (dbt's): NAME (schema.table, table, file or glob), tag:TAG,\n"
    "path:DIR, strategy:S; +SEL (and upstream), 2+SEL (two levels up), SEL+\n"
    "(and downstream), SEL+1, @SEL (downstream and all they need); a b: both,\n"
    "a,b: models that are both.\n"
    "\n"
    "  -j, --jobs N        evaluate up to N models' queries at once (default:\n"
    "                      the number of cores); builds still commit one at\n"
    "                      a time, and the lake is the same as with -j 1\n"
    "  --force             build the selected models even when unchanged\n"
    "  --on-workers        build on `tarn worker` processes that share the lake's\n"
    "                      PostgreSQL catalog (README: Builds over workers);\n"
    "                      reported here as without it\n"
    "  --partition P       build slice P of partitioned models\n"
    "  --from A --to B     build every slice from A to B (both included)\n"
    "  --full-refresh      rebuild merge, append and incremental tables from\n"
    "                      scratch (an incremental watermark starts over), and\n"
    "                      any table whose strategy changed; history and\n"
    "                      partitioned tables are kept otherwise; every\n"
    "                      selected model runs (run_reason: forced)\n"
    "  --now TIME          run as if at TIME (UTC, 2026-06-01T06:00:00Z): the\n"
    "                      current slice, an incremental model's frontier\n"
    "  --allow-empty       let a replace, merge or history build whose SELECT\n"
    "                      returns no rows meet a table that has rows (as\n"
    "                      allow_empty)\n"
    "  --json              one JSON object per event on stdout (README: the\n"
    "                      events and their fields)\n"
    "  -q, --quiet         print only failed models and errors\n"
    "  -s, --select SEL... selectors (as bare arguments)\n"
    "  --exclude SEL...    leave these out\n"
    "  -t, --target NAME   run config/targets/NAME.sql in place of\n"
    "                      config/catalog.sql (another lake for development)\n"
    "  -C, --project DIR   the project folder (default: the nearest one up that\n"
    "                      holds models/)\n"
    "  -h, --help          show this help\n"
    "\n"
    "Ctrl-C (or SIGTERM) stops the run: the build in flight is rolled back,\n"
    "the models left are not run; a second Ctrl-C exits at once.\n"
    "\n"
    "Exit status: 0 every model built, 1 a model failed, 2 usage or project\n"
    "error (nothing was built), 130 stopped by Ctrl-C, 143 by SIGTERM.\n";

typedef struct {
    cli_common common; /* -C, --target, selectors */
    build_opts o;
    int json;
    int quiet;       /* --quiet: failures and errors only */
    int tty;         /* stderr is a terminal: live progress line */
    int color;       /* … and colours (not with NO_COLOR or TERM=dumb) */
    double t0;       /* the run's start, for the progress line */
    strlist running; /* models started and not finished, for that line */
} run_cli;

/* ---- output ---------------------------------------------------------- */

static void json_emit(json_t *o)
{
    cli_json_event(o, RUN_JSON_SCHEMA_VERSION);
}

static json_t *json_event(const char *name)
{
    json_t *o = json_object();
    json_object_set_new(o, "schema_version", json_integer(RUN_JSON_SCHEMA_VERSION));
    json_object_set_new(o, "event", json_string(name));
    return o;
}

static json_t *json_strlist(const strlist *l)
{
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_string(l->items[i]));
    return a;
}

static void json_model_event(const build_event *ev)
{
    const model_result *r = ev->result;
    const tarn_model *m = &ev->project->models[r->model];
    json_t *o = json_event(ev->type == BUILD_MODEL_START ? "model_start" : "model_finish");
    json_object_set_new(o, "run_id", json_integer(ev->summary->run_id));
    json_object_set_new(o, "model", json_string(m->name));
    json_object_set_new(o, "path", json_string(m->path));
    json_object_set_new(o, "strategy", json_string(annot_strategy_label(&m->annot)));
    json_object_set_new(o, "index", json_integer((json_int_t)ev->index));
    json_object_set_new(o, "total", json_integer((json_int_t)ev->summary->nrun));
    if (ev->type == BUILD_MODEL_START)
        json_object_set_new(o, "run_reason",
                            r->run_reason ? json_string(r->run_reason) : json_null());
    if (ev->type == BUILD_MODEL_FINISH) {
        json_object_set_new(o, "status", json_string(model_status_name(r->status)));
        if (r->status == MODEL_SKIPPED)
            json_object_set_new(
                o, "reason",
                json_string(r->unchanged ? "unchanged" : (r->error ? r->error : "skipped")));
        else
            json_object_set_new(o, "run_reason",
                                r->run_reason ? json_string(r->run_reason) : json_null());
        json_object_set_new(o, "snapshot_id",
                            r->snapshot_id >= 0 ? json_integer(r->snapshot_id) : json_null());
        json_object_set_new(o, "no_change", json_boolean(r->no_change));
        json_object_set_new(o, "rows_written", json_integer(r->rows_written));
        json_object_set_new(o, "rows_deleted", json_integer(r->rows_deleted));
        json_object_set_new(o, "partitions", json_strlist(&r->partitions));
        build_details_merge(o, m, r);
        json_t *up = json_array();
        for (size_t i = 0; i < r->nupstream; i++) {
            json_t *u = json_object();
            json_object_set_new(u, "table", json_string(r->upstream[i].table));
            json_object_set_new(u, "snapshot_id", json_integer(r->upstream[i].snapshot_id));
            json_array_append_new(up, u);
        }
        json_object_set_new(o, "upstream", up);
        json_object_set_new(o, "duration_ms", json_real(r->duration_ms));
        json_object_set_new(o, "query_ms", json_real(r->query_ms));
        json_object_set_new(o, "prefetch", json_string(prefetch_use_name(r->prefetch)));
        json_object_set_new(o, "error", r->error ? json_string(r->error) : json_null());
        if (r->tests_json) /* each test's result; a failing one's sample of rows */
            json_object_set_new(o, "tests", json_loads(r->tests_json, 0, NULL));
        if (r->warning)
            json_object_set_new(o, "warning", json_string(r->warning));
    }
    json_emit(o);
}

static void json_run_event(const build_event *ev)
{
    const build_summary *s = ev->summary;
    json_t *o = json_event(ev->type == BUILD_RUN_START ? "run_start" : "run_finish");
    json_object_set_new(o, "run_id", json_integer(s->run_id));
    if (ev->type == BUILD_RUN_START) {
        json_object_set_new(o, "start_snapshot", json_integer(s->start_snapshot));
        json_object_set_new(o, "target",
                            json_string(ev->project->target ? ev->project->target : "default"));
        json_object_set_new(o, "jobs", json_integer(s->jobs));
        json_object_set_new(o, "jobs_note", s->jobs_note ? json_string(s->jobs_note) : json_null());
        json_t *models = json_array();
        for (size_t i = 0; i < s->nrun; i++)
            json_array_append_new(models, json_string(ev->project->models[s->run_order[i]].name));
        json_object_set_new(o, "models", models);
    } else {
        json_object_set_new(o, "status", json_string(s->failed ? "failed" : "success"));
        json_object_set_new(o, "succeeded", json_integer((json_int_t)s->succeeded));
        json_object_set_new(o, "failed", json_integer((json_int_t)s->failed));
        json_object_set_new(o, "skipped", json_integer((json_int_t)s->skipped));
        json_object_set_new(o, "unchanged", json_integer((json_int_t)s->unchanged));
        json_object_set_new(o, "duration_ms", json_real(s->duration_ms));
    }
    json_emit(o);
}

/* The status word of a model's line, as the summary counts it, and its
 * colour (SGR code) on a terminal. */
static const char *status_label(const model_result *r, const char **color)
{
    switch (r->status) {
    case MODEL_SUCCESS:
        *color = "32";
        return "ok       ";
    case MODEL_FAILED:
        *color = "1;31";
        return "FAILED   ";
    case MODEL_CANCELLED:
        *color = "33";
        return "CANCELLED";
    default:
        *color = "2";
        return r->unchanged ? "unchanged" : "skipped  ";
    }
}

static void human_model_finish(run_cli *rc, const build_event *ev)
{
    const model_result *r = ev->result;
    const tarn_model *m = &ev->project->models[r->model];
    if (rc->quiet && r->status != MODEL_FAILED)
        return;
    if (rc->tty)
        fputs("\r\033[K", stderr);
    const char *color;
    const char *label = status_label(r, &color);
    if (rc->color)
        fprintf(stderr, "  \033[%sm%s\033[0m", color, label);
    else
        fprintf(stderr, "  %s", label);
    fprintf(stderr, " %-32s %-11s", m->name, annot_strategy_label(&m->annot));
    if (r->status == MODEL_SUCCESS) {
        fprintf(stderr, " %8lld rows", (long long)r->rows_written);
        /* what the figures are: a merge or slice deletes and re-inserts */
        if (r->rows_deleted > 0 || r->rows_closed > 0) {
            fputs(":", stderr);
            if (r->rows_deleted > 0)
                fprintf(stderr, " %lld deleted,", (long long)r->rows_deleted);
            if (r->rows_closed > 0)
                fprintf(stderr, " %lld closed,", (long long)r->rows_closed);
            fprintf(stderr, " %lld inserted", (long long)r->rows_written);
        }
        if (r->no_change)
            fputs("  no change", stderr);
        else
            fprintf(stderr, "  snapshot %lld", (long long)r->snapshot_id);
        if (r->partitions.n == 1)
            fprintf(stderr, "  partition %s", r->partitions.items[0]);
        else if (r->partitions.n > 1)
            fprintf(stderr, "  %zu partitions", r->partitions.n);
    }
    if (r->status != MODEL_SKIPPED)
        fprintf(stderr, "  %.0f ms  (%s)", r->duration_ms, r->run_reason ? r->run_reason : "");
    fputc('\n', stderr);
    if (r->warning)
        fprintf(stderr, "          warning: %s\n", r->warning);
    if (r->schema_change)
        fprintf(stderr, "          schema change (on_schema_change=%s): %s\n",
                m->annot.on_schema_change ? m->annot.on_schema_change : "fail", r->schema_change);
    if (r->status != MODEL_SUCCESS && r->error) {
        /* The reason, indented, one line per line of the message. */
        const char *s = r->error;
        while (*s) {
            const char *eol = strchr(s, '\n');
            size_t n = eol ? (size_t)(eol - s) : strlen(s);
            fprintf(stderr, "          %.*s\n", (int)n, s);
            s = eol ? eol + 1 : s + n;
        }
    }
}

/* On a terminal: the models being built, on one line that the next
 * output overwrites. */
static void progress_line(run_cli *rc, const build_summary *s)
{
    if (!rc->tty || rc->quiet || rc->running.n == 0)
        return;
    size_t done = s->succeeded + s->failed + s->skipped + s->unchanged;
    fprintf(stderr, "\r\033[K  [%zu/%zu %.1fs] building ", done, s->nrun,
            (clock_mono_ms() - rc->t0) / 1000.0);
    for (size_t i = 0; i < rc->running.n && i < 3; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", rc->running.items[i]);
    if (rc->running.n > 3)
        fprintf(stderr, " and %zu more", rc->running.n - 3);
    fputs("…", stderr);
    fflush(stderr);
}

static void on_event(void *ctx, const build_event *ev)
{
    run_cli *rc = ctx;
    if (rc->json) {
        if (ev->type == BUILD_MODEL_START || ev->type == BUILD_MODEL_FINISH)
            json_model_event(ev);
        else
            json_run_event(ev);
    }
    const build_summary *s = ev->summary;
    if (rc->quiet && ev->type != BUILD_MODEL_FINISH && ev->type != BUILD_RUN_FINISH)
        return;
    switch (ev->type) {
    case BUILD_RUN_START:
        fprintf(stderr, "tarn: run %lld: %zu model%s, lake \"%s\" at snapshot %lld",
                (long long)s->run_id, s->nrun, s->nrun == 1 ? "" : "s", ev->project->lake_alias,
                (long long)s->start_snapshot);
        if (s->jobs > 1)
            fprintf(stderr, ", %d jobs", s->jobs);
        fputc('\n', stderr);
        if (s->jobs_note)
            fprintf(stderr, "tarn: %s\n", s->jobs_note);
        if (s->interrupted_runs)
            fprintf(stderr,
                    "tarn: %zu earlier run%s ended without finishing (killed, or the machine "
                    "stopped): marked interrupted (see tarn history); what they committed is "
                    "kept, the build in flight left nothing\n",
                    s->interrupted_runs, s->interrupted_runs == 1 ? "" : "s");
        break;
    case BUILD_MODEL_START:
        strlist_push(&rc->running, ev->project->models[ev->result->model].name);
        progress_line(rc, s);
        break;
    case BUILD_MODEL_FINISH: {
        int at = strlist_find(&rc->running, ev->project->models[ev->result->model].name);
        if (at >= 0)
            strlist_remove(&rc->running, (size_t)at);
        human_model_finish(rc, ev);
        progress_line(rc, s);
        break;
    }
    case BUILD_RUN_FINISH:
        if (s->stop_signal) {
            fprintf(stderr,
                    "tarn: run %lld stopped (%s): %zu succeeded, %zu cancelled and rolled back, "
                    "%zu not run, %zu failed, %zu unchanged in %.1f s; the lake is at its last "
                    "committed snapshot\n",
                    (long long)s->run_id, cli_signal_label(s->stop_signal), s->succeeded,
                    s->cancelled, s->not_run, s->failed, s->unchanged, s->duration_ms / 1000.0);
            break;
        }
        if (rc->quiet && !s->failed)
            break;
        fprintf(stderr,
                "tarn: run %lld %s: %zu succeeded, %zu failed, %zu skipped, %zu unchanged in "
                "%.1f s\n",
                (long long)s->run_id, s->failed ? "failed" : "succeeded", s->succeeded, s->failed,
                s->skipped, s->unchanged, s->duration_ms / 1000.0);
        break;
    }
}

/* ---- options --------------------------------------------------------- */

/* Sets the flag `a` names; 0 when it names none. */
static int opt_flag(run_cli *rc, const char *a)
{
    if (strcmp(a, "--json") == 0)
        rc->json = 1;
    else if (strcmp(a, "--full-refresh") == 0)
        rc->o.full_refresh = 1;
    else if (strcmp(a, "--force") == 0)
        rc->o.force = 1;
    else if (strcmp(a, "--on-workers") == 0)
        rc->o.on_workers = 1;
    else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0)
        rc->quiet = 1;
    else if (strcmp(a, "--allow-empty") == 0)
        rc->o.allow_empty = 1;
    else
        return 0;
    return 1;
}

/* An option with a value at argv[*i] (taken, *i past it): 1, 0 when it
 * is none of them, -1 on a usage error. */
static int opt_valued(run_cli *rc, int argc, char **argv, int *i)
{
    const char *val;
    int m;
    if ((m = cli_opt_value(argc, argv, i, NULL, "--now", &val)) != 0) {
        if (m < 0 || cli_parse_utc(&rc->o.now, val) != 0) {
            cli_errorf("--now takes a UTC time such as 2026-06-01T06:00:00Z, not '%s'",
                       m < 0 ? "" : val);
            return -1;
        }
        return 1;
    }
    if ((m = cli_opt_value(argc, argv, i, "-j", "--jobs", &val)) != 0) {
        long n;
        if (m < 0 || cli_opt_int("-j", val, &n) < 0)
            return -1;
        rc->o.jobs = (int)n;
        return 1;
    }
    const char **slot = NULL;
    if ((m = cli_opt_value(argc, argv, i, NULL, "--partition", &val)) != 0)
        slot = &rc->o.partition;
    else if ((m = cli_opt_value(argc, argv, i, NULL, "--from", &val)) != 0)
        slot = &rc->o.from;
    else if ((m = cli_opt_value(argc, argv, i, NULL, "--to", &val)) != 0)
        slot = &rc->o.to;
    else
        return cli_opt_common(argc, argv, i, &rc->common, CLI_COMMON_POSITIONAL);
    if (m < 0)
        return -1;
    *slot = val;
    return 1;
}

/* Returns 1 for --help, 0 to go on, -1 on a usage error. */
static int opts_parse(run_cli *rc, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
            return 1;
        if (opt_flag(rc, a))
            continue;
        int m = opt_valued(rc, argc, argv, &i);
        if (m < 0)
            return -1;
        if (m > 0)
            continue;
        cli_errorf("unknown option '%s'", a);
        return -1;
    }
    if (rc->o.partition && (rc->o.from || rc->o.to)) {
        cli_errorf("give --partition or --from/--to, not both");
        return -1;
    }
    if (!rc->o.from != !rc->o.to) {
        cli_errorf("give both --from and --to");
        return -1;
    }
    return 0;
}

/* What the run says besides its events (--on-workers: no worker alive). */
static void on_notice(void *ctx, const char *msg)
{
    run_cli *rc = ctx;
    if (rc->json) {
        json_t *o = json_event("notice");
        json_object_set_new(o, "message", json_string(msg));
        json_emit(o);
    }
    fprintf(stderr, "tarn: %s\n", msg);
}

static void report_error(run_cli *rc, const char *msg)
{
    if (rc->json) {
        json_t *o = json_event("error");
        json_object_set_new(o, "message", json_string(msg));
        json_emit(o);
    }
    cli_report(msg);
}

int cmd_run(int argc, char **argv)
{
    run_cli rc = {.o = {.jobs = 0, .tarn_version = TARN_VERSION}};
    rc.tty = isatty(STDERR_FILENO);
    rc.color = rc.tty && cli_color_ok();
    rc.t0 = clock_mono_ms();
    int p = opts_parse(&rc, argc, argv);
    if (p != 0) {
        if (p > 0)
            fputs(cmd_run_usage, stdout);
        else
            fputs("Try 'tarn run --help'.\n", stderr);
        cli_common_free(&rc.common);
        return p > 0 ? CLI_OK : CLI_USAGE;
    }
    rc.quiet |= cli_quiet(); /* -q taken with the common options */
    if (rc.o.jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        rc.o.jobs = n > 0 ? (int)n : 1;
    }
    if (rc.json)
        rc.tty = rc.color = 0;
    cli_stop_watch_start(CLI_STOP_CANCEL);
    cli_project cp;
    int status = cli_project_open_common(&cp, &rc.common);
    if (status != CLI_OK) {
        if (rc.json) {
            /* Already on stderr; the JSON stream gets it as an event too. */
            json_t *o = json_event("error");
            json_object_set_new(o, "message", json_string(tarn_error_last()));
            json_emit(o);
        }
        tarn_error_clear();
        cli_common_free(&rc.common);
        return status;
    }
    unsigned char *sel = NULL;
    if (cli_common_select(&sel, &rc.common, cp.p) != 0) {
        report_error(&rc, tarn_error_last());
        tarn_error_clear();
        cli_project_close(&cp);
        cli_common_free(&rc.common);
        return CLI_USAGE;
    }
    char *seltext = cli_common_selectors_text(&rc.common);
    rc.o.selected = sel;
    rc.o.selectors = seltext;
    rc.o.on_event = on_event;
    rc.o.on_notice = on_notice;
    rc.o.ctx = &rc;
    build_summary sum;
    cli_stop_watch_session(cp.s);
    int r = build_run(&sum, cp.p, cp.s, &rc.o);
    cli_stop_watch_session(NULL);
    if (build_cancel_signal()) {
        if (r != 0) {
            fprintf(stderr, "tarn: stopped (%s) before any model was built\n",
                    cli_signal_label(build_cancel_signal()));
            tarn_error_clear();
        }
        status = 128 + build_cancel_signal();
    } else if (r != 0) {
        report_error(&rc, tarn_error_last());
        tarn_error_clear();
        status = CLI_USAGE;
    } else {
        status = sum.failed ? CLI_FAILED : CLI_OK;
    }
    build_summary_free(&sum, cp.p->nmodels);
    strlist_free(&rc.running);
    free(seltext);
    free(sel);
    cli_project_close(&cp);
    cli_common_free(&rc.common);
    return status;
}

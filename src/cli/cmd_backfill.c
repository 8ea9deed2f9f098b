/*
 * cmd_backfill.c — `tarn backfill MODEL --start A [--end B]`: builds the
 * slices of a time-partitioned model over a range, each slice its own build
 * and snapshot, taking the worklist from what the lake records of each
 * slice (materialize/backfill.h): by default the slices never built, failed
 * or built by other SQL, so a backfill that was stopped (Ctrl-C, SIGTERM,
 * kill -9, a failing slice) continues with what is left when run again.
 * Progress on stderr, one line per slice (done/total, rows, elapsed, ETA);
 * with --json one object per slice on stdout instead. The run is recorded
 * with trigger `backfill`.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/status.h"
#include "cli/stop.h"

#include "materialize/backfill.h"
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

#define BACKFILL_JSON_SCHEMA_VERSION 1

const char cmd_backfill_usage[] =
    "usage: tarn backfill MODEL --start A [--end B] [--missing | --failed | --all]\n"
    "                     [--json] [-C DIR]\n"
    "\n"
    "Builds the slices of time-partitioned MODEL from the one containing A to the\n"
    "one containing B (both included; default: the current slice), each as its own\n"
    "build and snapshot: a failing slice fails alone, and a backfill stopped halfway\n"
    "keeps what it built. Run again, it builds what is left.\n"
    "\n"
    "  --start A, --from A the first slice (a date, hour, week or month, or a time;\n"
    "                      default: the model's start=)\n"
    "  --end B, --to B     the last slice (default: the current one)\n"
    "  --missing           the slices never built, failed, or built by other SQL\n"
    "                      (the default)\n"
    "  --failed            only the slices whose last build failed\n"
    "  --all               every slice of the range\n"
    "  --json              one JSON object per slice on stdout\n"
    "  -q, --quiet         print only failed slices and errors\n"
    "  -C, --project DIR   the project folder (default: the current one)\n"
    "\n"
    "`tarn partitions MODEL` shows each slice's state. Ctrl-C (or SIGTERM) stops\n"
    "the backfill after rolling back the slice in flight.\n"
    "\n"
    "Exit status: 0 every slice built, 1 a slice failed, 2 usage or project error,\n"
    "130 stopped by Ctrl-C, 143 by SIGTERM.\n";

typedef struct {
    const char *dir, *model, *from, *to;
    backfill_mode mode;
    int json;
    double t0;         /* when the first slice started (monotonic ms) */
    size_t ok, failed; /* slices */
    int64_t rows;
} backfill_cli;

static void json_emit(json_t *o)
{
    cli_json_event(o, BACKFILL_JSON_SCHEMA_VERSION);
}

static void on_slice(void *ctx, const build_event *ev)
{
    backfill_cli *bc = ctx;
    const model_result *r = ev->result;
    double elapsed = clock_mono_ms() - bc->t0;
    double eta = elapsed / (double)ev->slice_index * (double)(ev->slice_total - ev->slice_index);
    int ok = r->status == MODEL_SUCCESS;
    bc->ok += ok;
    bc->failed += !ok;
    if (ok)
        bc->rows += r->rows_written;
    if (bc->json) {
        json_t *o = json_object();
        json_object_set_new(o, "event", json_string("slice"));
        json_object_set_new(o, "run_id", json_integer(ev->summary->run_id));
        json_object_set_new(o, "model", json_string(ev->project->models[r->model].name));
        json_object_set_new(o, "partition", json_string(ev->slice));
        json_object_set_new(o, "index", json_integer((json_int_t)ev->slice_index));
        json_object_set_new(o, "total", json_integer((json_int_t)ev->slice_total));
        json_object_set_new(o, "status", json_string(model_status_name(r->status)));
        json_object_set_new(o, "rows_written", json_integer(ok ? r->rows_written : 0));
        json_object_set_new(o, "snapshot_id",
                            ok && r->snapshot_id >= 0 ? json_integer(r->snapshot_id) : json_null());
        json_object_set_new(o, "no_change", json_boolean(r->no_change));
        json_object_set_new(o, "duration_ms", json_real(r->duration_ms));
        json_object_set_new(o, "elapsed_ms", json_real(elapsed));
        json_object_set_new(o, "eta_ms", json_real(eta));
        json_object_set_new(o, "error", r->error ? json_string(r->error) : json_null());
        json_emit(o);
        return;
    }
    if (ok && cli_quiet())
        return;
    fprintf(stderr, "  [%zu/%zu] %-14s ", ev->slice_index, ev->slice_total, ev->slice);
    cli_status(stderr,
               ok                             ? CLI_TONE_OK
               : r->status == MODEL_CANCELLED ? CLI_TONE_WARN
                                              : CLI_TONE_FAIL,
               6,
               ok                             ? "ok"
               : r->status == MODEL_CANCELLED ? "CANCEL"
                                              : "FAILED");
    if (ok) {
        fprintf(stderr, " %8lld rows", (long long)r->rows_written);
        if (r->no_change)
            fputs("  no change  ", stderr);
        else
            fprintf(stderr, "  snapshot %lld", (long long)r->snapshot_id);
    }
    fprintf(stderr, "  %.1f s  elapsed %.1f s", r->duration_ms / 1000.0, elapsed / 1000.0);
    if (ev->slice_index < ev->slice_total)
        fprintf(stderr, "  ETA %.1f s", eta / 1000.0);
    fputc('\n', stderr);
    if (!ok && r->error)
        fprintf(stderr, "          %s\n", r->error);
}

static void on_event(void *ctx, const build_event *ev)
{
    backfill_cli *bc = ctx;
    const build_summary *s = ev->summary;
    if (ev->type == BUILD_RUN_START) {
        bc->t0 = clock_mono_ms();
        if (s->interrupted_runs && !bc->json)
            fprintf(stderr,
                    "tarn: %zu earlier run%s ended without finishing (killed): marked "
                    "interrupted; the slices they committed are kept\n",
                    s->interrupted_runs, s->interrupted_runs == 1 ? "" : "s");
    } else if (ev->type == BUILD_MODEL_FINISH && ev->result->status == MODEL_SKIPPED &&
               ev->result->error && !bc->json) {
        fprintf(stderr, "tarn: %s\n", ev->result->error);
    } else if (ev->type == BUILD_RUN_FINISH) {
        if (bc->json) {
            json_t *o = json_object();
            json_object_set_new(o, "event", json_string("backfill_finish"));
            json_object_set_new(o, "run_id", json_integer(s->run_id));
            json_object_set_new(o, "status",
                                json_string(s->stop_signal ? "cancelled"
                                            : bc->failed   ? "failed"
                                                           : "success"));
            json_object_set_new(o, "built", json_integer((json_int_t)bc->ok));
            json_object_set_new(o, "failed", json_integer((json_int_t)bc->failed));
            json_object_set_new(o, "rows_written", json_integer(bc->rows));
            json_object_set_new(o, "duration_ms", json_real(s->duration_ms));
            json_emit(o);
            return;
        }
        if (cli_quiet() && !s->stop_signal && !bc->failed)
            return;
        fprintf(
            stderr,
            "tarn: backfill run %lld %s: %zu slice%s built (%lld rows), %zu failed in %.1f s%s\n",
            (long long)s->run_id,
            s->stop_signal ? "stopped"
            : bc->failed   ? "failed"
                           : "succeeded",
            bc->ok, bc->ok == 1 ? "" : "s", (long long)bc->rows, bc->failed,
            s->duration_ms / 1000.0,
            s->stop_signal || bc->failed ? "; run it again to build what is left" : "");
    }
}

static int opts_parse(backfill_cli *bc, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, cmd_backfill_usage))
            return 1;
        if (strcmp(a, "--json") == 0)
            bc->json = 1;
        else if (cli_opt_quiet(a))
            continue;
        else if (strcmp(a, "--missing") == 0)
            bc->mode = BACKFILL_MISSING;
        else if (strcmp(a, "--failed") == 0)
            bc->mode = BACKFILL_FAILED;
        else if (strcmp(a, "--all") == 0)
            bc->mode = BACKFILL_ALL;
        else if ((m = cli_opt_value(argc, argv, &i, NULL, "--start", &val)) != 0 ||
                 (m = cli_opt_value(argc, argv, &i, NULL, "--from", &val)) != 0) {
            if (m < 0)
                return -1;
            bc->from = val;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--end", &val)) != 0 ||
                   (m = cli_opt_value(argc, argv, &i, NULL, "--to", &val)) != 0) {
            if (m < 0)
                return -1;
            bc->to = val;
        } else if ((m = cli_opt_value(argc, argv, &i, "-C", "--project", &val)) != 0) {
            if (m < 0)
                return -1;
            bc->dir = val;
        } else if (a[0] == '-' && a[1]) {
            cli_errorf("unknown option '%s'", a);
            return -1;
        } else if (bc->model) {
            cli_errorf("one model at a time: '%s' and '%s'", bc->model, a);
            return -1;
        } else {
            bc->model = a;
        }
    }
    if (!bc->model) {
        cli_errorf("which model? tarn backfill MODEL --start 2024-01-01");
        return -1;
    }
    return 0;
}

/* The one model MODEL names, or -1 (reported). */
static long find_model(cli_project *cp, const char *name)
{
    unsigned char *sel = NULL;
    char *args[] = {(char *)name};
    if (select_models(&sel, cp->p, args, 1) != 0) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        return -1;
    }
    long found = -1;
    size_t n = 0;
    for (size_t i = 0; i < cp->p->nmodels; i++)
        if (sel[i]) {
            found = (long)i;
            n++;
        }
    free(sel);
    if (n != 1) {
        cli_errorf("'%s' selects %zu models: name one (schema.table)", name, n);
        return -1;
    }
    return found;
}

static int run_backfill(backfill_cli *bc, cli_project *cp, size_t mi, const backfill_work *w)
{
    const tarn_model *m = &cp->p->models[mi];
    if (!bc->json && !cli_quiet()) {
        fprintf(stderr, "tarn: backfill %s: %zu of %zu slices %s … %s (%zu built already", m->name,
                w->todo.n, w->total, w->first, w->last, w->built);
        if (w->failed)
            fprintf(stderr, ", %zu failed before", w->failed);
        if (w->stale)
            fprintf(stderr, ", %zu built by other SQL", w->stale);
        fputs(")\n", stderr);
    }
    unsigned char *sel = xcalloc(cp->p->nmodels ? cp->p->nmodels : 1, 1);
    sel[mi] = 1;
    build_opts o = {.selected = sel,
                    .selectors = m->name,
                    .slices = &w->todo,
                    .trigger = "backfill",
                    .config_ran = 1,
                    .jobs = 1,
                    .tarn_version = TARN_VERSION,
                    .on_event = on_event,
                    .on_slice = on_slice,
                    .ctx = bc};
    build_summary sum;
    cli_stop_watch_session(cp->s);
    int r = build_run(&sum, cp->p, cp->s, &o);
    cli_stop_watch_session(NULL);
    int status = CLI_OK;
    if (build_cancel_signal()) {
        tarn_error_clear();
        status = 128 + build_cancel_signal();
    } else if (r != 0) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        status = CLI_USAGE;
    } else if (sum.failed || bc->failed) {
        status = CLI_FAILED;
    }
    build_summary_free(&sum, cp->p->nmodels);
    free(sel);
    return status;
}

int cmd_backfill(int argc, char **argv)
{
    backfill_cli bc = {0};
    int p = opts_parse(&bc, argc, argv);
    if (p != 0) {
        return cli_parse_result(p, "backfill");
    }
    cli_stop_watch_start(CLI_STOP_CANCEL);
    cli_project cp;
    int status = cli_project_open(&cp, bc.dir);
    if (status != CLI_OK)
        return status;
    long mi = find_model(&cp, bc.model);
    backfill_work w = {0};
    if (mi < 0) {
        status = CLI_USAGE;
    } else if (build_run_config(cp.p, cp.s) != 0 ||
               backfill_worklist(&w, cp.s, cp.p, (size_t)mi, bc.from, bc.to, bc.mode,
                                 (int64_t)clock_epoch_s()) != 0) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        status = CLI_USAGE;
    } else if (w.todo.n == 0) {
        if (!cli_quiet())
            fprintf(stderr,
                    "tarn: nothing to backfill: %zu of the %zu slices %s … %s are built by the "
                    "current SQL%s (--all rebuilds them)\n",
                    w.built, w.total, w.first, w.last,
                    bc.mode == BACKFILL_FAILED ? ", none failed" : "");
        if (bc.json) {
            json_t *o = json_object();
            json_object_set_new(o, "event", json_string("backfill_finish"));
            json_object_set_new(o, "status", json_string("success"));
            json_object_set_new(o, "built", json_integer(0));
            json_object_set_new(o, "failed", json_integer(0));
            json_emit(o);
        }
    } else {
        status = run_backfill(&bc, &cp, (size_t)mi, &w);
    }
    backfill_work_free(&w);
    cli_project_close(&cp);
    return status;
}

/*
 * cmd_scheduler.c — `tarn scheduler`: builds the project's scheduled
 * models when they are due, tick after tick (sched/tick.h), and `tarn
 * schedule`: each scheduled model's rule, next occurrence and last fire.
 *
 * Each tick reloads the project (a broken edit is logged and the tick
 * skipped; the schedule's state is in the catalog, so nothing is lost and
 * the occurrence missed meanwhile is served once the project loads again)
 * and opens the lake only for the tick, so `tarn history` or `tarn sql`
 * work between fires. SIGTERM or SIGINT ends the scheduler after the build
 * in flight (a second one stops that build as `tarn run` does).
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/status.h"
#include "cli/stop.h"
#include "materialize/build.h"
#include "project/query.h"
#include "sched/tick.h"
#include "tarn/error.h"
#include "tarn/version.h"
#include "util/buf.h"
#include "util/quote.h"

#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char cmd_scheduler_usage[] =
    "usage: tarn scheduler [-C DIR] [--interval 60s] [--max-fires-per-tick N] [-j N]\n"
    "                      [--on-workers] [--once [--now 2026-06-01T06:00:00Z]]\n"
    "\n"
    "Builds the models whose '-- schedule \"cron\"' (UTC) or '-- freshness 6h' is due, with\n"
    "change detection (an unchanged model is skipped), together with the models upstream of\n"
    "them that have no rule of their own: one run per tick, recorded with trigger 'scheduler'.\n"
    "A new schedule waits for its next occurrence; after downtime one missed occurrence is\n"
    "served, then the schedule moves on. The state is kept in the lake's catalog, so\n"
    "successive processes continue where the last one stopped.\n"
    "\n"
    "  -C, --project DIR         the project folder (default: the current one)\n"
    "  -q, --quiet               log only failed builds and errors\n"
    "  --interval D              time between ticks: 30s, 5m (default 60s)\n"
    "  --max-fires-per-tick N    fire at most N models a tick; the rest fire later\n"
    "  -j N                      queries evaluated at once in a run, as `tarn run -j`\n"
    "  --on-workers              enqueue each tick's run for `tarn worker` processes, as\n"
    "                            `tarn run --on-workers` (a PostgreSQL catalog)\n"
    "  --once                    run one tick and exit (exit 1 when a build failed)\n"
    "  --now TIME                with --once: the tick's time, UTC (YYYY-MM-DDTHH:MM[:SS]Z)\n"
    "  -h, --help                show this help\n"
    "\n"
    "SIGTERM or Ctrl-C ends it after the build in flight.\n";

const char cmd_schedule_usage[] =
    "usage: tarn schedule [-C DIR] [--now TIME]\n"
    "\n"
    "Lists each scheduled model: its rule, its next occurrence (UTC), when the scheduler last\n"
    "fired it, and the result of that run.\n";

static int parse_interval(long *out, const char *s)
{
    char *end = NULL;
    long n = strtol(s, &end, 10);
    long unit = !end || end == s                 ? 0
                : !*end || strcmp(end, "s") == 0 ? 1
                : strcmp(end, "m") == 0          ? 60
                                                 : 0;
    if (!unit || n <= 0 || n > 86400 / unit)
        return -1;
    *out = n * unit;
    return 0;
}

typedef struct {
    const char *dir;
    long interval_s, max_fires, jobs;
    int once, on_workers;
    int64_t now; /* --now, or -1 */
} sched_opts;

static int parse(sched_opts *o, int argc, char **argv, const char *usage)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, usage))
            return 1;
        if (strcmp(a, "--once") == 0) {
            o->once = 1;
        } else if (strcmp(a, "--on-workers") == 0) {
            o->on_workers = 1;
        } else if (cli_opt_quiet(a)) {
            continue;
        } else if ((m = cli_opt_value(argc, argv, &i, "-C", "--project", &val)) != 0) {
            if (m < 0)
                return -1;
            o->dir = val;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--interval", &val)) != 0) {
            if (m < 0 || parse_interval(&o->interval_s, val) != 0) {
                cli_errorf("--interval takes a duration such as 30s or 5m, not '%s'", val);
                return -1;
            }
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--max-fires-per-tick", &val)) != 0) {
            if (m < 0 || cli_opt_int("--max-fires-per-tick", val, &o->max_fires) < 0)
                return -1;
        } else if ((m = cli_opt_value(argc, argv, &i, "-j", "--jobs", &val)) != 0) {
            if (m < 0 || cli_opt_int("-j", val, &o->jobs) < 0)
                return -1;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--now", &val)) != 0) {
            if (m < 0 || cli_parse_utc(&o->now, val) != 0) {
                cli_errorf("--now takes a UTC time such as 2026-06-01T06:00:00Z, not '%s'", val);
                return -1;
            }
        } else {
            cli_errorf(a[0] == '-' ? "unknown option '%s'" : "unexpected argument '%s'", a);
            return -1;
        }
    }
    return 0;
}

static void log_line(int64_t now, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void log_line(int64_t now, const char *fmt, ...)
{
    char when[21];
    sched_format_time(when, now);
    fprintf(stderr, "tarn scheduler %s: ", when);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void log_report(const sched_report *r, const tarn_project *p, int64_t now)
{
    /* --quiet: what was armed and fired goes unsaid; failures are below */
    for (size_t i = 0; i < r->nlines && !cli_quiet(); i++) {
        const sched_decision *d = &r->lines[i].d;
        const char *name = p->models[r->lines[i].model].name;
        char occ[21], next[21];
        sched_format_time(occ, d->occurrence);
        sched_format_time(next, d->next);
        switch (d->action) {
        case SCHED_ARM:
            log_line(now, "%s armed (next %s)", name, next);
            break;
        case SCHED_FIRE:
            log_line(now, "%s fired (occurrence %s)", name, occ);
            break;
        case SCHED_COALESCED:
            log_line(now, "%s due (occurrence %s) but its build is in flight: not queued again",
                     name, occ);
            break;
        case SCHED_CAPPED:
            log_line(now,
                     "%s due (occurrence %s): over --max-fires-per-tick, fires on a later tick",
                     name, occ);
            break;
        case SCHED_IDLE:
            break;
        }
    }
    if (!r->built)
        return;
    const build_summary *s = &r->sum;
    for (size_t k = 0; k < s->nrun; k++) {
        const model_result *m = &s->results[s->run_order[k]];
        const char *status = m->unchanged ? "unchanged" : model_status_name(m->status);
        if (m->status != MODEL_FAILED && cli_quiet())
            continue;
        char when[21];
        sched_format_time(when, now);
        fprintf(stderr, "tarn scheduler %s:   %s ", when, p->models[m->model].name);
        cli_status(stderr,
                   m->status == MODEL_FAILED    ? CLI_TONE_FAIL
                   : m->status == MODEL_SUCCESS ? CLI_TONE_OK
                                                : CLI_TONE_DIM,
                   0, status);
        if (m->status == MODEL_FAILED)
            fprintf(stderr, ": %s", m->error ? m->error : "");
        fputc('\n', stderr);
    }
    if (cli_quiet() && !s->failed)
        return;
    log_line(now, "run %lld: %zu built, %zu unchanged, %zu failed, %zu skipped",
             (long long)s->run_id, s->succeeded, s->unchanged, s->failed, s->skipped);
}

/* What a run on workers says besides its builds (no worker alive). */
static void log_notice(void *ctx, const char *msg)
{
    log_line(*(const int64_t *)ctx, "%s", msg);
}

/* One tick: 0 fine, CLI_FAILED when a build failed, CLI_USAGE when the
 * project or the lake could not be opened (logged). */
static int one_tick(const sched_opts *o, int64_t now)
{
    cli_project cp;
    if (cli_project_open(&cp, NULL) != CLI_OK) {
        /* cli_project_open reported it; the schedule waits in the catalog */
        log_line(now, "the project does not load: no fires this tick");
        tarn_error_clear();
        return CLI_USAGE;
    }
    build_opts bo = {.jobs = (int)o->jobs,
                     .tarn_version = TARN_VERSION,
                     .on_workers = o->on_workers,
                     .on_notice = log_notice,
                     .ctx = &now};
    sched_report r;
    cli_stop_watch_session(cp.s);
    int rc = sched_tick(&r, cp.p, cp.s, now, (size_t)o->max_fires, &bo);
    cli_stop_watch_session(NULL);
    int status = CLI_OK;
    if (rc) {
        log_line(now, "tick failed: %s", tarn_error_last());
        tarn_error_clear();
        status = CLI_USAGE;
    } else {
        log_report(&r, cp.p, now);
        if (r.built && r.sum.failed)
            status = CLI_FAILED;
    }
    sched_report_free(&r, cp.p);
    cli_project_close(&cp);
    return status;
}

/* --on-workers: refused at the start, as `tarn run --on-workers` refuses,
 * when the lake's catalog is a DuckDB file (one writer: no worker could
 * take the runs), rather than on the first fire, which the schedule would
 * have consumed. A project that does not load now is left to the ticks
 * (each logs it and waits for a good edit). */
static int check_shared(void)
{
    cli_project cp;
    if (cli_project_open(&cp, NULL) != CLI_OK) {
        tarn_error_clear();
        return CLI_OK;
    }
    int shared = 0;
    int rc = build_run_config(cp.p, cp.s);
    if (!rc)
        rc = tarn_session_catalog_shared(cp.s, cp.p->lake_alias, &shared);
    if (!rc && !shared)
        rc = tarn_error_set(
            TARN_EINVALID,
            "--on-workers: lake \"%s\" has its catalog in a DuckDB file (config/), which one "
            "process writes at a time, so workers cannot share it; attach the lake with a "
            "PostgreSQL catalog (ATTACH 'ducklake:postgres:dbname=… host=…' AS %s (DATA_PATH "
            "'…')), or run the scheduler without --on-workers",
            cp.p->lake_alias, cp.p->lake_alias);
    if (rc) {
        cli_report(tarn_error_last());
        tarn_error_clear();
    }
    cli_project_close(&cp);
    return rc ? CLI_USAGE : CLI_OK;
}

/* Sleeps until `until` (epoch seconds) or a stop request. */
static void sleep_until(int64_t until)
{
    while (!cli_stop_requested() && (int64_t)time(NULL) < until) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

int cmd_scheduler(int argc, char **argv)
{
    sched_opts o = {.interval_s = 60, .now = -1};
    int p = parse(&o, argc, argv, cmd_scheduler_usage);
    if (p != 0) {
        return cli_parse_result(p, "scheduler");
    }
    if (o.now >= 0 && !o.once) {
        cli_errorf("--now needs --once (a running scheduler follows the clock)");
        return CLI_USAGE;
    }
    if (o.jobs == 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        o.jobs = n > 0 ? n : 1;
    }
    if (o.dir && chdir(o.dir) != 0) {
        cli_errorf("cannot use project folder %s: %s", o.dir, strerror(errno));
        return CLI_USAGE;
    }
    if (o.on_workers && check_shared() != CLI_OK)
        return CLI_USAGE;
    cli_stop_watch_start(CLI_STOP_AFTER_BUILD);
    if (o.once)
        return one_tick(&o, o.now >= 0 ? o.now : (int64_t)time(NULL));
    fprintf(stderr, "tarn scheduler: every %lds%s; SIGTERM or Ctrl-C ends it\n", o.interval_s,
            o.max_fires ? ", fires capped per tick" : "");
    while (!cli_stop_requested()) {
        int64_t now = (int64_t)time(NULL);
        one_tick(&o, now);
        sleep_until(now + o.interval_s);
    }
    fprintf(stderr, "tarn scheduler: stopped (%s)\n",
            cli_stop_requested() == SIGTERM ? "SIGTERM" : "SIGINT");
    return CLI_OK;
}

/* ---- tarn schedule ---- */

static void print_model(const tarn_model *m, const qrows *q, int64_t now)
{
    char *rule = sched_rule_text(m);
    const char *fired = NULL, *status = NULL;
    int64_t armed = -1, last = -1;
    for (size_t r = 0; q && r < q->nrows; r++) {
        const char *qrule = qrows_get(q, r, 1);
        if (strcmp(qrows_get(q, r, 0), m->name) != 0 || !qrule || strcmp(qrule, rule) != 0)
            continue;
        armed = qrows_get(q, r, 2) ? strtoll(qrows_get(q, r, 2), NULL, 10) : -1;
        last = qrows_get(q, r, 3) ? strtoll(qrows_get(q, r, 3), NULL, 10) : -1;
        fired = qrows_get(q, r, 4);
        status = qrows_get(q, r, 5);
    }
    sched_entry e = {.model = m->name,
                     .schedule = m->annot.schedule,
                     .freshness_s = m->annot.freshness_s,
                     .armed = armed >= 0,
                     .armed_at = armed,
                     .last_occurrence = last,
                     .last_good_build = -1};
    sched_decision d;
    char next[21] = "?";
    if (m->annot.schedule && sched_decide(&d, &e, 1, now, 0) == 0) {
        if (d.action == SCHED_FIRE)
            snprintf(next, sizeof(next), "due now");
        else
            sched_format_time(next, d.next);
    } else if (!m->annot.schedule) {
        snprintf(next, sizeof(next), "when stale");
    }
    printf("%-28s %-18s %-22s %-22s %s\n", m->name, rule, e.armed ? next : "(not armed yet)",
           fired ? fired : "never", status ? status : "-");
    free(rule);
}

int cmd_schedule(int argc, char **argv)
{
    sched_opts o = {.now = -1};
    int p = parse(&o, argc, argv, cmd_schedule_usage);
    if (p != 0)
        return p > 0 ? CLI_OK : CLI_USAGE;
    cli_project cp;
    int status = cli_project_open(&cp, o.dir);
    if (status != CLI_OK)
        return status;
    qrows q = {0};
    int have = 0;
    if (cli_project_lake_exists(&cp) && cli_project_attach(&cp) == 0) {
        const char *cat = tarn_session_catalog_prefix(cp.s, cp.p->lake_alias);
        tarn_buf b = {0};
        buf_puts(&b, "SELECT s.model, s.rule, epoch(s.armed_at)::BIGINT, "
                     "epoch(s.last_occurrence)::BIGINT, strftime(s.last_fire_at AT TIME ZONE "
                     "'UTC', '%Y-%m-%dT%H:%M:%SZ'), r.status FROM ");
        quote_prefixed(&b, cat, "tarn_schedule");
        buf_puts(&b, " s LEFT JOIN ");
        quote_prefixed(&b, cat, "tarn_run");
        buf_puts(&b, " r ON r.run_id = s.last_run_id");
        have = query_rows(&q, cp.s, buf_cstr(&b)) == 0;
        buf_free(&b);
    }
    tarn_error_clear(); /* no scheduler ran yet: nothing recorded */
    int64_t now = o.now >= 0 ? o.now : (int64_t)time(NULL);
    printf("%-28s %-18s %-22s %-22s %s\n", "model", "rule", "next (UTC)", "last fired", "result");
    size_t n = 0;
    for (size_t i = 0; i < cp.p->nmodels; i++) {
        const tarn_model *m = &cp.p->models[i];
        if (m->annot.schedule || m->annot.freshness_line) {
            print_model(m, have ? &q : NULL, now);
            n++;
        }
    }
    if (!n)
        puts("(no model has a schedule or freshness)");
    if (have)
        qrows_free(&q);
    cli_project_close(&cp);
    return CLI_OK;
}

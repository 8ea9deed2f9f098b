/*
 * project_cli.c — shared plumbing of the project commands (see
 * project_cli.h).
 */
#include "cli/project_cli.h"

#include "cli/cli.h"
#include "cli/status.h"
#include "project/attach.h"
#include "project/load.h"
#include "project/query.h"
#include "project/select.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/proc.h"
#include "util/quote.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_opt_help(const char *arg, const char *usage)
{
    if (strcmp(arg, "-h") != 0 && strcmp(arg, "--help") != 0)
        return 0;
    fputs(usage, stdout);
    return 1;
}

int cli_parse_result(int parsed, const char *cmd)
{
    if (parsed > 0)
        return CLI_OK;
    fprintf(stderr, "Try 'tarn %s --help'.\n", cmd);
    return CLI_USAGE;
}

int cli_opt_value(int argc, char **argv, int *i, const char *shrt, const char *lng,
                  const char **val)
{
    const char *a = argv[*i];
    size_t ln = strlen(lng);
    const char *inline_val = NULL;
    if (shrt && strncmp(a, shrt, 2) == 0 && strlen(shrt) == 2)
        inline_val = a[2] ? a + 2 : NULL;
    else if (strncmp(a, lng, ln) == 0 && (a[ln] == '=' || a[ln] == '\0'))
        inline_val = a[ln] == '=' ? a + ln + 1 : NULL;
    else
        return 0;
    if (inline_val) {
        *val = inline_val;
        return 1;
    }
    if (*i + 1 >= argc) {
        cli_errorf("option %s needs a value", a);
        return -1;
    }
    *val = argv[++*i];
    return 1;
}

int cli_parse_utc(int64_t *out, const char *s)
{
    struct tm tm = {0};
    const char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!end) {
        memset(&tm, 0, sizeof(tm));
        end = strptime(s, "%Y-%m-%dT%H:%M", &tm);
    }
    if (!end || (*end && strcmp(end, "Z") != 0))
        return -1;
    *out = (int64_t)timegm(&tm);
    return 0;
}

int cli_opt_int(const char *opt, const char *val, long *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(val, &end, 10);
    if (errno || !end || *end || v < 1) {
        cli_errorf("%s takes a positive integer, not '%s'", opt, val);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_opt_format(int argc, char **argv, int *i, render_format *fmt)
{
    const char *val;
    int m = cli_opt_value(argc, argv, i, NULL, "--format", &val);
    if (m > 0 && render_format_parse(fmt, val) != 0) {
        cli_errorf("%s", tarn_error_last());
        tarn_error_clear();
        return -1;
    }
    /* tarn's own listings give typed JSON; only `tarn sql` keeps the text form */
    if (m > 0 && *fmt == RENDER_JSON)
        *fmt = RENDER_JSON_TYPED;
    return m;
}

int cli_opt_dir_model(int argc, char **argv, int *i, const char **dir, const char **model)
{
    const char *a = argv[*i], *val;
    int m = cli_opt_value(argc, argv, i, "-C", "--project", &val);
    if (m != 0) {
        if (m > 0)
            *dir = val;
        return m < 0 ? -1 : 0;
    }
    if (a[0] == '-' && a[1]) {
        cli_errorf("unknown option '%s'", a);
        return -1;
    }
    if (*model) {
        cli_errorf("give one MODEL");
        return -1;
    }
    *model = a;
    return 0;
}

/* Pushes argv[*i + 1 …] onto l up to the next option; -1 when there is
 * none (reported). */
static int opt_values(int argc, char **argv, int *i, const char *inline_val, strlist *l)
{
    const char *opt = argv[*i];
    if (inline_val) {
        strlist_push(l, inline_val);
        return 1;
    }
    size_t before = l->n;
    while (*i + 1 < argc && !(argv[*i + 1][0] == '-' && argv[*i + 1][1]))
        strlist_push(l, argv[++*i]);
    if (l->n == before) {
        cli_errorf("option %s needs a selector", opt);
        return -1;
    }
    return 1;
}

/* An option spelled -x, -xV, --long or --long=V: 1 and *inline_val (NULL
 * when the values follow) on a match, else 0. */
static int opt_spelled(const char *a, const char *shrt, const char *lng, const char **inline_val)
{
    size_t ln = strlen(lng);
    *inline_val = NULL;
    if (shrt && strncmp(a, shrt, 2) == 0) {
        *inline_val = a[2] ? a + 2 : NULL;
        return 1;
    }
    if (strncmp(a, lng, ln) == 0 && (a[ln] == '=' || a[ln] == '\0')) {
        *inline_val = a[ln] == '=' ? a + ln + 1 : NULL;
        return 1;
    }
    return 0;
}

static int wide_output;

int cli_wide(void)
{
    return wide_output;
}

int cli_opt_common(int argc, char **argv, int *i, cli_common *c, int flags)
{
    const char *a = argv[*i], *val;
    int m;
    if (strcmp(a, "--wide") == 0) {
        wide_output = 1;
        return 1;
    }
    if (cli_opt_quiet(a))
        return 1;
    if ((m = cli_opt_value(argc, argv, i, "-C", "--project", &val)) != 0) {
        if (m > 0)
            c->dir = val;
        return m;
    }
    if ((m = cli_opt_value(argc, argv, i, "-t", "--target", &val)) != 0) {
        if (m > 0)
            c->target = val;
        return m;
    }
    if (opt_spelled(a, "-s", "--select", &val))
        return opt_values(argc, argv, i, val, &c->select);
    if (opt_spelled(a, NULL, "--exclude", &val))
        return opt_values(argc, argv, i, val, &c->exclude);
    if ((flags & CLI_COMMON_POSITIONAL) && !(a[0] == '-' && a[1])) {
        strlist_push(&c->select, a);
        return 1;
    }
    return 0;
}

int cli_common_select(unsigned char **out, const cli_common *c, const tarn_project *p)
{
    return select_models_excluding(out, p, c->select.items, c->select.n, c->exclude.items,
                                   c->exclude.n);
}

char *cli_common_selectors_text(const cli_common *c)
{
    tarn_buf b = {0};
    char *sel = strlist_join(&c->select, " ");
    buf_puts(&b, sel);
    free(sel);
    if (c->exclude.n) {
        char *ex = strlist_join(&c->exclude, " ");
        buf_printf(&b, "%s--exclude %s", c->select.n ? " " : "", ex);
        free(ex);
    }
    return buf_detach(&b);
}

void cli_common_free(cli_common *c)
{
    strlist_free(&c->select);
    strlist_free(&c->exclude);
}

static int is_project_dir(const char *dir)
{
    char *models = xasprintf("%s/models", dir);
    struct stat st;
    int yes = stat(models, &st) == 0 && S_ISDIR(st.st_mode);
    free(models);
    return yes;
}

int cli_in_project(void)
{
    return is_project_dir(".");
}

int cli_project_chdir(const char *dir)
{
    if (dir) {
        if (chdir(dir) != 0) {
            cli_errorf("cannot use project folder %s: %s", dir, strerror(errno));
            return CLI_USAGE;
        }
        return CLI_OK;
    }
    /* As git and dbt do: the nearest folder up that is a project, so a
     * command works from models/marts/ too. */
    char *cwd = getcwd(NULL, 0);
    if (!cwd)
        return CLI_OK;
    char *d = xstrdup(cwd);
    for (;;) {
        if (is_project_dir(d)) {
            if (strcmp(d, cwd) != 0 && chdir(d) != 0) {
                cli_errorf("cannot use project folder %s: %s", d, strerror(errno));
                free(d);
                free(cwd);
                return CLI_USAGE;
            }
            break;
        }
        char *slash = strrchr(d, '/');
        if (!slash || slash == d)
            break;
        *slash = 0;
    }
    free(d);
    free(cwd);
    return CLI_OK;
}

int cli_project_print(cli_project *cp, const char *sql, render_format fmt)
{
    int status = CLI_OK;
    render *r = render_new(fmt, stdout);
    render_use_session(r, cp->s);
    if (!cli_wide())
        render_set_width(r, render_terminal_width(stdout));
    render_start(r, 1, TARN_OUTPUT_ROWS);
    if (tarn_session_exec(cp->s, sql, render_sink(r)) == 0) {
        render_finish(r);
    } else {
        render_error(r, tarn_error_last());
        cli_report(tarn_error_last());
        status = CLI_FAILED;
    }
    render_free(r);
    return status;
}

char *cli_lock_message(const char *msg)
{
    /* DuckDB: Could not set lock on file "F": Conflicting lock is held in
     * PROGRAM (PID N) … */
    const char *at = strstr(msg, "Could not set lock on file \"");
    if (!at)
        return NULL;
    const char *file = at + strlen("Could not set lock on file \"");
    const char *file_end = strchr(file, '"');
    const char *pid_at = strstr(at, "(PID ");
    if (!file_end)
        return NULL;
    long pid = pid_at ? strtol(pid_at + 5, NULL, 10) : 0;
    char *cmd = pid > 0 ? proc_command(pid) : NULL;
    tarn_buf b = {0};
    buf_printf(&b, "the lake's catalog %.*s is in use by another process", (int)(file_end - file),
               file);
    if (pid > 0)
        buf_printf(&b, ": pid %ld", pid);
    if (cmd)
        buf_printf(&b, " (%s)", cmd);
    buf_puts(&b, "; one process at a time writes a lake\n"
                 "  fix: wait for it to finish");
    if (pid > 0)
        buf_printf(&b, ", or stop it if it is stuck (kill %ld)", pid);
    buf_puts(&b, " (plan, history and show open the lake read-only: they run beside each "
                 "other, not beside a run, `tarn sql` or maintenance)");
    free(cmd);
    return buf_detach(&b);
}

void cli_report(const char *msg)
{
    fflush(stdout);
    char *lock = cli_lock_message(msg);
    if (lock)
        msg = lock;
    const char *s = msg;
    int first = 1;
    while (*s) {
        const char *eol = strchr(s, '\n');
        size_t n = eol ? (size_t)(eol - s) : strlen(s);
        fprintf(stderr, "%s%.*s\n", first ? "tarn: " : "      ", (int)n, s);
        first = 0;
        s = eol ? eol + 1 : s + n;
    }
    free(lock);
}

int cli_project_open(cli_project *cp, const char *dir)
{
    cli_common c = {.dir = dir};
    return cli_project_open_common(cp, &c);
}

int cli_project_open_common(cli_project *cp, const cli_common *c)
{
    memset(cp, 0, sizeof(*cp));
    if (cli_project_chdir(c->dir) != CLI_OK)
        return CLI_USAGE;
    const char *target = c->target;
    if (!target && getenv("TARN_TARGET") && *getenv("TARN_TARGET"))
        target = getenv("TARN_TARGET");
    if (tarn_session_open(&cp->s) != 0) {
        cli_report(tarn_error_last());
        return CLI_USAGE;
    }
    if (project_load_target(&cp->p, ".", target, cp->s) != 0) {
        /* Reported, and left in tarn_error_last() for callers that also
         * print it elsewhere (tarn run --json). */
        cli_report(tarn_error_last());
        tarn_session_close(cp->s);
        cp->s = NULL;
        return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_project_open_or_free(cli_project *cp, cli_common *c)
{
    int status = cli_project_open_common(cp, c);
    if (status != CLI_OK)
        cli_common_free(c);
    return status;
}

int cli_project_select(unsigned char **sel, cli_project *cp, cli_common *c)
{
    *sel = NULL;
    if (cli_common_select(sel, c, cp->p) == 0)
        return CLI_OK;
    cli_report(tarn_error_last());
    cli_project_close(cp);
    cli_common_free(c);
    return CLI_USAGE;
}

int cli_project_lake_exists(const cli_project *cp)
{
    return project_lake_exists(cp->p);
}

int cli_project_attach(cli_project *cp)
{
    return cli_project_attach_mode(cp, 1);
}

int cli_project_attach_mode(cli_project *cp, int read_only)
{
    int rc = project_attach_lake(cp->p, cp->s, read_only);
    if (rc != 0) {
        cli_report(tarn_error_last());
        tarn_error_clear();
        return CLI_USAGE;
    }
    return CLI_OK;
}

void cli_project_close(cli_project *cp)
{
    project_free(cp->p);
    tarn_session_close(cp->s);
    memset(cp, 0, sizeof(*cp));
}

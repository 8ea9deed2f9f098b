/*
 * cmd_sql.c — `tarn sql`: runs DuckDB SQL in a tarn session, from the
 * command line, a file, standard input or an interactive prompt.
 *
 * Every source ends up as script text that is split with sql_split() and
 * run one statement at a time, so the four sources behave the same: a
 * failing statement is reported (stderr, plus the format's error marker
 * on stdout) and the script goes on. Printing is render.c's job; the
 * prompt is repl.c's.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"
#include "cli/render.h"
#include "cli/repl.h"

#include "sql/lexer.h"
#include "tarn/error.h"
#include "tarn/session.h"
#include "util/buf.h"
#include "util/textmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_sql_usage[] =
    "usage: tarn sql [SQL...] [-c SQL] [--format table|csv|json]\n"
    "       tarn sql -f FILE [--format table|csv|json]\n"
    "\n"
    "Runs DuckDB SQL statements separated by ';'. SQL arguments (and -c)\n"
    "are joined with spaces; -f FILE reads a script (- for standard input);\n"
    "with neither, the script is read from standard input, or an\n"
    "interactive prompt starts when that is a terminal.\n"
    "\n"
    "  -c, --command SQL   same as a SQL argument (psql style)\n"
    "  -f, --file FILE     run the statements in FILE\n"
    "  --format FORMAT     table (default), csv or json\n"
    "  -h, --help          show this help\n"
    "\n"
    "A failing statement is reported on stderr and the rest still run.\n"
    "Exit status: 0 all statements succeeded, 1 some failed, 2 usage error\n"
    "(the interactive prompt exits 0).\n";

typedef struct {
    const char *file;
    render_format format;
    tarn_buf sql; /* positional arguments joined with spaces */
    int nsql;
} sql_opts;

/* One run of `tarn sql`: the session, the output, and what went wrong. */
typedef struct {
    tarn_session *session;
    render *out;
    int stmt;        /* statements started so far, across all input */
    int failed;      /* statements (or scripts) that failed */
    int interactive; /* errors then need no statement number */
} sql_run;

/* ---- running --------------------------------------------------------- */

static void stmt_report(sql_run *run, const sql_stmt *st, const char *msg)
{
    if (run->interactive)
        cli_errorf("%s", msg);
    else
        cli_errorf("statement %d (line %d): %s", run->stmt, st->line, msg);
}

static void stmt_run(sql_run *run, const sql_stmt *st)
{
    run->stmt++;
    tarn_output_kind kind = sql_output_kind(st->text);
    render_start(run->out, run->stmt, kind);
    char kw[16];
    sql_first_keyword(st->text, kw, sizeof(kw));
    if (kind == TARN_OUTPUT_NONE && strcmp(kw, "CREATE") == 0)
        render_set_created(run->out);
    if (tarn_session_exec(run->session, st->text, render_sink(run->out)) == 0) {
        render_finish(run->out);
        return;
    }
    /* Copied: the message lives only until the next tarn call. The
     * session points its position into the statement as written. */
    tarn_buf text = {0};
    buf_puts(&text, tarn_error_last());
    const char *in = NULL;
    long pos = tarn_error_position(&in);
    if (pos >= 0 && strcmp(in, st->text) == 0)
        textmap_excerpt(&text, st->text, (size_t)pos, st->line);
    char *msg = text.len ? buf_detach(&text) : xstrdup("");
    buf_free(&text);
    tarn_error_clear();
    run->failed++;
    render_error(run->out, msg);
    stmt_report(run, st, msg);
    free(msg);
}

static void script_run(sql_run *run, const char *text)
{
    sql_script script = {0};
    if (sql_split(&script, text) < 0) {
        /* Nothing runs: the statement boundaries are unknown. */
        cli_errorf("%s", tarn_error_last());
        tarn_error_clear();
        run->failed++;
        return;
    }
    for (size_t i = 0; i < script.n; i++)
        stmt_run(run, &script.items[i]);
    sql_script_free(&script);
}

static void repl_chunk(void *ctx, const char *sql)
{
    script_run(ctx, sql);
}

/* ---- input ----------------------------------------------------------- */

static int stream_read(tarn_buf *b, FILE *f)
{
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
        buf_append(b, chunk, n);
    return ferror(f) ? -1 : 0;
}

/* Reads FILE ("-" is standard input); a usage error when it cannot. */
static int file_read(tarn_buf *b, const char *path)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        cli_errorf("cannot read '%s': %s", path, strerror(errno));
        return -1;
    }
    int rc = stream_read(b, f);
    int err = errno; /* e.g. EISDIR: fopen() opens a directory fine */
    if (!is_stdin)
        fclose(f);
    if (rc < 0)
        cli_errorf("cannot read '%s': %s", path, strerror(err));
    return rc;
}

/* ---- options --------------------------------------------------------- */

static void opt_add_sql(sql_opts *o, const char *sql)
{
    if (o->nsql++)
        buf_putc(&o->sql, ' ');
    buf_puts(&o->sql, sql);
}

/* Handles the option at argv[*i]. Returns 1 for --help, 0 when taken,
 * -1 on a usage error (already reported). */
static int opt_parse_one(sql_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *val;
    int m;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)
        return 1;
    if ((m = cli_opt_value(argc, argv, i, "-c", "--command", &val)) != 0) {
        if (m > 0)
            opt_add_sql(o, val);
        return m < 0 ? -1 : 0;
    }
    if ((m = cli_opt_value(argc, argv, i, "-f", "--file", &val)) != 0) {
        o->file = val;
        return m < 0 ? -1 : 0;
    }
    if ((m = cli_opt_format(argc, argv, i, &o->format)) != 0)
        return m < 0 ? -1 : 0;
    cli_errorf("unknown option '%s'", a);
    return -1;
}

/* Returns 1 for --help, 0 to go on, -1 on a usage error. */
static int opts_parse(sql_opts *o, int argc, char **argv)
{
    int only_args = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_args && strcmp(a, "--") == 0) {
            only_args = 1;
        } else if (!only_args && a[0] == '-' && a[1] != '\0') {
            int rc = opt_parse_one(o, argc, argv, &i);
            if (rc != 0)
                return rc;
        } else {
            opt_add_sql(o, a);
        }
    }
    if (o->file && o->nsql) {
        cli_errorf("give SQL arguments or -f FILE, not both");
        return -1;
    }
    return 0;
}

/* ---- the command ----------------------------------------------------- */

/* Runs the statements of `o` (or the prompt); returns the exit status. */
static int sql_execute(sql_opts *o, const char *script, int interactive)
{
    sql_run run = {.interactive = interactive};
    if (tarn_session_open(&run.session) < 0) {
        cli_errorf("%s", tarn_error_last());
        return CLI_FAILED;
    }
    run.out = render_new(o->format, stdout);
    if (interactive)
        repl_run(repl_chunk, &run);
    else
        script_run(&run, script);
    render_free(run.out);
    tarn_session_close(run.session);
    /* At the prompt the user has seen every error already; like psql,
     * a typo along the way does not make the whole session "fail". */
    return run.failed && !interactive ? CLI_FAILED : CLI_OK;
}

int cmd_sql(int argc, char **argv)
{
    sql_opts o = {.format = RENDER_TABLE};
    tarn_buf script = {0};
    int rc = opts_parse(&o, argc, argv), interactive = 0;
    if (rc > 0)
        fputs(cmd_sql_usage, stdout);
    else if (rc < 0)
        fputs("Try 'tarn sql --help'.\n", stderr);
    if (rc != 0) {
        buf_free(&o.sql);
        return rc > 0 ? CLI_OK : CLI_USAGE;
    }
    if (o.file)
        rc = file_read(&script, o.file);
    else if (o.nsql)
        buf_puts(&script, buf_cstr(&o.sql));
    else if (isatty(STDIN_FILENO))
        interactive = 1;
    else
        rc = file_read(&script, "-");
    if (rc == 0)
        rc = sql_execute(&o, buf_cstr(&script), interactive);
    else
        rc = CLI_USAGE;
    buf_free(&script);
    buf_free(&o.sql);
    return rc;
}

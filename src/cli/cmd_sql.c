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
#include "util/clock.h"
#include "util/quote.h"
#include "util/textmap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char cmd_sql_usage[] =
    "usage: tarn sql [SQL...] [-c SQL] [--format table|csv|json|line] [--wide]\n"
    "       tarn sql -f FILE [--format table|csv|json|line] [--wide]\n"
    "\n"
    "Runs DuckDB SQL statements separated by ';'. SQL arguments (and -c)\n"
    "are joined with spaces; -f FILE reads a script (- for standard input);\n"
    "with neither, the script is read from standard input, or an\n"
    "interactive prompt starts when that is a terminal.\n"
    "\n"
    "  -c, --command SQL   same as a SQL argument (psql style)\n"
    "  -f, --file FILE     run the statements in FILE\n"
    "  --format FORMAT     table (default), csv, json (typed values, as\n"
    "                      duckdb -json) or line (one `column = value` a line)\n"
    "  --wide              on a terminal, do not cut tables to its width\n"
    "  -h, --help          show this help\n"
    "\n"
    "At the prompt: .tables, .schema [TABLE], .mode table|csv|json|line,\n"
    "  .timer on|off, .read FILE, .help, .quit (or Ctrl-D). Ctrl-C stops the\n"
    "  running statement, or drops the line being typed.\n"
    "\n"
    "A failing statement is reported on stderr and the rest still run.\n"
    "Exit status: 0 all statements succeeded, 1 some failed, 2 usage error\n"
    "(the interactive prompt exits 0).\n";

typedef struct {
    const char *file;
    int wide;
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
    int timer;       /* .timer on: each statement's time after it */
    int echo;        /* label counts with the statement's first line */
} sql_run;

/* ---- running --------------------------------------------------------- */

static void stmt_report(sql_run *run, const sql_stmt *st, const char *msg)
{
    if (run->interactive)
        cli_errorf("%s", msg);
    else
        cli_errorf("statement %d (line %d): %s", run->stmt, st->line, msg);
}

/* The statement's first line, cut at 72 characters: what a count is of. */
static char *first_line(const char *text)
{
    text += strspn(text, " \t\r\n");
    size_t n = strcspn(text, "\r\n");
    int more = text[n] != 0 && text[n + strspn(text + n, " \t\r\n;")] != 0;
    if (n > 72) {
        n = 72;
        more = 1;
    }
    return xasprintf("%.*s%s", (int)n, text, more ? " …" : "");
}

static void stmt_timer(const sql_run *run, double t0)
{
    if (run->timer)
        printf("Run Time (s): real %.3f\n", (clock_mono_ms() - t0) / 1000.0);
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
    if (run->echo) {
        char *label = first_line(st->text);
        render_set_label(run->out, label);
        free(label);
    }
    double t0 = clock_mono_ms();
    if (tarn_session_exec(run->session, st->text, render_sink(run->out)) == 0) {
        render_finish(run->out);
        stmt_timer(run, t0);
        return;
    }
    stmt_timer(run, t0);
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
    int echo = run->echo;
    if (!run->interactive && script.n > 1 && render_get_format(run->out) == RENDER_TABLE)
        run->echo = 1;
    for (size_t i = 0; i < script.n; i++)
        stmt_run(run, &script.items[i]);
    run->echo = echo;
    sql_script_free(&script);
}

static void repl_chunk(void *ctx, const char *sql)
{
    script_run(ctx, sql);
}

static int file_read(tarn_buf *b, const char *path);
static int dot_command(void *ctx, const char *line);

/* A script that may hold dot commands (lines starting with '.' between
 * statements), as the duckdb shell takes them from a file or a pipe. One
 * without any runs as one script. Returns 1 after .quit. */
static int script_run_dots(sql_run *run, const char *text)
{
    int dots = text[0] == '.' || strstr(text, "\n.") != NULL;
    if (!dots) {
        script_run(run, text);
        return 0;
    }
    tarn_buf chunk = {0};
    int quit = 0;
    size_t lines = 0;
    for (const char *s = text; *s && !quit; lines++) {
        const char *eol = strchr(s, '\n');
        size_t n = eol ? (size_t)(eol - s) : strlen(s);
        if (s[0] == '.' && repl_input_complete(buf_cstr(&chunk))) {
            char *line = xstrndup(s, n);
            script_run(run, buf_cstr(&chunk));
            /* blank lines in place of what ran, so errors keep the
             * script's line numbers */
            buf_clear(&chunk);
            for (size_t k = 0; k <= lines; k++)
                buf_putc(&chunk, '\n');
            quit = dot_command(run, line);
            free(line);
        } else {
            buf_append(&chunk, s, n);
            buf_putc(&chunk, '\n');
        }
        s = eol ? eol + 1 : s + n;
    }
    if (!quit)
        script_run(run, buf_cstr(&chunk));
    buf_free(&chunk);
    return quit;
}

/* ---- dot commands (the duckdb shell's) -------------------------------- */

static const char dot_help[] =
    ".tables             the tables and views (of the lake after USE lake)\n"
    ".schema [TABLE]     CREATE statements of the tables (or of one)\n"
    ".mode MODE          table, csv, json or line\n"
    ".timer on|off       print each statement's run time\n"
    ".read FILE          run the statements in FILE\n"
    ".help               this list\n"
    ".quit, .exit        leave (so does Ctrl-D)\n"
    "End SQL statements with ';'. Ctrl-C stops a running statement.\n";

/* Prints the first cell of each row, as it is (.schema, .tables). */
static void lines_row(void *ctx, const char *const *cells)
{
    (void)ctx;
    if (cells[0])
        printf("%s\n", cells[0]);
}

/* Runs a query the shell makes up, printing its rows' first cells. */
static void dot_lines(sql_run *run, const char *sql)
{
    tarn_sink sink = {.row = lines_row};
    tarn_session_set_json_cells(run->session, 0);
    if (tarn_session_exec(run->session, sql, &sink) != 0) {
        cli_errorf("%s", tarn_error_last());
        tarn_error_clear();
    }
    render_set_format(run->out, render_get_format(run->out)); /* JSON cells back */
}

/* .schema [TABLE]: the CREATE statement of each table and view of the
 * current database (the lake's after USE lake), as the duckdb CLI prints
 * them from duckdb_tables() and duckdb_views() (where a lake table is the
 * table it is, not tarn's view over its files). */
static void dot_schema(sql_run *run, const char *table)
{
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT sql FROM (SELECT schema_name AS s, table_name AS n, sql FROM "
                   "duckdb_tables() WHERE database_name = current_database() UNION ALL SELECT "
                   "schema_name, view_name, sql FROM duckdb_views() WHERE database_name = "
                   "current_database() AND NOT internal) WHERE sql IS NOT NULL");
    if (table) {
        buf_puts(&sql, " AND (lower(n) = lower(");
        quote_literal(&sql, table);
        buf_puts(&sql, ") OR lower(s || '.' || n) = lower(");
        quote_literal(&sql, table);
        buf_puts(&sql, "))");
    }
    buf_puts(&sql, " ORDER BY s, n");
    dot_lines(run, buf_cstr(&sql));
    buf_free(&sql);
}

static int dot_command(void *ctx, const char *line)
{
    sql_run *run = ctx;
    char word[16] = "", arg[4096] = "";
    int n = sscanf(line, "%15s %4095[^\n]", word, arg);
    size_t al = strlen(arg);
    while (al && (arg[al - 1] == ' ' || arg[al - 1] == ';' || arg[al - 1] == '\r'))
        arg[--al] = 0;
    const char *a = n > 1 && *arg ? arg : NULL;
    int quit = 0;
    if (strcmp(word, ".quit") == 0 || strcmp(word, ".exit") == 0)
        return 1;
    if (strcmp(word, ".help") == 0) {
        fputs(dot_help, stdout);
    } else if (strcmp(word, ".tables") == 0) {
        dot_lines(run, "SELECT name FROM (SHOW TABLES) ORDER BY name");
    } else if (strcmp(word, ".schema") == 0) {
        dot_schema(run, a);
    } else if (strcmp(word, ".mode") == 0) {
        render_format f;
        if (!a)
            printf("current mode: %s\n",
                   (const char *[]){"table", "csv", "json", "line",
                                    "json-typed"}[render_get_format(run->out)]);
        else if (render_format_parse(&f, a) != 0) {
            cli_errorf("%s", tarn_error_last());
            tarn_error_clear();
        } else {
            render_set_format(run->out, f);
        }
    } else if (strcmp(word, ".timer") == 0) {
        if (a && (strcmp(a, "on") == 0 || strcmp(a, "off") == 0))
            run->timer = strcmp(a, "on") == 0;
        else
            cli_errorf(".timer takes on or off");
    } else if (strcmp(word, ".read") == 0) {
        tarn_buf text = {0};
        if (!a)
            cli_errorf(".read takes a file name");
        else if (file_read(&text, a) == 0 && script_run_dots(run, buf_cstr(&text)))
            quit = 1;
        buf_free(&text);
    } else {
        cli_errorf("unknown command %s (.help lists them)", word);
    }
    return quit;
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
    if ((m = cli_opt_value(argc, argv, i, NULL, "--format", &val)) != 0) {
        if (m > 0 && render_format_parse(&o->format, val) != 0) {
            cli_errorf("%s", tarn_error_last());
            tarn_error_clear();
            return -1;
        }
        return m < 0 ? -1 : 0;
    }
    if (strcmp(a, "--wide") == 0) {
        o->wide = 1;
        return 0;
    }
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
    render_use_session(run.out, run.session);
    if (!o->wide)
        render_set_width(run.out, render_terminal_width(stdout));
    if (interactive) {
        repl_handlers h = {repl_chunk, dot_command, &run, run.session};
        repl_run(&h);
    } else
        script_run_dots(&run, script);
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

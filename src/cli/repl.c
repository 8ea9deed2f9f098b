/*
 * repl.c — the interactive loop behind `tarn sql` on a terminal (see
 * repl.h). Lines are gathered until the input ends a statement; the
 * lexer decides that, so a ';' inside a string or comment that spans
 * lines does not cut the statement short.
 */
#include "cli/repl.h"

#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <editline/readline.h>

#define HISTORY_MAX 1000

/* ~/.tarn_history, or NULL (no history kept) when HOME is unset. */
static char *history_path(void)
{
    const char *home = getenv("HOME");
    if (!home || !*home)
        return NULL;
    return xasprintf("%s/.tarn_history", home);
}

/* 1 when the text typed so far ends with a statement terminator outside
 * any string or comment. Unterminated strings/comments are incomplete,
 * not errors: the user is still typing them. Text with no tokens at all
 * (only comments) is complete, so it is not carried into the next entry. */
int repl_input_complete(const char *text)
{
    sql_tokens t;
    if (sql_tokenize(&t, text) < 0) {
        tarn_error_clear();
        return 0;
    }
    int done = t.n == 0 || t.toks[t.n - 1].type == SQL_TOK_SEMI;
    sql_tokens_free(&t);
    return done;
}

static int is_blank(const char *s)
{
    return s[strspn(s, " \t\r\n")] == '\0';
}

static void run_chunk(const repl_handlers *h, const char *sql);

/* Takes one line into `pending`; runs it through fn once complete. */
static void repl_take(tarn_buf *pending, const char *line, const repl_handlers *h)
{
    if (pending->len == 0 && is_blank(line))
        return;
    if (pending->len)
        buf_putc(pending, '\n');
    buf_puts(pending, line);
    if (!repl_input_complete(buf_cstr(pending)))
        return;
    add_history(buf_cstr(pending));
    run_chunk(h, buf_cstr(pending));
    buf_clear(pending);
}

/* What Ctrl-C acts on: the session while a chunk runs, else the prompt. */
static tarn_session *volatile busy_session;
static volatile sig_atomic_t prompt_interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    tarn_session *s = busy_session;
    if (s)
        tarn_session_interrupt(s); /* an atomic flag in DuckDB: signal-safe */
    else
        prompt_interrupted = 1;
}

static void run_chunk(const repl_handlers *h, const char *sql)
{
    busy_session = h->session;
    h->run(h->ctx, sql);
    busy_session = NULL;
}

/* A line starting with '.' at the start of an entry, where it cannot be
 * SQL. Returns 1 to leave the loop. */
static int dot_line(const repl_handlers *h, const char *line, int *handled)
{
    const char *s = line + strspn(line, " \t");
    *handled = *s == '.';
    if (!*handled)
        return 0;
    add_history(line);
    busy_session = h->session;
    int quit = h->dot(h->ctx, s);
    busy_session = NULL;
    return quit;
}

void repl_run(const repl_handlers *h)
{
    char *hist = history_path();
    tarn_buf pending = {0};
    using_history();
    stifle_history(HISTORY_MAX);
    if (hist)
        read_history(hist);
    struct sigaction sa = {0}, old_sa;
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_sa);
    for (;;) {
        fflush(stdout); /* results before the next prompt */
        prompt_interrupted = 0;
        char *line = readline(pending.len ? "   ...> " : "tarn> ");
        if (prompt_interrupted) {
            /* Ctrl-C at the prompt: the entry typed so far is dropped. */
            free(line);
            buf_clear(&pending);
            fputc('\n', stdout);
            continue;
        }
        if (!line) {
            fputc('\n', stdout); /* leave the shell prompt on its own line */
            if (!is_blank(buf_cstr(&pending)))
                run_chunk(h, buf_cstr(&pending)); /* like a script's last statement */
            break;
        }
        int handled = 0, quit = pending.len == 0 && dot_line(h, line, &handled);
        if (!quit && !handled)
            repl_take(&pending, line, h);
        free(line); /* allocated by libedit with malloc */
        if (quit)
            break;
    }
    sigaction(SIGINT, &old_sa, NULL);
    if (hist && write_history(hist) != 0)
        fprintf(stderr, "tarn: cannot write history to %s\n", hist);
    buf_free(&pending);
    free(hist);
}

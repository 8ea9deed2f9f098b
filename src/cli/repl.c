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
static int input_complete(const char *text)
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

/* Dot commands are recognized only at the start of an entry, where they
 * cannot be part of SQL. Returns 1 to leave the loop. */
static int dot_command(const char *line, int *handled)
{
    char word[16] = "";
    *handled = 0;
    if (sscanf(line, " %15s", word) != 1 || word[0] != '.')
        return 0;
    *handled = 1;
    if (strcmp(word, ".quit") == 0 || strcmp(word, ".exit") == 0)
        return 1;
    if (strcmp(word, ".help") != 0)
        fprintf(stderr, "tarn: unknown command %s\n", word);
    fputs("End SQL statements with ';'. .quit or .exit (or Ctrl-D) leaves.\n", stderr);
    return 0;
}

/* Takes one line into `pending`; runs it through fn once complete. */
static void repl_take(tarn_buf *pending, const char *line, repl_fn fn, void *ctx)
{
    if (pending->len == 0 && is_blank(line))
        return;
    if (pending->len)
        buf_putc(pending, '\n');
    buf_puts(pending, line);
    if (!input_complete(buf_cstr(pending)))
        return;
    add_history(buf_cstr(pending));
    fn(ctx, buf_cstr(pending));
    buf_clear(pending);
}

void repl_run(repl_fn fn, void *ctx)
{
    char *hist = history_path();
    tarn_buf pending = {0};
    using_history();
    stifle_history(HISTORY_MAX);
    if (hist)
        read_history(hist);
    for (;;) {
        fflush(stdout); /* results before the next prompt */
        char *line = readline(pending.len ? "   ...> " : "tarn> ");
        if (!line) {
            fputc('\n', stdout); /* leave the shell prompt on its own line */
            if (!is_blank(buf_cstr(&pending)))
                fn(ctx, buf_cstr(&pending)); /* like a script's last statement */
            break;
        }
        int handled = 0, quit = pending.len == 0 && dot_command(line, &handled);
        if (!quit && !handled)
            repl_take(&pending, line, fn, ctx);
        free(line); /* allocated by libedit with malloc */
        if (quit)
            break;
    }
    if (hist && write_history(hist) != 0)
        fprintf(stderr, "tarn: cannot write history to %s\n", hist);
    buf_free(&pending);
    free(hist);
}

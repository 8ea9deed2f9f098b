/*
 * repl.h — the interactive prompt of `tarn sql` (libedit line editing,
 * history in ~/.tarn_history). It only gathers input: each complete chunk
 * (lines up to one ending a statement with ';') goes to a callback, which
 * cmd_sql.c points at the same script runner used for files and stdin,
 * and a line starting with '.' at the start of an entry to the dot-command
 * callback.
 *
 * Ctrl-C while a chunk runs interrupts the session's statement (DuckDB's
 * interrupt: it fails with "Interrupted"), not the shell; at the prompt it
 * drops the line being typed. Ctrl-D at an empty prompt leaves.
 */
#ifndef TARN_CLI_REPL_H
#define TARN_CLI_REPL_H

#include "tarn/session.h"

typedef struct {
    void (*run)(void *ctx, const char *sql);
    /* a dot command (the whole line); returns 1 to leave the shell */
    int (*dot)(void *ctx, const char *line);
    void *ctx;
    tarn_session *session; /* what Ctrl-C interrupts */
} repl_handlers;

/* 1 when `text` ends a statement (a ';' outside strings and comments), or
 * holds no token: a dot command may follow it. */
int repl_input_complete(const char *text);

/* Prompts until .quit, .exit or end of input. */
void repl_run(const repl_handlers *h);

#endif

/*
 * repl.h — the interactive prompt of `tarn sql` (libedit line editing,
 * history in ~/.tarn_history). It only gathers input: each complete chunk
 * (lines up to one ending a statement with ';') goes to a callback, which
 * cmd_sql.c points at the same script runner used for files and stdin.
 */
#ifndef TARN_CLI_REPL_H
#define TARN_CLI_REPL_H

typedef void (*repl_fn)(void *ctx, const char *sql);

/* Prompts until .quit, .exit or end of input. */
void repl_run(repl_fn fn, void *ctx);

#endif

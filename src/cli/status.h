/*
 * status.h — status words as every command prints them (tarn run, test,
 * backfill, plan, scheduler, maintain expire): coloured on a terminal —
 * ok/PASS green, FAILED/FAIL/ERROR red, WARN/CANCELLED yellow, skipped,
 * unchanged and "would skip" dim — and plain when the stream is not a
 * terminal, with NO_COLOR set or TERM=dumb; and `-q/--quiet`, after which
 * those commands print only failures and errors.
 */
#ifndef TARN_CLI_STATUS_H
#define TARN_CLI_STATUS_H

#include <stdio.h>

typedef enum {
    CLI_TONE_PLAIN = 0,
    CLI_TONE_OK,
    CLI_TONE_FAIL,
    CLI_TONE_WARN,
    CLI_TONE_DIM,
} cli_tone;

/* Prints `word` on f padded to `width` columns (0: as is), in the tone's
 * colour when f may be coloured (cli_color_for). */
void cli_status(FILE *f, cli_tone tone, int width, const char *word);

/* 1 when output to a terminal may be coloured: NO_COLOR unset (or
 * empty) and TERM not "dumb" (the caller checks isatty). */
int cli_color_ok(void);

/* 1 when output on f is coloured: f is a terminal and cli_color_ok(). */
int cli_color_for(FILE *f);

/* -q / --quiet at `arg`: 1 (and quiet from now on), else 0. */
int cli_opt_quiet(const char *arg);
/* 1 after -q / --quiet. */
int cli_quiet(void);

#endif

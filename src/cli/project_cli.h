/*
 * project_cli.h — what the project commands (run, plan, history, show,
 * lineage) share: option parsing helpers, and opening a project.
 *
 * A project command works on the project in the current folder, or in
 * the one given with -C DIR / --project DIR. Opening it changes into that
 * folder first, so that every relative path in it — the lake's catalog and
 * DATA_PATH in config/catalog.sql, CSV files in config/sources.sql — is
 * relative to the project, wherever tarn was started from.
 */
#ifndef TARN_CLI_PROJECT_CLI_H
#define TARN_CLI_PROJECT_CLI_H

#include "project/project.h"
#include "tarn/session.h"

/* Matches an option with a value at argv[*i], spelled `-x V`, `-xV`,
 * `--long V` or `--long=V` (shrt may be NULL). Returns 1 and sets *val on
 * a match, 0 when it is another argument, -1 when the value is missing
 * (reported). */
int cli_opt_value(int argc, char **argv, int *i, const char *shrt, const char *lng,
                  const char **val);

/* Parses a positive integer option value; -1 (reported) when it is not. */
int cli_opt_int(const char *opt, const char *val, long *out);

typedef struct {
    tarn_session *s;
    tarn_project *p;
} cli_project;

/* Changes into `dir` (NULL: stay), opens a session and loads the project.
 * Returns CLI_OK, or CLI_USAGE after reporting the error on stderr (the
 * message stays in tarn_error_last()). */
int cli_project_open(cli_project *cp, const char *dir);
/* Runs only the ATTACH statements of config/ (enough to read the lake:
 * history, show), so that reading does not depend on the sources. */
int cli_project_attach(cli_project *cp);
void cli_project_close(cli_project *cp);

/* Prints a (possibly multi-line) error as `tarn: …` lines on stderr. */
void cli_report(const char *msg);

#endif

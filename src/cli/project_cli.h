/*
 * project_cli.h — what the project commands (run, plan, history, show,
 * lineage) share: option parsing helpers (`tarn sql` uses them too), and
 * opening a project.
 *
 * A project command works on the project in the current folder, or in
 * the one given with -C DIR / --project DIR. Opening it changes into that
 * folder first, so that every relative path in it — the lake's catalog and
 * DATA_PATH in config/catalog.sql, CSV files in config/sources.sql — is
 * relative to the project, wherever tarn was started from.
 */
#ifndef TARN_CLI_PROJECT_CLI_H
#define TARN_CLI_PROJECT_CLI_H

#include "cli/render.h"
#include "project/project.h"
#include "tarn/session.h"

#include <stdint.h>

/* 1 after printing `usage` on stdout when `arg` is -h or --help; else 0. */
int cli_opt_help(const char *arg, const char *usage);
/* The exit status of a command whose option parse returned `parsed` (not
 * 0): CLI_OK after --help (printed), else CLI_USAGE with a pointer to
 * `tarn CMD --help` on stderr (the error itself reported already). */
int cli_parse_result(int parsed, const char *cmd);

/* Matches an option with a value at argv[*i], spelled `-x V`, `-xV`,
 * `--long V` or `--long=V` (shrt may be NULL). Returns 1 and sets *val on
 * a match, 0 when it is another argument, -1 when the value is missing
 * (reported). */
int cli_opt_value(int argc, char **argv, int *i, const char *shrt, const char *lng,
                  const char **val);

/* Parses a positive integer option value; -1 (reported) when it is not. */
int cli_opt_int(const char *opt, const char *val, long *out);
/* A UTC time "2026-06-01T06:00:00Z" or "2026-06-01T06:00Z" (the Z may be
 * left out) as epoch seconds; -1 when it is not one. */
int cli_parse_utc(int64_t *out, const char *s);

/* Matches `--format table|csv|json` at argv[*i] into *fmt: 1 on a match,
 * 0 when it is another argument, -1 when the value is missing or is no
 * format (reported). */
int cli_opt_format(int argc, char **argv, int *i, render_format *fmt);

/* Takes argv[*i] as what history, show and lineage have besides their
 * own options: -C DIR / --project DIR into *dir, or the one MODEL into
 * *model. Returns 0, or -1 (reported) for an unknown option, a missing
 * value or a second MODEL. */
int cli_opt_dir_model(int argc, char **argv, int *i, const char **dir, const char **model);

/* What every project command takes (run, plan, show, lineage, history,
 * test, …), parsed in one place so that they spell them alike:
 *
 *   -C, --project DIR     the project folder, anywhere on the command line
 *                         (default: the folder holding models/, from the
 *                         current one up)
 *   -t, --target NAME     run config/targets/NAME.sql in place of
 *                         config/catalog.sql (env TARN_TARGET)
 *   -s, --select SEL...   dbt's selectors (project/select.h); the values
 *                         run to the next option
 *   --exclude SEL...      removed from the selection
 *   SEL                   a bare argument is a selector too, when the
 *                         command takes CLI_COMMON_POSITIONAL
 *   --wide                tables not cut to the terminal's width */
typedef struct {
    const char *dir;
    const char *target;
    strlist select;
    strlist exclude;
} cli_common;

enum { CLI_COMMON_POSITIONAL = 1 };

/* --wide (also taken by cli_opt_common): tables are not cut to the
 * terminal's width. */
int cli_wide(void);

/* Matches one of those at argv[*i] (moving *i past its values): 1 on a
 * match, 0 when it is another argument, -1 on a missing value (reported).
 * Call it first in a command's option loop. */
int cli_opt_common(int argc, char **argv, int *i, cli_common *c, int flags);

/* The models c's selectors select in p (select_models_excluding): one
 * byte per model into *out (caller frees), or TARN_EINVALID. */
int cli_common_select(unsigned char **out, const cli_common *c, const tarn_project *p);

/* The selectors as one text (for run records; caller frees). */
char *cli_common_selectors_text(const cli_common *c);

void cli_common_free(cli_common *c);

/* Changes into the project folder: `dir` when given, else the nearest
 * folder from the current one up that holds models/ (the current one when
 * none does, so the project error names it). CLI_OK or CLI_USAGE
 * (reported). */
int cli_project_chdir(const char *dir);

/* 1 when the current folder (after cli_project_chdir) is a project. */
int cli_in_project(void);

typedef struct {
    tarn_session *s;
    tarn_project *p;
} cli_project;

/* Changes into `dir` (NULL: stay), opens a session and loads the project.
 * Returns CLI_OK, or CLI_USAGE after reporting the error on stderr (the
 * message stays in tarn_error_last()). */
int cli_project_open(cli_project *cp, const char *dir);
/* The same with c's folder and target. */
int cli_project_open_common(cli_project *cp, const cli_common *c);
/* cli_project_open_common for a command that ends when the project does
 * not open: frees c on failure (the failure is reported). */
int cli_project_open_or_free(cli_project *cp, cli_common *c);
/* The models c selects in cp's project into *sel (caller frees), CLI_OK;
 * or reports the error, closes cp, frees c and returns CLI_USAGE. */
int cli_project_select(unsigned char **sel, cli_project *cp, cli_common *c);
/* Runs only the ATTACH statements of config/ (enough to read the lake:
 * plan, history, show), so that reading does not depend on the sources;
 * the lake is attached READ_ONLY, so that readers work beside each other
 * (its catalog file is opened with a shared lock). */
int cli_project_attach(cli_project *cp);
/* The same, writable when read_only is 0 (tarn maintain). */
int cli_project_attach_mode(cli_project *cp, int read_only);
/* 0 when the lake's catalog is a local file that does not exist yet
 * (nothing was built; a read-only ATTACH cannot create it). */
int cli_project_lake_exists(const cli_project *cp);
void cli_project_close(cli_project *cp);

/* Runs query `sql` in the project's session and prints its rows on stdout
 * as `fmt` says (history, show); CLI_OK, or CLI_FAILED after reporting
 * the error. */
int cli_project_print(cli_project *cp, const char *sql, render_format fmt);

/* When `msg` is DuckDB's "Could not set lock on file" error: a message
 * naming the catalog, the process holding it (pid, and its command line
 * when readable) and the remedy (caller frees); else NULL. */
char *cli_lock_message(const char *msg);

/* Prints a (possibly multi-line) error as `tarn: …` lines on stderr (a
 * lock error as cli_lock_message says it). */
void cli_report(const char *msg);

#endif

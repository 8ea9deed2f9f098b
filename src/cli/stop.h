/*
 * stop.h — Ctrl-C and SIGTERM for the commands that build.
 *
 * The signals are blocked in every thread (start the watch before the
 * session opens, so DuckDB's threads inherit the mask) and taken by one
 * thread with sigwait, so what they do is ordinary code, not a signal
 * handler, and no system call of a build is interrupted by them.
 *
 * Two ways to take the first signal:
 *   - CLI_STOP_CANCEL (`tarn run`, `tarn backfill`): stop the run — the
 *     build in flight is interrupted and rolled back (build_cancel), the
 *     models left are not run; the second signal exits at once.
 *   - CLI_STOP_AFTER_BUILD (`tarn scheduler`): remember the request
 *     (cli_stop_requested) and let the build in flight finish; the second
 *     signal acts as CLI_STOP_CANCEL's first, the third exits at once.
 * Exiting at once is safe: a lake commit is one catalog transaction, so
 * the lake stays at a committed snapshot.
 */
#ifndef TARN_CLI_STOP_H
#define TARN_CLI_STOP_H

#include "tarn/session.h"

typedef enum { CLI_STOP_CANCEL, CLI_STOP_AFTER_BUILD } cli_stop_mode;

/* Blocks SIGINT and SIGTERM and starts the watching thread. */
void cli_stop_watch_start(cli_stop_mode mode);

/* The session whose running query a cancelling signal interrupts (NULL:
 * none). Borrowed until replaced. */
void cli_stop_watch_session(tarn_session *s);

/* CLI_STOP_AFTER_BUILD: the signal that asked to stop, or 0. */
int cli_stop_requested(void);

/* "Ctrl-C" or "SIGTERM". */
const char *cli_signal_label(int sig);

#endif

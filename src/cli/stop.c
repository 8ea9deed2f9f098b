/*
 * stop.c — the signal-watching thread of the commands that build (see
 * stop.h for what each signal does in each mode).
 */
#include "cli/stop.h"

#include "materialize/build.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static sigset_t stop_sigs;
static cli_stop_mode stop_mode;
static _Atomic int stop_asked; /* CLI_STOP_AFTER_BUILD: the first signal */
static pthread_mutex_t stop_mu = PTHREAD_MUTEX_INITIALIZER;
static tarn_session *stop_session; /* interrupted by a cancelling signal */

const char *cli_signal_label(int sig)
{
    return sig == SIGINT ? "Ctrl-C" : "SIGTERM";
}

static void exit_now(int sig)
{
    static const char msg[] = "\ntarn: stopped at once; the lake is at its last "
                              "committed snapshot\n";
    if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0) {
        /* nothing more to do: exiting */
    }
    _exit(128 + sig);
}

static void cancel_build(int sig)
{
    build_cancel(sig);
    fprintf(stderr,
            "\ntarn: %s: stopping the run — the build in flight is rolled back and the "
            "models left are not run (%s again to stop at once)\n",
            cli_signal_label(sig), cli_signal_label(sig));
    pthread_mutex_lock(&stop_mu);
    if (stop_session)
        tarn_session_interrupt(stop_session);
    pthread_mutex_unlock(&stop_mu);
}

static void take_signal(int sig)
{
    if (build_cancel_signal())
        exit_now(sig);
    if (stop_mode == CLI_STOP_AFTER_BUILD && !stop_asked) {
        stop_asked = sig;
        fprintf(stderr,
                "\ntarn: %s: stopping after the build in flight (%s again to stop that build "
                "too)\n",
                cli_signal_label(sig), cli_signal_label(sig));
        return;
    }
    cancel_build(sig);
}

static void *stop_watch(void *arg)
{
    (void)arg;
    for (;;) {
        int sig = 0;
        if (sigwait(&stop_sigs, &sig) == 0)
            take_signal(sig);
    }
    return NULL;
}

void cli_stop_watch_start(cli_stop_mode mode)
{
    stop_mode = mode;
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGINT);
    sigaddset(&stop_sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, stop_watch, NULL) == 0)
        pthread_detach(t);
    else
        pthread_sigmask(SIG_UNBLOCK, &stop_sigs, NULL); /* the default: die */
}

void cli_stop_watch_session(tarn_session *s)
{
    pthread_mutex_lock(&stop_mu);
    stop_session = s;
    pthread_mutex_unlock(&stop_mu);
}

int cli_stop_requested(void)
{
    return stop_asked;
}

/*
 * build.c — the small pieces of build.h that are no run themselves, for
 * every file of materialize/ (the runner and its parts, the strategies,
 * the records): the names of a model's status and of a prefetch's use,
 * the run's stop request, freeing a model's result. It reads and writes
 * no lake table, and calls no other file of materialize/, so all of them
 * can call it.
 */
#include "materialize/build.h"

#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {"pending", "success", "failed", "skipped", "cancelled"};

/* The run's stop request (build_cancel): written by a signal-watching
 * thread, read by the main thread between and inside builds. */
static _Atomic int cancel_signal;

void build_cancel(int sig)
{
    cancel_signal = sig;
}

int build_cancel_signal(void)
{
    return cancel_signal;
}

const char *model_status_name(model_status s)
{
    return status_names[s];
}

const char *prefetch_use_name(prefetch_use u)
{
    static const char *const names[] = {"none", "used", "failed"};
    return names[u];
}

void build_result_free(model_result *r)
{
    strlist_free(&r->partitions);
    free(r->partition_rows);
    for (size_t j = 0; j < r->nupstream; j++) {
        free(r->upstream[j].table);
        free(r->upstream[j].model);
    }
    free(r->upstream);
    free(r->tests_json);
    free(r->error);
    free(r->valid_at);
    free(r->schema_change);
    free(r->watermark_from);
    free(r->watermark_to);
    free(r->covered_through);
    free(r->run_reason);
    free(r->warning);
    memset(r, 0, sizeof(*r));
}

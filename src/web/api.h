/*
 * api.h — the JSON API of the web view, one module per page's data:
 *
 *   GET /api/config                         router.c     what the server allows (run now)
 *   GET /api/graph                          api_graph.c  models, edges, last build of each
 *   GET /api/runs[?limit=N]                 api_runs.c   the runs, newest first
 *   GET /api/runs/ID                        api_runs.c   one run and its models' builds
 *   POST /api/runs                          api_runs.c   start `tarn run` (--allow-runs only)
 *   GET /api/models/NAME                    api_model.c  a model, its builds and snapshots
 *   GET /api/models/NAME/preview?version=N  api_version.c  first rows AT (VERSION => N)
 *   GET /api/models/NAME/schema?version=N   api_version.c  its columns at version N
 *   GET /api/models/NAME/changes?from=A&to=B  api_version.c  the change feed from A to B
 *
 * Each handler opens the lake for the request (weblake.h) and fills the
 * reply; the README documents the answers.
 */
#ifndef TARN_WEB_API_H
#define TARN_WEB_API_H

#include "web/reply.h"

typedef struct web_req {
    const char *method;
    const char *path; /* decoded, without the query string */
    /* a query-string argument, NULL when absent */
    const char *(*arg)(const struct web_req *q, const char *name);
    void *ctx;
    int allow_runs;
    const char *tarn_exe; /* the binary `POST /api/runs` starts */
} web_req;

void api_graph(web_reply *r, const web_req *q);
void api_runs(web_reply *r, const web_req *q);
void api_run(web_reply *r, const web_req *q, const char *id);
void api_run_start(web_reply *r, const web_req *q);
void api_model(web_reply *r, const web_req *q, const char *name);
/* what: "preview", "schema" or "changes" */
void api_version(web_reply *r, const web_req *q, const char *name, const char *what);

/* Parses a non-negative integer argument: 0, or -1 with a 400 reply
 * naming `what`. */
int api_int_arg(long long *out, web_reply *r, const char *text, const char *what);

#endif

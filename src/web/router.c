/*
 * router.c — request paths to handlers (see router.h).
 */
#include "web/router.h"

#include "tarn/version.h"
#include "web/assets.h"

#include <stdlib.h>
#include <string.h>

static const char not_found[] = "not found\n";

static int page(web_reply *r, const char *path)
{
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    for (size_t i = 0; i < web_nassets; i++)
        if (strcmp(web_assets[i].path, path) == 0) {
            reply_static(r, 200, web_assets[i].ctype, web_assets[i].data, web_assets[i].len);
            return 1;
        }
    return 0;
}

/* /api/models/NAME[/WHAT] */
static void models(web_reply *r, const web_req *q, const char *rest)
{
    const char *slash = strchr(rest, '/');
    char *name = slash ? strndup(rest, (size_t)(slash - rest)) : strdup(rest);
    const char *what = slash ? slash + 1 : NULL;
    if (!*name)
        reply_error(r, 404, "which model? /api/models/SCHEMA.TABLE");
    else if (!what || !*what)
        api_model(r, q, name);
    else if (strcmp(what, "preview") == 0 || strcmp(what, "schema") == 0 ||
             strcmp(what, "changes") == 0)
        api_version(r, q, name, what);
    else
        reply_error(r, 404,
                    "no such page of the API: %s (models have preview, schema and "
                    "changes)",
                    q->path);
    free(name);
}

static void api(web_reply *r, const web_req *q, const char *rest)
{
    int get = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
    if (strcmp(rest, "runs") == 0 && strcmp(q->method, "POST") == 0) {
        api_run_start(r, q);
        return;
    }
    if (!get) {
        reply_error(r, 405, "%s is not allowed on %s: the API is read with GET", q->method,
                    q->path);
        return;
    }
    if (strcmp(rest, "config") == 0)
        reply_json(
            r, 200,
            json_pack("{s:b,s:s}", "allow_runs", q->allow_runs, "tarn_version", TARN_VERSION));
    else if (strcmp(rest, "graph") == 0)
        api_graph(r, q);
    else if (strcmp(rest, "runs") == 0)
        api_runs(r, q);
    else if (strncmp(rest, "runs/", 5) == 0)
        api_run(r, q, rest + 5);
    else if (strncmp(rest, "models/", 7) == 0)
        models(r, q, rest + 7);
    else
        reply_error(r, 404, "no such page of the API: %s", q->path);
}

void web_route(web_reply *r, const web_req *q)
{
    if (strncmp(q->path, "/api/", 5) == 0) {
        api(r, q, q->path + 5);
        return;
    }
    int get = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
    if (get && page(r, q->path))
        return;
    reply_static(r, get ? 404 : 405, "text/plain; charset=utf-8", not_found, sizeof(not_found) - 1);
}

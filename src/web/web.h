/*
 * web.h — `tarn serve`'s HTTP server: the web view of the project in the
 * current folder (its graph, runs and every model's history), on
 * libmicrohttpd. One thread answers the requests one at a time, each with
 * the lake opened read-only for that request only (weblake.h).
 */
#ifndef TARN_WEB_WEB_H
#define TARN_WEB_WEB_H

typedef struct web_server web_server;

typedef struct {
    const char *host; /* address to listen on: 127.0.0.1, ::1, 0.0.0.0 */
    int port;         /* 0: a free port (web_server_port says which) */
    int allow_runs;   /* POST /api/runs starts `tarn run` */
    const char *tarn_exe;
    /* host names answered besides localhost and IP addresses
     * (comma-separated; NULL: none), hostcheck.h */
    const char *allowed_hosts;
} web_opts;

/* Starts serving (a thread of its own). Returns 0, or < 0 with the error
 * in tarn_error_last() (an address that is no address, a port in use). */
int web_server_start(web_server **out, const web_opts *o);
/* The port it listens on. */
int web_server_port(const web_server *w);
void web_server_stop(web_server *w);

#endif

/*
 * server.c — the web view's HTTP server on libmicrohttpd (see web.h):
 * binds the address, turns each request into a web_req for the router,
 * and sends the reply with the headers every answer has (no caching of
 * the API, no content sniffing, a page that runs only its own scripts).
 * A request whose Host is a name other than localhost's (DNS rebinding)
 * or a POST from another site's page is refused before routing
 * (hostcheck.h).
 *
 * libmicrohttpd is loaded when `tarn serve` starts (dlopen), not linked:
 * Debian's is built with GnuTLS, whose libraries would otherwise be loaded
 * (and initialised) by every tarn command.
 */
#include "web/web.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "web/hostcheck.h"
#include "web/router.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* The functions of libmicrohttpd the server calls, found by mhd_load. */
static struct {
    struct MHD_Daemon *(*start_daemon)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                                       MHD_AccessHandlerCallback, void *, ...);
    void (*stop_daemon)(struct MHD_Daemon *);
    const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *, enum MHD_DaemonInfoType,
                                                   ...);
    const char *(*lookup_connection_value)(struct MHD_Connection *, enum MHD_ValueKind,
                                           const char *);
    struct MHD_Response *(*create_response_from_buffer)(size_t, void *,
                                                        enum MHD_ResponseMemoryMode);
    enum MHD_Result (*add_response_header)(struct MHD_Response *, const char *, const char *);
    enum MHD_Result (*queue_response)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
    void (*destroy_response)(struct MHD_Response *);
} mhd;

static int mhd_load(void)
{
    if (mhd.start_daemon)
        return 0;
    void *h = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return tarn_error_set(TARN_ERROR,
                              "tarn serve needs libmicrohttpd (Debian: apt-get install "
                              "libmicrohttpd12, or run scripts/deps.sh): %s",
                              dlerror());
    struct {
        const char *name;
        void **fn;
    } syms[] = {
        {"MHD_start_daemon", (void **)&mhd.start_daemon},
        {"MHD_stop_daemon", (void **)&mhd.stop_daemon},
        {"MHD_get_daemon_info", (void **)&mhd.get_daemon_info},
        {"MHD_lookup_connection_value", (void **)&mhd.lookup_connection_value},
        {"MHD_create_response_from_buffer", (void **)&mhd.create_response_from_buffer},
        {"MHD_add_response_header", (void **)&mhd.add_response_header},
        {"MHD_queue_response", (void **)&mhd.queue_response},
        {"MHD_destroy_response", (void **)&mhd.destroy_response},
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        *syms[i].fn = dlsym(h, syms[i].name);
        if (!*syms[i].fn) {
            mhd.start_daemon = NULL;
            return tarn_error_set(TARN_ERROR, "libmicrohttpd has no %s: too old a version",
                                  syms[i].name);
        }
    }
    return 0;
}

struct web_server {
    struct MHD_Daemon *d;
    web_opts o;
    struct sockaddr_storage addr;
    int port;
};

typedef struct {
    web_req q;
    struct MHD_Connection *c;
} req_ctx;

static const char *arg_of(const web_req *q, const char *name)
{
    const req_ctx *rc = q->ctx;
    return mhd.lookup_connection_value(rc->c, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result send_reply(struct MHD_Connection *c, const web_reply *r, int api)
{
    struct MHD_Response *res =
        mhd.create_response_from_buffer(r->len, r->body, MHD_RESPMEM_MUST_COPY);
    if (!res)
        return MHD_NO;
    mhd.add_response_header(res, "Content-Type", r->ctype);
    mhd.add_response_header(res, "X-Content-Type-Options", "nosniff");
    mhd.add_response_header(res, "Cache-Control", api ? "no-store" : "no-cache");
    mhd.add_response_header(res, "Content-Security-Policy",
                            "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    if (r->retry_after > 0) {
        char s[16];
        snprintf(s, sizeof(s), "%d", r->retry_after);
        mhd.add_response_header(res, "Retry-After", s);
    }
    enum MHD_Result ok = mhd.queue_response(c, (unsigned)r->status, res);
    mhd.destroy_response(res);
    return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload_data,
                                  size_t *upload_data_size, void **state)
{
    (void)version;
    (void)upload_data;
    web_server *w = cls;
    /* The first call only announces the request; a body (POST) arrives in
     * the calls after it, and is not used. */
    if (!*state) {
        *state = w;
        return MHD_YES;
    }
    if (*upload_data_size) {
        *upload_data_size = 0;
        return MHD_YES;
    }
    const char *host = mhd.lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    web_reply r = {0};
    if (!web_host_allowed(host, w->o.allowed_hosts)) {
        reply_error(&r, 403,
                    "tarn serve answers requests for localhost and IP addresses only, not for "
                    "the host name '%s' (a page elsewhere could reach the lake through it: DNS "
                    "rebinding); to serve it under that name, start tarn serve with "
                    "--allow-host NAME",
                    host);
    } else if (strcmp(method, "POST") == 0 &&
               !web_origin_same(mhd.lookup_connection_value(c, MHD_HEADER_KIND, "Origin"), host)) {
        reply_error(&r, 403,
                    "a POST from another site's page is refused: runs are started "
                    "from tarn serve's own page");
    }
    if (r.status) {
        enum MHD_Result refused = send_reply(c, &r, 1);
        reply_free(&r);
        return refused;
    }
    req_ctx rc = {.c = c};
    rc.q = (web_req){.method = method,
                     .path = url,
                     .arg = arg_of,
                     .ctx = &rc,
                     .allow_runs = w->o.allow_runs,
                     .tarn_exe = w->o.tarn_exe};
    web_route(&r, &rc.q);
    if (r.status >= 500 && r.status != 503)
        fprintf(stderr, "tarn serve: %s %s: %d %.*s\n", method, url, r.status, (int)r.len, r.body);
    enum MHD_Result ok = send_reply(c, &r, strncmp(url, "/api/", 5) == 0);
    reply_free(&r);
    return ok;
}

static int resolve(web_server *w, const char *host, int port)
{
    struct addrinfo hints = {.ai_flags = AI_NUMERICHOST | AI_PASSIVE, .ai_socktype = SOCK_STREAM};
    struct addrinfo *ai = NULL;
    char ps[16];
    snprintf(ps, sizeof(ps), "%d", port);
    int e = getaddrinfo(host, ps, &hints, &ai);
    if (e != 0 || !ai)
        return tarn_error_set(
            TARN_EINVALID, "--host takes an IP address (127.0.0.1, ::1, 0.0.0.0), not '%s'", host);
    memcpy(&w->addr, ai->ai_addr, ai->ai_addrlen);
    freeaddrinfo(ai);
    return 0;
}

int web_server_start(web_server **out, const web_opts *o)
{
    if (mhd_load() != 0)
        return TARN_ERROR;
    web_server *w = xcalloc(1, sizeof(*w));
    w->o = *o;
    if (resolve(w, o->host, o->port) != 0) {
        free(w);
        return TARN_EINVALID;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
    if (w->addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    w->d = mhd.start_daemon(flags, (uint16_t)o->port, NULL, NULL, on_request, w,
                            MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&w->addr,
                            MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_END);
    if (!w->d) {
        free(w);
        return tarn_error_set(TARN_ERROR,
                              "cannot listen on %s port %d (is the port in use? --port picks "
                              "another)",
                              o->host, o->port);
    }
    const union MHD_DaemonInfo *info = mhd.get_daemon_info(w->d, MHD_DAEMON_INFO_BIND_PORT);
    w->port = info ? info->port : o->port;
    *out = w;
    return 0;
}

int web_server_port(const web_server *w)
{
    return w->port;
}

void web_server_stop(web_server *w)
{
    if (!w)
        return;
    mhd.stop_daemon(w->d);
    free(w);
}

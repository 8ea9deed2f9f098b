/*
 * hostcheck.c — the Host and Origin checks of `tarn serve` (see
 * hostcheck.h).
 */
#include "web/hostcheck.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The host part of a Host header value: `[::1]:8080` → `::1`,
 * `localhost:8080` → `localhost`; NULL when malformed (caller frees). */
static char *host_part(const char *h)
{
    if (h[0] == '[') {
        const char *end = strchr(h, ']');
        if (!end || (end[1] && end[1] != ':'))
            return NULL;
        return strndup(h + 1, (size_t)(end - h - 1));
    }
    const char *colon = strchr(h, ':');
    if (colon && strchr(colon + 1, ':'))
        return NULL; /* an IPv6 address must be bracketed */
    return colon ? strndup(h, (size_t)(colon - h)) : strdup(h);
}

static int is_ip(const char *s)
{
    unsigned char a[16];
    return inet_pton(AF_INET, s, a) == 1 || inet_pton(AF_INET6, s, a) == 1;
}

static int ends_with_ci(const char *s, const char *tail)
{
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcasecmp(s + n - t, tail) == 0;
}

/* `name` is one of the comma-separated names of `list`. */
static int in_list(const char *name, const char *list)
{
    if (!list)
        return 0;
    char *copy = strdup(list), *save = NULL;
    int found = 0;
    for (char *t = strtok_r(copy, ", ", &save); t && !found; t = strtok_r(NULL, ", ", &save))
        found = strcasecmp(t, name) == 0;
    free(copy);
    return found;
}

int web_host_allowed(const char *host, const char *allowed)
{
    if (!host)
        return 1;
    char *h = host_part(host);
    if (!h || !*h) {
        free(h);
        return 0;
    }
    size_t n = strlen(h);
    if (n > 1 && h[n - 1] == '.')
        h[n - 1] = '\0'; /* `localhost.` is localhost */
    int ok = is_ip(h) || strcasecmp(h, "localhost") == 0 || ends_with_ci(h, ".localhost") ||
             in_list(h, allowed);
    free(h);
    return ok;
}

int web_origin_same(const char *origin, const char *host)
{
    if (!origin)
        return 1;
    const char *scheme = "http://";
    if (!host || strncasecmp(origin, scheme, strlen(scheme)) != 0)
        return 0;
    return strcasecmp(origin + strlen(scheme), host) == 0;
}

/*
 * error.c — the thread-local last-error slot behind include/tarn/error.h.
 */
#include "tarn/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Thread_local char *last_msg;
static _Thread_local int last_code;

static char *vformat(const char *fmt, va_list ap)
{
    char *out = NULL;
    if (vasprintf(&out, fmt, ap) < 0)
        return NULL;
    return out;
}

int tarn_error_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = vformat(fmt, ap);
    va_end(ap);
    free(last_msg);
    last_msg = msg;
    last_code = code;
    return code;
}

int tarn_error_prefix(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *pre = vformat(fmt, ap);
    va_end(ap);
    char *joined = NULL;
    if (pre && asprintf(&joined, "%s: %s", pre, last_msg ? last_msg : "") >= 0) {
        free(last_msg);
        last_msg = joined;
    }
    free(pre);
    last_code = code;
    return code;
}

const char *tarn_error_last(void)
{
    return last_msg ? last_msg : "";
}

int tarn_error_code(void)
{
    return last_code;
}

void tarn_error_clear(void)
{
    free(last_msg);
    last_msg = NULL;
    last_code = TARN_OK;
}

void tarn_error_replace(const char *from, const char *to)
{
    if (!last_msg || !*from || !strstr(last_msg, from))
        return;
    size_t fl = strlen(from), tl = strlen(to), n = 0;
    for (const char *p = last_msg; (p = strstr(p, from)) != NULL; p += fl)
        n++;
    char *out = malloc(strlen(last_msg) + n * tl + 1);
    if (!out)
        return;
    char *w = out;
    const char *p = last_msg, *hit;
    while ((hit = strstr(p, from)) != NULL) {
        memcpy(w, p, (size_t)(hit - p));
        w += hit - p;
        memcpy(w, to, tl);
        w += tl;
        p = hit + fl;
    }
    strcpy(w, p);
    free(last_msg);
    last_msg = out;
}

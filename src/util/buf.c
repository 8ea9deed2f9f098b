/*
 * buf.c — growable string buffer and aborting allocators (see buf.h).
 */
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(void)
{
    fputs("tarn: out of memory\n", stderr);
    abort();
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom();
    return p;
}

void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        oom();
    return p;
}

void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p)
        oom();
    return p;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *out = NULL;
    va_start(ap, fmt);
    if (vasprintf(&out, fmt, ap) < 0)
        oom();
    va_end(ap);
    return out;
}

static void reserve(tarn_buf *b, size_t extra)
{
    if (b->len + extra + 1 <= b->cap)
        return;
    size_t cap = b->cap ? b->cap * 2 : 64;
    while (cap < b->len + extra + 1)
        cap *= 2;
    b->ptr = xrealloc(b->ptr, cap);
    b->cap = cap;
}

void buf_append(tarn_buf *b, const char *data, size_t n)
{
    reserve(b, n);
    memcpy(b->ptr + b->len, data, n);
    b->len += n;
    b->ptr[b->len] = 0;
}

void buf_puts(tarn_buf *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

void buf_putc(tarn_buf *b, char c)
{
    buf_append(b, &c, 1);
}

void buf_printf(tarn_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void buf_vprintf(tarn_buf *b, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap);
    if (n < 0) {
        va_end(ap2);
        return;
    }
    reserve(b, (size_t)n);
    vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap2);
    va_end(ap2);
    b->len += (size_t)n;
}

void buf_clear(tarn_buf *b)
{
    b->len = 0;
    if (b->ptr)
        b->ptr[0] = 0;
}

const char *buf_cstr(tarn_buf *b)
{
    return b->ptr ? b->ptr : "";
}

char *buf_detach(tarn_buf *b)
{
    char *s = b->ptr ? b->ptr : xstrdup("");
    b->ptr = NULL;
    b->len = b->cap = 0;
    return s;
}

void buf_free(tarn_buf *b)
{
    free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
}

char *xstrline(const char **s)
{
    const char *eol = strchr(*s, '\n');
    size_t len = eol ? (size_t)(eol - *s) : strlen(*s);
    char *line = xstrndup(*s, len);
    *s = eol ? eol + 1 : *s + len;
    return line;
}

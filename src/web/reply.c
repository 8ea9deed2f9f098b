/*
 * reply.c — building the web view's replies (see reply.h).
 */
#include "web/reply.h"

#include "util/buf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void reply_json(web_reply *r, int status, json_t *j)
{
    reply_free(r);
    r->status = status;
    r->ctype = "application/json; charset=utf-8";
    /* JSON_ENSURE_ASCII: a value's bytes never reach the page unescaped */
    r->body = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_REAL_PRECISION(12));
    if (!r->body)
        r->body = xstrdup("{\"error\":\"the answer could not be written as JSON\"}");
    r->len = strlen(r->body);
    json_decref(j);
}

void reply_error(web_reply *r, int status, const char *fmt, ...)
{
    tarn_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    reply_json(r, status, json_pack("{s:s}", "error", buf_cstr(&b)));
    buf_free(&b);
}

void reply_busy(web_reply *r, const char *message)
{
    reply_json(r, 503, json_pack("{s:s,s:b}", "error", message, "busy", 1));
    r->retry_after = 2;
}

void reply_static(web_reply *r, int status, const char *ctype, const void *body, size_t len)
{
    reply_free(r);
    r->status = status;
    r->ctype = ctype;
    r->body = (char *)body;
    r->len = len;
    r->borrowed = 1;
}

void reply_free(web_reply *r)
{
    if (!r->borrowed)
        free(r->body);
    r->body = NULL;
    r->len = 0;
    r->borrowed = 0;
    r->retry_after = 0;
}

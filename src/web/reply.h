/*
 * reply.h — what a request handler of the web view answers: a status, a
 * body and its content type. The API's answers are JSON (jansson builds
 * them, so every value is escaped); an error is {"error": "…"}, and a lake
 * whose catalog a build holds answers 503 {"error": …, "busy": true} with
 * Retry-After, which the page shows as "busy, retrying".
 */
#ifndef TARN_WEB_REPLY_H
#define TARN_WEB_REPLY_H

#include <jansson.h>
#include <stddef.h>

typedef struct {
    int status;        /* HTTP status */
    const char *ctype; /* static */
    char *body;        /* owned unless `borrowed` */
    size_t len;
    int borrowed;    /* body is static (an embedded asset) */
    int retry_after; /* seconds, 0: no Retry-After header */
} web_reply;

/* The reply is `j` as JSON with `status` (takes the reference). */
void reply_json(web_reply *r, int status, json_t *j);
/* {"error": message} with `status`. */
void reply_error(web_reply *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* 503 {"error": message, "busy": true}, Retry-After: 2. */
void reply_busy(web_reply *r, const char *message);
/* A static body (not freed). */
void reply_static(web_reply *r, int status, const char *ctype, const void *body, size_t len);
void reply_free(web_reply *r);

#endif

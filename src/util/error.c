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
static _Thread_local char *last_sql; /* the text last_pos points into */
static _Thread_local long last_pos = -1;

static void position_clear(void)
{
    free(last_sql);
    last_sql = NULL;
    last_pos = -1;
}

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
    position_clear();
    return code;
}

void tarn_error_set_position(const char *sql, long pos)
{
    position_clear();
    if (!sql || pos < 0 || (size_t)pos > strlen(sql))
        return;
    last_sql = strdup(sql);
    last_pos = last_sql ? pos : -1;
}

long tarn_error_position(const char **sql)
{
    *sql = last_sql;
    return last_sql ? last_pos : -1;
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
    position_clear();
}

tarn_error_saved tarn_error_save(void)
{
    tarn_error_saved s = {last_msg, last_code, last_sql, last_pos};
    last_msg = NULL;
    last_code = TARN_OK;
    last_sql = NULL;
    last_pos = -1;
    return s;
}

void tarn_error_restore(tarn_error_saved *saved)
{
    free(last_msg);
    last_msg = saved->msg;
    last_code = saved->code;
    free(last_sql);
    last_sql = saved->sql;
    last_pos = saved->pos;
    saved->msg = NULL;
    saved->sql = NULL;
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

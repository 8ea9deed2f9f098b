/*
 * diag.c — collected project errors (see diag.h).
 */
#include "project/diag.h"

#include "tarn/error.h"
#include "util/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void diag_add(diag_list *d, const char *file, int line, const char *fix, const char *fmt, ...)
{
    if (d->n == d->cap) {
        d->cap = d->cap ? d->cap * 2 : 8;
        d->items = xrealloc(d->items, d->cap * sizeof(*d->items));
    }
    diag_entry *e = &d->items[d->n++];
    va_list ap;
    va_start(ap, fmt);
    char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = xstrdup("?");
    va_end(ap);
    e->file = file ? xstrdup(file) : NULL;
    e->line = line;
    e->msg = msg;
    e->fix = fix ? xstrdup(fix) : NULL;
}

void diag_free(diag_list *d)
{
    for (size_t i = 0; i < d->n; i++) {
        free(d->items[i].file);
        free(d->items[i].msg);
        free(d->items[i].fix);
    }
    free(d->items);
    d->items = NULL;
    d->n = d->cap = 0;
}

char *diag_text(const diag_list *d)
{
    tarn_buf b = {0};
    for (size_t i = 0; i < d->n; i++) {
        const diag_entry *e = &d->items[i];
        if (i)
            buf_putc(&b, '\n');
        if (e->file && e->line > 0)
            buf_printf(&b, "%s:%d: ", e->file, e->line);
        else if (e->file)
            buf_printf(&b, "%s: ", e->file);
        buf_puts(&b, e->msg);
        if (e->fix)
            buf_printf(&b, "\n  fix: %s", e->fix);
    }
    return buf_detach(&b);
}

int diag_raise(const diag_list *d)
{
    if (d->n == 0)
        return 0;
    char *text = diag_text(d);
    tarn_error_set(TARN_EINVALID, "%s", text);
    free(text);
    return TARN_EINVALID;
}

/*
 * strlist.c — growable string lists (see strlist.h).
 */
#include "util/strlist.h"

#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void strlist_push_owned(strlist *l, char *s)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->items = xrealloc(l->items, l->cap * sizeof(char *));
    }
    l->items[l->n++] = s;
}

void strlist_push(strlist *l, const char *s)
{
    strlist_push_owned(l, xstrdup(s));
}

long strlist_find(const strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->items[i], s) == 0)
            return (long)i;
    return -1;
}

long strlist_find_nocase(const strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcasecmp(l->items[i], s) == 0)
            return (long)i;
    return -1;
}

void strlist_remove(strlist *l, size_t i)
{
    if (i >= l->n)
        return;
    free(l->items[i]);
    memmove(&l->items[i], &l->items[i + 1], (l->n - i - 1) * sizeof(char *));
    l->n--;
}

char *strlist_join(const strlist *l, const char *sep)
{
    tarn_buf b = {0};
    for (size_t i = 0; i < l->n; i++) {
        if (i)
            buf_puts(&b, sep);
        buf_puts(&b, l->items[i]);
    }
    return buf_detach(&b);
}

void strlist_copy(strlist *dst, const strlist *src)
{
    for (size_t i = 0; i < src->n; i++)
        strlist_push(dst, src->items[i]);
}

void strlist_free(strlist *l)
{
    strv_free(l->items, l->n);
    l->items = NULL;
    l->n = l->cap = 0;
}

void strv_free(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

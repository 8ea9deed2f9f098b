/*
 * strlist.h — a growable list of owned C strings (column lists, tags,
 * partition identities, selector arguments...).
 *
 * A zeroed struct is an empty list. Appends never fail (they abort on
 * exhaustion, like buf.h).
 */
#ifndef TARN_STRLIST_H
#define TARN_STRLIST_H

#include <stddef.h>

typedef struct {
    char **items;
    size_t n, cap;
} strlist;

void strlist_push(strlist *l, const char *s);
/* Takes ownership of `s` (a malloc'd string). */
void strlist_push_owned(strlist *l, char *s);
/* Index of `s` in the list, or -1. */
long strlist_find(const strlist *l, const char *s);
/* The same, ignoring ASCII case, as SQL compares unquoted identifiers
 * (column names); -1 when absent. */
long strlist_find_nocase(const strlist *l, const char *s);
/* Removes (and frees) item i, keeping the order of the others. */
void strlist_remove(strlist *l, size_t i);
/* The items joined with `sep` (caller frees). */
char *strlist_join(const strlist *l, const char *sep);
void strlist_copy(strlist *dst, const strlist *src);
void strlist_free(strlist *l);

/* Frees the n strings of a plain array v (NULLs allowed) and v itself:
 * the column names and cells of a result held as arrays. */
void strv_free(char **v, size_t n);

#endif

/*
 * diag.h — a list of project errors, each tied to a file and line and
 * carrying the fix.
 *
 * Loading a project checks every file; stopping at the first mistake would
 * make the user fix a project one error per run. The loader collects every
 * problem here, then reports them together through tarn_error_set() as
 *
 *     models/x.sql:3: unknown materialize option 'apend'
 *       fix: did you mean 'append'?
 *
 * one entry after another.
 */
#ifndef TARN_PROJECT_DIAG_H
#define TARN_PROJECT_DIAG_H

#include <stddef.h>

typedef struct {
    char *file; /* path relative to the project folder; may be NULL */
    int line;   /* 1-based; 0 when the problem is about the whole file */
    char *msg;
    char *fix; /* may be NULL */
} diag_entry;

typedef struct {
    diag_entry *items;
    size_t n, cap;
} diag_list;

/* Adds an error. `fix` (printf-style with the same arguments would be
 * awkward, so it is a plain string) may be NULL. */
void diag_add(diag_list *d, const char *file, int line, const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void diag_free(diag_list *d);

/* Hands the collected errors to tarn_error_set (TARN_EINVALID) as one
 * message, one entry after another; returns TARN_EINVALID, or 0 when the
 * list is empty. */
int diag_raise(const diag_list *d);

/* The text diag_raise would report (caller frees). */
char *diag_text(const diag_list *d);

#endif

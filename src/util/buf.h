/*
 * buf.h — a growable NUL-terminated byte buffer, the string builder used
 * everywhere SQL text or output is assembled.
 *
 * A zeroed struct is an empty buffer. Appends never fail: allocation
 * failure aborts (tarn cannot do anything useful out of memory, and
 * threading ENOMEM through every SQL builder would hide the real logic).
 */
#ifndef TARN_BUF_H
#define TARN_BUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct {
    char *ptr;  /* NUL-terminated when len > 0 or after any append */
    size_t len;
    size_t cap;
} tarn_buf;

void buf_append(tarn_buf *b, const char *data, size_t n);
void buf_puts(tarn_buf *b, const char *s);
void buf_putc(tarn_buf *b, char c);
void buf_printf(tarn_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(tarn_buf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
void buf_clear(tarn_buf *b);
/* The contents as a C string ("" for an empty buffer); owned by the buffer. */
const char *buf_cstr(tarn_buf *b);
/* Hands the string to the caller (free() it) and resets the buffer. */
char *buf_detach(tarn_buf *b);
void buf_free(tarn_buf *b);

/* Memory helpers that abort on exhaustion. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The line at *s, without its newline, as a new string; *s moves past the
 * newline (or to the end): reads a text line by line while **s. */
char *xstrline(const char **s);

#endif

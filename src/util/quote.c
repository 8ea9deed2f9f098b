/*
 * quote.c — SQL identifier and literal quoting (see quote.h).
 */
#include "util/quote.h"

#include <string.h>

static void quote_with(tarn_buf *b, const char *s, char q)
{
    buf_putc(b, q);
    for (const char *p = s; *p; p++) {
        if (*p == q)
            buf_putc(b, q);
        buf_putc(b, *p);
    }
    buf_putc(b, q);
}

void quote_ident(tarn_buf *b, const char *name)
{
    quote_with(b, name, '"');
}

void quote_literal(tarn_buf *b, const char *s)
{
    if (!s) {
        buf_puts(b, "NULL");
        return;
    }
    quote_with(b, s, '\'');
}

void quote_qualified(tarn_buf *b, const char *catalog, const char *schema, const char *name)
{
    if (catalog) {
        quote_ident(b, catalog);
        buf_putc(b, '.');
    }
    if (schema) {
        quote_ident(b, schema);
        buf_putc(b, '.');
    }
    quote_ident(b, name);
}

int quote_is_plain_path_segment(const char *name)
{
    if (!*name)
        return 0;
    for (const char *p = name; *p; p++) {
        char c = *p;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

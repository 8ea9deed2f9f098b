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

static const char *skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

int quote_unliteral(char **out, const char *sql)
{
    const char *p = skip_blanks(sql);
    if (*p++ != '\'')
        return 0;
    tarn_buf b = {0};
    for (; *p; p++) {
        if (*p == '\'' && p[1] == '\'') {
            buf_putc(&b, '\'');
            p++;
        } else if (*p == '\'') {
            break;
        } else {
            buf_putc(&b, *p);
        }
    }
    if (*p != '\'' || *skip_blanks(p + 1)) {
        buf_free(&b);
        return 0;
    }
    *out = buf_detach(&b);
    return 1;
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

void quote_prefixed(tarn_buf *b, const char *prefix, const char *name)
{
    buf_puts(b, prefix);
    buf_putc(b, '.');
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

void quote_ident_list(tarn_buf *b, char *const *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            buf_puts(b, ", ");
        quote_ident(b, items[i]);
    }
}

void quote_literal_list(tarn_buf *b, char *const *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i)
            buf_puts(b, ", ");
        quote_literal(b, items[i]);
    }
}

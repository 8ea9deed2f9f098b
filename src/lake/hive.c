/*
 * hive.c — hive partition values from file paths (see hive.h). No catalog
 * rows: the values become ducklake_file_partition_value rows and column
 * statistics in addfiles.c, and constants of a name-mapped file's read in
 * scan.c.
 */
#include "lake/hive.h"

#include "lake/types.h"
#include "util/hex.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void add_pair(lk_hive *h, const char *key, size_t klen, const char *val, size_t vlen)
{
    for (size_t i = 0; i < h->n; i++)
        if (strlen(h->keys[i]) == klen && strncmp(h->keys[i], key, klen) == 0)
            return; /* a std::map insert: the first one stays */
    h->keys = xrealloc(h->keys, (h->n + 1) * sizeof(char *));
    h->values = xrealloc(h->values, (h->n + 1) * sizeof(char *));
    h->keys[h->n] = xstrndup(key, klen);
    h->values[h->n++] = xstrndup(val, vlen);
}

void lk_hive_parse(lk_hive *out, const char *path)
{
    memset(out, 0, sizeof(*out));
    size_t start = 0, eq = 0;
    int candidate = 1;
    for (size_t c = 0; path[c]; c++) {
        char ch = path[c];
        if (ch == '?' || ch == '\n')
            candidate = 0;
        if (ch == '/' || ch == '\\') {
            if (candidate && eq > start)
                add_pair(out, path + start, eq - start, path + eq + 1, c - eq - 1);
            start = c + 1;
            candidate = 1;
        } else if (ch == '=') {
            if (eq > start)
                candidate = 0; /* two '=' in one directory: not a partition */
            eq = c;
        }
    }
}

void lk_hive_free(lk_hive *h)
{
    for (size_t i = 0; i < h->n; i++) {
        free(h->keys[i]);
        free(h->values[i]);
    }
    free(h->keys);
    free(h->values);
    memset(h, 0, sizeof(*h));
}

const char *lk_hive_get(const lk_hive *h, const char *key)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(h->keys[i], key) == 0)
            return h->values[i];
    return NULL;
}

int lk_hive_is_null(const char *v, const char *type)
{
    if (!v || strcasecmp(v, "NULL") == 0 || strcmp(v, "__HIVE_DEFAULT_PARTITION__") == 0)
        return 1;
    return v[0] == 0 && strcmp(type, "varchar") != 0;
}

char *lk_hive_unescape(const char *v)
{
    size_t n = strlen(v), k = 0;
    char *out = xmalloc(n + 1);
    for (size_t i = 0; i < n; i++) {
        int hi, lo;
        if (v[i] == '%' && i + 2 < n && (hi = hex_digit_value(v[i + 1])) >= 0 &&
            (lo = hex_digit_value(v[i + 2])) >= 0) {
            out[k++] = (char)(hi * 16 + lo);
            i += 2;
        } else {
            out[k++] = v[i];
        }
    }
    out[k] = 0;
    return out;
}

void lk_hive_value_sql(tarn_buf *b, const char *v, const lk_column *c)
{
    if (lk_hive_is_null(v, c->type)) {
        buf_puts(b, "NULL::");
        lk_type_to_sql(b, c);
        return;
    }
    char *u = lk_hive_unescape(v);
    buf_puts(b, "CAST(");
    quote_literal(b, u);
    buf_puts(b, " AS ");
    lk_type_to_sql(b, c);
    buf_putc(b, ')');
    free(u);
}

/*
 * annot_words.c — the small text helpers of the annotation grammar
 * (declared in annot_int.h), shared by annot_parse.c, which reads the
 * lines, and the parser of each keyword (annot_materialize.c,
 * annot_partition.c, annot_schedule.c): splitting words, trimming, plain
 * identifiers, column lists, the keyword closest to a misspelt one, and
 * the check that a keyword has one line. It sits below them all and calls
 * none of them.
 */
#include "project/annot_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/strdist.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The annot_closest of `words` to `w` within distance 2, or NULL. */
const char *annot_closest(const char *w, const char *const *words, size_t n)
{
    const char *best = NULL;
    int bestd = 3;
    for (size_t i = 0; i < n; i++) {
        char *bare = xstrdup(words[i]);
        size_t l = strlen(bare);
        if (l && bare[l - 1] == '=')
            bare[l - 1] = 0;
        int d = (int)str_distance(w, bare);
        free(bare);
        if (d < bestd) {
            bestd = d;
            best = words[i];
        }
    }
    return best;
}

int annot_is_ident(const char *s)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (const char *p = s + 1; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    return 1;
}

int annot_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\r';
}

int annot_first_line(annot_parser *p, int *line, const char *keyword, const char *fix)
{
    if (*line) {
        ERR(p, fix, "second '-- %s' line (the first is line %d)", keyword, *line);
        return -1;
    }
    *line = p->line;
    return 0;
}

/* Splits `s` at runs of whitespace. */
void annot_split_words(strlist *out, const char *s)
{
    while (*s) {
        while (annot_is_space(*s))
            s++;
        const char *e = s;
        while (*e && !annot_is_space(*e))
            e++;
        if (e > s)
            strlist_push_owned(out, xstrndup(s, (size_t)(e - s)));
        s = e;
    }
}

char *annot_trim_dup(const char *s, size_t n)
{
    while (n && annot_is_space(*s)) {
        s++;
        n--;
    }
    while (n && annot_is_space(s[n - 1]))
        n--;
    return xstrndup(s, n);
}

/* Parses a comma-separated identifier list (`what` names it in messages:
 * "key=", "track="...). */
int annot_parse_columns(annot_parser *p, strlist *out, const char *what, const char *val)
{
    if (!*val) {
        ERR(p, "write the columns after '=' with commas and no spaces, e.g. key=id or key=a,b",
            "%s needs at least one column", what);
        return -1;
    }
    const char *s = val;
    for (;;) {
        const char *c = strchr(s, ',');
        size_t n = c ? (size_t)(c - s) : strlen(s);
        char *col = xstrndup(s, n);
        if (!*col) {
            ERR(p, "list the columns with commas and no spaces, e.g. key=a,b",
                "%s%s has an empty column name", what, val);
            free(col);
            return -1;
        }
        if (!annot_is_ident(col)) {
            ERR(p, "columns in annotations are plain names: letters, digits and _",
                "'%s' in %s%s is not a column name", col, what, val);
            free(col);
            return -1;
        }
        if (strlist_find(out, col) >= 0) {
            ERR(p, "name each column once", "column '%s' is listed twice in %s%s", col, what, val);
            free(col);
            return -1;
        }
        strlist_push_owned(out, col);
        if (!c)
            return 0;
        s = c + 1;
    }
}

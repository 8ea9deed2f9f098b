/*
 * annot_parse.c — the model annotation grammar (see annot.h): annot_parse.
 *
 * Each header line is read as: `--`, spaces, a keyword, then the keyword's
 * words. A line is an annotation when its first word is one of the five
 * keywords, and a *mistaken* annotation when that word is close to one
 * (a misspelling, wrong case, a trailing ':'): those are errors rather
 * than prose, because a silently ignored `-- materialise key=id` would
 * build the wrong table. Prose whose first word is nothing like a keyword
 * is a plain comment.
 *
 * This file reads the lines, classifies each, hands a keyword's words to
 * its parser (annot_int.h names the files) and checks the conflicts
 * across lines; it also holds the text helpers the parsers share.
 */
#include "project/annot_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/strdist.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *const keywords[] = {"materialize", "partitioned", "data_test",
                                       "schedule",    "freshness",   "tags"};
#define NKEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

/* ---- small text helpers ---------------------------------------------- */

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

/* ---- lines ----------------------------------------------------------- */

typedef enum {
    LINE_PROSE,    /* an ordinary comment */
    LINE_KEYWORD,  /* a keyword: *kw set, *rest after it */
    LINE_MISTAKEN, /* close to a keyword: *kw is the one meant */
} line_kind;

/* Classifies the comment text after "--". */
static line_kind classify(const char *c, const char **kw, const char **rest)
{
    while (annot_is_space(*c))
        c++;
    const char *e = c;
    while (*e && (isalnum((unsigned char)*e) || *e == '_' || *e == '-' || *e == '@'))
        e++;
    size_t n = (size_t)(e - c);
    if (n == 0 || n > 40)
        return LINE_PROSE;
    char word[41];
    memcpy(word, c, n);
    word[n] = 0;
    int ends_clean = *e == 0 || annot_is_space(*e);
    for (size_t i = 0; i < NKEYWORDS; i++) {
        if (strcmp(word, keywords[i]) == 0) {
            *kw = keywords[i];
            *rest = e;
            return ends_clean ? LINE_KEYWORD : LINE_MISTAKEN;
        }
    }
    const char *w = word[0] == '@' ? word + 1 : word;
    for (size_t i = 0; i < NKEYWORDS; i++) {
        size_t kl = strlen(keywords[i]);
        /* Wrong case or a leading @ of exactly a keyword; a near spelling
         * of one of the long keywords (short words like "tag" are too
         * common in prose to guess at). */
        int d = (int)str_distance(w, keywords[i]);
        int same_letters = strlen(w) == kl && d == 0;
        int lowercase = 1;
        for (const char *q = w; *q; q++)
            if (isupper((unsigned char)*q))
                lowercase = 0;
        if (same_letters || (kl >= 8 && strlen(w) >= 6 && d <= 2 && lowercase)) {
            /* Wrong case followed by prose ("-- Schedule: nightly") is prose. */
            if (same_letters && !lowercase && !(ends_clean && strchr(e, '=')))
                continue;
            *kw = keywords[i];
            *rest = e;
            return LINE_MISTAKEN;
        }
    }
    return LINE_PROSE;
}

/* A line close to a keyword: an error naming the word and the keyword. */
static void mistaken_line(annot_parser *p, const char *c, const char *kw, const char *rest)
{
    char *fix = xasprintf("write '-- %s …' (lowercase, no ':'), or reword the "
                          "comment if it is not an annotation",
                          kw);
    char word[64];
    const char *w = c + 2;
    while (annot_is_space(*w))
        w++;
    size_t wn = (size_t)(rest - w);
    if (wn >= sizeof(word))
        wn = sizeof(word) - 1;
    memcpy(word, w, wn);
    word[wn] = 0;
    ERR(p, fix, "'%s' is not an annotation; did you mean '%s'?", word, kw);
    free(fix);
}

static void keyword_line(annot_parser *p, const char *kw, const char *rest)
{
    if (strcmp(kw, "materialize") == 0)
        annot_parse_materialize(p, rest);
    else if (strcmp(kw, "partitioned") == 0)
        annot_parse_partitioned(p, rest);
    else if (strcmp(kw, "data_test") == 0)
        annot_parse_data_test(p, rest);
    else if (strcmp(kw, "schedule") == 0)
        annot_parse_schedule(p, rest);
    else if (strcmp(kw, "freshness") == 0)
        annot_parse_freshness(p, rest);
    else
        annot_parse_tags(p, rest);
}

/* One line of the file; `header` when it is above the first statement. */
static void parse_line(annot_parser *p, const char *l, int header)
{
    const char *c = l;
    while (annot_is_space(*c))
        c++;
    if (c[0] != '-' || c[1] != '-')
        return;
    const char *kw = NULL, *rest = NULL;
    line_kind k = classify(c + 2, &kw, &rest);
    if (k != LINE_PROSE && !header)
        ERR(p, "move it to the comment lines at the top of the file, before any SQL",
            "'-- %s' below the model's first statement: annotations belong in the "
            "header",
            kw);
    else if (k == LINE_MISTAKEN)
        mistaken_line(p, c, kw, rest);
    else if (k == LINE_KEYWORD)
        keyword_line(p, kw, rest);
}

/* Conflicts across lines, once every line parsed cleanly. */
static void cross_line_checks(annot_parser *p)
{
    model_annot *out = p->a;
    if (out->partitioned_line && p->errors == 0) {
        p->line = out->partitioned_line;
        /* A partitioned model replaces its slices, or merges by key= or
         * appends inside each (Windmill's grammar); history and
         * incremental keep a table-wide record of their own. */
        const char *what = out->strategy == STRAT_MANUAL        ? "manual"
                           : out->strategy == STRAT_HISTORY     ? "history"
                           : out->strategy == STRAT_INCREMENTAL ? "incremental"
                                                                : NULL;
        if (what) {
            char *fix = xasprintf("drop '-- partitioned', or drop '%s' from line %d", what,
                                  out->materialize_line);
            ERR(p, fix, "'-- partitioned' cannot be combined with '%s'", what);
            free(fix);
        } else if (out->allow_empty && out->strategy == STRAT_REPLACE) {
            /* a slice of no rows is a period with no data yet, replaced as
             * such: there is no empty-result check to lift */
            p->line = out->materialize_line;
            ERR(p, "drop 'allow_empty': a partitioned model replaces a slice of no rows as empty",
                "'allow_empty' does not apply to a partitioned replace");
        } else if (out->strategy == STRAT_APPEND && out->lookback > 0) {
            ERR(p,
                "drop lookback=, or merge late rows by key (key=… in place of append): each run "
                "would append the earlier slices' rows again",
                "lookback=%d cannot be combined with 'append'", out->lookback);
        }
    }
    if (out->strategy == STRAT_MANUAL && out->ntests && p->errors == 0) {
        p->line = out->tests[0].line;
        ERR(p, "data tests need a managed model: drop 'manual' or the data_test lines",
            "'-- data_test' cannot be used with 'materialize manual'");
    }
}

int annot_parse(model_annot *out, diag_list *d, const char *path, const char *text,
                int first_stmt_line)
{
    memset(out, 0, sizeof(*out));
    annot_parser p = {.a = out, .d = d, .path = path};
    const char *s = text;
    for (int line = 1; *s; line++) {
        char *l = xstrline(&s);
        p.line = line;
        parse_line(&p, l, first_stmt_line == 0 || line < first_stmt_line);
        free(l);
    }
    cross_line_checks(&p);
    return p.errors;
}

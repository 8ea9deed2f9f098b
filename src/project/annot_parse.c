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
 * across lines; the text helpers it shares with the parsers are
 * annot_words.c's.
 */
#include "project/annot_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/strdist.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const keywords[] = {"materialize", "partitioned", "data_test",
                                       "schedule",    "freshness",   "tags"};
#define NKEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

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

/* The length of the punctuation stuck to a keyword (`:` of
 * `materialize: key=a`; every byte of a non-ASCII character counts). */
static size_t stuck_len(const char *rest)
{
    size_t n = 0;
    while (rest[n] && !annot_is_space(rest[n]) && !isalnum((unsigned char)rest[n]) &&
           rest[n] != '_')
        n++;
    return n;
}

/* The line as it should be written: the keyword, a space, then what the
 * user wrote after the punctuation that stuck to it (`materialize: key=a`
 * -> `materialize key=a`). */
static char *corrected_line(const char *kw, const char *rest)
{
    rest += stuck_len(rest);
    while (annot_is_space(*rest))
        rest++;
    size_t n = strlen(rest);
    while (n > 0 && annot_is_space(rest[n - 1]))
        n--;
    return n ? xasprintf("-- %s %.*s", kw, (int)n, rest) : xasprintf("-- %s …", kw);
}

/* A line close to a keyword: an error saying what is wrong with the word
 * and the line as it should be. When the word is the keyword itself with
 * punctuation stuck to it (`-- materialize: key=a`), "did you mean
 * 'materialize'?" would repeat what was written, so it names the
 * character instead; a wrong case or a leading '@' is said as such. */
static void mistaken_line(annot_parser *p, const char *c, const char *kw, const char *rest)
{
    char word[64];
    const char *w = c + 2;
    while (annot_is_space(*w))
        w++;
    size_t wn = (size_t)(rest - w);
    if (wn >= sizeof(word))
        wn = sizeof(word) - 1;
    memcpy(word, w, wn);
    word[wn] = 0;
    char *line = corrected_line(kw, rest);
    char *fix = xasprintf("write '%s', or reword the comment if it is not an annotation", line);
    int stuck = (int)stuck_len(rest);
    if (strcmp(word, kw) == 0)
        ERR(p, fix,
            "'%s%.*s' is not an annotation: write the keyword '%s' without the '%.*s', then a "
            "space and its options",
            word, stuck, rest, kw, stuck, rest);
    else if (word[0] == '@' && strcmp(word + 1, kw) == 0)
        ERR(p, fix, "'%s' is not an annotation: write the keyword '%s' without the '@'", word, kw);
    else if (strcasecmp(word, kw) == 0)
        ERR(p, fix, "'%s' is not an annotation: keywords are lowercase ('%s')", word, kw);
    else
        ERR(p, fix, "'%s' is not an annotation; did you mean '%s'?", word, kw);
    free(line);
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

/*
 * annot_int.h — what the parts of the annotation grammar share: the parse
 * state of one model's header, the error macro every line parser reports
 * through, the small text helpers, and one parser per keyword. annot_parse.c
 * reads the lines and hands each keyword's words to its file:
 *   annot_materialize.c  -- materialize (strategy, target, options, their conflicts)
 *   annot_partition.c    -- partitioned
 *   annot_test.c         -- data_test
 *   annot_schedule.c     -- schedule, -- freshness, -- tags
 * The text helpers they all use are annot_words.c's, below them all.
 * Internal to project/.
 */
#ifndef TARN_PROJECT_ANNOT_INT_H
#define TARN_PROJECT_ANNOT_INT_H

#include "project/annot.h"

#include <stddef.h>

/* The parse state of one model's header: the annotations so far, where
 * errors go, the line being read and how many errors it has had. */
typedef struct {
    model_annot *a;
    diag_list *d;
    const char *path;
    int line;
    int errors;
    /* flags seen on the materialize line, for the conflict checks */
    int f_manual, f_append, f_history, f_incremental, f_allow_empty;
} annot_parser;

#define ERR(P, FIX, ...)                                                                           \
    do {                                                                                           \
        diag_add((P)->d, (P)->path, (P)->line, (FIX), __VA_ARGS__);                                \
        (P)->errors++;                                                                             \
    } while (0)

/* The closest of `words` to `w` within distance 2, or NULL (a word
 * ending in '=' is compared without it). */
const char *annot_closest(const char *w, const char *const *words, size_t n);
/* A plain identifier: a letter or _, then letters, digits and _. */
int annot_is_ident(const char *s);
int annot_is_space(char c);
/* Splits `s` at runs of whitespace into `out` (owned copies). */
void annot_split_words(strlist *out, const char *s);
/* A keyword a model has on one line only: 0 when this is its first line
 * (*line becomes it), else the error (`fix` says what to do) and -1. */
int annot_first_line(annot_parser *p, int *line, const char *keyword, const char *fix);
/* The n bytes at s without the spaces around them (caller frees). */
char *annot_trim_dup(const char *s, size_t n);
/* A comma-separated identifier list into `out` (`what` names it in
 * messages: "key=", "track="...): 0, or -1 with the error reported. */
int annot_parse_columns(annot_parser *p, strlist *out, const char *what, const char *val);

/* One parser per keyword: `rest` is the line after the keyword; errors
 * are reported through p, the annotations filled in p->a. */
void annot_parse_materialize(annot_parser *p, const char *rest);
void annot_parse_partitioned(annot_parser *p, const char *rest);
void annot_parse_data_test(annot_parser *p, const char *rest);
void annot_parse_schedule(annot_parser *p, const char *rest);
void annot_parse_freshness(annot_parser *p, const char *rest);
void annot_parse_tags(annot_parser *p, const char *rest);

#endif

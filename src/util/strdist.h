/*
 * strdist.h — how far apart two names are, for "did you mean …?" hints
 * (selectors, annotations, statement keywords).
 */
#ifndef TARN_STRDIST_H
#define TARN_STRDIST_H

#include <stddef.h>

/* The Levenshtein distance of a and b, ignoring ASCII case: the fewest
 * single-character insertions, deletions and substitutions that turn one
 * into the other. */
size_t str_distance(const char *a, const char *b);

#endif

/*
 * prune_term.h — one term of a query's filter that file pruning reads
 * (see prune.h): a top-level column, an operator and constants as SQL
 * literal text. Types only, shared by prune.c and prune_fast.c.
 */
#ifndef TARN_LAKE_PRUNE_TERM_H
#define TARN_LAKE_PRUNE_TERM_H

#include <stddef.h>

typedef enum {
    LK_PRUNE_EQ,
    LK_PRUNE_NE,
    LK_PRUNE_LT,
    LK_PRUNE_LE,
    LK_PRUNE_GT,
    LK_PRUNE_GE,
    LK_PRUNE_BETWEEN, /* values[0] AND values[1] */
    LK_PRUNE_IN,      /* any of values[] */
    LK_PRUNE_IS_NULL,
    LK_PRUNE_NOT_NULL,
} lk_prune_op;

typedef struct {
    int group;    /* terms of one group are alternatives (OR) */
    char *column; /* a top-level column's name, matched case-insensitively */
    lk_prune_op op;
    char **values; /* SQL literals: a number, a 'string' or a typed literal
                      (DATE '…'), quoted by the caller */
    size_t nvalues;
} lk_prune_term;

#endif

/*
 * colstats_set.c — freeing a set of column statistics (see colstats_set.h);
 * apart from colstats.c so that the transaction's state, which holds such
 * sets, does not depend on the code that computes them.
 */
#include "lake/colstats_set.h"

#include <stdlib.h>
#include <string.h>

void lk_stats_free(lk_stats_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->leaves[i].path);
        free(s->leaves[i].sql_type);
        free(s->leaves[i].min);
        free(s->leaves[i].max);
    }
    free(s->leaves);
    memset(s, 0, sizeof(*s));
}

void lk_stats_keep(lk_stats_set *s, const int *keep)
{
    size_t n = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (keep[i]) {
            s->leaves[n++] = s->leaves[i];
            continue;
        }
        free(s->leaves[i].path);
        free(s->leaves[i].sql_type);
        free(s->leaves[i].min);
        free(s->leaves[i].max);
    }
    s->n = n;
}

/*
 * colstats_set.c — freeing a set of column statistics (see colstats_set.h);
 * apart from colstats.c so that the transaction's state, which holds such
 * sets, does not depend on the code that computes them.
 *
 * Catalog rows: none (the statistics are written by colstats.c).
 */
#include "lake/colstats_set.h"

#include <stdlib.h>
#include <string.h>

static void leaf_free(lk_leaf_stats *l)
{
    free(l->path);
    free(l->sql_type);
    free(l->min);
    free(l->max);
    if (l->geo) {
        lk_geo_free(l->geo);
        free(l->geo);
    }
    if (l->variant) {
        lk_variant_free(l->variant);
        free(l->variant);
    }
}

void lk_stats_free(lk_stats_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        leaf_free(&s->leaves[i]);
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
        leaf_free(&s->leaves[i]);
    }
    s->n = n;
}

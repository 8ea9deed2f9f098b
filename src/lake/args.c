/*
 * args.c — reading and freeing a function call's arguments (see args.h).
 *
 * Catalog rows: none (it reads a call's arguments, not the catalog).
 */
#include "lake/args.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void lk_args_free(lk_args *a)
{
    for (size_t i = 0; i < a->npos; i++) {
        free(a->pos[i]);
        free(a->pos_sql ? a->pos_sql[i] : NULL);
    }
    free(a->pos_sql);
    for (size_t i = 0; i < a->nnamed; i++) {
        free(a->names[i]);
        free(a->values[i]);
    }
    free(a->pos);
    free(a->names);
    free(a->values);
    memset(a, 0, sizeof(*a));
}

const char *lk_args_named(const lk_args *a, const char *name)
{
    for (size_t i = 0; i < a->nnamed; i++)
        if (strcasecmp(a->names[i], name) == 0)
            return a->values[i];
    return NULL;
}

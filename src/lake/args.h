/*
 * args.h — the arguments of a call of a DuckLake function, as plain data:
 * positional values, then name => value pairs, each the text of a constant
 * (NULL for SQL NULL). The session parses them from a statement
 * (session/functions.h); lake operations such as maintenance read them.
 */
#ifndef TARN_LAKE_ARGS_H
#define TARN_LAKE_ARGS_H

#include <stddef.h>

typedef struct {
    char **pos;
    char **pos_sql; /* each positional argument's SQL, as DuckDB evaluated it (or NULL) */
    size_t npos;
    char **names, **values;
    size_t nnamed;
} lk_args;

/* The named argument `name` (case-insensitive), or NULL when absent or NULL. */
const char *lk_args_named(const lk_args *a, const char *name);
/* Frees what `a` holds and empties it. */
void lk_args_free(lk_args *a);

#endif

/*
 * maintain.c — DuckLake maintenance functions (see maintain.h).
 */
#include "lake/maintain.h"

#include "tarn/error.h"

int lk_maintain_function(char **out, tarn_session *s, const char *fn, const lk_args *a)
{
    (void)s;
    (void)fn;
    (void)a;
    *out = NULL;
    tarn_error_clear();
    return TARN_ENOTFOUND;
}

/*
 * change_state.c — the lake's table versions as change detection keeps
 * them for one run (see change_state.h): keyed "schema.table" in lower
 * case, loaded by change.c, read by inputs.c and the runner, moved on by
 * each build of the run. It reads no lake table itself and sits below
 * change.c and inputs.c, calling neither.
 */
#include "materialize/change_state.h"

#include "tarn/error.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

char *change_table_key(const char *schema, const char *table)
{
    char *k = xasprintf("%s.%s", schema, table);
    for (char *p = k; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return k;
}

char *change_name_split(const char *name, const char **table)
{
    const char *dot = name ? strchr(name, '.') : NULL;
    if (!dot)
        return NULL;
    *table = dot + 1;
    return xstrndup(name, (size_t)(dot - name));
}

int change_ref_in_lake(const change_ctx *cc, const table_ref *r)
{
    return !r->catalog || strcasecmp(r->catalog, cc->lake ? cc->lake : "") == 0;
}

int64_t change_version(const change_ctx *cc, const char *schema, const char *table)
{
    char *k = change_table_key(schema, table);
    long i = strlist_find(&cc->ver_keys, k);
    free(k);
    return i >= 0 ? cc->ver_vals[i] : -1;
}

void change_set_version(change_ctx *cc, const char *schema, const char *table, int64_t v)
{
    char *k = change_table_key(schema, table);
    long i = strlist_find(&cc->ver_keys, k);
    if (i >= 0) {
        cc->ver_vals[i] = v;
        free(k);
        return;
    }
    strlist_push_owned(&cc->ver_keys, k);
    cc->ver_vals = xrealloc(cc->ver_vals, cc->ver_keys.n * sizeof(int64_t));
    cc->ver_vals[cc->ver_keys.n - 1] = v;
}

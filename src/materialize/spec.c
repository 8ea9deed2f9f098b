/*
 * spec.c — strategy specs taken apart and compared (see spec.h).
 */
#include "materialize/spec.h"

#include "util/buf.h"

#include <stdio.h>
#include <string.h>

void spec_split(spec_parts *out, const char *spec)
{
    memset(out, 0, sizeof(*out));
    size_t n = strcspn(spec, " ");
    if (n >= sizeof(out->kind))
        n = sizeof(out->kind) - 1;
    memcpy(out->kind, spec, n);
    const char *rest = spec[n] ? spec + n + 1 : spec + n;
    const char *k = strstr(spec, " key=");
    if (k)
        snprintf(out->key, sizeof(out->key), "%.*s", (int)strcspn(k + 5, " "), k + 5);
    /* "daily column=ts" → "daily by ts" */
    const char *c = strstr(rest, " column=");
    if (strcmp(out->kind, "partitioned") == 0 && c)
        snprintf(out->part, sizeof(out->part), "%.*s by %.*s", (int)(c - rest), rest,
                 (int)strcspn(c + 8, " "), c + 8);
}

int spec_is(const spec_parts *s, const char *kind)
{
    return strcmp(s->kind, kind) == 0;
}

spec_change spec_classify(const char *prev, const char *now)
{
    if (strcmp(prev, now) == 0)
        return SPEC_OK;
    spec_parts p, n;
    spec_split(&p, prev);
    spec_split(&n, now);
    int same_key = strcmp(p.key, n.key) == 0;
    /* replace's table is exactly its query's rows; a manual script says
     * itself what it does */
    if (spec_is(&p, "replace") || spec_is(&n, "manual"))
        return SPEC_OK;
    /* incremental with key= merges its new slice as merge merges all */
    if (same_key && p.key[0] &&
        ((spec_is(&p, "merge") && spec_is(&n, "incremental")) ||
         (spec_is(&p, "incremental") && spec_is(&n, "merge"))))
        return SPEC_OK;
    if (spec_is(&p, "append") && spec_is(&n, "incremental") && !n.key[0])
        return SPEC_OK;
    if (spec_is(&n, "replace"))
        return SPEC_REPLACE;
    /* the same slices, written another way inside each (replaced, merged
     * by key, appended): every slice keeps its rows */
    if (spec_is(&p, "partitioned") && spec_is(&n, "partitioned"))
        return strcmp(p.part, n.part) == 0 ? SPEC_OK : SPEC_GRAIN;
    if (strcmp(p.kind, n.kind) == 0)
        return SPEC_KEY;
    if (spec_is(&p, "history"))
        return SPEC_HISTORY;
    if (spec_is(&n, "partitioned"))
        return SPEC_SLICES;
    return n.key[0] ? SPEC_MERGE : SPEC_APPEND;
}

char *spec_describe(const char *prev, const char *now)
{
    spec_parts p, n;
    spec_split(&p, prev);
    spec_split(&n, now);
    /* the kinds when they differ ("history → replace"), else the whole
     * specs ("merge key=id → merge key=email") */
    if (strcmp(p.kind, n.kind) != 0)
        return xasprintf("%s → %s", p.kind, n.kind);
    return xasprintf("%s → %s", prev, now);
}

/*
 * select.c — model selectors (see select.h).
 */
#include "project/select.h"

#include "project/dag.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The model `name` designates: schema.table, a unique table name, or a
 * file path. -1 with an error when none or several match. */
static long match_name(const tarn_project *p, const char *name)
{
    for (size_t i = 0; i < p->nmodels; i++)
        if (strcasecmp(p->models[i].name, name) == 0 || strcmp(p->models[i].path, name) == 0)
            return (long)i;
    long found = -1;
    int count = 0;
    tarn_buf all = {0};
    for (size_t i = 0; i < p->nmodels; i++)
        if (strcasecmp(p->models[i].table, name) == 0) {
            found = (long)i;
            buf_printf(&all, "%s%s", count++ ? ", " : "", p->models[i].name);
        }
    if (count > 1) {
        tarn_error_set(TARN_EINVALID, "'%s' is ambiguous: %s; write schema.table", name,
                       buf_cstr(&all));
        found = -1;
    } else if (count == 0) {
        tarn_error_set(TARN_EINVALID, "no model is named '%s' (see `tarn lineage` for the list)",
                       name);
    }
    buf_free(&all);
    return found;
}

static int select_one(unsigned char *sel, const tarn_project *p, const char *arg)
{
    size_t n = p->nmodels;
    if (strncmp(arg, "tag:", 4) == 0) {
        int any = 0;
        for (size_t i = 0; i < n; i++)
            if (strlist_find(&p->models[i].annot.tags, arg + 4) >= 0)
                sel[i] = any = 1;
        return any ? 0 : tarn_error_set(TARN_EINVALID, "no model has tag '%s'", arg + 4);
    }
    if (strncmp(arg, "path:", 5) == 0) {
        char *dir = xstrdup(arg + 5);
        size_t l = strlen(dir);
        while (l > 1 && dir[l - 1] == '/')
            dir[--l] = 0;
        const char *d = strncmp(dir, "./", 2) == 0 ? dir + 2 : dir;
        char *with = strncmp(d, "models/", 7) == 0 || strcmp(d, "models") == 0
                         ? xstrdup(d)
                         : xasprintf("models/%s", d);
        size_t wl = strlen(with);
        int any = 0;
        for (size_t i = 0; i < n; i++) {
            const char *mp = p->models[i].path;
            if (strcmp(mp, with) == 0 || (strncmp(mp, with, wl) == 0 && mp[wl] == '/'))
                sel[i] = any = 1;
        }
        free(with);
        free(dir);
        return any ? 0 : tarn_error_set(TARN_EINVALID, "no model is under '%s'", arg + 5);
    }
    const char *s = arg;
    size_t l = strlen(s);
    int up = s[0] == '+', down = l > 1 && s[l - 1] == '+';
    char *name = xstrndup(s + up, l - (size_t)up - (size_t)down);
    long m = *name ? match_name(p, name) : -1;
    if (!*name)
        tarn_error_set(TARN_EINVALID, "'%s' selects nothing", arg);
    free(name);
    if (m < 0)
        return TARN_EINVALID;
    sel[m] = 1;
    if (up)
        dag_closure(p, (size_t)m, -1, sel);
    if (down)
        dag_closure(p, (size_t)m, +1, sel);
    return 0;
}

int select_models(unsigned char **out, const tarn_project *p, char *const *args, size_t nargs)
{
    unsigned char *sel = xcalloc(p->nmodels ? p->nmodels : 1, 1);
    if (nargs == 0)
        memset(sel, 1, p->nmodels);
    for (size_t i = 0; i < nargs; i++) {
        int rc = select_one(sel, p, args[i]);
        if (rc) {
            free(sel);
            *out = NULL;
            return rc;
        }
    }
    *out = sel;
    return 0;
}

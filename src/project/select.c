/*
 * select.c — dbt's model selector grammar (see select.h): atoms matched
 * into sets of models, widened along the DAG by their graph operators,
 * intersected within a part, united across parts, minus the exclusions.
 */
#include "project/select.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/strdist.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* One atom: `[@|N+|+]method[+|+N]`. up/down: levels to widen by (-1 =
 * unlimited, 0 = none). */
typedef struct {
    const char *text; /* the atom as written, for errors */
    char *method;     /* what is left without the operators */
    int at;
    long up, down;
} sel_atom;

/* The model whose name, table or path is nearest `name`, when near enough
 * to be a likely typo; NULL otherwise. */
static const char *closest_model(const tarn_project *p, const char *name)
{
    const char *best = NULL;
    size_t bestd = (size_t)-1;
    for (size_t i = 0; i < p->nmodels; i++) {
        const tarn_model *m = &p->models[i];
        size_t d = str_distance(name, m->name);
        size_t dt = str_distance(name, m->table);
        size_t dp = str_distance(name, m->path);
        if (dt < d)
            d = dt;
        if (dp < d)
            d = dp;
        if (d < bestd) {
            bestd = d;
            best = m->name;
        }
    }
    size_t limit = strlen(name) / 2 > 3 ? strlen(name) / 2 : 3;
    return bestd <= limit ? best : NULL;
}

static int no_model_error(const tarn_project *p, const char *atom, const char *name)
{
    const char *near = closest_model(p, name);
    if (near)
        return tarn_error_set(TARN_EINVALID, "selector '%s' matches no model; did you mean %s?",
                              atom, near);
    return tarn_error_set(TARN_EINVALID,
                          "selector '%s' matches no model (see `tarn lineage` for the list)", atom);
}

/* The model `name` designates exactly (schema.table or file path), or by
 * its table name when unique; -1 when none, -2 (error set) when several. */
static long match_exact(const tarn_project *p, const char *name)
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
        found = -2;
    }
    buf_free(&all);
    return found;
}

static int match_name(unsigned char *set, const tarn_project *p, const sel_atom *a)
{
    const char *name = a->method;
    if (strpbrk(name, "*?[")) {
        int any = 0;
        for (size_t i = 0; i < p->nmodels; i++) {
            const tarn_model *m = &p->models[i];
            if (fnmatch(name, m->name, FNM_CASEFOLD) == 0 ||
                fnmatch(name, m->table, FNM_CASEFOLD) == 0 || fnmatch(name, m->path, 0) == 0)
                set[i] = any = 1;
        }
        return any ? 0 : no_model_error(p, a->text, name);
    }
    long m = match_exact(p, name);
    if (m == -2)
        return TARN_EINVALID;
    if (m < 0)
        return no_model_error(p, a->text, name);
    set[m] = 1;
    return 0;
}

static int match_tag(unsigned char *set, const tarn_project *p, const sel_atom *a)
{
    const char *tag = a->method + 4;
    int any = 0;
    strlist tags = {0};
    for (size_t i = 0; i < p->nmodels; i++) {
        const strlist *t = &p->models[i].annot.tags;
        if (strlist_find(t, tag) >= 0)
            set[i] = any = 1;
        for (size_t k = 0; k < t->n; k++)
            if (strlist_find(&tags, t->items[k]) < 0)
                strlist_push(&tags, t->items[k]);
    }
    if (!any) {
        char *all = strlist_join(&tags, ", ");
        tarn_error_set(TARN_EINVALID, "selector '%s': no model has tag '%s' (the tags: %s)",
                       a->text, tag, tags.n ? all : "none");
        free(all);
    }
    strlist_free(&tags);
    return any ? 0 : TARN_EINVALID;
}

static int match_path(unsigned char *set, const tarn_project *p, const sel_atom *a)
{
    char *dir = xstrdup(a->method + 5);
    size_t l = strlen(dir);
    while (l > 1 && dir[l - 1] == '/')
        dir[--l] = 0;
    const char *d = strncmp(dir, "./", 2) == 0 ? dir + 2 : dir;
    char *with = strncmp(d, "models/", 7) == 0 || strcmp(d, "models") == 0
                     ? xstrdup(d)
                     : xasprintf("models/%s", d);
    size_t wl = strlen(with);
    int any = 0;
    for (size_t i = 0; i < p->nmodels; i++) {
        const char *mp = p->models[i].path;
        if (strcmp(mp, with) == 0 || (strncmp(mp, with, wl) == 0 && mp[wl] == '/'))
            set[i] = any = 1;
    }
    free(with);
    free(dir);
    if (!any)
        return tarn_error_set(TARN_EINVALID, "selector '%s': no model is under '%s'", a->text,
                              a->method + 5);
    return 0;
}

static int match_strategy(unsigned char *set, const tarn_project *p, const sel_atom *a)
{
    static const char *const known[] = {"replace",     "merge",       "append", "history",
                                        "incremental", "partitioned", "manual"};
    const char *s = a->method + 9;
    int valid = 0;
    for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++)
        valid |= strcasecmp(s, known[k]) == 0;
    if (!valid)
        return tarn_error_set(TARN_EINVALID,
                              "selector '%s': no strategy '%s' (replace, merge, append, history, "
                              "incremental, partitioned, manual)",
                              a->text, s);
    int any = 0;
    for (size_t i = 0; i < p->nmodels; i++)
        if (strcasecmp(annot_strategy_label(&p->models[i].annot), s) == 0)
            set[i] = any = 1;
    if (!any)
        return tarn_error_set(TARN_EINVALID, "selector '%s': no model is built by %s", a->text, s);
    return 0;
}

/* Parses the operators around an atom. -1 (error set) on a malformed one. */
static int atom_parse(sel_atom *a, const char *text)
{
    memset(a, 0, sizeof(*a));
    a->text = text;
    const char *s = text, *e = text + strlen(text);
    if (*s == '@') {
        a->at = 1;
        s++;
    } else {
        const char *d = s;
        while (isdigit((unsigned char)*d))
            d++;
        if (*d == '+') {
            a->up = d > s ? strtol(s, NULL, 10) : -1;
            s = d + 1;
        }
    }
    const char *d = e;
    while (d > s && isdigit((unsigned char)d[-1]))
        d--;
    if (d > s && d[-1] == '+') {
        a->down = d < e ? strtol(d, NULL, 10) : -1;
        e = d - 1;
    }
    if (a->at && (a->up || a->down))
        return tarn_error_set(TARN_EINVALID, "selector '%s': @ does not combine with +", text);
    if (e <= s)
        return tarn_error_set(TARN_EINVALID, "selector '%s' names no model", text);
    a->method = xstrndup(s, (size_t)(e - s));
    return 0;
}

/* Marks in `set` what lies within `depth` levels (-1: any) of the models
 * in `from`, upstream (direction -1) or downstream (+1). */
static void widen(unsigned char *set, const tarn_project *p, const unsigned char *from, long depth,
                  int direction)
{
    size_t n = p->nmodels;
    long *level = xmalloc((n ? n : 1) * sizeof(long));
    size_t *todo = xmalloc((n ? n : 1) * sizeof(size_t));
    size_t head = 0, tail = 0;
    for (size_t i = 0; i < n; i++) {
        level[i] = from[i] ? 0 : -1;
        if (from[i])
            todo[tail++] = i;
    }
    while (head < tail) {
        size_t x = todo[head++];
        set[x] = 1;
        if (depth >= 0 && level[x] >= depth)
            continue;
        const tarn_model *m = &p->models[x];
        size_t cnt = direction < 0 ? m->nup : m->ndown;
        for (size_t k = 0; k < cnt; k++) {
            size_t y = direction < 0 ? m->up[k].model : m->down[k];
            if (level[y] < 0) {
                level[y] = level[x] + 1;
                todo[tail++] = y;
            }
        }
    }
    free(todo);
    free(level);
}

/* The models one atom selects, into `set` (zeroed by the caller). */
static int atom_select(unsigned char *set, const tarn_project *p, const char *text)
{
    sel_atom a;
    if (atom_parse(&a, text) != 0)
        return TARN_EINVALID;
    size_t n = p->nmodels;
    unsigned char *base = xcalloc(n ? n : 1, 1);
    int rc;
    if (strncmp(a.method, "tag:", 4) == 0)
        rc = match_tag(base, p, &a);
    else if (strncmp(a.method, "path:", 5) == 0)
        rc = match_path(base, p, &a);
    else if (strncmp(a.method, "strategy:", 9) == 0)
        rc = match_strategy(base, p, &a);
    else
        rc = match_name(base, p, &a);
    if (rc == 0) {
        memcpy(set, base, n);
        if (a.at) {
            unsigned char *down = xcalloc(n ? n : 1, 1);
            widen(down, p, base, -1, +1);
            widen(set, p, down, -1, -1);
            free(down);
        }
        if (a.up)
            widen(set, p, base, a.up, -1);
        if (a.down)
            widen(set, p, base, a.down, +1);
    }
    free(base);
    free(a.method);
    return rc;
}

/* One part: the intersection of its comma-separated atoms, OR-ed into
 * `sel`. */
static int part_select(unsigned char *sel, const tarn_project *p, const char *part)
{
    size_t n = p->nmodels;
    unsigned char *acc = xmalloc(n ? n : 1), *one = xmalloc(n ? n : 1);
    memset(acc, 1, n);
    int rc = 0;
    char *copy = xstrdup(part), *save = NULL;
    for (char *atom = strtok_r(copy, ",", &save); atom && rc == 0;
         atom = strtok_r(NULL, ",", &save)) {
        memset(one, 0, n);
        rc = atom_select(one, p, atom);
        for (size_t i = 0; i < n; i++)
            acc[i] &= one[i];
    }
    if (rc == 0) {
        int any = 0;
        for (size_t i = 0; i < n; i++)
            if (acc[i])
                sel[i] = any = 1;
        if (!any)
            rc = tarn_error_set(TARN_EINVALID,
                                "selector '%s' matches no model (each of its parts matches some, "
                                "but no model matches all)",
                                part);
    }
    free(copy);
    free(one);
    free(acc);
    return rc;
}

/* The union of the parts of args (each split at whitespace). */
static int union_select(unsigned char *sel, const tarn_project *p, char *const *args, size_t nargs)
{
    for (size_t i = 0; i < nargs; i++) {
        char *copy = xstrdup(args[i]), *save = NULL;
        int rc = 0;
        for (char *part = strtok_r(copy, " \t\n", &save); part && rc == 0;
             part = strtok_r(NULL, " \t\n", &save))
            rc = part_select(sel, p, part);
        free(copy);
        if (rc)
            return rc;
    }
    return 0;
}

int select_models_excluding(unsigned char **out, const tarn_project *p, char *const *args,
                            size_t nargs, char *const *excl, size_t nexcl)
{
    size_t n = p->nmodels;
    unsigned char *sel = xcalloc(n ? n : 1, 1);
    *out = NULL;
    int rc = 0;
    if (nargs == 0)
        memset(sel, 1, n);
    else
        rc = union_select(sel, p, args, nargs);
    if (rc == 0 && nexcl) {
        unsigned char *ex = xcalloc(n ? n : 1, 1);
        rc = union_select(ex, p, excl, nexcl);
        int left = 0;
        for (size_t i = 0; i < n; i++) {
            sel[i] &= (unsigned char)!ex[i];
            left |= sel[i];
        }
        free(ex);
        if (rc == 0 && !left && n)
            rc = tarn_error_set(TARN_EINVALID, "--exclude leaves no model selected");
    }
    if (rc) {
        free(sel);
        return rc;
    }
    *out = sel;
    return 0;
}

int select_models(unsigned char **out, const tarn_project *p, char *const *args, size_t nargs)
{
    return select_models_excluding(out, p, args, nargs, NULL, 0);
}

/*
 * model_macro.c — the macros of the catalog model (see model.h).
 *
 * load.c reads ducklake_macro (the rows live at the model's snapshot) with
 * their ducklake_macro_impl and ducklake_macro_parameters rows, which carry
 * no snapshot range of their own: a macro's implementations never change,
 * a new definition is a new macro id. Each joined row comes here.
 */
#include "lake/model.h"

#include "duck/duck.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *dup_or(const char *s, const char *dflt)
{
    return xstrdup(s ? s : dflt);
}

static void impl_free(lk_macro_impl *im)
{
    for (size_t i = 0; i < im->nparams; i++) {
        free(im->params[i].name);
        free(im->params[i].type);
        free(im->params[i].default_value);
        free(im->params[i].default_type);
    }
    free(im->params);
    free(im->sql);
    free(im->type);
}

void lk_macro_free(lk_macro *m)
{
    for (size_t i = 0; i < m->nimpls; i++)
        impl_free(&m->impls[i]);
    free(m->impls);
    free(m->name);
    memset(m, 0, sizeof(*m));
}

void lk_macro_copy(lk_macro *dst, const lk_macro *src)
{
    *dst = *src;
    dst->name = xstrdup(src->name);
    dst->impls = xcalloc(src->nimpls ? src->nimpls : 1, sizeof(lk_macro_impl));
    for (size_t i = 0; i < src->nimpls; i++) {
        const lk_macro_impl *s = &src->impls[i];
        lk_macro_impl *d = &dst->impls[i];
        d->sql = xstrdup(s->sql);
        d->type = xstrdup(s->type);
        d->nparams = s->nparams;
        d->params = xcalloc(s->nparams ? s->nparams : 1, sizeof(lk_macro_param));
        for (size_t k = 0; k < s->nparams; k++) {
            d->params[k].name = xstrdup(s->params[k].name);
            d->params[k].type = xstrdup(s->params[k].type);
            d->params[k].default_value = xstrdup(s->params[k].default_value);
            d->params[k].default_type = xstrdup(s->params[k].default_type);
        }
    }
}

lk_macro *lk_catalog_macro(lk_catalog *c, int64_t schema_id, const char *name, int is_table)
{
    for (size_t i = 0; i < c->nmacros; i++)
        if (c->macros[i].schema_id == schema_id && c->macros[i].is_table == is_table &&
            strcasecmp(c->macros[i].name, name) == 0)
            return &c->macros[i];
    return NULL;
}

lk_macro *lk_catalog_add_macro(lk_catalog *c)
{
    c->macros = xrealloc(c->macros, (c->nmacros + 1) * sizeof(lk_macro));
    memset(&c->macros[c->nmacros], 0, sizeof(lk_macro));
    return &c->macros[c->nmacros++];
}

void lk_catalog_remove_macro(lk_catalog *c, size_t i)
{
    lk_macro_free(&c->macros[i]);
    memmove(&c->macros[i], &c->macros[i + 1], (c->nmacros - i - 1) * sizeof(lk_macro));
    c->nmacros--;
}

static int64_t to_i64(const char *s)
{
    return s ? strtoll(s, NULL, 10) : -1;
}

void lk_catalog_add_macro_row(lk_catalog *c, const duck_table *t, size_t r)
{
    int64_t id = to_i64(duck_table_get(t, r, 0)), impl = to_i64(duck_table_get(t, r, 4));
    lk_macro *m = c->nmacros ? &c->macros[c->nmacros - 1] : NULL;
    if (!m || m->id != id) {
        m = lk_catalog_add_macro(c);
        m->id = id;
        m->begin = to_i64(duck_table_get(t, r, 1));
        m->schema_id = to_i64(duck_table_get(t, r, 2));
        m->name = dup_or(duck_table_get(t, r, 3), "");
        m->impls = xcalloc(1, sizeof(lk_macro_impl));
    }
    if (m->nimpls == 0 || impl != (int64_t)m->nimpls - 1) {
        m->impls = xrealloc(m->impls, (m->nimpls + 1) * sizeof(lk_macro_impl));
        lk_macro_impl *im = &m->impls[m->nimpls++];
        memset(im, 0, sizeof(*im));
        im->sql = dup_or(duck_table_get(t, r, 5), "");
        im->type = dup_or(duck_table_get(t, r, 6), "scalar");
        m->is_table = strcmp(m->impls[0].type, "table") == 0;
    }
    if (!duck_table_get(t, r, 7))
        return;
    lk_macro_impl *im = &m->impls[m->nimpls - 1];
    im->params = xrealloc(im->params, (im->nparams + 1) * sizeof(lk_macro_param));
    lk_macro_param *p = &im->params[im->nparams++];
    p->name = dup_or(duck_table_get(t, r, 8), "");
    p->type = dup_or(duck_table_get(t, r, 9), "unknown");
    p->default_value = dup_or(duck_table_get(t, r, 10), "NULL");
    p->default_type = dup_or(duck_table_get(t, r, 11), "unknown");
}

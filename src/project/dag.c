/*
 * dag.c — topological order and cycle reporting (see dag.h).
 *
 * The order is Kahn's algorithm taking, among the models whose upstream
 * is all placed, the one first by path: the same project always builds in
 * the same order, and siblings appear in the order a reader expects.
 */
#include "project/dag.h"

#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

/* Depth-first search for a cycle; on finding one, reports it. */
typedef struct {
    const tarn_project *p;
    unsigned char *color; /* 0 white, 1 on the stack, 2 done */
    size_t *stack;
    size_t depth;
    int found;
} cycle_search;

static void report_cycle(cycle_search *c, size_t from_depth, diag_list *d)
{
    const tarn_project *p = c->p;
    tarn_buf b = {0};
    for (size_t i = from_depth; i < c->depth; i++)
        buf_printf(&b, "%s -> ", p->models[c->stack[i]].name);
    buf_puts(&b, p->models[c->stack[from_depth]].name);
    /* The stack runs upstream-wards (each model, then one it reads); the
     * reference that closes the cycle is the last model's read of the
     * first, so that is the file and line reported. */
    const tarn_model *last = &p->models[c->stack[c->depth - 1]];
    int line = 0;
    for (size_t i = 0; i < last->nup; i++)
        if (last->up[i].model == c->stack[from_depth])
            line = last->up[i].line;
    diag_add(d, last->path, line,
             "a model cannot read, directly or through other models, the table it builds; "
             "remove one of these references",
             "cycle: %s (each model reads the next)", buf_cstr(&b));
    buf_free(&b);
    c->found = 1;
}

static void dfs(cycle_search *c, size_t m, diag_list *d)
{
    if (c->found)
        return;
    c->color[m] = 1;
    c->stack[c->depth++] = m;
    const tarn_model *mm = &c->p->models[m];
    for (size_t i = 0; i < mm->nup && !c->found; i++) {
        size_t u = mm->up[i].model;
        if (c->color[u] == 1) {
            size_t k = 0;
            while (c->stack[k] != u)
                k++;
            report_cycle(c, k, d);
        } else if (c->color[u] == 0) {
            dfs(c, u, d);
        }
    }
    c->depth--;
    c->color[m] = 2;
}

int dag_build(tarn_project *p, diag_list *d)
{
    size_t n = p->nmodels;
    for (size_t i = 0; i < n; i++) {
        tarn_model *m = &p->models[i];
        for (size_t j = 0; j < m->nup; j++) {
            tarn_model *u = &p->models[m->up[j].model];
            u->down = xrealloc(u->down, (u->ndown + 1) * sizeof(size_t));
            u->down[u->ndown++] = i;
        }
    }
    size_t *indeg = xcalloc(n ? n : 1, sizeof(size_t));
    unsigned char *placed = xcalloc(n ? n : 1, 1);
    p->order = xcalloc(n ? n : 1, sizeof(size_t));
    for (size_t i = 0; i < n; i++)
        indeg[i] = p->models[i].nup;
    size_t k = 0;
    for (;;) {
        size_t pick = n;
        for (size_t i = 0; i < n && pick == n; i++)
            if (!placed[i] && indeg[i] == 0)
                pick = i;
        if (pick == n)
            break;
        placed[pick] = 1;
        p->order[k++] = pick;
        for (size_t j = 0; j < p->models[pick].ndown; j++)
            indeg[p->models[pick].down[j]]--;
    }
    int errors = 0;
    if (k < n) {
        cycle_search c = {.p = p, .color = xcalloc(n, 1), .stack = xcalloc(n, sizeof(size_t))};
        for (size_t i = 0; i < n && !c.found; i++)
            if (!placed[i] && c.color[i] == 0)
                dfs(&c, i, d);
        free(c.color);
        free(c.stack);
        errors = 1;
    }
    free(indeg);
    free(placed);
    return errors;
}

void dag_closure(const tarn_project *p, size_t m, int direction, unsigned char *mark)
{
    size_t *todo = xmalloc((p->nmodels + 1) * sizeof(size_t));
    size_t n = 0;
    todo[n++] = m;
    while (n) {
        size_t x = todo[--n];
        const tarn_model *mm = &p->models[x];
        size_t cnt = direction < 0 ? mm->nup : mm->ndown;
        for (size_t i = 0; i < cnt; i++) {
            size_t y = direction < 0 ? mm->up[i].model : mm->down[i];
            if (!mark[y]) {
                mark[y] = 1;
                todo[n++] = y;
            }
        }
    }
    free(todo);
}

/*
 * project.c — a loaded project's lookups, and freeing it (see project.h;
 * load.c builds one).
 */
#include "project/project.h"

#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

long project_find_model(const tarn_project *p, const char *schema, const char *table)
{
    for (size_t i = 0; i < p->nmodels; i++)
        if (strcasecmp(p->models[i].schema, schema) == 0 &&
            strcasecmp(p->models[i].table, table) == 0)
            return (long)i;
    return -1;
}

long project_ref_model(const tarn_project *p, const table_ref *r)
{
    if (r->is_file)
        return -1;
    if (r->catalog && (!p->lake_alias || strcasecmp(r->catalog, p->lake_alias) != 0))
        return -1;
    return project_find_model(p, r->schema ? r->schema : "main", r->table);
}

long project_ref_current_view(const tarn_project *p, const table_ref *r)
{
    static const char suffix[] = "_current";
    size_t n = strlen(r->table), sl = sizeof(suffix) - 1;
    if (r->is_file || n <= sl || strcasecmp(r->table + n - sl, suffix) != 0)
        return -1;
    if (r->catalog && (!p->lake_alias || strcasecmp(r->catalog, p->lake_alias) != 0))
        return -1;
    char *table = xstrndup(r->table, n - sl);
    long m = project_find_model(p, r->schema ? r->schema : "main", table);
    free(table);
    return m >= 0 && p->models[m].annot.strategy == STRAT_HISTORY ? m : -1;
}

void project_free(tarn_project *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nconfig; i++) {
        sql_script sc = {.items = p->config[i].stmts, .n = p->config[i].nstmts};
        sql_script_free(&sc);
        free(p->config[i].path);
    }
    free(p->config);
    for (size_t i = 0; i < p->nmodels; i++) {
        tarn_model *m = &p->models[i];
        free(m->name);
        free(m->schema);
        free(m->table);
        free(m->path);
        free(m->text);
        annot_free(&m->annot);
        body_free(&m->body);
        free(m->up);
        free(m->down);
        strlist_free(&m->sources);
    }
    free(p->models);
    free(p->order);
    strlist_free(&p->tests);
    env_free(&p->env);
    free(p->lake_alias);
    free(p->lake_path);
    free(p->dir);
    free(p->target);
    free(p);
}

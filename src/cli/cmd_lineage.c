/*
 * cmd_lineage.c — `tarn lineage [MODEL]`: the model graph as text, dot or
 * JSON, from the project alone (the lake is not opened). With MODEL, only
 * what it reads and what reads it, transitively.
 */
#include "cli/cli.h"
#include "cli/project_cli.h"

#include "project/dag.h"
#include "project/select.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cmd_lineage_usage[] =
    "usage: tarn lineage [MODEL] [--format text|dot|json] [-C DIR]\n"
    "\n"
    "Prints the project's models and the tables they read. With MODEL, only\n"
    "its upstream and downstream models. `dot` is Graphviz input (tarn\n"
    "lineage --format dot | dot -Tsvg > dag.svg).\n";

typedef enum { FMT_TEXT, FMT_DOT, FMT_JSON } lineage_fmt;

static void dot_id(const char *name)
{
    putchar('"');
    for (const char *c = name; *c; c++) {
        if (*c == '"' || *c == '\\')
            putchar('\\');
        putchar(*c);
    }
    putchar('"');
}

static void print_text(const tarn_project *p, const unsigned char *keep)
{
    for (size_t k = 0; k < p->nmodels; k++) {
        size_t mi = p->order[k];
        if (!keep[mi])
            continue;
        const tarn_model *m = &p->models[mi];
        printf("%s  (%s, %s)\n", m->name, annot_strategy_label(&m->annot), m->path);
        if (m->nup) {
            fputs("  reads:", stdout);
            for (size_t i = 0; i < m->nup; i++)
                printf("%s %s", i ? "," : "", p->models[m->up[i].model].name);
            putchar('\n');
        }
        if (m->sources.n) {
            char *s = strlist_join(&m->sources, ", ");
            printf("  sources: %s\n", s);
            free(s);
        }
        if (m->ndown) {
            fputs("  read by:", stdout);
            for (size_t i = 0; i < m->ndown; i++)
                printf("%s %s", i ? "," : "", p->models[m->down[i]].name);
            putchar('\n');
        }
    }
}

static void print_dot(const tarn_project *p, const unsigned char *keep)
{
    puts("digraph tarn {\n  rankdir=LR;\n  node [shape=box];");
    for (size_t k = 0; k < p->nmodels; k++) {
        size_t mi = p->order[k];
        if (!keep[mi])
            continue;
        const tarn_model *m = &p->models[mi];
        fputs("  ", stdout);
        dot_id(m->name);
        printf(" [label=\"%s\\n%s\"];\n", m->name, annot_strategy_label(&m->annot));
        for (size_t i = 0; i < m->sources.n; i++) {
            fputs("  ", stdout);
            dot_id(m->sources.items[i]);
            fputs(" [shape=ellipse];\n  ", stdout);
            dot_id(m->sources.items[i]);
            fputs(" -> ", stdout);
            dot_id(m->name);
            puts(";");
        }
        for (size_t i = 0; i < m->nup; i++) {
            if (!keep[m->up[i].model])
                continue;
            fputs("  ", stdout);
            dot_id(p->models[m->up[i].model].name);
            fputs(" -> ", stdout);
            dot_id(m->name);
            puts(";");
        }
    }
    puts("}");
}

static void print_json(const tarn_project *p, const unsigned char *keep)
{
    json_t *nodes = json_array(), *edges = json_array();
    strlist seen = {0};
    for (size_t k = 0; k < p->nmodels; k++) {
        size_t mi = p->order[k];
        if (!keep[mi])
            continue;
        const tarn_model *m = &p->models[mi];
        json_t *n = json_object();
        json_object_set_new(n, "name", json_string(m->name));
        json_object_set_new(n, "kind", json_string("model"));
        json_object_set_new(n, "path", json_string(m->path));
        json_object_set_new(n, "strategy", json_string(annot_strategy_label(&m->annot)));
        json_array_append_new(nodes, n);
        for (size_t i = 0; i < m->sources.n; i++) {
            const char *s = m->sources.items[i];
            if (strlist_find(&seen, s) < 0) {
                strlist_push(&seen, s);
                json_t *sn = json_object();
                json_object_set_new(sn, "name", json_string(s));
                json_object_set_new(sn, "kind", json_string("source"));
                json_array_append_new(nodes, sn);
            }
            json_t *e = json_object();
            json_object_set_new(e, "from", json_string(s));
            json_object_set_new(e, "to", json_string(m->name));
            json_array_append_new(edges, e);
        }
        for (size_t i = 0; i < m->nup; i++) {
            if (!keep[m->up[i].model])
                continue;
            json_t *e = json_object();
            json_object_set_new(e, "from", json_string(p->models[m->up[i].model].name));
            json_object_set_new(e, "to", json_string(m->name));
            json_array_append_new(edges, e);
        }
    }
    strlist_free(&seen);
    json_t *root = json_object();
    json_object_set_new(root, "schema_version", json_integer(1));
    json_object_set_new(root, "nodes", nodes);
    json_object_set_new(root, "edges", edges);
    char *s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
    puts(s);
    free(s);
    json_decref(root);
}

/* The models to draw into *keep (caller frees): those the selectors
 * select, MODEL with everything upstream and downstream of it, or all. */
static int lineage_keep(unsigned char **keep, cli_project *cp, cli_common *common,
                        const char *model)
{
    if (common->select.n || common->exclude.n)
        return cli_project_select(keep, cp, common);
    if (!model) {
        *keep = xmalloc(cp->p->nmodels ? cp->p->nmodels : 1);
        memset(*keep, 1, cp->p->nmodels);
        return CLI_OK;
    }
    char *sel = xasprintf("+%s+", model);
    char *args[] = {sel};
    int rc = select_models(keep, cp->p, args, 1);
    free(sel);
    if (!rc)
        return CLI_OK;
    cli_report(tarn_error_last());
    cli_project_close(cp);
    cli_common_free(common);
    return CLI_USAGE;
}

/* --format's value into *fmt; -1 (reported) for another. */
static int lineage_format(const char *val, lineage_fmt *fmt)
{
    if (strcmp(val, "text") == 0)
        *fmt = FMT_TEXT;
    else if (strcmp(val, "dot") == 0)
        *fmt = FMT_DOT;
    else if (strcmp(val, "json") == 0)
        *fmt = FMT_JSON;
    else {
        cli_errorf("--format takes text, dot or json, not '%s'", val);
        return -1;
    }
    return 0;
}

int cmd_lineage(int argc, char **argv)
{
    const char *dir = NULL, *model = NULL;
    cli_common common = {0};
    lineage_fmt fmt = FMT_TEXT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        int m;
        if (cli_opt_help(a, cmd_lineage_usage)) {
            cli_common_free(&common);
            return CLI_OK;
        }
        if ((m = cli_opt_common(argc, argv, &i, &common, 0)) != 0) {
            if (m < 0)
                goto usage;
        } else if ((m = cli_opt_value(argc, argv, &i, NULL, "--format", &val)) != 0) {
            if (m < 0 || lineage_format(val, &fmt) < 0)
                goto usage;
        } else if (cli_opt_dir_model(argc, argv, &i, &dir, &model) < 0) {
            goto usage;
        }
    }
    if (dir)
        common.dir = dir;
    if (model && common.select.n) {
        cli_errorf("give MODEL or --select, not both");
        goto usage;
    }
    cli_project cp;
    int status = cli_project_open_or_free(&cp, &common);
    unsigned char *keep = NULL;
    if (status == CLI_OK)
        status = lineage_keep(&keep, &cp, &common, model);
    if (status != CLI_OK)
        return status;
    if (fmt == FMT_TEXT)
        print_text(cp.p, keep);
    else if (fmt == FMT_DOT)
        print_dot(cp.p, keep);
    else
        print_json(cp.p, keep);
    free(keep);
    cli_project_close(&cp);
    cli_common_free(&common);
    return CLI_OK;
usage:
    cli_common_free(&common);
    fputs("Try 'tarn lineage --help'.\n", stderr);
    return CLI_USAGE;
}

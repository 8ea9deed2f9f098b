/*
 * run_reads.c — what a run reads before it writes anything (see runner.c):
 * config/ run in the session, the lake's tables, views and schemas, how
 * each table a model reads resolves (a model's target, a DuckDB object, a
 * lake table pinned at the run's start, a lake view), and the check that
 * every such table exists, so that a project error leaves the lake as it
 * was. Part of the runner (run_int.h).
 */
#include "materialize/records.h"
#include "materialize/run_int.h"

#include "project/query.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *lower_dup(const char *s)
{
    char *d = xstrdup(s);
    for (char *p = d; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

static char *ref_key(const table_ref *r)
{
    char *k =
        xasprintf("%s.%s.%s", r->catalog ? r->catalog : "", r->schema ? r->schema : "", r->table);
    char *l = lower_dup(k);
    free(k);
    return l;
}

const source_entry *run_source(const run_ctx *c, const table_ref *r)
{
    char *k = ref_key(r);
    const source_entry *found = NULL;
    for (size_t i = 0; i < c->nsources && !found; i++)
        if (strcmp(c->sources[i].key, k) == 0)
            found = &c->sources[i];
    free(k);
    return found;
}
/* ---- config ---------------------------------------------------------- */

int build_run_config(tarn_project *p, tarn_session *s)
{
    for (size_t i = 0; i < p->nconfig; i++) {
        const config_file *cf = &p->config[i];
        for (size_t j = 0; j < cf->nstmts; j++) {
            int rc = query_exec(s, cf->stmts[j].text, NULL);
            if (rc) {
                char *msg = xstrdup(tarn_error_last());
                rc = tarn_error_set(TARN_EINVALID, "%s:%d: %s", cf->path, cf->stmts[j].line, msg);
                free(msg);
                return rc;
            }
        }
    }
    if (!tarn_session_catalog_prefix(s, p->lake_alias))
        return tarn_error_set(TARN_EINVALID, "config/ did not attach lake \"%s\"", p->lake_alias);
    return 0;
}
/* ---- what the lake holds --------------------------------------------- */

/* From the session's catalog model rather than information_schema, whose
 * listing of a lake binds every lake table's view and reads the catalog's
 * column facts (a worker's build lists the lake for each model). */
static int load_lake_tables(run_ctx *c)
{
    char **names;
    int *kinds;
    size_t n;
    int rc = tarn_session_lake_objects(c->s, c->lake, &names, &kinds, &n);
    if (rc)
        return rc;
    for (size_t i = 0; i < n; i++)
        strlist_push_owned(kinds[i] == TARN_LAKE_SCHEMA ? &c->lake_schemas
                           : kinds[i] == TARN_LAKE_VIEW ? &c->lake_views
                                                        : &c->lake_tables,
                           names[i]);
    free(names);
    free(kinds);
    return 0;
}

/* ---- checking what models read --------------------------------------- */

/* Names a model's own setup statements create (CREATE TEMP TABLE x …):
 * its query may read them although they do not exist yet. */
static void local_names(strlist *out, const tarn_model *m)
{
    for (size_t i = 0; i + 1 < m->body.n; i++) {
        sql_tokens tk;
        if (sql_tokenize(&tk, m->body.items[i].text) != 0) {
            tarn_error_clear();
            continue;
        }
        size_t j = 0;
        if (tk.n > 0 && sql_tok_is_kw(&tk.toks[0], "CREATE")) {
            j = 1;
            if (j + 1 < tk.n && sql_tok_is_kw(&tk.toks[j], "OR"))
                j += 2;
            while (j < tk.n &&
                   (sql_tok_is_kw(&tk.toks[j], "TEMP") || sql_tok_is_kw(&tk.toks[j], "TEMPORARY") ||
                    sql_tok_is_kw(&tk.toks[j], "TABLE") || sql_tok_is_kw(&tk.toks[j], "VIEW") ||
                    sql_tok_is_kw(&tk.toks[j], "MACRO")))
                j++;
            if (j + 2 < tk.n && sql_tok_is_kw(&tk.toks[j], "IF"))
                j += 3;
            /* the last part of a possibly qualified name */
            while (j + 2 < tk.n && tk.toks[j + 1].type == SQL_TOK_OP &&
                   strcmp(tk.toks[j + 1].text, ".") == 0)
                j += 2;
            if (j < tk.n && (tk.toks[j].type == SQL_TOK_IDENT || tk.toks[j].type == SQL_TOK_QIDENT))
                strlist_push_owned(out, lower_dup(tk.toks[j].text));
        }
        sql_tokens_free(&tk);
    }
}

static void ref_text(tarn_buf *b, const table_ref *r)
{
    if (r->catalog)
        buf_printf(b, "%s.", r->catalog);
    if (r->schema)
        buf_printf(b, "%s.", r->schema);
    buf_puts(b, r->table);
}

/* Classifies a reference that is not a model's target, once per name. */
static const source_entry *classify_source(run_ctx *c, const table_ref *r)
{
    const source_entry *known = run_source(c, r);
    if (known)
        return known;
    c->sources = xrealloc(c->sources, (c->nsources + 1) * sizeof(source_entry));
    source_entry *e = &c->sources[c->nsources++];
    memset(e, 0, sizeof(*e));
    e->key = ref_key(r);
    const char *schema = r->schema ? r->schema : "main";
    char *k = change_table_key(schema, r->table);
    int lake_table = strlist_find(&c->lake_tables, k) >= 0;
    int lake_view = strlist_find(&c->lake_views, k) >= 0;
    free(k);
    int in_lake = r->catalog && strcasecmp(r->catalog, c->lake) == 0;
    if (!in_lake) {
        /* Does DuckDB resolve it as written (a config/ view, a file...)? */
        tarn_buf probe = {0};
        buf_puts(&probe, "SELECT * FROM ");
        quote_qualified(&probe, r->catalog, r->schema, r->table);
        buf_puts(&probe, " LIMIT 0");
        int rc = query_exec(c->s, buf_cstr(&probe), NULL);
        buf_free(&probe);
        if (rc == 0) {
            e->kind = SRC_DUCKDB;
            return e;
        }
        tarn_error_clear();
        if (r->catalog) {
            e->kind = SRC_MISSING;
            return e;
        }
    }
    e->kind = lake_table ? SRC_LAKE : lake_view ? SRC_LAKE_VIEW : SRC_MISSING;
    if (e->kind != SRC_MISSING) {
        e->schema = xstrdup(schema);
        e->table = xstrdup(r->table);
    }
    return e;
}

/* An unselected upstream model whose table the lake does not hold yet. */
static void check_upstream_built(run_ctx *c, const tarn_model *m, size_t up, int line, diag_list *d)
{
    const tarn_model *um = &c->p->models[up];
    if (run_has_table(c, um->schema, um->table))
        return;
    char *fix = xasprintf("build it first, or select it too: tarn run +%s", m->name);
    diag_add(d, m->path, line, fix,
             "%s reads %s, which %s builds but which is not in lake \"%s\" yet", m->name, um->name,
             um->path, c->lake);
    free(fix);
}

/* A table no model builds, config/ does not define and the lake lacks. */
static void diag_missing_table(run_ctx *c, const tarn_model *m, const table_ref *r, int line,
                               diag_list *d)
{
    tarn_buf name = {0};
    ref_text(&name, r);
    char *fix = xasprintf("define it in config/ (e.g. config/sources.sql: CREATE VIEW %s AS FROM "
                          "read_csv('data/….csv')), or fix the name",
                          buf_cstr(&name));
    diag_add(d, m->path, line, fix,
             "table %s does not exist: no model builds it, config/ does not define "
             "it and lake \"%s\" has no such table",
             buf_cstr(&name), c->lake);
    free(fix);
    buf_free(&name);
}

static void check_model_reads(run_ctx *c, size_t mi, const unsigned char *sel, diag_list *d)
{
    const tarn_model *m = &c->p->models[mi];
    int manual = m->annot.strategy == STRAT_MANUAL;
    strlist local = {0};
    local_names(&local, m);
    for (size_t s = 0; s < m->body.n; s++) {
        const model_stmt *st = &m->body.items[s];
        for (size_t i = 0; i < st->refs.n; i++) {
            const table_ref *r = &st->refs.items[i];
            if (r->is_file)
                continue;
            int line = body_line_of(st, r->offset == REF_NO_OFFSET ? 0 : r->offset);
            long up = project_ref_model(c->p, r);
            if (up < 0)
                up = project_ref_current_view(c->p, r); /* made by that model's build */
            if (up == (long)mi)
                continue;
            if (up >= 0) {
                if (!sel[up])
                    check_upstream_built(c, m, (size_t)up, line, d);
                continue;
            }
            if (!r->catalog && !r->schema) {
                char *l = lower_dup(r->table);
                int is_local = strlist_find(&local, l) >= 0;
                free(l);
                if (is_local)
                    continue;
            }
            const source_entry *e = classify_source(c, r);
            if (e->kind == SRC_MISSING && !manual)
                diag_missing_table(c, m, r, line, d);
        }
    }
    strlist_free(&local);
}
/* What a run reads before it writes anything: config/, the lake's
 * snapshot and tables, each model's slices and sources. */
int run_prepare_reads(run_ctx *c, const unsigned char *sel)
{
    tarn_project *p = c->p;
    build_summary *sum = c->sum;
    int rc = c->o->config_ran ? 0 : build_run_config(p, c->s);
    if (rc)
        return rc;
    c->lake = p->lake_alias;
    c->cat = tarn_session_catalog_prefix(c->s, c->lake);
    if (!rc)
        rc = tarn_session_snapshot(c->s, c->lake, &sum->start_snapshot);
    if (!rc)
        rc = load_lake_tables(c);
    if (rc)
        return rc;
    int64_t now = run_now(c);
    for (size_t k = 0; k < sum->nrun; k++) {
        size_t mi = sum->run_order[k];
        rc = build_partitions(&c->partitions[mi], &p->models[mi], c->o, now);
        if (!rc && !c->o->test_only)
            rc = run_first_from_start(c, mi, now);
        if (rc)
            return rc;
    }
    diag_list d = {0};
    for (size_t k = 0; k < sum->nrun && !c->o->test_only; k++)
        check_model_reads(c, sum->run_order[k], sel, &d);
    rc = diag_raise(&d);
    diag_free(&d);
    return rc;
}

/*
 * load.c — loading a project folder (see load.h).
 *
 * The loader reads every file, collects every problem in a diag_list and
 * reports them together, so one `tarn plan` shows all that is wrong. It
 * is the top of project/: it uses the parts below it (body, annot, env,
 * the config-write checks, the graph) to build a tarn_project, which
 * project.c only describes and frees. Keeping the loader out of project.c
 * is what lets dag.c and cfgwrite.c use the project without project.c
 * using them back.
 */
#include "project/load.h"

#include "project/cfgwrite.h"
#include "project/dag.h"
#include "project/hash.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- files ----------------------------------------------------------- */

static char *path_join(const char *dir, const char *rel)
{
    if (!dir || !*dir || strcmp(dir, ".") == 0)
        return xstrdup(rel);
    size_t n = strlen(dir);
    return xasprintf("%s%s%s", dir, dir[n - 1] == '/' ? "" : "/", rel);
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Lists the .sql files under `rel` (relative to `root`), recursively,
 * sorted; hidden entries are skipped. */
static void list_sql(strlist *out, const char *root, const char *rel, int recursive)
{
    char *full = path_join(root, rel);
    DIR *dp = opendir(full);
    free(full);
    if (!dp)
        return;
    strlist names = {0};
    struct dirent *e;
    while ((e = readdir(dp)) != NULL)
        if (e->d_name[0] != '.')
            strlist_push(&names, e->d_name);
    closedir(dp);
    qsort(names.items, names.n, sizeof(char *), cmp_str);
    for (size_t i = 0; i < names.n; i++) {
        char *r = xasprintf("%s/%s", rel, names.items[i]);
        char *f = path_join(root, r);
        if (is_dir(f)) {
            if (recursive)
                list_sql(out, root, r, 1);
            free(r);
        } else if (ends_with(names.items[i], ".sql")) {
            strlist_push_owned(out, r);
        } else {
            free(r);
        }
        free(f);
    }
    strlist_free(&names);
}

/* ---- config ---------------------------------------------------------- */

static int config_rank(const char *path)
{
    static const char *const first[] = {"config/catalog.sql", "config/settings.sql",
                                        "config/macros.sql", "config/sources.sql"};
    for (int i = 0; i < 4; i++)
        if (strcmp(path, first[i]) == 0)
            return i;
    return 4;
}

static int cmp_config(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    int rx = config_rank(x), ry = config_rank(y);
    return rx != ry ? rx - ry : strcmp(x, y);
}

/* Finds `ATTACH [DATABASE] [IF NOT EXISTS] 'ducklake:…' AS alias`. */
static void find_lake(tarn_project *p, diag_list *d, const config_file *cf, const sql_stmt *st)
{
    sql_tokens tk;
    if (sql_tokenize(&tk, st->text) != 0) {
        tarn_error_clear();
        return;
    }
    size_t i = 0;
    if (tk.n && sql_tok_is_kw(&tk.toks[0], "ATTACH")) {
        i = 1;
        if (i < tk.n && sql_tok_is_kw(&tk.toks[i], "DATABASE"))
            i++;
        if (i + 2 < tk.n && sql_tok_is_kw(&tk.toks[i], "IF"))
            i += 3;
        if (i < tk.n && tk.toks[i].type == SQL_TOK_STRING &&
            strncmp(tk.toks[i].text, "ducklake:", 9) == 0) {
            if (i + 2 < tk.n && sql_tok_is_kw(&tk.toks[i + 1], "AS") &&
                (tk.toks[i + 2].type == SQL_TOK_IDENT || tk.toks[i + 2].type == SQL_TOK_QIDENT)) {
                if (!p->lake_alias) {
                    p->lake_alias = xstrdup(tk.toks[i + 2].text);
                    p->lake_path = xstrdup(tk.toks[i].text + 9);
                }
            } else {
                diag_add(d, cf->path, st->line,
                         "name the lake: ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH "
                         "'lake/')",
                         "the ducklake ATTACH has no AS name");
            }
        }
    }
    sql_tokens_free(&tk);
}

/* Reads a project file (`path`, relative to the project) into *out: a
 * UTF-8 byte-order mark is dropped; a NUL byte is an error (C strings end
 * there: the rest of the file would be ignored, and later edits to it
 * would look like no change). Returns 0, or -1 after reporting. */
static int read_project_file(char **out, const tarn_project *p, diag_list *d, const char *path)
{
    char *full = path_join(p->dir, path);
    size_t len = 0;
    int rc = fs_read_file_len(out, &len, full);
    free(full);
    if (rc) {
        diag_add(d, path, 0, NULL, "%s", tarn_error_last());
        tarn_error_clear();
        *out = NULL;
        return -1;
    }
    const char *nul = memchr(*out, 0, len);
    if (nul) {
        int line = 1;
        for (const char *c = *out; c < nul; c++)
            line += *c == '\n';
        diag_add(d, path, line,
                 "remove it (a file saved as UTF-16 is full of them: save it as UTF-8)",
                 "the file holds a NUL byte (at byte %zu): tarn would ignore everything after it",
                 (size_t)(nul - *out));
        free(*out);
        *out = NULL;
        return -1;
    }
    if (len >= 3 && memcmp(*out, "\xEF\xBB\xBF", 3) == 0)
        memmove(*out, *out + 3, len - 2);
    return 0;
}

/* Puts config/targets/TARGET.sql in the place of config/catalog.sql (the
 * first of `files`, which are sorted). -1 when the target has no file
 * (reported, naming the targets there are). */
static int config_target(tarn_project *p, diag_list *d, strlist *files)
{
    const char *t = p->target;
    int valid = *t != 0;
    for (const char *c = t; *c; c++)
        valid &= isalnum((unsigned char)*c) || *c == '_' || *c == '-';
    char *path = xasprintf("config/targets/%s.sql", t);
    char *full = path_join(p->dir, path);
    int exists = valid && access(full, F_OK) == 0;
    free(full);
    if (!exists) {
        strlist there = {0};
        list_sql(&there, p->dir, "config/targets", 0);
        tarn_buf names = {0};
        for (size_t i = 0; i < there.n; i++) {
            const char *base = there.items[i] + strlen("config/targets/");
            buf_printf(&names, "%s%.*s", i ? ", " : "", (int)(strlen(base) - 4), base);
        }
        char *fix = there.n ? xasprintf("the targets are: %s", buf_cstr(&names))
                            : xasprintf("create %s with the ATTACH of the target's lake (as in "
                                        "config/catalog.sql)",
                                        valid ? path : "config/targets/NAME.sql");
        diag_add(d, valid ? path : "config/targets", 0, fix, "no target '%s'%s", t,
                 valid ? "" : " (a target name is letters, digits, _ and -)");
        free(fix);
        buf_free(&names);
        strlist_free(&there);
        free(path);
        return -1;
    }
    if (files->n && strcmp(files->items[0], "config/catalog.sql") == 0) {
        free(files->items[0]);
        files->items[0] = path;
    } else {
        strlist rest = *files;
        memset(files, 0, sizeof(*files));
        strlist_push_owned(files, path);
        for (size_t i = 0; i < rest.n; i++)
            strlist_push(files, rest.items[i]);
        strlist_free(&rest);
    }
    return 0;
}

static void load_config(tarn_project *p, diag_list *d)
{
    char *envpath = path_join(p->dir, ".env");
    char *envtext = NULL;
    if (fs_read_file(&envtext, envpath) == 0) {
        env_parse(&p->env, d, ".env", envtext);
        free(envtext);
    } else {
        tarn_error_clear();
    }
    free(envpath);
    strlist files = {0};
    list_sql(&files, p->dir, "config", 0);
    qsort(files.items, files.n, sizeof(char *), cmp_config);
    if (p->target && config_target(p, d, &files) != 0) {
        strlist_free(&files);
        return;
    }
    p->config = xcalloc(files.n ? files.n : 1, sizeof(config_file));
    for (size_t i = 0; i < files.n; i++) {
        config_file *cf = &p->config[p->nconfig++];
        cf->path = xstrdup(files.items[i]);
        char *raw = NULL;
        if (read_project_file(&raw, p, d, cf->path) != 0)
            continue;
        char *text = env_expand(&p->env, d, cf->path, raw);
        free(raw);
        if (!text)
            continue;
        sql_script sc;
        if (sql_split(&sc, text) != 0) {
            diag_add(d, cf->path, 0, "close the string, quoted name or comment", "%s",
                     tarn_error_last());
            tarn_error_clear();
        } else {
            cf->stmts = sc.items;
            cf->nstmts = sc.n;
            for (size_t j = 0; j < sc.n; j++)
                find_lake(p, d, cf, &sc.items[j]);
        }
        free(text);
    }
    strlist_free(&files);
    if (!p->lake_alias && d->n == 0)
        diag_add(d, "config/catalog.sql", 0,
                 "add: ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');",
                 "the project attaches no DuckLake lake");
}

/* ---- models ---------------------------------------------------------- */

/* models/a/b/c.sql → schema a, table c; models/c.sql → main.c */
static void target_from_path(const char *path, char **schema, char **table)
{
    const char *rest = path + strlen("models/");
    const char *slash = strchr(rest, '/');
    const char *base = strrchr(path, '/') + 1;
    *schema = slash ? xstrndup(rest, (size_t)(slash - rest)) : xstrdup("main");
    *table = xstrndup(base, strlen(base) - 4);
}

static int first_token_line(const char *text)
{
    sql_tokens tk;
    if (sql_tokenize(&tk, text) != 0) {
        tarn_error_clear();
        return 0;
    }
    int line = tk.n ? tk.toks[0].line : 0;
    sql_tokens_free(&tk);
    return line;
}

static void model_hash(tarn_model *m)
{
    tarn_buf b = {0};
    char *sig = annot_write_signature(&m->annot);
    buf_printf(&b, "tarn-model-v1\n%s\n", sig);
    free(sig);
    for (size_t i = 0; i < m->body.n; i++) {
        char *norm = hash_normalize_sql(m->body.items[i].text);
        buf_printf(&b, "%s;\n", norm);
        free(norm);
    }
    hash_sha256_hex(m->hash, b.ptr ? b.ptr : "", b.len);
    buf_free(&b);
}

/* Finds the references of each statement's query part with DuckDB's
 * parser. A trailing query that does not parse is a project error; the
 * query parts found inside other statements are a heuristic, so their
 * parse errors are left for DuckDB to report when the statement runs. */
static void model_refs(tarn_model *m, diag_list *d, tarn_session *s)
{
    for (size_t i = 0; i < m->body.n; i++) {
        model_stmt *st = &m->body.items[i];
        char *q = body_query_for_parse(st);
        if (!q)
            continue;
        size_t err_off;
        ref_list refs;
        int rc = refs_extract(&refs, &err_off, s, q);
        if (rc == 0) {
            for (size_t j = 0; j < refs.n; j++)
                if (refs.items[j].offset != REF_NO_OFFSET)
                    refs.items[j].offset += st->query_off;
            st->refs = refs;
        } else if (st->is_query || m->annot.strategy == STRAT_MANUAL) {
            int line = body_line_of(st, err_off == REF_NO_OFFSET ? 0 : st->query_off + err_off);
            if (st->is_query || strcmp(st->kw, "SELECT") == 0 || strcmp(st->kw, "WITH") == 0 ||
                strcmp(st->kw, "FROM") == 0)
                diag_add(d, m->path, line,
                         strstr(st->text, "{{")
                             ? "tarn models name tables directly: write FROM staging.orders "
                               "where dbt writes {{ ref('orders') }} (tarn has no Jinja; its "
                               "only placeholders are {partition} and {watermark})"
                             : "fix the SQL (DuckDB's parser rejects it)",
                         "the query does not parse: %s", tarn_error_last());
            tarn_error_clear();
        } else {
            tarn_error_clear();
        }
        free(q);
    }
}

/* Whether `name` is one of the query's output columns. */
static int is_output_column(const ref_list *r, const char *name)
{
    for (size_t i = 0; i < r->columns.n; i++)
        if (strcasecmp(r->columns.items[i], name) == 0)
            return 1;
    return 0;
}

static void missing_column(diag_list *d, const tarn_model *m, const ref_list *r, int line,
                           const char *what, const char *col, const char *opt)
{
    char *cols = strlist_join(&r->columns, ", ");
    char *fix = xasprintf("select %s in the query, or name one of its columns in %s", col, opt);
    diag_add(d, m->path, line, fix, "%s %s is not a column of the query (it returns %s)", what, col,
             cols);
    free(fix);
    free(cols);
}

/* The columns the annotations name (partitioned column=, watermark=,
 * key=, track=) must be columns of the query, when its text says what
 * they are (refs.h); else the build checks them on the query's rows. */
static int check_output_columns(const tarn_model *m, diag_list *d)
{
    if (m->annot.strategy == STRAT_MANUAL || m->body.n == 0)
        return 0;
    const model_stmt *q = &m->body.items[m->body.n - 1];
    const ref_list *r = &q->refs;
    const model_annot *a = &m->annot;
    if (!q->is_query || !r->columns_known)
        return 0;
    size_t before = d->n;
    if (a->partition_column && !is_output_column(r, a->partition_column))
        missing_column(d, m, r, a->partitioned_line, "partition column", a->partition_column,
                       "column=");
    if (a->watermark && !is_output_column(r, a->watermark))
        missing_column(d, m, r, a->materialize_line, "watermark column", a->watermark,
                       "watermark=");
    for (size_t i = 0; i < a->key.n; i++)
        if (!is_output_column(r, a->key.items[i]))
            missing_column(d, m, r, a->materialize_line, "key column", a->key.items[i], "key=");
    for (size_t i = 0; i < a->track.n; i++)
        if (!is_output_column(r, a->track.items[i]))
            missing_column(d, m, r, a->materialize_line, "track column", a->track.items[i],
                           "track=");
    return (int)(d->n - before);
}

/* Whether {watermark} at offset `off` of `text` follows a bare `>`: the
 * build re-reads [watermark, frontier) and replaces that range, so a
 * model that keeps only `> {watermark}` would drop the rows at the mark. */
static int after_greater(const char *text, size_t off)
{
    while (off > 0 && isspace((unsigned char)text[off - 1]))
        off--;
    return off > 0 && text[off - 1] == '>' && (off < 2 || !strchr("<-", text[off - 2]));
}

/* {watermark} means something only in an incremental model, and there
 * it is the range's included lower bound. */
static int check_watermark_placeholder(const tarn_model *m, diag_list *d)
{
    if (m->annot.strategy == STRAT_INCREMENTAL) {
        for (size_t i = 0; i < m->body.n; i++) {
            const model_stmt *st = &m->body.items[i];
            for (size_t k = 0; k < st->nwm; k++) {
                if (!after_greater(st->text, st->wm_offs[k]))
                    continue;
                diag_add(d, m->path, body_line_of(st, st->wm_offs[k]),
                         "write >= {watermark}: each build re-reads and replaces the range from "
                         "the mark (included) to the run's start",
                         "'> {watermark}' would leave out the rows at the mark");
                return 1;
            }
        }
        return 0;
    }
    for (size_t i = 0; i < m->body.n; i++) {
        const model_stmt *st = &m->body.items[i];
        if (st->nwm == 0)
            continue;
        diag_add(d, m->path, body_line_of(st, st->wm_offs[0]),
                 "add 'incremental watermark=<column>' to the '-- materialize' line, or remove "
                 "{watermark}",
                 "{watermark} is only replaced in an incremental model");
        return 1;
    }
    return 0;
}

/* key= or append inside a dynamic model's slices works one slice at a
 * time ({partition}, tarn run M --partition V): a query that yields every
 * value would merge or append across slices it did not ask for. */
static int check_dynamic_slice_write(const tarn_model *m, diag_list *d)
{
    const model_annot *a = &m->annot;
    if (a->grain != GRAIN_DYNAMIC || (a->strategy != STRAT_MERGE && a->strategy != STRAT_APPEND))
        return 0;
    for (size_t i = 0; i < m->body.n; i++)
        if (m->body.items[i].npart)
            return 0;
    diag_add(d, m->path, a->partitioned_line,
             "filter the query with WHERE <column> = {partition} and build a slice with tarn run "
             "MODEL --partition VALUE, or drop key=/append to replace every slice the query yields",
             "%s inside a dynamic model's slices needs {partition} in its SQL",
             a->strategy == STRAT_MERGE ? "key=" : "append");
    return 1;
}

/* A history model's view <table>_current may not be another model's
 * target. */
static void check_current_views(tarn_project *p, diag_list *d)
{
    for (size_t i = 0; i < p->nmodels; i++) {
        const tarn_model *h = &p->models[i];
        if (h->annot.strategy != STRAT_HISTORY)
            continue;
        char *view = xasprintf("%s_current", h->table);
        long j = project_find_model(p, h->schema, view);
        if (j >= 0) {
            char *fix = xasprintf("rename %s, or give it another target with '-- materialize "
                                  "schema.table'",
                                  p->models[j].path);
            diag_add(d, p->models[j].path, p->models[j].annot.materialize_line, fix,
                     "%s.%s is the view of the history model %s (%s)", h->schema, view, h->name,
                     h->path);
            free(fix);
        }
        free(view);
    }
}

static void load_model(tarn_project *p, diag_list *d, tarn_session *s, const char *path)
{
    tarn_model *m = &p->models[p->nmodels++];
    memset(m, 0, sizeof(*m));
    m->path = xstrdup(path);
    int unread = read_project_file(&m->text, p, d, path) != 0;
    if (unread)
        m->text = xstrdup("");
    int errs = unread ? 1 : annot_parse(&m->annot, d, path, m->text, first_token_line(m->text));
    if (m->annot.target_schema) {
        m->schema = xstrdup(m->annot.target_schema);
        m->table = xstrdup(m->annot.target_table);
    } else {
        target_from_path(path, &m->schema, &m->table);
    }
    m->name = xasprintf("%s.%s", m->schema, m->table);
    if (!unread)
        errs += body_parse(&m->body, d, path, m->text, m->annot.strategy == STRAT_MANUAL);
    errs += check_watermark_placeholder(m, d);
    errs += check_dynamic_slice_write(m, d);
    for (size_t i = 0; i < m->annot.ntests; i++) {
        const data_test *t = &m->annot.tests[i];
        if (t->kind != DT_CUSTOM)
            continue;
        char *f = path_join(p->dir, t->path);
        struct stat st;
        if (stat(f, &st) != 0)
            diag_add(d, path, t->line, "create the file, or fix the path (relative to the project)",
                     "data test file %s does not exist", t->path);
        free(f);
    }
    if (errs == 0) {
        model_refs(m, d, s);
        check_output_columns(m, d);
    }
    model_hash(m);
}

static void add_edge(tarn_model *m, size_t up, int line)
{
    for (size_t i = 0; i < m->nup; i++)
        if (m->up[i].model == up)
            return;
    m->up = xrealloc(m->up, (m->nup + 1) * sizeof(model_edge));
    m->up[m->nup].model = up;
    m->up[m->nup].line = line;
    m->nup++;
}

static void ref_display(tarn_buf *b, const table_ref *r)
{
    if (r->catalog)
        buf_printf(b, "%s.", r->catalog);
    if (r->schema)
        buf_printf(b, "%s.", r->schema);
    buf_puts(b, r->table);
}

static void link_models(tarn_project *p)
{
    for (size_t i = 0; i < p->nmodels; i++) {
        tarn_model *m = &p->models[i];
        for (size_t s = 0; s < m->body.n; s++) {
            const model_stmt *st = &m->body.items[s];
            for (size_t r = 0; r < st->refs.n; r++) {
                const table_ref *ref = &st->refs.items[r];
                long up = project_ref_model(p, ref);
                if (up < 0)
                    up = project_ref_current_view(p, ref);
                if (up == (long)i)
                    continue; /* reading its own previous state is not an edge */
                if (up >= 0) {
                    add_edge(m, (size_t)up,
                             body_line_of(st, ref->offset == REF_NO_OFFSET ? 0 : ref->offset));
                } else {
                    tarn_buf b = {0};
                    ref_display(&b, ref);
                    if (strlist_find(&m->sources, buf_cstr(&b)) < 0)
                        strlist_push(&m->sources, buf_cstr(&b));
                    buf_free(&b);
                }
            }
        }
        /* A relationships test reads the referenced model's table. */
        for (size_t t = 0; t < m->annot.ntests; t++) {
            const data_test *dt = &m->annot.tests[t];
            if (dt->kind != DT_RELATIONSHIPS)
                continue;
            long up = project_find_model(p, dt->ref_schema, dt->ref_table);
            if (up >= 0 && up != (long)i)
                add_edge(m, (size_t)up, dt->line);
        }
    }
}

int project_load(tarn_project **out, const char *dir, tarn_session *s)
{
    return project_load_target(out, dir, NULL, s);
}

int project_load_target(tarn_project **out, const char *dir, const char *target, tarn_session *s)
{
    *out = NULL;
    char *models_dir = path_join(dir, "models");
    int ok = is_dir(models_dir);
    free(models_dir);
    if (!ok)
        return tarn_error_set(TARN_EINVALID,
                              "%s is not a tarn project: it has no models/ folder (create a "
                              "project with `tarn init`)",
                              dir);
    tarn_project *p = xcalloc(1, sizeof(*p));
    p->dir = xstrdup(dir);
    p->target = target ? xstrdup(target) : NULL;
    diag_list d = {0};
    load_config(p, &d);
    cfgwrite_check_lake_writes(p, &d);
    strlist files = {0};
    list_sql(&files, dir, "models", 1);
    p->models = xcalloc(files.n ? files.n : 1, sizeof(tarn_model));
    for (size_t i = 0; i < files.n; i++)
        load_model(p, &d, s, files.items[i]);
    strlist_free(&files);
    list_sql(&p->tests, dir, "tests", 1);
    /* Two models may not build the same table. */
    for (size_t i = 0; i < p->nmodels; i++)
        for (size_t j = 0; j < i; j++)
            if (strcasecmp(p->models[i].name, p->models[j].name) == 0) {
                char *fix = xasprintf("rename one file, or give one a different target with "
                                      "'-- materialize schema.table'");
                diag_add(&d, p->models[i].path, p->models[i].annot.materialize_line, fix,
                         "%s is also built by %s", p->models[i].name, p->models[j].path);
                free(fix);
            }
    check_current_views(p, &d);
    cfgwrite_check_targets(p, &d);
    if (d.n == 0) {
        link_models(p);
        dag_build(p, &d);
    }
    int rc = diag_raise(&d);
    diag_free(&d);
    if (rc) {
        project_free(p);
        return rc;
    }
    *out = p;
    return 0;
}

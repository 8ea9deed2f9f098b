/*
 * cfgwrite.c — what config/ may not do (see cfgwrite.h): write a lake, or
 * define a name a model builds.
 *
 * config/ runs at the start of every build session, before any model, and
 * outside every build's transaction: a lake write there would commit a
 * snapshot no build records (and repeat it on every run). The check reads
 * each statement's tokens: the object a CREATE, ALTER, DROP, INSERT,
 * UPDATE, DELETE, TRUNCATE, MERGE, COPY … FROM or COMMENT ON writes, and
 * the catalog it lands in — one of the lakes the config ATTACHes when the
 * name says so (lake.s.t, lake.s) or when a USE made a lake the default —
 * plus calls of the ducklake_* functions that write (maintenance, options).
 */
#include "project/cfgwrite.h"

#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The catalogs the config has attached, and which of them are lakes. */
typedef struct {
    strlist lakes; /* aliases of ducklake ATTACHes */
    int use_lake;  /* a USE made a lake the default catalog */
} cfg_scope;

static const char *const WRITING_FUNCTIONS[] = {
    "ducklake_set_option",
    "ducklake_expire_snapshots",
    "ducklake_cleanup_old_files",
    "ducklake_merge_adjacent_files",
    "ducklake_flush_inlined_data",
    "ducklake_rewrite_data_files",
    "ducklake_delete_orphaned_files",
    "ducklake_add_data_files",
};

static int is_name(const sql_token *t)
{
    return t->type == SQL_TOK_IDENT || t->type == SQL_TOK_QIDENT;
}

static int is_lake(const cfg_scope *sc, const char *name)
{
    for (size_t i = 0; i < sc->lakes.n; i++)
        if (strcasecmp(sc->lakes.items[i], name) == 0)
            return 1;
    return 0;
}

/* Skips the keywords of `kws` (NULL-terminated) at tk[*j], in any order. */
static void skip_kws(const sql_tokens *tk, size_t *j, const char *const *kws)
{
    for (int moved = 1; moved && *j < tk->n;) {
        moved = 0;
        for (size_t k = 0; kws[k] && !moved; k++)
            if (sql_tok_is_kw(&tk->toks[*j], kws[k])) {
                (*j)++;
                moved = 1;
            }
    }
}

/* IF [NOT] EXISTS */
static void skip_if_exists(const sql_tokens *tk, size_t *j)
{
    if (*j < tk->n && sql_tok_is_kw(&tk->toks[*j], "IF")) {
        (*j)++;
        if (*j < tk->n && sql_tok_is_kw(&tk->toks[*j], "NOT"))
            (*j)++;
        if (*j < tk->n && sql_tok_is_kw(&tk->toks[*j], "EXISTS"))
            (*j)++;
    }
}

/* A dotted name at tk[*j]: its parts (at most 3 kept), *j past it. */
static size_t name_parts(const sql_tokens *tk, size_t *j, const char *parts[3])
{
    size_t n = 0;
    while (*j < tk->n && is_name(&tk->toks[*j])) {
        if (n < 3)
            parts[n++] = tk->toks[*j].text;
        (*j)++;
        if (*j + 1 < tk->n && sql_tok_is_op(&tk->toks[*j], ".") && is_name(&tk->toks[*j + 1]))
            (*j)++;
        else
            break;
    }
    return n;
}

/* Whether the object named by parts[0..n) lands in a lake: a SCHEMA is
 * catalog.schema, anything else catalog.schema.name (or schema.name,
 * taken as catalog.name when its first part is a lake's alias). */
static int lands_in_lake(const cfg_scope *sc, const char *const *parts, size_t n, int schema)
{
    if (n == 0)
        return 0;
    if (n >= 3 || (n == 2 && (schema || is_lake(sc, parts[0]))))
        return is_lake(sc, parts[0]);
    return sc->use_lake;
}

/* The object kind after CREATE/ALTER/DROP/COMMENT ON, *j past it; NULL
 * when it is not one that can live in a lake. */
static const char *object_kind(const sql_tokens *tk, size_t *j)
{
    static const char *const KINDS[] = {"TABLE",    "VIEW", "SCHEMA", "MACRO",  "FUNCTION",
                                        "SEQUENCE", "TYPE", "INDEX",  "COLUMN", NULL};
    for (size_t k = 0; *j < tk->n && KINDS[k]; k++)
        if (sql_tok_is_kw(&tk->toks[*j], KINDS[k])) {
            (*j)++;
            return KINDS[k];
        }
    return NULL;
}

/* The name a writing statement writes, at tk[*j] after its keywords; 1
 * when it lands in a lake. */
static int target_in_lake(const cfg_scope *sc, const sql_tokens *tk, size_t j, const char *kind)
{
    const char *parts[3] = {0};
    skip_if_exists(tk, &j);
    if (kind && strcmp(kind, "INDEX") == 0) {
        /* CREATE INDEX name ON table (…): the table decides */
        while (j < tk->n && !sql_tok_is_kw(&tk->toks[j], "ON"))
            j++;
        j++;
    }
    size_t n = name_parts(tk, &j, parts);
    if (kind && strcmp(kind, "COLUMN") == 0 && n > 0)
        n--; /* COMMENT ON COLUMN [c.][s.]t.col */
    return lands_in_lake(sc, parts, n, kind && strcmp(kind, "SCHEMA") == 0);
}

static int ddl_writes_lake(const cfg_scope *sc, const sql_tokens *tk)
{
    static const char *const CREATE_MODS[] = {"OR", "REPLACE", "PERSISTENT", "UNIQUE", NULL};
    const sql_token *t0 = &tk->toks[0];
    size_t j = 1;
    if (sql_tok_is_kw(t0, "CREATE")) {
        skip_kws(tk, &j, CREATE_MODS);
        if (j < tk->n &&
            (sql_tok_is_kw(&tk->toks[j], "TEMP") || sql_tok_is_kw(&tk->toks[j], "TEMPORARY")))
            return 0; /* the session's temp catalog */
        const char *kind = object_kind(tk, &j);
        return kind && target_in_lake(sc, tk, j, kind);
    }
    if (sql_tok_is_kw(t0, "ALTER") || sql_tok_is_kw(t0, "DROP")) {
        const char *kind = object_kind(tk, &j);
        return kind && target_in_lake(sc, tk, j, kind);
    }
    if (sql_tok_is_kw(t0, "COMMENT") && j < tk->n && sql_tok_is_kw(&tk->toks[j], "ON")) {
        j++;
        const char *kind = object_kind(tk, &j);
        return kind && target_in_lake(sc, tk, j, kind);
    }
    return 0;
}

static int dml_writes_lake(const cfg_scope *sc, const sql_tokens *tk)
{
    static const char *const INSERT_MODS[] = {"OR", "REPLACE", "IGNORE", "INTO", NULL};
    const sql_token *t0 = &tk->toks[0];
    size_t j = 1;
    if (sql_tok_is_kw(t0, "INSERT") || sql_tok_is_kw(t0, "MERGE")) {
        skip_kws(tk, &j, INSERT_MODS);
        return target_in_lake(sc, tk, j, NULL);
    }
    if (sql_tok_is_kw(t0, "UPDATE"))
        return target_in_lake(sc, tk, j, NULL);
    if (sql_tok_is_kw(t0, "DELETE") || sql_tok_is_kw(t0, "TRUNCATE")) {
        if (j < tk->n &&
            (sql_tok_is_kw(&tk->toks[j], "FROM") || sql_tok_is_kw(&tk->toks[j], "TABLE")))
            j++;
        return target_in_lake(sc, tk, j, NULL);
    }
    if (sql_tok_is_kw(t0, "COPY") && j < tk->n && is_name(&tk->toks[j])) {
        /* COPY t FROM 'file' writes t; COPY t TO 'file' reads it */
        const char *parts[3] = {0};
        size_t n = name_parts(tk, &j, parts);
        while (j < tk->n && sql_tok_is_op(&tk->toks[j], "(")) /* a column list */
            while (j < tk->n && !sql_tok_is_op(&tk->toks[j++], ")"))
                ;
        return j < tk->n && sql_tok_is_kw(&tk->toks[j], "FROM") && lands_in_lake(sc, parts, n, 0);
    }
    return 0;
}

/* The writing ducklake_* function the statement calls, or NULL. */
static const char *writing_call(const sql_tokens *tk)
{
    for (size_t i = 0; i + 1 < tk->n; i++) {
        if (tk->toks[i].type != SQL_TOK_IDENT || !sql_tok_is_op(&tk->toks[i + 1], "("))
            continue;
        for (size_t k = 0; k < sizeof(WRITING_FUNCTIONS) / sizeof(WRITING_FUNCTIONS[0]); k++)
            if (strcasecmp(tk->toks[i].text, WRITING_FUNCTIONS[k]) == 0)
                return WRITING_FUNCTIONS[k];
    }
    return NULL;
}

/* Follows ATTACH (a ducklake one adds a lake) and USE (which may make a
 * lake the default catalog). */
static void follow_scope(cfg_scope *sc, const sql_tokens *tk)
{
    const sql_token *t0 = &tk->toks[0];
    if (sql_tok_is_kw(t0, "ATTACH")) {
        int lake = 0;
        for (size_t j = 1; j < tk->n; j++) {
            if (tk->toks[j].type == SQL_TOK_STRING &&
                strncmp(tk->toks[j].text, "ducklake:", 9) == 0)
                lake = 1;
            if (sql_tok_is_kw(&tk->toks[j], "AS") && j + 1 < tk->n && is_name(&tk->toks[j + 1])) {
                if (lake)
                    strlist_push(&sc->lakes, tk->toks[j + 1].text);
                break;
            }
        }
    } else if (sql_tok_is_kw(t0, "USE")) {
        size_t j = 1;
        const char *parts[3] = {0};
        size_t n = name_parts(tk, &j, parts);
        if (n >= 2 || (n == 1 && is_lake(sc, parts[0])))
            sc->use_lake = is_lake(sc, parts[0]);
        else if (n == 1 &&
                 (strcasecmp(parts[0], "memory") == 0 || strcasecmp(parts[0], "temp") == 0))
            sc->use_lake = 0;
    }
}

/* The statement's first line of text (for the message), at most 60 bytes. */
static char *stmt_head(const char *text)
{
    size_t n = strcspn(text, "\n");
    if (n > 60)
        n = 60;
    char *h = xstrndup(text, n);
    return h;
}

static void check_stmt(cfg_scope *sc, diag_list *d, const char *path, const sql_stmt *st)
{
    sql_tokens tk;
    if (sql_tokenize(&tk, st->text) != 0) {
        tarn_error_clear();
        return;
    }
    if (tk.n == 0) {
        sql_tokens_free(&tk);
        return;
    }
    follow_scope(sc, &tk);
    const char *call = writing_call(&tk);
    if (call || ddl_writes_lake(sc, &tk) || dml_writes_lake(sc, &tk)) {
        char *head = stmt_head(st->text);
        diag_add(d, path, st->line + tk.toks[0].line - 1,
                 "build the table with a model (models/<schema>/<table>.sql holding its "
                 "query), or put the statements in a '-- materialize manual' model; run "
                 "maintenance with `tarn maintain`",
                 "config/ must not write the lake, and this statement %s (%s%s): config/ runs "
                 "before every build, outside the builds' transactions",
                 call ? "calls a function that writes it" : "writes it", head,
                 strlen(head) < strcspn(st->text, "\n") ? "…" : "");
        free(head);
    }
    sql_tokens_free(&tk);
}

void cfgwrite_check_lake_writes(const tarn_project *p, diag_list *d)
{
    cfg_scope sc = {0};
    for (size_t i = 0; i < p->nconfig; i++)
        for (size_t j = 0; j < p->config[i].nstmts; j++)
            check_stmt(&sc, d, p->config[i].path, &p->config[i].stmts[j]);
    strlist_free(&sc.lakes);
}

/* The schema and name of the table or view a CREATE statement defines
 * outside the lakes (a model's reads of that name would find it, not the
 * model's table); 0 when it defines none. */
static int defined_relation(cfg_scope *sc, const sql_tokens *tk, const char **schema,
                            const char **name)
{
    static const char *const MODS[] = {"OR", "REPLACE", "TEMP", "TEMPORARY", "PERSISTENT", NULL};
    if (tk->n == 0 || !sql_tok_is_kw(&tk->toks[0], "CREATE"))
        return 0;
    size_t j = 1;
    skip_kws(tk, &j, MODS);
    if (j >= tk->n ||
        !(sql_tok_is_kw(&tk->toks[j], "VIEW") || sql_tok_is_kw(&tk->toks[j], "TABLE")))
        return 0;
    j++;
    skip_if_exists(tk, &j);
    const char *parts[3] = {0};
    size_t n = name_parts(tk, &j, parts);
    if (n == 0 || lands_in_lake(sc, parts, n, 0))
        return 0;
    *schema = n >= 2 ? parts[n - 2] : "main";
    *name = parts[n - 1];
    return 1;
}

void cfgwrite_check_targets(const tarn_project *p, diag_list *d)
{
    cfg_scope sc = {0};
    for (size_t i = 0; i < p->nconfig; i++)
        for (size_t j = 0; j < p->config[i].nstmts; j++) {
            const sql_stmt *st = &p->config[i].stmts[j];
            sql_tokens tk;
            if (sql_tokenize(&tk, st->text) != 0) {
                tarn_error_clear();
                continue;
            }
            const char *schema, *name;
            if (tk.n)
                follow_scope(&sc, &tk);
            long mi = -1;
            if (defined_relation(&sc, &tk, &schema, &name))
                mi = project_find_model(p, schema, name);
            if (mi >= 0) {
                const tarn_model *m = &p->models[mi];
                char *fix = xasprintf("rename the model's file (or give it another target with "
                                      "'-- materialize schema.table'), or rename what %s:%d "
                                      "creates",
                                      p->config[i].path, st->line + tk.toks[0].line - 1);
                diag_add(d, m->path, m->annot.materialize_line ? m->annot.materialize_line : 1, fix,
                         "%s is also defined by %s:%d: a model's table and a config/ name may "
                         "not be the same (reads of it would find one or the other)",
                         m->name, p->config[i].path, st->line + tk.toks[0].line - 1);
                free(fix);
            }
            sql_tokens_free(&tk);
        }
    strlist_free(&sc.lakes);
}

/*
 * inputs.c — what a model's result depends on besides its SQL and its
 * upstream tables, for change detection (inputs.h; change.c asks): the
 * config statements it reaches (hashed into its config hash), the files
 * its text names (fingerprinted), and what makes it run every time (a
 * non-deterministic call, a read of something tarn cannot version, a
 * remote file).
 *
 * A config statement counts for a model when the model's words reach it,
 * directly or through other config statements (a view over a view);
 * settings that cannot change a result (threads, memory_limit, …) never
 * count, so tuning them rebuilds nothing.
 */

#include "materialize/inputs.h"

#include "project/hash.h"
#include "project/query.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/quote.h"

#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- config statements ----------------------------------------------- */

typedef enum { CFG_GLOBAL = 0, CFG_NAMED, CFG_IGNORED } cfg_kind;

typedef struct {
    const char *text;
    cfg_kind kind;
    char *name;       /* CFG_NAMED: the name it creates, lower case */
    strlist words;    /* identifiers it mentions, lower case */
    strlist literals; /* string literals it holds */
    const char *vol;  /* a non-deterministic call it makes, or NULL */
} cfg_item;

/* SET options that cannot change a query's result. */
static const char *const HARMLESS_SETTINGS[] = {
    "threads",
    "worker_threads",
    "memory_limit",
    "max_memory",
    "temp_directory",
    "max_temp_directory_size",
    "enable_progress_bar",
    "enable_progress_bar_print",
    "progress_bar_time",
    "enable_object_cache",
    "enable_http_metadata_cache",
    "http_timeout",
    "http_retries",
    "http_keep_alive",
    "enable_profiling",
    "profiling_mode",
    "profile_output",
    "explain_output",
    "log_query_path",
    "checkpoint_threshold",
    "wal_autocheckpoint",
};

static char *lower_dup(const char *s)
{
    char *d = xstrdup(s);
    for (char *p = d; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

static int is_name(const sql_token *t)
{
    return t->type == SQL_TOK_IDENT || t->type == SQL_TOK_QIDENT;
}

/* The name a CREATE statement creates (lower case), or NULL: a view or
 * table created in a schema other than main as "schema.name" (a query
 * reaches it only by that qualified name), anything else by its last part
 * (macros are called unqualified). */
static char *created_name(const sql_tokens *tk)
{
    static const char *const skip[] = {"OR",   "REPLACE", "TEMP",   "TEMPORARY", "PERSISTENT",
                                       "VIEW", "TABLE",   "MACRO",  "FUNCTION",  "SEQUENCE",
                                       "TYPE", "SCHEMA",  "UNIQUE", "INDEX"};
    if (tk->n == 0 || !sql_tok_is_kw(&tk->toks[0], "CREATE"))
        return NULL;
    size_t j = 1;
    int relation = 0;
    for (int moved = 1; moved && j < tk->n;) {
        moved = 0;
        for (size_t k = 0; k < sizeof(skip) / sizeof(skip[0]) && !moved; k++)
            if (sql_tok_is_kw(&tk->toks[j], skip[k])) {
                relation |= k == 5 || k == 6;
                j++;
                moved = 1;
            }
    }
    if (j + 2 < tk->n && sql_tok_is_kw(&tk->toks[j], "IF"))
        j += 3;
    const char *schema = NULL;
    while (j + 2 < tk->n && is_name(&tk->toks[j]) && sql_tok_is_op(&tk->toks[j + 1], ".")) {
        schema = tk->toks[j].text;
        j += 2;
    }
    if (j >= tk->n || !is_name(&tk->toks[j]))
        return NULL;
    if (relation && schema && strcasecmp(schema, "main") != 0) {
        char *q = xasprintf("%s.%s", schema, tk->toks[j].text);
        char *l = lower_dup(q);
        free(q);
        return l;
    }
    return lower_dup(tk->toks[j].text);
}

static void cfg_classify(cfg_item *it, const sql_tokens *tk, const char *lake)
{
    if (tk->n == 0) {
        it->kind = CFG_IGNORED;
        return;
    }
    const sql_token *t0 = &tk->toks[0];
    if (sql_tok_is_kw(t0, "INSTALL") || sql_tok_is_kw(t0, "LOAD") || sql_tok_is_kw(t0, "FORCE")) {
        it->kind = CFG_IGNORED;
        return;
    }
    if ((sql_tok_is_kw(t0, "SET") || sql_tok_is_kw(t0, "RESET")) && tk->n > 1) {
        size_t j = 1;
        if (sql_tok_is_kw(&tk->toks[j], "SESSION") || sql_tok_is_kw(&tk->toks[j], "GLOBAL") ||
            sql_tok_is_kw(&tk->toks[j], "LOCAL"))
            j++;
        for (size_t k = 0; j < tk->n && k < sizeof(HARMLESS_SETTINGS) / sizeof(char *); k++)
            if (strcasecmp(tk->toks[j].text, HARMLESS_SETTINGS[k]) == 0)
                it->kind = CFG_IGNORED;
        return;
    }
    if (sql_tok_is_kw(t0, "CREATE")) {
        for (size_t j = 1; j < tk->n && j < 4; j++)
            if (sql_tok_is_kw(&tk->toks[j], "SECRET")) {
                it->kind = CFG_IGNORED; /* credentials, not results */
                return;
            }
        it->name = created_name(tk);
        it->kind = it->name ? CFG_NAMED : CFG_GLOBAL;
        return;
    }
    if (sql_tok_is_kw(t0, "ATTACH")) {
        const char *path = NULL;
        for (size_t j = 1; j < tk->n; j++) {
            if (!path && tk->toks[j].type == SQL_TOK_STRING)
                path = tk->toks[j].text;
            if (sql_tok_is_kw(&tk->toks[j], "AS") && j + 1 < tk->n && is_name(&tk->toks[j + 1])) {
                it->name = lower_dup(tk->toks[j + 1].text);
                break;
            }
        }
        if (it->name && path && strncmp(path, "ducklake:", 9) == 0 && lake &&
            strcasecmp(it->name, lake) == 0)
            it->kind = CFG_IGNORED; /* the lake itself: its tables are versioned */
        else
            it->kind = it->name ? CFG_NAMED : CFG_GLOBAL;
    }
}

/* The names the tokens mention (lower case), also as "a.b" for each
 * qualified a.b, and (optionally) their string literals. */
static void collect_words(strlist *words, strlist *literals, const sql_tokens *tk)
{
    for (size_t i = 0; i < tk->n; i++) {
        const sql_token *t = &tk->toks[i];
        if (is_name(t)) {
            strlist_push_owned(words, lower_dup(t->text));
            if (i + 2 < tk->n && sql_tok_is_op(&tk->toks[i + 1], ".") &&
                is_name(&tk->toks[i + 2])) {
                char *q = xasprintf("%s.%s", t->text, tk->toks[i + 2].text);
                strlist_push_owned(words, lower_dup(q));
                free(q);
            }
        } else if (t->type == SQL_TOK_STRING && literals) {
            strlist_push(literals, t->text);
        }
    }
}

static const char *const VOLATILE_CALLS[] = {
    "now",
    "get_current_timestamp",
    "get_current_time",
    "transaction_timestamp",
    "today",
    "random",
    "uuid",
    "gen_random_uuid",
    "uuidv4",
    "uuidv7",
    "nextval",
    "currval",
    "setseed",
};
static const char *const VOLATILE_WORDS[] = {
    "current_timestamp", "current_date",           "current_time",      "localtimestamp",
    "localtime",         "current_localtimestamp", "current_localtime",
};

/* The first non-deterministic function the tokens call, or NULL. */
static const char *volatile_call(const sql_tokens *tk)
{
    for (size_t i = 0; i < tk->n; i++) {
        const sql_token *t = &tk->toks[i];
        if (t->type != SQL_TOK_IDENT)
            continue;
        int call = i + 1 < tk->n && sql_tok_is_op(&tk->toks[i + 1], "(");
        for (size_t k = 0; call && k < sizeof(VOLATILE_CALLS) / sizeof(char *); k++)
            if (strcasecmp(t->text, VOLATILE_CALLS[k]) == 0)
                return VOLATILE_CALLS[k];
        for (size_t k = 0; k < sizeof(VOLATILE_WORDS) / sizeof(char *); k++)
            if (strcasecmp(t->text, VOLATILE_WORDS[k]) == 0)
                return VOLATILE_WORDS[k];
    }
    return NULL;
}

static void cfg_load(cfg_item **out, size_t *n, const tarn_project *p)
{
    size_t total = 0;
    for (size_t i = 0; i < p->nconfig; i++)
        total += p->config[i].nstmts;
    cfg_item *items = xcalloc(total ? total : 1, sizeof(cfg_item));
    size_t k = 0;
    for (size_t i = 0; i < p->nconfig; i++)
        for (size_t j = 0; j < p->config[i].nstmts; j++) {
            cfg_item *it = &items[k++];
            it->text = p->config[i].stmts[j].text;
            sql_tokens tk;
            if (sql_tokenize(&tk, it->text) != 0) {
                tarn_error_clear();
                it->kind = CFG_GLOBAL;
                continue;
            }
            cfg_classify(it, &tk, p->lake_alias);
            collect_words(&it->words, &it->literals, &tk);
            it->vol = volatile_call(&tk);
            sql_tokens_free(&tk);
        }
    *out = items;
    *n = total;
}

static void cfg_free(cfg_item *items, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(items[i].name);
        strlist_free(&items[i].words);
        strlist_free(&items[i].literals);
    }
    free(items);
}

/* ---- what a model depends on ----------------------------------------- */

static char *read_text(const char *dir, const char *path)
{
    char *full = xasprintf("%s/%s", dir, path), *text = NULL;
    if (fs_read_file(&text, full) != 0)
        tarn_error_clear(); /* hashed as "(unreadable)" */
    free(full);
    return text;
}

/* The data tests, canonically, and the custom test files' text. */
static void tests_text(tarn_buf *b, const tarn_project *p, const tarn_model *m, strlist *words,
                       strlist *literals)
{
    for (size_t i = 0; i < m->annot.ntests; i++) {
        const data_test *t = &m->annot.tests[i];
        char *cols = strlist_join(&t->columns, ","), *vals = strlist_join(&t->values, ",");
        buf_printf(b, "test %d %s|%s|%s.%s.%s|%s\n", (int)t->kind, cols, vals,
                   t->ref_schema ? t->ref_schema : "", t->ref_table ? t->ref_table : "",
                   t->ref_column ? t->ref_column : "", t->path ? t->path : "");
        if (t->warn) /* appended only then: a lake's recorded hashes stay valid */
            buf_puts(b, " warn\n");
        free(cols);
        free(vals);
        if (t->kind != DT_CUSTOM)
            continue;
        char *text = read_text(p->dir, t->path);
        buf_printf(b, "%s\n", text ? text : "(unreadable)");
        sql_tokens tk;
        if (text && sql_tokenize(&tk, text) == 0) {
            collect_words(words, literals, &tk);
            sql_tokens_free(&tk);
        }
        tarn_error_clear();
        free(text);
    }
}

/* Marks the config statements that model words reach, transitively. */
static void reach(unsigned char *reached, const cfg_item *items, size_t n, const strlist *words)
{
    for (size_t i = 0; i < n; i++)
        if (items[i].kind == CFG_GLOBAL)
            reached[i] = 1;
    int grew = 1;
    for (size_t w = 0; w < words->n; w++)
        for (size_t i = 0; i < n; i++)
            if (items[i].kind == CFG_NAMED && strcmp(items[i].name, words->items[w]) == 0)
                reached[i] = 1;
    while (grew) {
        grew = 0;
        for (size_t i = 0; i < n; i++) {
            if (!reached[i])
                continue;
            for (size_t w = 0; w < items[i].words.n; w++)
                for (size_t j = 0; j < n; j++)
                    if (!reached[j] && items[j].kind == CFG_NAMED &&
                        strcmp(items[j].name, items[i].words.items[w]) == 0)
                        reached[j] = grew = 1;
        }
    }
}

static int is_remote(const char *s)
{
    static const char *const schemes[] = {"s3://",   "s3a://",   "gs://",    "gcs://",
                                          "r2://",   "az://",    "azure://", "abfss://",
                                          "http://", "https://", "hf://"};
    for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
        if (strncasecmp(s, schemes[i], strlen(schemes[i])) == 0)
            return 1;
    return 0;
}

static int is_pathlike(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > 1024 || strncmp(s, "ducklake:", 9) == 0)
        return 0;
    for (const char *c = s; *c; c++)
        if (isspace((unsigned char)*c))
            return 0;
    return strchr(s, '.') || strchr(s, '/');
}

/* size, mtime and (small files) MD5 of the files `lit` names, hashed; ""
 * when it names no file. */
static char *fingerprint(tarn_session *s, const char *lit)
{
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT filename, size, epoch_ns(last_modified) FROM read_blob(");
    quote_literal(&sql, lit);
    buf_puts(&sql, ") ORDER BY filename");
    qrows q;
    int rc = query_rows(&q, s, buf_cstr(&sql));
    buf_free(&sql);
    if (rc) {
        tarn_error_clear();
        return xstrdup("");
    }
    tarn_buf fp = {0}, small = {0};
    for (size_t i = 0; i < q.nrows; i++) {
        const char *size = qrows_get(&q, i, 1);
        buf_printf(&fp, "%s\t%s\t%s\n", qrows_get(&q, i, 0), size ? size : "",
                   qrows_get(&q, i, 2) ? qrows_get(&q, i, 2) : "");
        if (size && strtoll(size, NULL, 10) <= 1048576) {
            buf_puts(&small, small.len ? ", " : "[");
            quote_literal(&small, qrows_get(&q, i, 0));
        }
    }
    qrows_free(&q);
    if (small.len) {
        buf_puts(&small, "]");
        char *md5 = xasprintf("SELECT string_agg(md5(content), ',' ORDER BY filename) FROM "
                              "read_blob(%s)",
                              buf_cstr(&small));
        char *out = NULL;
        if (query_string(&out, s, md5) == 0 && out)
            buf_printf(&fp, "%s\n", out);
        tarn_error_clear();
        free(out);
        free(md5);
    }
    buf_free(&small);
    char *res = NULL;
    if (fp.len) {
        char hex[65];
        hash_sha256_hex(hex, fp.ptr, fp.len);
        res = xstrdup(hex);
    } else {
        res = xstrdup("");
    }
    buf_free(&fp);
    return res;
}

static const char *fingerprint_cached(change_ctx *cc, const char *lit)
{
    long i = strlist_find(&cc->fp_keys, lit);
    if (i >= 0)
        return cc->fp_vals.items[i];
    strlist_push(&cc->fp_keys, lit);
    strlist_push_owned(&cc->fp_vals, fingerprint(cc->s, lit));
    return cc->fp_vals.items[cc->fp_vals.n - 1];
}

/* A table reference tarn cannot version: not a model, not config/'s, not
 * a lake table, not made by the model's own setup. Its text, or NULL. */
static char *untracked_ref(change_ctx *cc, const tarn_model *m, const cfg_item *items, size_t n,
                           const strlist *local)
{
    for (size_t s = 0; s < m->body.n; s++) {
        const model_stmt *st = &m->body.items[s];
        for (size_t i = 0; i < st->refs.n; i++) {
            const table_ref *r = &st->refs.items[i];
            if (r->is_file || project_ref_model(cc->p, r) >= 0 ||
                project_ref_current_view(cc->p, r) >= 0)
                continue;
            char *qual = r->schema ? xasprintf("%s.%s", r->schema, r->table) : NULL;
            const char *parts[4] = {r->catalog, r->schema, r->table, qual};
            int known = 0;
            for (int k = 0; k < 4 && !known; k++)
                for (size_t j = 0; parts[k] && j < n && !known; j++)
                    known = items[j].kind == CFG_NAMED && strcasecmp(items[j].name, parts[k]) == 0;
            free(qual);
            if (!known && change_ref_in_lake(cc, r) &&
                change_version(cc, r->schema ? r->schema : "main", r->table) >= 0)
                known = 1;
            if (!known && !r->catalog && !r->schema) {
                char *l = lower_dup(r->table);
                known = strlist_find(local, l) >= 0;
                free(l);
            }
            if (!known)
                return xasprintf("%s%s%s%s%s", r->catalog ? r->catalog : "", r->catalog ? "." : "",
                                 r->schema ? r->schema : "", r->schema ? "." : "", r->table);
        }
    }
    return NULL;
}

/* What a model's own text mentions. */
typedef struct {
    strlist words;    /* names, lower case (reach) */
    strlist literals; /* string literals (files) */
    strlist local;    /* names its setup statements create */
    const char *vol;  /* a non-deterministic call, or NULL */
    int opaque;       /* a statement did not tokenize: assume it reaches everything */
} model_scan;

static void scan_model(model_scan *sc, const tarn_model *m)
{
    for (size_t i = 0; i < m->body.n; i++) {
        sql_tokens tk;
        if (sql_tokenize(&tk, m->body.items[i].text) != 0) {
            tarn_error_clear();
            sc->opaque = 1;
            continue;
        }
        collect_words(&sc->words, &sc->literals, &tk);
        if (!sc->vol)
            sc->vol = volatile_call(&tk);
        char *local_name = i + 1 < m->body.n ? created_name(&tk) : NULL;
        if (local_name)
            strlist_push_owned(&sc->local, local_name);
        sql_tokens_free(&tk);
    }
}

static void scan_free(model_scan *sc)
{
    strlist_free(&sc->words);
    strlist_free(&sc->literals);
    strlist_free(&sc->local);
}

/* The config hash of model mi: the config statements it reaches, and its
 * data tests. Their literals join the model's, their calls count. */
static void hash_config(change_ctx *cc, size_t mi, const cfg_item *items, size_t n, model_scan *sc)
{
    tarn_buf tests = {0};
    tests_text(&tests, cc->p, &cc->p->models[mi], &sc->words, &sc->literals);
    unsigned char *reached = xcalloc(n ? n : 1, 1);
    if (sc->opaque)
        memset(reached, 1, n);
    else
        reach(reached, items, n, &sc->words);
    tarn_buf b = {0};
    buf_puts(&b, "tarn-config-v1\n");
    for (size_t i = 0; i < n; i++) {
        if (!reached[i] || items[i].kind == CFG_IGNORED)
            continue;
        char *norm = hash_normalize_sql(items[i].text);
        buf_printf(&b, "%s;\n", norm);
        free(norm);
        for (size_t j = 0; j < items[i].literals.n; j++)
            strlist_push(&sc->literals, items[i].literals.items[j]);
        if (!sc->vol)
            sc->vol = items[i].vol;
    }
    /* Two halves, so that a run can say which changed: the first 32 hex
     * digits hash the config statements, the last 32 the data tests. */
    char conf[65], tst[65];
    hash_sha256_hex(conf, b.ptr ? b.ptr : "", b.len);
    hash_sha256_hex(tst, tests.ptr ? tests.ptr : "", tests.len);
    memcpy(cc->config_hash[mi], conf, CONFIG_HALF);
    memcpy(cc->config_hash[mi] + CONFIG_HALF, tst, CONFIG_HALF);
    cc->config_hash[mi][2 * CONFIG_HALF] = 0;
    buf_free(&b);
    buf_free(&tests);
    free(reached);
}

/* The fingerprints of the files the literals name, as JSON into
 * cc->files_json[mi]; returns why the model always runs when one is a
 * remote file (caller frees), else NULL. */
static char *fingerprint_files(change_ctx *cc, size_t mi, const strlist *literals)
{
    json_t *files = json_object();
    char *remote = NULL;
    for (size_t i = 0; i < literals->n; i++) {
        const char *lit = literals->items[i];
        if (is_remote(lit)) {
            if (!remote)
                remote = xasprintf("reads %s (remote files are not versioned)", lit);
        } else if (is_pathlike(lit) && !json_object_get(files, lit)) {
            json_object_set_new(files, lit, json_string(fingerprint_cached(cc, lit)));
        }
    }
    cc->files_json[mi] = json_dumps(files, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(files);
    return remote;
}

/* The config hash, file fingerprints and always-run reason of model mi. */
static void model_inputs(change_ctx *cc, size_t mi, const cfg_item *items, size_t n)
{
    const tarn_model *m = &cc->p->models[mi];
    model_scan sc = {0};
    scan_model(&sc, m);
    hash_config(cc, mi, items, n, &sc);
    char *remote = fingerprint_files(cc, mi, &sc.literals);
    char *untracked = untracked_ref(cc, m, items, n, &sc.local);
    cc->vol[mi] = sc.vol;
    if (sc.vol)
        cc->always[mi] = xasprintf("non-deterministic: %s", sc.vol);
    else if (untracked)
        cc->always[mi] = xasprintf("reads %s (not versioned)", untracked);
    else if (remote)
        cc->always[mi] = xstrdup(remote);
    free(untracked);
    free(remote);
    scan_free(&sc);
}

void change_inputs_load(change_ctx *cc, const unsigned char *sel)
{
    cfg_item *items;
    size_t n;
    cfg_load(&items, &n, cc->p);
    for (size_t i = 0; i < cc->p->nmodels; i++)
        if (sel[i])
            model_inputs(cc, i, items, n);
    cfg_free(items, n);
}

int change_volatile_is_call(const char *vol)
{
    for (size_t k = 0; k < sizeof(VOLATILE_CALLS) / sizeof(char *); k++)
        if (vol == VOLATILE_CALLS[k])
            return 1;
    return 0;
}

/*
 * change.c — change detection (see change.h): config hashes, file
 * fingerprints, table versions, the last successful builds, and the
 * reason a model runs.
 */
#include "materialize/change.h"
#include "materialize/spec.h"

#include "project/hash.h"
#include "project/query.h"
#include "sql/lexer.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/quote.h"

#include <ctype.h>
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
            int in_lake = !r->catalog || strcasecmp(r->catalog, cc->lake ? cc->lake : "") == 0;
            if (!known && in_lake &&
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

#define CONFIG_HALF 32

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

/* ---- the lake: table versions and the last builds -------------------- */

/* Runs the records query q (freed here) into r; `what` says in an error
 * what was being read. */
static int records_query(qrows *r, change_ctx *cc, tarn_buf *q, const char *what)
{
    int rc = query_rows(r, cc->s, buf_cstr(q));
    buf_free(q);
    return rc ? tarn_error_prefix(rc, "%s", what) : 0;
}

/* Each table's content version (tarn_session_table_versions): a flush,
 * merge or rewrite is not a change, and expiring snapshots can lower a
 * version, never raise it, so change_reason takes only a newer version
 * for a change. */
static int load_versions(change_ctx *cc)
{
    char **keys = NULL;
    size_t n = 0;
    int rc = tarn_session_table_versions(cc->s, cc->lake, &keys, &cc->ver_vals, &n);
    if (rc)
        return tarn_error_prefix(rc, "reading the lake's table versions");
    for (size_t i = 0; i < n; i++)
        strlist_push_owned(&cc->ver_keys, keys[i]);
    free(keys);
    if (!cc->ver_vals)
        cc->ver_vals = xcalloc(1, sizeof(int64_t));
    return 0;
}

/* The columns of records table `table` (a lake built by an older tarn may
 * lack the newer ones); empty when the table does not exist. */
static void record_columns(change_ctx *cc, const char *table, strlist *out)
{
    /* pragma_table_info reads the one table (duckdb_columns() binds every
     * view of the lake); a missing table is an error there: no columns */
    tarn_buf q = {0}, name = {0};
    quote_qualified(&name, cc->cat, "main", table);
    buf_puts(&q, "SELECT name FROM pragma_table_info(");
    quote_literal(&q, buf_cstr(&name));
    buf_puts(&q, ") ORDER BY cid");
    qrows r;
    int rc = query_rows(&r, cc->s, buf_cstr(&q));
    buf_free(&q);
    buf_free(&name);
    if (rc) {
        tarn_error_clear();
        return;
    }
    for (size_t i = 0; i < r.nrows; i++)
        strlist_push(out, qrows_get(&r, i, 0));
    qrows_free(&r);
}

static void col_or_null(tarn_buf *q, const strlist *cols, const char *name)
{
    if (strlist_find(cols, name) >= 0)
        quote_ident(q, name);
    else
        buf_puts(q, "NULL");
}

static long model_of_name(const change_ctx *cc, const char *name)
{
    const char *dot = name ? strchr(name, '.') : NULL;
    if (!dot)
        return -1;
    char *schema = xstrndup(name, (size_t)(dot - name));
    long mi = project_find_model(cc->p, schema, dot + 1);
    free(schema);
    return mi;
}

/* Reads each model's latest successful run in tarn_model_run, among
 * those `also` (NULL or " AND …") keeps: query q is the select list
 * (model first; freed here), and `row` takes each row of a model of the
 * project. */
static int load_runs(change_ctx *cc, tarn_buf *q, const char *also,
                     void (*row)(change_ctx *cc, long mi, const qrows *r, size_t i))
{
    buf_puts(q, " FROM (SELECT *, row_number() OVER (PARTITION BY model ORDER BY run_id DESC, "
                "finished_at DESC) AS _rn FROM ");
    quote_qualified(q, cc->cat, NULL, "tarn_model_run");
    buf_puts(q, " WHERE status = 'success'");
    if (also)
        buf_puts(q, also);
    buf_puts(q, ") WHERE _rn = 1");
    qrows r;
    int rc = records_query(&r, cc, q, "reading the last builds");
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows; i++) {
        long mi = model_of_name(cc, qrows_get(&r, i, 0));
        if (mi >= 0)
            row(cc, mi, &r, i);
    }
    qrows_free(&r);
    return 0;
}

static void prev_row(change_ctx *cc, long mi, const qrows *r, size_t i)
{
    change_prev *pv = &cc->prev[mi];
    pv->found = 1;
    pv->model_hash = qrows_dup(r, i, 1, "");
    pv->config_hash = qrows_dup(r, i, 2, NULL);
    pv->target_version = qrows_get(r, i, 3) ? strtoll(qrows_get(r, i, 3), NULL, 10) : -1;
    pv->upstream = qrows_get(r, i, 4) ? json_loads(qrows_get(r, i, 4), 0, NULL) : NULL;
    pv->files = qrows_get(r, i, 5) ? json_loads(qrows_get(r, i, 5), 0, NULL) : NULL;
}

/* What change detection compares with: each model's last successful
 * build that was not of single slices. cols: tarn_model_run's columns. */
static int load_prev(change_ctx *cc, const strlist *cols)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT model, model_hash, ");
    col_or_null(&q, cols, "config_hash");
    buf_puts(&q, ", ");
    col_or_null(&q, cols, "target_version");
    buf_puts(&q, ", upstream, ");
    col_or_null(&q, cols, "source_files");
    return load_runs(cc, &q,
                     strlist_find(cols, "run_reason") >= 0
                         ? " AND coalesce(run_reason, '') NOT IN ('partition requested', "
                           "'current partition', 'backfill')"
                         : NULL,
                     prev_row);
}

static void last_row(change_ctx *cc, long mi, const qrows *r, size_t i)
{
    change_last *l = &cc->last[mi];
    l->found = 1;
    l->label = qrows_dup(r, i, 1, "");
    l->spec = qrows_dup(r, i, 2, NULL);
    l->model_hash = qrows_dup(r, i, 3, "");
}

/* The last successful build of every model, whatever its run reason:
 * how it wrote the table (strategy_spec, or only the strategy label on a
 * lake an older tarn built) and its model hash. */
static int load_last(change_ctx *cc, const strlist *cols)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT model, strategy, ");
    col_or_null(&q, cols, "strategy_spec");
    buf_puts(&q, ", model_hash");
    return load_runs(cc, &q, NULL, last_row);
}

/* The slices of each selected partitioned model, still written the way it
 * is now, that a build with other SQL wrote last (tarn_partition's
 * model_hash; on a lake an older tarn built, the hash of the run that
 * built the slice). A slice whose last build failed keeps the hash of the
 * build that wrote its rows, so an interrupted rebuild resumes. */
static int load_stale(change_ctx *cc, const unsigned char *sel)
{
    strlist cols = {0};
    record_columns(cc, "tarn_partition", &cols);
    if (cols.n == 0)
        return 0;
    tarn_buf q = {0};
    buf_puts(&q, "SELECT p.model, p.\"partition\", coalesce(");
    if (strlist_find(&cols, "model_hash") >= 0)
        buf_puts(&q, "p.model_hash, ");
    buf_puts(&q, "(SELECT max(r.model_hash) FROM ");
    quote_qualified(&q, cc->cat, NULL, "tarn_model_run");
    buf_puts(&q, " r WHERE r.run_id = p.run_id AND r.model = p.model AND r.status = 'success'), "
                 "'') FROM ");
    quote_qualified(&q, cc->cat, NULL, "tarn_partition");
    buf_puts(&q, " p WHERE p.snapshot_id IS NOT NULL ORDER BY 1, 2");
    strlist_free(&cols);
    qrows r;
    int rc = records_query(&r, cc, &q, "reading the built partitions");
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows; i++) {
        long mi = model_of_name(cc, qrows_get(&r, i, 0));
        if (mi < 0 || !sel[mi] || !cc->p->models[mi].annot.grain ||
            change_strategy_changed(cc, (size_t)mi, NULL))
            continue;
        const tarn_model *m = &cc->p->models[mi];
        const char *hash = qrows_get(&r, i, 2), *part = qrows_get(&r, i, 1);
        int64_t t;
        /* a slice of another grain (the table was empty when it changed) */
        if (m->annot.grain != GRAIN_DYNAMIC && partition_parse(&t, m->annot.grain, part) != 0) {
            tarn_error_clear();
            continue;
        }
        if (strcmp(hash ? hash : "", m->hash) != 0)
            strlist_push(&cc->stale[mi], part);
    }
    qrows_free(&r);
    return 0;
}

/* ---- the interface --------------------------------------------------- */

int change_load(change_ctx *cc, tarn_project *p, tarn_session *s, const char *lake, const char *cat,
                const unsigned char *sel)
{
    memset(cc, 0, sizeof(*cc));
    cc->p = p;
    cc->s = s;
    cc->lake = lake;
    cc->cat = cat;
    size_t nm = p->nmodels ? p->nmodels : 1;
    cc->config_hash = xcalloc(nm, sizeof(*cc->config_hash));
    cc->files_json = xcalloc(nm, sizeof(char *));
    cc->always = xcalloc(nm, sizeof(char *));
    cc->prev = xcalloc(nm, sizeof(change_prev));
    cc->last = xcalloc(nm, sizeof(change_last));
    cc->stale = xcalloc(nm, sizeof(strlist));
    cc->vol = xcalloc(nm, sizeof(char *));
    int rc = 0;
    if (cat) {
        strlist runs = {0}; /* none: no build recorded yet */
        rc = load_versions(cc);
        if (!rc)
            record_columns(cc, "tarn_model_run", &runs);
        if (!rc && runs.n)
            rc = load_prev(cc, &runs);
        if (!rc && runs.n)
            rc = load_last(cc, &runs);
        strlist_free(&runs);
        if (!rc)
            rc = load_stale(cc, sel);
    }
    if (rc)
        return rc;
    cfg_item *items;
    size_t n;
    cfg_load(&items, &n, p);
    for (size_t i = 0; i < p->nmodels; i++)
        if (sel[i])
            model_inputs(cc, i, items, n);
    cfg_free(items, n);
    return 0;
}

void change_free(change_ctx *cc)
{
    if (cc->p)
        for (size_t i = 0; i < cc->p->nmodels; i++) {
            free(cc->files_json[i]);
            free(cc->always[i]);
            free(cc->prev[i].model_hash);
            free(cc->prev[i].config_hash);
            if (cc->prev[i].upstream)
                json_decref(cc->prev[i].upstream);
            if (cc->prev[i].files)
                json_decref(cc->prev[i].files);
            free(cc->last[i].spec);
            free(cc->last[i].label);
            free(cc->last[i].model_hash);
            strlist_free(&cc->stale[i]);
        }
    free(cc->config_hash);
    free(cc->files_json);
    free(cc->always);
    free(cc->prev);
    free(cc->last);
    free(cc->stale);
    free(cc->vol);
    strlist_free(&cc->ver_keys);
    free(cc->ver_vals);
    strlist_free(&cc->fp_keys);
    strlist_free(&cc->fp_vals);
    memset(cc, 0, sizeof(*cc));
}

char *change_table_key(const char *schema, const char *table)
{
    char *k = xasprintf("%s.%s", schema, table);
    for (char *p = k; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return k;
}

int64_t change_version(const change_ctx *cc, const char *schema, const char *table)
{
    char *k = change_table_key(schema, table);
    long i = strlist_find(&cc->ver_keys, k);
    free(k);
    return i >= 0 ? cc->ver_vals[i] : -1;
}

void change_set_version(change_ctx *cc, const char *schema, const char *table, int64_t v)
{
    char *k = change_table_key(schema, table);
    long i = strlist_find(&cc->ver_keys, k);
    if (i >= 0) {
        cc->ver_vals[i] = v;
        free(k);
        return;
    }
    strlist_push_owned(&cc->ver_keys, k);
    cc->ver_vals = xrealloc(cc->ver_vals, cc->ver_keys.n * sizeof(int64_t));
    cc->ver_vals[cc->ver_keys.n - 1] = v;
}

/* Whether an upstream table read at the last build has changed since. */
static char *upstream_reason(const change_ctx *cc, const json_t *up, const unsigned char *will_run)
{
    if (!json_is_array(up))
        return xstrdup("no change record");
    size_t i;
    const json_t *e;
    json_array_foreach(up, i, e)
    {
        const char *table = json_string_value(json_object_get(e, "table"));
        const json_t *ver = json_object_get(e, "version");
        const char *dot = table ? strchr(table, '.') : NULL;
        if (!dot || !json_is_integer(ver))
            return xstrdup("no change record");
        char *schema = xstrndup(table, (size_t)(dot - table));
        long um = project_find_model(cc->p, schema, dot + 1);
        int64_t now = change_version(cc, schema, dot + 1);
        free(schema);
        if ((will_run && um >= 0 && will_run[um]) || now < 0 || now > json_integer_value(ver))
            return xasprintf("upstream changed: %s", table);
    }
    return NULL;
}

static char *files_reason(const change_ctx *cc, size_t mi, const json_t *prev)
{
    json_t *now = json_loads(cc->files_json[mi] ? cc->files_json[mi] : "{}", 0, NULL);
    char *why = NULL;
    if (!json_is_object(prev)) {
        why = xstrdup("no change record");
    } else {
        const char *k;
        json_t *v;
        json_object_foreach(now, k, v)
        {
            const char *was = json_string_value(json_object_get(prev, k));
            if (!why && (!was || strcmp(was, json_string_value(v)) != 0))
                why = xasprintf("source file changed: %s", k);
        }
        json_object_foreach((json_t *)prev, k, v)
        {
            if (!why && !json_object_get(now, k))
                why = xasprintf("source file changed: %s", k);
        }
    }
    json_decref(now);
    return why;
}

const char *change_last_spec(const change_ctx *cc, size_t mi, int *label_only)
{
    const change_last *l = &cc->last[mi];
    if (label_only)
        *label_only = l->found && !l->spec;
    return !l->found ? NULL : l->spec ? l->spec : l->label;
}

int change_strategy_changed(const change_ctx *cc, size_t mi, const char **was)
{
    int label_only = 0;
    const char *prev = change_last_spec(cc, mi, &label_only);
    if (was)
        *was = prev;
    if (!prev)
        return 0;
    const model_annot *a = &cc->p->models[mi].annot;
    if (label_only)
        return strcmp(prev, annot_strategy_label(a)) != 0;
    char *now = annot_strategy_spec(a);
    int changed = strcmp(prev, now) != 0;
    free(now);
    return changed;
}

/* Whether the last successful build ran other SQL or annotations with the
 * same strategy (a change of strategy is guard.h's matter). */
static int sql_changed(const change_ctx *cc, size_t mi)
{
    const change_last *l = &cc->last[mi];
    return l->found && strcmp(l->model_hash, cc->p->models[mi].hash) != 0 &&
           !change_strategy_changed(cc, mi, NULL);
}

/* A partitioned model that must rebuild the slices other SQL built: a
 * time grain always, a dynamic one when it has some (a dynamic model
 * without {partition} is otherwise skipped like any other). */
static int needs_slice_rebuild(const change_ctx *cc, size_t mi)
{
    return cc->p->models[mi].annot.grain && cc->stale[mi].n > 0;
}

char *change_warning(const change_ctx *cc, size_t mi)
{
    const tarn_model *m = &cc->p->models[mi];
    const char *v = cc->vol[mi];
    if (!v || m->annot.strategy != STRAT_APPEND || m->annot.grain)
        return NULL;
    int call = 0;
    for (size_t k = 0; k < sizeof(VOLATILE_CALLS) / sizeof(char *); k++)
        call |= v == VOLATILE_CALLS[k];
    return xasprintf("the query calls %s%s, so its result differs on every run and this append "
                     "model appends its rows again each time (intended for a log of runs; "
                     "otherwise make it a merge with key=, or replace)",
                     v, call ? "()" : "");
}

char *change_reason(const change_ctx *cc, size_t mi, const build_opts *o,
                    const unsigned char *will_run)
{
    const tarn_model *m = &cc->p->models[mi];
    if (o->force || o->full_refresh)
        return xstrdup("forced");
    const char *was = NULL;
    if (change_strategy_changed(cc, mi, &was)) {
        char *now = change_last_spec(cc, mi, NULL) == cc->last[mi].label
                        ? xstrdup(annot_strategy_label(&m->annot))
                        : annot_strategy_spec(&m->annot);
        char *what = spec_describe(was, now);
        char *why = xasprintf("strategy changed (%s)", what);
        free(what);
        free(now);
        return why;
    }
    if (needs_slice_rebuild(cc, mi) ||
        (m->annot.strategy == STRAT_INCREMENTAL && sql_changed(cc, mi)))
        return xstrdup(REASON_FULL_REBUILD);
    if (m->annot.grain && m->annot.grain != GRAIN_DYNAMIC)
        return xstrdup(o->partition || o->from ? "partition requested" : "current partition");
    if (m->annot.grain == GRAIN_DYNAMIC && o->partition)
        return xstrdup("partition requested");
    if (m->annot.strategy == STRAT_INCREMENTAL)
        return xstrdup("incremental");
    if (m->annot.strategy == STRAT_MANUAL)
        return xstrdup("manual");
    const change_prev *pv = &cc->prev[mi];
    if (!pv->found)
        return xstrdup("first run");
    if (strcmp(pv->model_hash, m->hash) != 0)
        return xstrdup(m->annot.strategy == STRAT_APPEND ? REASON_APPEND_CHANGED : "sql changed");
    if (!pv->config_hash || pv->target_version < 0)
        return xstrdup("no change record");
    if (strcmp(pv->config_hash, cc->config_hash[mi]) != 0)
        return xstrdup(strncmp(pv->config_hash, cc->config_hash[mi], CONFIG_HALF) == 0
                           ? "tests changed"
                           : "config changed");
    int64_t tv = change_version(cc, m->schema, m->table);
    if (tv < 0)
        return xstrdup("table missing");
    /* An append model does not append the same input again because its
     * table was written outside tarn: that would duplicate rows. */
    if (tv > pv->target_version && m->annot.strategy != STRAT_APPEND)
        return xstrdup("table changed outside tarn");
    char *why = upstream_reason(cc, pv->upstream, will_run);
    if (!why)
        why = files_reason(cc, mi, pv->files);
    if (!why && cc->always[mi])
        why = xstrdup(cc->always[mi]);
    return why;
}

/*
 * session_secret.c — DuckLake secrets: CREATE SECRET … (TYPE ducklake,
 * METADATA_PATH …, DATA_PATH …, …) and DROP SECRET of one, and ATTACH
 * 'ducklake:' (the default secret) / 'ducklake:name' (a named one) reading
 * the lake's attach options from it, as DuckLake does.
 *
 * tarn's DuckDB has no ducklake secret type (that comes with DuckLake's
 * extension), so the session keeps these secrets itself, for its own
 * lifetime: a TEMPORARY secret, DuckDB's default. Secrets of every other
 * type are DuckDB's, and pass through.
 */
#include "session/session_int.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DEFAULT_SECRET "__default_ducklake"

struct session_secret {
    char *name;
    char **keys, **vals; /* lower-case option names; METADATA_PARAMETERS entries as meta_<key> */
    size_t n;
    struct session_secret *next;
};

static void secret_free(session_secret *k)
{
    for (size_t i = 0; i < k->n; i++) {
        free(k->keys[i]);
        free(k->vals[i]);
    }
    free(k->keys);
    free(k->vals);
    free(k->name);
    free(k);
}

void session_secrets_free(tarn_session *s)
{
    while (s->secrets) {
        session_secret *k = s->secrets;
        s->secrets = k->next;
        secret_free(k);
    }
}

static session_secret **secret_slot(tarn_session *s, const char *name)
{
    session_secret **pp = &s->secrets;
    while (*pp && strcasecmp((*pp)->name, name) != 0)
        pp = &(*pp)->next;
    return pp;
}

static char *lower_dup(const char *text)
{
    char *out = xstrdup(text);
    for (char *p = out; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return out;
}

static void secret_set(session_secret *k, const char *key, const char *val)
{
    k->keys = xrealloc(k->keys, (k->n + 1) * sizeof(char *));
    k->vals = xrealloc(k->vals, (k->n + 1) * sizeof(char *));
    k->keys[k->n] = lower_dup(key);
    k->vals[k->n] = xstrdup(val);
    k->n++;
}

static const char *secret_get(const session_secret *k, const char *key)
{
    for (size_t i = k->n; i-- > 0;)
        if (strcmp(k->keys[i], key) == 0)
            return k->vals[i];
    return NULL;
}

static int kw_at(const sql_tokens *tk, size_t i, const char *kw)
{
    return i < tk->n && sql_tok_is_kw(&tk->toks[i], kw);
}

/* MAP {'k': 'v', …} from token *i (at MAP): each entry as meta_<k>. */
static int parse_map(session_secret *k, const sql_tokens *tk, size_t *i)
{
    size_t j = *i + 1;
    if (!sql_tokens_is_op(tk, j++, "{"))
        return tarn_error_set(TARN_EINVALID, "CREATE SECRET: expected MAP {…}");
    while (j < tk->n && !sql_tokens_is_op(tk, j, "}")) {
        if (j + 2 >= tk->n || !sql_tokens_is_op(tk, j + 1, ":"))
            return tarn_error_set(TARN_EINVALID, "CREATE SECRET: expected 'key': 'value' in MAP");
        char *key = xasprintf("meta_%s", tk->toks[j].text);
        secret_set(k, key, tk->toks[j + 2].text);
        free(key);
        j += 3;
        if (sql_tokens_is_op(tk, j, ","))
            j++;
    }
    *i = j + 1;
    return 0;
}

/* "(TYPE ducklake, NAME value, …)" from token i into k; *is_ducklake
 * tells whether TYPE was ducklake. */
static int parse_body(session_secret *k, const sql_tokens *tk, size_t i, int *is_ducklake)
{
    if (!sql_tokens_is_op(tk, i++, "("))
        return 0;
    int rc = 0;
    while (!rc && i < tk->n && !sql_tokens_is_op(tk, i, ")")) {
        const char *key = tk->toks[i++].text;
        if (kw_at(tk, i, "MAP") && sql_tokens_is_op(tk, i + 1, "{")) {
            rc = parse_map(k, tk, &i);
        } else if (i < tk->n && !sql_tokens_is_op(tk, i, ",") && !sql_tokens_is_op(tk, i, ")")) {
            if (strcasecmp(key, "TYPE") == 0)
                *is_ducklake = strcasecmp(tk->toks[i].text, "ducklake") == 0;
            else
                secret_set(k, key, tk->toks[i].text);
            i++;
        }
        if (sql_tokens_is_op(tk, i, ","))
            i++;
    }
    return rc;
}

/* CREATE [OR REPLACE] [TEMP|TEMPORARY|PERSISTENT] SECRET [IF NOT EXISTS]
 * [name] (TYPE ducklake, …) */
static int create_secret(tarn_session *s, const sql_tokens *tk, int *handled)
{
    size_t i = 1;
    int replace = 0, persistent = 0, if_not_exists = 0;
    if (kw_at(tk, i, "OR") && kw_at(tk, i + 1, "REPLACE")) {
        replace = 1;
        i += 2;
    }
    if (kw_at(tk, i, "TEMP") || kw_at(tk, i, "TEMPORARY") || kw_at(tk, i, "PERSISTENT"))
        persistent = kw_at(tk, i++, "PERSISTENT");
    if (!kw_at(tk, i++, "SECRET"))
        return 0;
    if (kw_at(tk, i, "IF") && kw_at(tk, i + 1, "NOT") && kw_at(tk, i + 2, "EXISTS")) {
        if_not_exists = 1;
        i += 3;
    }
    const char *name = DEFAULT_SECRET;
    if (i < tk->n && !sql_tokens_is_op(tk, i, "("))
        name = tk->toks[i++].text;
    session_secret *k = xcalloc(1, sizeof(*k));
    int is_ducklake = 0;
    int rc = parse_body(k, tk, i, &is_ducklake);
    if (!is_ducklake) {
        secret_free(k);
        return 0; /* DuckDB's */
    }
    *handled = 1;
    session_secret **slot = secret_slot(s, name);
    if (!rc && persistent)
        rc = tarn_error_set(TARN_EUNSUPPORTED,
                            "CREATE PERSISTENT SECRET: tarn keeps a DuckLake secret for the "
                            "session only (CREATE SECRET without PERSISTENT)");
    else if (!rc && !secret_get(k, "metadata_path"))
        rc = tarn_error_set(TARN_EINVALID, "Invalid Input Error: metadata_path must be defined "
                                           "when creating a DuckLake secret");
    else if (!rc && *slot && if_not_exists)
        rc = 1; /* kept as it is */
    else if (!rc && *slot && !replace)
        rc = tarn_error_set(TARN_EINVALID,
                            "Invalid Input Error: Temporary secret with name '%s' already exists!",
                            name);
    if (rc) {
        secret_free(k);
        return rc > 0 ? 0 : rc;
    }
    k->name = xstrdup(name);
    if (*slot) {
        session_secret *old = *slot;
        k->next = old->next;
        secret_free(old);
    }
    *slot = k;
    return 0;
}

/* DROP [TEMP|TEMPORARY] SECRET [IF EXISTS] name, of a DuckLake secret */
static int drop_secret(tarn_session *s, const sql_tokens *tk, int *handled)
{
    size_t i = 1;
    if (kw_at(tk, i, "TEMP") || kw_at(tk, i, "TEMPORARY"))
        i++;
    if (!kw_at(tk, i++, "SECRET"))
        return 0;
    if (kw_at(tk, i, "IF") && kw_at(tk, i + 1, "EXISTS"))
        i += 2;
    if (i >= tk->n)
        return 0;
    session_secret **slot = secret_slot(s, tk->toks[i].text);
    if (!*slot)
        return 0; /* DuckDB's, or none: DuckDB says so */
    *handled = 1;
    session_secret *k = *slot;
    *slot = k->next;
    secret_free(k);
    return 0;
}

int session_secret_stmt(tarn_session *s, const sql_tokens *tk, const char *kw, int *handled)
{
    if (strcmp(kw, "CREATE") == 0)
        return create_secret(s, tk, handled);
    if (strcmp(kw, "DROP") == 0)
        return drop_secret(s, tk, handled);
    return 0;
}

/* DuckLake reads a path made of letters, digits and '_' only as the name
 * of a secret */
static int path_is_secret(const char *path)
{
    for (const char *p = path; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_')
            return 0;
    return 1;
}

static int secret_bool(const char *v)
{
    return strcasecmp(v, "true") == 0 || strcmp(v, "1") == 0;
}

int session_secret_attach(tarn_session *s, lk_attach_opts *o, const char **meta_type)
{
    int is_default = *o->path == 0;
    if (!is_default && !path_is_secret(o->path))
        return 0;
    const char *name = is_default ? DEFAULT_SECRET : o->path;
    session_secret *k = *secret_slot(s, name);
    if (!k && is_default)
        return tarn_error_set(TARN_ENOTFOUND,
                              "Invalid Input Error: Default secret was not found - either specify "
                              "a path to attach to directly, or create the secret");
    if (!k)
        return tarn_error_set(
            TARN_ENOTFOUND,
            "Invalid Input Error: Secret \"%s\" was not found - if this was meant "
            "to be a path to a DuckDB file, use duckdb:%s instead",
            name, name);
    for (size_t i = 0; i < k->n; i++) {
        const char *key = k->keys[i], *v = k->vals[i];
        if (strcmp(key, "metadata_path") == 0)
            o->path = v;
        else if (strcmp(key, "data_path") == 0)
            o->data_path = v;
        else if (strcmp(key, "metadata_schema") == 0)
            o->metadata_schema = v;
        else if (strcmp(key, "metadata_catalog") == 0)
            o->metadata_catalog = v;
        else if (strcmp(key, "meta_type") == 0)
            *meta_type = v;
        else if (strcmp(key, "encrypted") == 0 && secret_bool(v))
            return tarn_error_set(TARN_EUNSUPPORTED,
                                  "secret \"%s\": ENCRYPTED lakes are not supported by tarn", name);
        else if (strcmp(key, "encrypted") != 0)
            return tarn_error_set(TARN_EUNSUPPORTED,
                                  "secret \"%s\": unsupported option %s for a DuckLake secret",
                                  name, key);
    }
    return 0;
}

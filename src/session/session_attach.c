/*
 * session_attach.c — ATTACH 'ducklake:PATH' [AS alias] [(options)] and
 * DETACH, the statements that bring a lake into a session.
 *
 * Options, as DuckDB's ducklake extension spells them: DATA_PATH,
 * READ_ONLY, SNAPSHOT_VERSION, SNAPSHOT_TIME, DATA_INLINING_ROW_LIMIT,
 * METADATA_CATALOG, AUTOMATIC_MIGRATION, OVERRIDE_DATA_PATH,
 * CREATE_IF_NOT_EXISTS, META_TYPE DUCKDB, TYPE DUCKLAKE; ATTACH OR REPLACE.
 * Anything else is refused by name rather than ignored.
 */
#include "duck/duck.h"
#include "lake/lake.h"
#include "session/rewrite.h"
#include "session/session_int.h"
#include "session/session_log.h"
#include "tarn/error.h"
#include "util/buf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static char *alias_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strchr(base, '.');
    return dot ? xstrndup(base, (size_t)(dot - base)) : xstrdup(base);
}

static int bool_value(const sql_token *t, int *out)
{
    if (sql_tok_is_kw(t, "true") || (t->type == SQL_TOK_NUMBER && strcmp(t->text, "1") == 0)) {
        *out = 1;
        return 1;
    }
    if (sql_tok_is_kw(t, "false") || (t->type == SQL_TOK_NUMBER && strcmp(t->text, "0") == 0)) {
        *out = 0;
        return 1;
    }
    return 0;
}

/* META_TYPE names the kind of database holding the catalog; tarn keeps
 * catalogs in DuckDB databases only. */
static int meta_type_refused(const char *type)
{
    char *lower = xstrdup(type);
    for (char *p = lower; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    int rc = tarn_error_set(TARN_EUNSUPPORTED,
                            "ATTACH: META_TYPE '%s' is not supported: tarn keeps a DuckLake "
                            "catalog in a DuckDB database only (META_TYPE 'duckdb')",
                            lower);
    free(lower);
    return rc;
}

/* Parses "(NAME [value], …)" starting at token i. */
static int parse_options(const sql_tokens *tk, size_t i, lk_attach_opts *o, int *is_lake)
{
    if (i >= tk->n || !sql_tok_is_op(&tk->toks[i], "("))
        return 0;
    i++;
    while (i < tk->n && !sql_tok_is_op(&tk->toks[i], ")")) {
        const sql_token *key = &tk->toks[i++];
        const sql_token *val = NULL;
        if (i < tk->n && !sql_tok_is_op(&tk->toks[i], ",") && !sql_tok_is_op(&tk->toks[i], ")"))
            val = &tk->toks[i++];
        const char *k = key->text;
        int b = 1;
        if (strcasecmp(k, "DATA_PATH") == 0 && val)
            o->data_path = val->text;
        else if (strcasecmp(k, "READ_ONLY") == 0 || strcasecmp(k, "READONLY") == 0)
            o->read_only = val ? (bool_value(val, &b), b) : 1;
        else if (strcasecmp(k, "SNAPSHOT_VERSION") == 0 && val)
            o->snapshot_version = strtoll(val->text, NULL, 10);
        else if (strcasecmp(k, "SNAPSHOT_TIME") == 0 && val)
            o->snapshot_time = val->text;
        else if (strcasecmp(k, "DATA_INLINING_ROW_LIMIT") == 0 && val)
            o->inline_limit = strtoll(val->text, NULL, 10);
        else if (strcasecmp(k, "METADATA_CATALOG") == 0 && val)
            o->metadata_catalog = val->text;
        else if (strcasecmp(k, "METADATA_SCHEMA") == 0 && val)
            o->metadata_schema = val->text;
        else if (strcasecmp(k, "AUTOMATIC_MIGRATION") == 0)
            o->automatic_migration = val ? (bool_value(val, &b), b) : 1;
        else if (strcasecmp(k, "TYPE") == 0 && val && strcasecmp(val->text, "ducklake") == 0)
            *is_lake = 1;
        else if (strcasecmp(k, "OVERRIDE_DATA_PATH") == 0)
            o->override_data_path = val ? (bool_value(val, &b), b) : 1;
        else if (strcasecmp(k, "CREATE_IF_NOT_EXISTS") == 0)
            o->no_create = val ? (bool_value(val, &b), !b) : 0;
        else if (strcasecmp(k, "WRITE_DELETION_VECTORS") == 0)
            o->write_dvs = val ? (bool_value(val, &b), b) : 1;
        else if (strcasecmp(k, "META_TYPE") == 0 && val && strcasecmp(val->text, "duckdb") != 0)
            return meta_type_refused(val->text);
        else if (strcasecmp(k, "META_TYPE") == 0 && val)
            ; /* the catalog is a DuckDB database: tarn's only kind */
        else
            return tarn_error_set(TARN_EINVALID,
                                  "ATTACH: unsupported option %s for a DuckLake lake (supported: "
                                  "DATA_PATH, READ_ONLY, SNAPSHOT_VERSION, SNAPSHOT_TIME, "
                                  "DATA_INLINING_ROW_LIMIT, METADATA_CATALOG, METADATA_SCHEMA, "
                                  "AUTOMATIC_MIGRATION, OVERRIDE_DATA_PATH, "
                                  "CREATE_IF_NOT_EXISTS, META_TYPE, WRITE_DELETION_VECTORS)",
                                  k);
        if (i < tk->n && sql_tok_is_op(&tk->toks[i], ","))
            i++;
    }
    if (o->snapshot_version >= 0 && o->snapshot_time)
        return tarn_error_set(TARN_EINVALID,
                              "Invalid Input Error: Cannot specify both VERSION and TIMESTAMP");
    return 0;
}

/* Detaches lake `l` from the session (refused while its transaction is
 * open). */
static int drop_lake(tarn_session *s, lk_lake *l)
{
    if (l->txn)
        return tarn_error_set(TARN_EINVALID,
                              "cannot detach lake \"%s\" while its transaction is open; COMMIT "
                              "or ROLLBACK first",
                              l->alias);
    lk_lake **pp = &s->lakes;
    while (*pp != l)
        pp = &(*pp)->next;
    *pp = l->next;
    if (s->use_lake && strcasecmp(s->use_lake, l->alias) == 0) {
        duck_exec(s->con, "USE memory");
        free(s->use_lake);
        free(s->use_schema);
        s->use_lake = s->use_schema = NULL;
    }
    lk_lake_detach(l, s->con);
    return 0;
}

static int attach(tarn_session *s, const sql_tokens *tk, int *handled)
{
    size_t i = 1;
    int replace = 0;
    if (i + 1 < tk->n && sql_tok_is_kw(&tk->toks[i], "OR") &&
        sql_tok_is_kw(&tk->toks[i + 1], "REPLACE")) {
        replace = 1;
        i += 2;
    }
    if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "DATABASE"))
        i++;
    int if_not_exists = 0;
    if (i + 2 < tk->n && sql_tok_is_kw(&tk->toks[i], "IF") &&
        sql_tok_is_kw(&tk->toks[i + 1], "NOT")) {
        if_not_exists = 1;
        i += 3;
    }
    if (i >= tk->n || tk->toks[i].type != SQL_TOK_STRING)
        return 0;
    const char *target = tk->toks[i++].text;
    int is_lake = strncmp(target, "ducklake:", 9) == 0;
    lk_attach_opts o = {.snapshot_version = -1, .inline_limit = -1};
    o.path = is_lake ? target + 9 : target;
    const char *given = o.path; /* a secret's name: the alias is made from it */
    char *alias = NULL;
    if (i + 1 < tk->n && sql_tok_is_kw(&tk->toks[i], "AS")) {
        alias = xstrdup(tk->toks[i + 1].text);
        i += 2;
    }
    /* a secret's options first, the ATTACH's own over them (DuckLake's order) */
    const char *meta_type = NULL;
    int rc = is_lake ? session_secret_attach(s, &o, &meta_type) : 0;
    if (!rc)
        rc = parse_options(tk, i, &o, &is_lake);
    if (!rc && meta_type && strcasecmp(meta_type, "duckdb") != 0)
        rc = meta_type_refused(meta_type);
    if (!is_lake) {
        free(alias);
        return 0;
    }
    *handled = 1;
    if (!rc && s->explicit_txn)
        rc = tarn_error_set(TARN_EINVALID, "a lake cannot be attached inside an open transaction: "
                                           "ATTACH it before BEGIN");
    if (!alias)
        alias = alias_from_path(*given ? given : o.path);
    o.alias = alias;
    if (!rc && replace && session_lake(s, alias))
        rc = drop_lake(s, session_lake(s, alias));
    if (!rc && session_lake(s, alias)) {
        if (!if_not_exists)
            rc = tarn_error_set(TARN_EINVALID,
                                "Binder Error: Failed to attach database: database with name "
                                "\"%s\" already exists",
                                alias);
        free(alias);
        return rc;
    }
    lk_lake *lake = NULL;
    if (!rc)
        rc = lk_lake_attach(&lake, s->con, &o);
    if (!rc) {
        lake->next = s->lakes;
        s->lakes = lake;
        /* (set once the lake is listed: the rewriter resolves its names) */
        lk_lake_set_view_rewriter(lake, s->con, session_view_rewrite, s);
        session_log_lake(s, lake);
    }
    free(alias);
    return rc;
}

static int detach(tarn_session *s, const sql_tokens *tk, int *handled)
{
    size_t i = 1;
    if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "DATABASE"))
        i++;
    int if_exists = 0;
    if (i + 1 < tk->n && sql_tok_is_kw(&tk->toks[i], "IF") &&
        sql_tok_is_kw(&tk->toks[i + 1], "EXISTS")) {
        if_exists = 1;
        i += 2;
    }
    if (i >= tk->n)
        return 0;
    lk_lake *l = session_lake(s, tk->toks[i].text);
    (void)if_exists;
    if (!l)
        return 0;
    *handled = 1;
    return drop_lake(s, l);
}

int session_attach_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, const char *kw,
                        int *handled)
{
    (void)sql;
    if (strcmp(kw, "ATTACH") == 0)
        return attach(s, tk, handled);
    return detach(s, tk, handled);
}

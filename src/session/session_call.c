/*
 * session_call.c — DuckLake's procedures reached with CALL:
 * ducklake_set_commit_message (author, message and extra info of the
 * transaction's snapshot), ducklake_set_option (catalog options in
 * ducklake_metadata, global or per schema/table) and
 * ducklake_add_data_files (lake/addfiles.h).
 */
#include "duck/duck.h"
#include "lake/addfiles.h"
#include "lake/ddl.h"
#include "session/functions.h"
#include "session/rewrite.h"
#include "lake/maintain.h"
#include "lake/info.h"
#include "lake/options.h"
#include "session/session_fnform.h"
#include "session/session_log.h"
#include "session/session_int.h"
#include "lake/txn.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int set_commit_message(tarn_session *s, lk_lake *l, const lk_args *a, size_t first)
{
    if (!s->explicit_txn)
        return 0; /* its own transaction, which writes nothing */
    int rc = session_write_begin(s, l);
    if (rc)
        return rc;
    lk_txn *txn = l->txn;
    free(txn->author);
    free(txn->message);
    free(txn->extra_info);
    txn->author = a->npos > first && a->pos[first] ? xstrdup(a->pos[first]) : NULL;
    txn->message = a->npos > first + 1 && a->pos[first + 1] ? xstrdup(a->pos[first + 1]) : NULL;
    const char *extra = lk_args_named(a, "extra_info");
    txn->extra_info = extra ? xstrdup(extra) : NULL;
    txn->has_message = 1;
    return 0;
}

static int set_option(tarn_session *s, lk_lake *l, const lk_args *a, size_t first)
{
    if (a->npos < first + 2 || !a->pos[first])
        return tarn_error_set(TARN_EINVALID, "set_option(name, value [, schema => …, table_name "
                                             "=> …])");
    const char *schema = lk_args_named(a, "schema");
    const char *table = lk_args_named(a, "table_name");
    const char *scope = NULL;
    int64_t scope_id = -1;
    const lk_table *target = NULL; /* the table of a table_name => option */
    lk_catalog *cat = (lk_catalog *)lk_txn_catalog(l);
    if (table) {
        const lk_table *t = lk_catalog_table_named(cat, schema ? schema : "main", table);
        if (!t)
            return tarn_error_set(TARN_ENOTFOUND, "set_option: table %s not found", table);
        if (l->txn && lk_txn_created_table(l, l->txn, t))
            return tarn_error_set(TARN_EUNSUPPORTED,
                                  "Settings cannot be set for transaction-local tables");
        scope = "table";
        scope_id = t->id;
        target = t;
    } else if (schema) {
        lk_schema *sc = lk_catalog_schema(cat, schema);
        if (!sc)
            return tarn_error_set(TARN_ENOTFOUND, "set_option: schema %s not found", schema);
        if (l->txn && !lk_catalog_schema(&l->cat, schema))
            return tarn_error_set(TARN_EUNSUPPORTED,
                                  "Settings cannot be set for transaction-local schemas");
        scope = "schema";
        scope_id = sc->id;
    }
    char *key = NULL, *value = NULL;
    int rc = lk_option_value(&key, &value, s->con, a->pos[first],
                             a->npos > first + 1 ? a->pos[first + 1] : NULL);
    if (!rc && strcmp(key, "data_inlining_row_limit") == 0 && strtoll(value, NULL, 10) > 0)
        rc = lk_inlining_check(l, s->con, cat, target, target ? -1 : scope_id);
    if (rc) {
        free(key);
        free(value);
        return rc;
    }
    /* inside BEGIN … COMMIT: written with the transaction's commit */
    if (s->explicit_txn)
        rc = session_write_begin(s, l);
    if (!rc)
        rc = lk_info_set_option(l, s->con, key, value, scope, scope_id, s->explicit_txn);
    free(key);
    free(value);
    return rc;
}

/* A boolean named argument: 1/0, or `dflt` when not given. */
static int bool_arg(const lk_args *a, const char *name, int dflt)
{
    const char *v = lk_args_named(a, name);
    return v ? strcasecmp(v, "true") == 0 : dflt;
}

/* The file list argument: a string or a list of strings, none NULL. */
static int file_list(strlist *out, tarn_session *s, const char *sql)
{
    int had_null = 0;
    int rc = session_eval_strings(out, &had_null, s, sql);
    if (!rc && had_null)
        rc = tarn_error_set(TARN_EINVALID, "Invalid Input Error: File list cannot be NULL");
    return rc;
}

/* CALL ducklake_add_data_files(lake, table, files, schema => …,
 * allow_missing => …, ignore_extra_columns => …, hive_partitioning => …) */
static int add_data_files(tarn_session *s, const lk_args *a)
{
    lk_lake *l = a->npos > 0 && a->pos[0] ? session_lake(s, a->pos[0]) : NULL;
    if (!l)
        return tarn_error_set(TARN_EINVALID,
                              "CALL ducklake_add_data_files: no DuckLake lake is "
                              "attached as \"%s\"",
                              a->npos > 0 && a->pos[0] ? a->pos[0] : "");
    if (a->npos < 3 || !a->pos_sql[2])
        return tarn_error_set(TARN_EINVALID, "ducklake_add_data_files(lake, table, files [, schema "
                                             "=> …, allow_missing => …, ignore_extra_columns => …, "
                                             "hive_partitioning => …])");
    if (!a->pos[1])
        return tarn_error_set(TARN_EINVALID, "Invalid Input Error: Table name cannot be NULL");
    for (size_t i = 0; i < a->nnamed; i++)
        if (strcasecmp(a->names[i], "schema") != 0 &&
            strcasecmp(a->names[i], "allow_missing") != 0 &&
            strcasecmp(a->names[i], "ignore_extra_columns") != 0 &&
            strcasecmp(a->names[i], "hive_partitioning") != 0)
            return tarn_error_set(TARN_EINVALID,
                                  "Binder Error: Invalid named parameter \"%s\" "
                                  "for function ducklake_add_data_files",
                                  a->names[i]);
    strlist files = {0};
    int rc = file_list(&files, s, a->pos_sql[2]);
    const char *schema = lk_args_named(a, "schema");
    const char *hive = lk_args_named(a, "hive_partitioning");
    if (!schema) /* the USE'd schema of this lake, else main */
        schema = s->use_lake && s->use_schema && strcasecmp(s->use_lake, l->alias) == 0
                     ? s->use_schema
                     : "main";
    lk_add_files_opts o = {
        .schema = schema,
        .table = a->pos[1],
        .globs = files.items,
        .nglobs = files.n,
        .allow_missing = bool_arg(a, "allow_missing", 0),
        .ignore_extra_columns = bool_arg(a, "ignore_extra_columns", 0),
        .hive = hive ? strcasecmp(hive, "true") == 0 : -1,
    };
    if (!rc)
        rc = session_write_begin(s, l);
    if (!rc) {
        rc = lk_add_data_files(l, s->con, &o);
        rc = session_write_end(s, l, rc);
    }
    strlist_free(&files);
    return rc;
}

/* The function a CALL names, as DuckLake's full name (*fn, malloc'd) and
 * the '(' of its arguments; *form gets a catalog form (lake.x(…), or x(…)
 * after USE). 0 when it names no DuckLake function. */
static int call_target(char **fn, size_t *open, session_fnform *form, tarn_session *s,
                       const sql_tokens *tk)
{
    const char *name = tk->toks[1].text;
    if (session_fnform_at(form, s, tk, 1)) {
        *fn = xstrdup(form->fn);
        *open = form->open;
    } else if (tk->n > 4 && tk->toks[2].type == SQL_TOK_OP && strcmp(tk->toks[2].text, ".") == 0 &&
               (form->lake = session_lake(s, name)) != NULL) {
        /* CALL lake.x(…) for tarn's other maintenance functions */
        *fn = xasprintf("ducklake_%s", tk->toks[3].text);
        *open = 4;
    } else if (strncasecmp(name, "ducklake_", 9) == 0) {
        *fn = xstrdup(name);
        *open = 2;
    } else {
        return 0;
    }
    return 1;
}

int session_call_stmt(tarn_session *s, const sql_tokens *tk, const char *sql, int *handled)
{
    if (tk->n < 3)
        return 0;
    int rc = session_log_call(s, tk, sql, handled);
    if (*handled)
        return rc;
    char *fn = NULL;
    size_t open = 0;
    session_fnform form;
    if (!call_target(&fn, &open, &form, s, tk))
        return 0;
    *handled = 1;
    size_t close = tk->n - 1;
    while (close > open &&
           !(tk->toks[close].type == SQL_TOK_OP && strcmp(tk->toks[close].text, ")") == 0))
        close--;
    lk_args a;
    rc = session_args_parse(&a, s, tk, sql, open + 1, close);
    if (rc) {
        free(fn);
        return rc;
    }
    if (form.lake)
        session_fnform_args(&form, &a);
    int is_message = strcasecmp(fn, "ducklake_set_commit_message") == 0;
    if (!is_message && strcasecmp(fn, "ducklake_set_option") != 0) {
        /* a maintenance function called for its effect */
        if (strcasecmp(fn, "ducklake_add_data_files") == 0) {
            rc = add_data_files(s, &a);
            free(fn);
            lk_args_free(&a);
            return rc;
        }
        char *sub = NULL;
        rc = session_maintain(&sub, s, fn, &a);
        if (rc == TARN_ENOTFOUND && !sub && !tarn_error_last()[0])
            rc = tarn_error_set(TARN_EUNSUPPORTED,
                                "CALL %s is not a DuckLake function tarn "
                                "knows",
                                tk->toks[1].text);
        free(sub);
        free(fn);
        lk_args_free(&a);
        return rc;
    }
    free(fn);
    lk_lake *l = a.npos > 0 && a.pos[0] ? session_lake(s, a.pos[0]) : NULL;
    if (!l) {
        rc = tarn_error_set(TARN_EINVALID, "CALL %s: no DuckLake lake is attached as \"%s\"",
                            tk->toks[1].text, a.npos > 0 && a.pos[0] ? a.pos[0] : "");
        lk_args_free(&a);
        return rc;
    }
    rc = is_message ? set_commit_message(s, l, &a, 1) : set_option(s, l, &a, 1);
    lk_args_free(&a);
    return rc;
}

/* CHECKPOINT of a lake (the session's after USE, or the one named):
 * DuckLake's maintenance functions in its order (lk_maintain_checkpoint;
 * inside BEGIN … COMMIT the rewriting ones become part of the
 * transaction). A read-only lake has nothing to do. */
int session_checkpoint_stmt(tarn_session *s, const sql_tokens *tk, int *handled)
{
    size_t i = sql_tok_is_kw(&tk->toks[0], "FORCE") ? 1 : 0;
    if (i >= tk->n || !sql_tok_is_kw(&tk->toks[i], "CHECKPOINT") || i + 2 < tk->n)
        return 0;
    const char *name = i + 1 < tk->n ? tk->toks[i + 1].text : s->use_lake;
    lk_lake *l = name ? session_lake(s, name) : NULL;
    if (!l)
        return 0;
    *handled = 1;
    if (l->read_only)
        return 0;
    int rc = lk_maintain_checkpoint(l, s->con, s->explicit_txn);
    if (rc)
        tarn_error_prefix(rc, "Failed to perform CHECKPOINT; in DuckLake: ");
    return rc;
}

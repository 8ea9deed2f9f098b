/*
 * manual.c — `-- materialize manual`: the model's own script, run inside
 * the build's transaction, which may write only the model's table and the
 * tables it declares (`-- materialize manual writes=a.b,c.d`).
 *
 * After the script's last statement, and before the build commits, the
 * lake transaction's changes (tarn_session_pending_changes: the
 * ducklake_snapshot_changes tokens it would commit) are held against what
 * the model may write. Tokens name new objects ("created_table:"s"."t"")
 * or give the id of an existing one, looked up in the lake's committed
 * catalog (tarn_session_object_name); an id
 * that is not there is an object this transaction created, checked by its
 * created_… token. Anything else the script wrote — another model's table,
 * a view, a schema dropped — fails the build, which is rolled back.
 */
#include "materialize/model_int.h"

#include "tarn/error.h"
#include "tarn/session.h"
#include "util/buf.h"
#include "util/quote.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* May the model write schema.name (lower case)? Its own table, or one of
 * its writes=. */
static int may_write(const tarn_model *m, const char *schema, const char *name)
{
    char *k = xasprintf("%s.%s", schema, name);
    char *own = xasprintf("%s.%s", m->schema, m->table);
    for (char *p = own; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    int ok = strcmp(k, own) == 0 || strlist_find(&m->annot.writes, k) >= 0;
    free(own);
    free(k);
    return ok;
}

/* May it create schema `schema` (lower case)? The schema of a table it
 * may write. */
static int may_create_schema(const tarn_model *m, const char *schema)
{
    size_t n = strlen(schema);
    if (strcasecmp(m->schema, schema) == 0)
        return 1;
    for (size_t i = 0; i < m->annot.writes.n; i++)
        if (strncmp(m->annot.writes.items[i], schema, n) == 0 && m->annot.writes.items[i][n] == '.')
            return 1;
    return 0;
}

static char *lower_dup(const char *s)
{
    char *d = xstrdup(s);
    for (char *p = d; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return d;
}

/* "\"s\".\"t\"" (a name token's quoted parts) → s and t, unquoted and
 * lower case; t is NULL for a one-part name. */
static void token_names(const char *q, char **schema, char **name)
{
    tarn_buf part[2] = {{0}, {0}};
    int k = 0, in = 0;
    for (const char *p = q; *p; p++) {
        if (*p == '"') {
            if (in && p[1] == '"') {
                buf_putc(&part[k], '"');
                p++;
            } else {
                in = !in;
            }
        } else if (!in && *p == '.' && k == 0) {
            k = 1;
        } else {
            buf_putc(&part[k], *p);
        }
    }
    *schema = lower_dup(buf_cstr(&part[0]));
    *name = k ? lower_dup(buf_cstr(&part[1])) : NULL;
    buf_free(&part[0]);
    buf_free(&part[1]);
}

/* The committed object with catalog id `id`: its kind ("table", "view",
 * "schema"), schema and name (lower case); 0 when there is none. */
static int committed_object(build_state *b, int64_t id, int schema_only, char **kind, char **schema,
                            char **name)
{
    if (tarn_session_object_name(b->c->s, b->c->lake, id, schema_only, kind, schema, name)) {
        tarn_error_clear();
        return 0;
    }
    return 1;
}

/* Why change token `tok` is not the model's to make ("writes
 * marts.summary", "drops schema raw"; caller frees), or NULL. */
static char *forbidden_change(build_state *b, const char *tok)
{
    const tarn_model *m = b->m;
    const char *colon = strchr(tok, ':');
    if (!colon)
        return NULL;
    char *verb = xstrndup(tok, (size_t)(colon - tok));
    const char *arg = colon + 1;
    char *why = NULL, *schema = NULL, *name = NULL, *kind = NULL;
    if (arg[0] == '"') {
        token_names(arg, &schema, &name);
        if (strcmp(verb, "created_schema") == 0) {
            if (!may_create_schema(m, schema))
                why = xasprintf("creates schema %s", schema);
        } else if (!name || !may_write(m, schema, name)) {
            why = xasprintf("%s %s%s%s", strncmp(verb, "created_", 8) == 0 ? "creates" : "writes",
                            schema, name ? "." : "", name ? name : "");
        }
    } else {
        int64_t id = strtoll(arg, NULL, 10);
        int is_schema = strcmp(verb, "dropped_schema") == 0;
        if (committed_object(b, id, is_schema, &kind, &schema, &name)) {
            if (is_schema)
                why = xasprintf("drops schema %s", schema);
            else if (!may_write(m, schema, name ? name : ""))
                why =
                    xasprintf("%s %s %s.%s", strncmp(verb, "dropped_", 8) == 0 ? "drops" : "writes",
                              kind, schema, name ? name : "");
        }
    }
    free(verb);
    free(kind);
    free(schema);
    free(name);
    return why;
}

/* Fails (naming the first object) when the script wrote a lake object
 * that is not the model's to write. */
static int check_writes(build_state *b)
{
    char **toks = NULL;
    size_t n = 0;
    if (tarn_session_pending_changes(b->c->s, b->c->lake, &toks, &n) != 0) {
        tarn_error_clear(); /* no open transaction: nothing was written */
        return 0;
    }
    char *why = NULL;
    for (size_t i = 0; i < n; i++) {
        if (!why)
            why = forbidden_change(b, toks[i]);
        free(toks[i]);
    }
    free(toks);
    if (!why)
        return 0;
    const tarn_model *m = b->m;
    int rc = tarn_error_set(TARN_EINVALID,
                            "%s: the script %s, but a manual model writes only its own table "
                            "(%s) and the tables its writes= names; nothing was written\n"
                            "  fix: declare the other tables it writes (-- materialize manual "
                            "writes=schema.table,…), or move that work to their own models",
                            m->path, why, m->name);
    free(why);
    return rc;
}

int build_manual(build_state *b)
{
    const tarn_model *m = b->m;
    for (size_t i = 0; i < m->body.n; i++) {
        char *sql = pin_statement(b->c, b->mi, &m->body.items[i], NULL, b->r);
        int64_t n = -1;
        int rc = mb_run(b, sql, &n, 1);
        free(sql);
        if (rc)
            return mb_error_at(m, &m->body.items[i], rc);
        if (n > 0)
            b->r->rows_written += n;
    }
    return check_writes(b);
}

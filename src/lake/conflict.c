/*
 * conflict.c — DuckLake's conflict rules (see conflict.h). Reads no
 * catalog rows: the caller hands it the changes_made tokens of the
 * committing transaction and of the snapshots committed since it began.
 *
 * The checks and their order are DuckLake's (CheckForConflicts in its
 * transaction state): drops of the same table, view, macro or schema;
 * creations of a schema or an entry under a name another created, or in a
 * schema another dropped; inserts into a table another dropped, altered
 * or deleted from; deletes from a table another dropped, altered,
 * compacted or inserted into, or from a data file another deleted from;
 * inlined deletes, flushes, compactions, alters of tables and views.
 * Inserts into one table, and writes to different tables, do not conflict.
 */
#include "lake/conflict.h"

#include "util/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum {
    K_CREATED_SCHEMA,
    K_CREATED_TABLE,
    K_CREATED_VIEW,
    K_CREATED_SCALAR_MACRO,
    K_CREATED_TABLE_MACRO,
    K_DROPPED_SCHEMA,
    K_DROPPED_TABLE,
    K_DROPPED_VIEW,
    K_DROPPED_SCALAR_MACRO,
    K_DROPPED_TABLE_MACRO,
    K_INSERTED,
    K_DELETED,
    K_ALTERED_TABLE,
    K_ALTERED_VIEW,
    K_INLINED_INSERT,
    K_INLINED_DELETE,
    K_FLUSH,
    K_MERGE,
    K_REWRITE,
    K_COMPACTED,
    K_NKINDS
} kind;

static const struct {
    const char *name;
    kind k;
} KINDS[] = {
    {"created_schema", K_CREATED_SCHEMA},
    {"created_table", K_CREATED_TABLE},
    {"created_view", K_CREATED_VIEW},
    {"created_scalar_macro", K_CREATED_SCALAR_MACRO},
    {"created_table_macro", K_CREATED_TABLE_MACRO},
    {"dropped_schema", K_DROPPED_SCHEMA},
    {"dropped_table", K_DROPPED_TABLE},
    {"dropped_view", K_DROPPED_VIEW},
    {"dropped_scalar_macro", K_DROPPED_SCALAR_MACRO},
    {"dropped_table_macro", K_DROPPED_TABLE_MACRO},
    {"inserted_into_table", K_INSERTED},
    {"deleted_from_table", K_DELETED},
    {"altered_table", K_ALTERED_TABLE},
    {"altered_view", K_ALTERED_VIEW},
    {"inlined_insert", K_INLINED_INSERT},
    {"inlined_delete", K_INLINED_DELETE},
    {"inline_flush", K_FLUSH},
    {"flushed_inlined", K_FLUSH},
    {"merge_adjacent", K_MERGE},
    {"rewrite_delete", K_REWRITE},
    {"compacted_table", K_COMPACTED},
};

typedef struct {
    kind k;
    int64_t id;   /* id tokens */
    char *schema; /* name tokens: "schema"[."name"] */
    char *name;
} change;

typedef struct {
    change *v;
    size_t n;
} changes;

/* One double-quoted name at *p ("" inside is a quote); NULL when none. */
static char *quoted(const char **p)
{
    if (**p != '"')
        return NULL;
    tarn_buf b = {0};
    const char *s = *p + 1;
    for (; *s; s++) {
        if (*s == '"' && s[1] == '"')
            s++;
        else if (*s == '"')
            break;
        buf_putc(&b, *s);
    }
    *p = *s ? s + 1 : s;
    char *out = buf_detach(&b);
    return out ? out : calloc(1, 1);
}

static void parse_one(changes *out, const char *tok, size_t len)
{
    const char *colon = memchr(tok, ':', len);
    if (!colon)
        return;
    size_t tlen = (size_t)(colon - tok);
    for (size_t i = 0; i < sizeof(KINDS) / sizeof(KINDS[0]); i++) {
        if (strlen(KINDS[i].name) != tlen || strncasecmp(KINDS[i].name, tok, tlen) != 0)
            continue;
        change c = {KINDS[i].k, -1, NULL, NULL};
        char *val = strndup(colon + 1, len - tlen - 1);
        const char *p = val;
        if (*p == '"') {
            c.schema = quoted(&p);
            if (*p == '.') {
                p++;
                c.name = quoted(&p);
            }
        } else {
            c.id = strtoll(val, NULL, 10);
        }
        free(val);
        out->v = xrealloc(out->v, (out->n + 1) * sizeof(change));
        out->v[out->n++] = c;
        return;
    }
}

/* Splits a changes_made list at its unquoted commas. */
static void parse_list(changes *out, const char *list)
{
    if (!list)
        return;
    const char *start = list;
    int in_quotes = 0;
    for (const char *p = list;; p++) {
        if (!*p || (!in_quotes && *p == ',')) {
            if (p > start)
                parse_one(out, start, (size_t)(p - start));
            if (!*p)
                break;
            start = p + 1;
        } else if (*p == '"') {
            in_quotes = !in_quotes;
        }
    }
}

static void changes_free(changes *c)
{
    for (size_t i = 0; i < c->n; i++) {
        free(c->v[i].schema);
        free(c->v[i].name);
    }
    free(c->v);
}

static int has_id(const changes *c, kind k, int64_t id)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->v[i].k == k && c->v[i].id == id)
            return 1;
    return 0;
}

/* An entry of their created tables, views or macros named schema.name of
 * one of the kinds [k0, k1], or NULL. */
static const change *created(const changes *c, kind k0, kind k1, const char *schema,
                             const char *name)
{
    for (size_t i = 0; i < c->n; i++) {
        const change *e = &c->v[i];
        if (e->k >= k0 && e->k <= k1 && e->schema && strcasecmp(e->schema, schema) == 0 &&
            (!name || (e->name && strcasecmp(e->name, name) == 0)))
            return e;
    }
    return NULL;
}

static char *by_index(const char *action, int64_t id, const char *what)
{
    return xasprintf("Transaction conflict - attempting to %s with index \"%lld\" - but another "
                     "transaction has %s",
                     action, (long long)id, what);
}

static char *by_name(const char *action, const char *name, const char *what)
{
    return xasprintf("Transaction conflict - attempting to %s with name \"%s\" - but another "
                     "transaction has %s",
                     action, name, what);
}

/* Our k-tokens against their kinds: the first of ours found in theirs. */
static char *check_ids(const changes *ours, kind k, const changes *theirs, kind tk,
                       const char *action, const char *what)
{
    for (size_t i = 0; i < ours->n; i++)
        if (ours->v[i].k == k && has_id(theirs, tk, ours->v[i].id))
            return by_index(action, ours->v[i].id, what);
    return NULL;
}

static const char *type_word(kind k)
{
    return k == K_CREATED_VIEW           ? "view"
           : k == K_CREATED_SCALAR_MACRO ? "scalar"
           : k == K_CREATED_TABLE_MACRO  ? "table"
                                         : "table";
}

static const char *their_type_word(kind k)
{
    return k == K_CREATED_VIEW           ? "view"
           : k == K_CREATED_SCALAR_MACRO ? "scalar_macro"
           : k == K_CREATED_TABLE_MACRO  ? "table_macro"
                                         : "table";
}

/* Our creations of kinds [k0, k1] (macros: one kind; tables: tables and
 * views) against their dropped schemas and their creations of the same
 * kinds. */
static char *check_created(const changes *ours, kind k0, kind k1, const changes *theirs,
                           const lk_conflict_info *info)
{
    for (size_t i = 0; i < ours->n; i++) {
        const change *e = &ours->v[i];
        if (e->k < k0 || e->k > k1 || !e->schema || !e->name)
            continue;
        int64_t sid = info && info->schema_id ? info->schema_id(info->ctx, e->schema) : -1;
        if (sid >= 0 && has_id(theirs, K_DROPPED_SCHEMA, sid)) {
            char *action =
                xasprintf("create %s \"%s\" in schema \"%s\"", type_word(e->k), e->name, e->schema);
            char *m = by_index(action, sid, "dropped this schema");
            free(action);
            return m;
        }
        const change *o = created(theirs, k0, k1, e->schema, e->name);
        if (o)
            return xasprintf("Transaction conflict - attempting to create %s \"%s\" in schema "
                             "\"%s\" - but this %s has been created by another transaction already",
                             type_word(e->k), e->name, e->schema, their_type_word(o->k));
    }
    return NULL;
}

static int has_file(const int64_t *v, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == id)
            return 1;
    return 0;
}

int lk_conflict_needs_files(const char *const *ours, size_t nours, const char *theirs)
{
    changes o = {0}, t = {0};
    for (size_t i = 0; i < nours; i++)
        parse_list(&o, ours[i]);
    parse_list(&t, theirs);
    int needs = 0;
    for (size_t i = 0; i < o.n && !needs; i++)
        needs = o.v[i].k == K_DELETED && has_id(&t, K_DELETED, o.v[i].id);
    changes_free(&o);
    changes_free(&t);
    return needs;
}

/* One rule by table id: our `k` changes against their `tk` changes. */
typedef struct {
    kind k, tk;
    const char *action, *what;
} id_rule;

static const id_rule DROP_RULES[] = {
    {K_DROPPED_TABLE, K_DROPPED_TABLE, "drop table", "dropped it already"},
    {K_DROPPED_VIEW, K_DROPPED_VIEW, "drop view", "dropped it already"},
    {K_DROPPED_SCALAR_MACRO, K_DROPPED_SCALAR_MACRO, "drop macro", "dropped it already"},
    {K_DROPPED_TABLE_MACRO, K_DROPPED_TABLE_MACRO, "drop macro", "dropped it already"},
};

/* Inserts (files, then inlined rows), then deletes; before the data file
 * check. */
static const id_rule WRITE_RULES[] = {
    {K_INSERTED, K_DROPPED_TABLE, "insert into table", "dropped it"},
    {K_INSERTED, K_ALTERED_TABLE, "insert into table", "altered it"},
    {K_INSERTED, K_DELETED, "insert into table", "deleted from it"},
    {K_INSERTED, K_INLINED_DELETE, "insert into table", "deleted inlined data from it"},
    {K_INLINED_INSERT, K_DROPPED_TABLE, "insert into table", "dropped it"},
    {K_INLINED_INSERT, K_ALTERED_TABLE, "insert into table", "altered it"},
    {K_INLINED_INSERT, K_DELETED, "insert into table", "deleted from it"},
    {K_INLINED_INSERT, K_INLINED_DELETE, "insert into table", "deleted inlined data from it"},
    {K_DELETED, K_DROPPED_TABLE, "delete from table", "dropped it"},
    {K_DELETED, K_ALTERED_TABLE, "delete from table", "altered it"},
    {K_DELETED, K_MERGE, "delete from table", "compacted it"},
    {K_DELETED, K_REWRITE, "delete from table", "compacted it"},
    {K_DELETED, K_INSERTED, "delete from table", "inserted into it"},
    {K_DELETED, K_INLINED_INSERT, "delete from table", "inserted into it"},
};

/* Inlined deletes, flushes, compactions (merges, then rewrites), alters. */
static const id_rule LATE_RULES[] = {
    {K_INLINED_DELETE, K_DROPPED_TABLE, "delete from table", "dropped it"},
    {K_INLINED_DELETE, K_ALTERED_TABLE, "delete from table", "altered it"},
    {K_INLINED_DELETE, K_INLINED_DELETE, "delete from table", "deleted from it"},
    {K_INLINED_DELETE, K_FLUSH, "delete from table", "flushed the inlined data"},
    {K_INLINED_DELETE, K_INSERTED, "delete from table", "inserted into it"},
    {K_INLINED_DELETE, K_INLINED_INSERT, "delete from table", "inserted into it"},
    {K_FLUSH, K_DROPPED_TABLE, "flush inline data", "dropped it"},
    {K_FLUSH, K_INLINED_DELETE, "flush inline data", "deleted from it"},
    {K_FLUSH, K_FLUSH, "flush inline data", "flushed it"},
    {K_MERGE, K_DROPPED_TABLE, "compact table", "dropped it"},
    {K_MERGE, K_DELETED, "compact table", "deleted from it"},
    {K_MERGE, K_MERGE, "compact table", "compacted it"},
    {K_MERGE, K_REWRITE, "compact table", "compacted it"},
    {K_REWRITE, K_DROPPED_TABLE, "compact table", "dropped it"},
    {K_REWRITE, K_DELETED, "compact table", "deleted from it"},
    {K_REWRITE, K_MERGE, "compact table", "compacted it"},
    {K_REWRITE, K_REWRITE, "compact table", "compacted it"},
    {K_ALTERED_TABLE, K_DROPPED_TABLE, "alter table", "dropped it"},
    {K_ALTERED_TABLE, K_ALTERED_TABLE, "alter table", "altered it"},
    {K_ALTERED_VIEW, K_ALTERED_VIEW, "alter view", "altered it"},
};

/* The first rule of `r` (in order) that finds a conflict: its message. */
static char *check_rules(const changes *o, const changes *t, const id_rule *r, size_t n)
{
    char *m = NULL;
    for (size_t i = 0; i < n && !m; i++)
        m = check_ids(o, r[i].k, t, r[i].tk, r[i].action, r[i].what);
    return m;
}

/* Dropping a schema another dropped or created an entry in; creating a
 * schema another created. */
static char *schema_rules(const changes *o, const changes *t, const lk_conflict_info *info)
{
    for (size_t i = 0; i < o->n; i++) {
        if (o->v[i].k != K_DROPPED_SCHEMA)
            continue;
        if (has_id(t, K_DROPPED_SCHEMA, o->v[i].id))
            return by_index("drop schema", o->v[i].id, "dropped it already");
        const char *name =
            info && info->schema_name ? info->schema_name(info->ctx, o->v[i].id) : NULL;
        if (name && created(t, K_CREATED_TABLE, K_CREATED_VIEW, name, NULL))
            return by_name("drop schema", name, "created an entry in this schema");
    }
    for (size_t i = 0; i < o->n; i++) {
        const change *e = &o->v[i];
        if (e->k == K_CREATED_SCHEMA && e->schema)
            for (size_t k = 0; k < t->n; k++)
                if (t->v[k].k == K_CREATED_SCHEMA && t->v[k].schema &&
                    strcasecmp(t->v[k].schema, e->schema) == 0)
                    return by_name("create schema", e->schema,
                                   "created a schema with this name already");
    }
    return NULL;
}

#define NRULES(a) (sizeof(a) / sizeof((a)[0]))

/* The rules, in DuckLake's order; the first conflict's message or NULL. */
static char *rules(const changes *o, const changes *t, const lk_conflict_info *info)
{
    char *m = NULL;
    if ((m = check_rules(o, t, DROP_RULES, NRULES(DROP_RULES))) || (m = schema_rules(o, t, info)) ||
        (m = check_created(o, K_CREATED_TABLE_MACRO, K_CREATED_TABLE_MACRO, t, info)) ||
        (m = check_created(o, K_CREATED_SCALAR_MACRO, K_CREATED_SCALAR_MACRO, t, info)) ||
        (m = check_created(o, K_CREATED_TABLE, K_CREATED_VIEW, t, info)) ||
        (m = check_rules(o, t, WRITE_RULES, NRULES(WRITE_RULES))))
        return m;
    for (size_t i = 0; info && i < info->n_our_files; i++)
        if (has_file(info->their_files, info->n_their_files, info->our_files[i]))
            return by_index("delete from file", info->our_files[i], "deleted from it");
    return check_rules(o, t, LATE_RULES, NRULES(LATE_RULES));
}

int lk_conflict_find(char **msg, const char *const *ours, size_t nours, const char *theirs,
                     const lk_conflict_info *info)
{
    changes o = {0}, t = {0};
    for (size_t i = 0; i < nours; i++)
        parse_list(&o, ours[i]);
    parse_list(&t, theirs);
    /* the file rule applies only when both deleted from one table */
    lk_conflict_info local = info ? *info : (lk_conflict_info){0};
    int both_deleted = 0;
    for (size_t i = 0; i < o.n && !both_deleted; i++)
        both_deleted = o.v[i].k == K_DELETED && has_id(&t, K_DELETED, o.v[i].id);
    if (!both_deleted)
        local.n_our_files = 0;
    *msg = rules(&o, &t, &local);
    changes_free(&o);
    changes_free(&t);
    return *msg != NULL;
}

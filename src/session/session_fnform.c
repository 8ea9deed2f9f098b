/*
 * session_fnform.c — the catalog forms of DuckLake's functions (see
 * session_fnform.h). Reads no catalog rows: it only names the function.
 */
#include "session/session_fnform.h"

#include "lake/txn.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* DuckLake's table macros (its ducklake_default_functions.cpp): the name
 * in a lake's schemas, and whether the function takes the schema. */
static const struct {
    const char *name;
    const char *fn;
    int takes_schema;
} FORMS[] = {
    {"merge_adjacent_files", "ducklake_merge_adjacent_files", 0},
    {"set_option", "ducklake_set_option", 0},
    {"set_commit_message", "ducklake_set_commit_message", 0},
    {"options", "ducklake_options", 0},
    {"settings", "ducklake_settings", 0},
    {"current_snapshot", "ducklake_current_snapshot", 0},
    {"last_committed_snapshot", "ducklake_last_committed_snapshot", 0},
    {"snapshots", "ducklake_snapshots", 0},
    {"table_info", "ducklake_table_info", 0},
    {"table_changes", "ducklake_table_changes", 1},
    {"table_deletions", "ducklake_table_deletions", 1},
    {"table_insertions", "ducklake_table_insertions", 1},
};

static int form_index(const char *name)
{
    for (size_t k = 0; k < sizeof(FORMS) / sizeof(FORMS[0]); k++)
        if (strcasecmp(FORMS[k].name, name) == 0)
            return (int)k;
    return -1;
}

/* The schema of the USE'd lake `l` named `name`, if it has one (with the
 * catalog's spelling). */
static const char *lake_schema(lk_lake *l, const char *name)
{
    lk_schema *sc = lk_catalog_schema((lk_catalog *)lk_txn_catalog(l), name);
    return sc ? sc->name : NULL;
}

/* Resolves the qualifier parts (all but the function name) to a lake and
 * schema, as DuckDB binds a.f() / a.b.f() / f(). */
static lk_lake *qualifier(const char **schema, tarn_session *s, const qname *q)
{
    lk_lake *l = NULL;
    lk_lake *used = s->use_lake ? session_lake(s, s->use_lake) : NULL;
    if (q->n == 3 && (l = session_lake(s, q->parts[0]))) {
        *schema = q->parts[1];
    } else if (q->n == 2 && (l = session_lake(s, q->parts[0]))) {
        *schema = "main";
    } else if (q->n == 2 && used && (*schema = lake_schema(used, q->parts[0]))) {
        l = used;
    } else if (q->n == 1 && used) {
        l = used;
        *schema = s->use_schema ? s->use_schema : "main";
    }
    return l;
}

int session_fnform_at(session_fnform *f, tarn_session *s, const sql_tokens *tk, size_t i)
{
    qname q;
    memset(f, 0, sizeof(*f));
    if (!s->lakes || (i > 0 && sql_tok_is_op(&tk->toks[i - 1], ".")) || !session_qname(tk, i, &q) ||
        q.end >= tk->n || !sql_tok_is_op(&tk->toks[q.end], "("))
        return 0;
    int k = form_index(q.parts[q.n - 1]);
    if (k < 0 || tk->toks[q.end - 1].type != SQL_TOK_IDENT)
        return 0;
    f->lake = qualifier(&f->schema, s, &q);
    if (!f->lake)
        return 0;
    f->fn = FORMS[k].fn;
    f->takes_schema = FORMS[k].takes_schema;
    f->open = q.end;
    return 1;
}

void session_fnform_args(const session_fnform *f, lk_args *a)
{
    size_t add = f->takes_schema ? 2 : 1;
    a->pos = xrealloc(a->pos, (a->npos + add) * sizeof(char *));
    memmove(a->pos + add, a->pos, a->npos * sizeof(char *));
    a->pos_sql = xrealloc(a->pos_sql, (a->npos + add) * sizeof(char *));
    memmove(a->pos_sql + add, a->pos_sql, a->npos * sizeof(char *));
    a->pos[0] = xstrdup(f->lake->alias);
    a->pos_sql[0] = NULL; /* the names tarn adds have no SQL of the user's */
    if (f->takes_schema) {
        a->pos[1] = xstrdup(f->schema);
        a->pos_sql[1] = NULL;
    }
    a->npos += add;
}

/*
 * session_facts.c — what the layers above ask of a lake's catalog without
 * naming its tables: the content version of every table, the object a
 * catalog id names, whether a table exists and is partitioned (see
 * include/tarn/session.h).
 *
 * tarn_session_catalog_query reads tarn's own tables in the catalog
 * database.
 *
 * The answers come from the lake handle's committed catalog model (at the
 * session's snapshot) or from SQL the lake layer builds (lake/info.h), so
 * that a second catalog backend changes nothing above the session.
 */
#include "lake/info.h"
#include "lake/lake.h"
#include "session/session_int.h"
#include "tarn/error.h"
#include "tarn/session.h"
#include "util/buf.h"

#include <stdlib.h>
#include <string.h>

static lk_lake *facts_lake(tarn_session *s, const char *alias)
{
    lk_lake *l = session_lake(s, alias);
    if (!l)
        tarn_error_set(TARN_ENOTFOUND, "no lake is attached as \"%s\"", alias);
    return l;
}

int tarn_session_table_versions(tarn_session *s, const char *alias, char ***keys,
                                int64_t **versions, size_t *n)
{
    *keys = NULL;
    *versions = NULL;
    *n = 0;
    lk_lake *l = facts_lake(s, alias);
    if (!l)
        return TARN_ENOTFOUND;
    duck_table t;
    int rc = lk_info_table_versions(&t, l, s->con);
    if (rc)
        return rc;
    *keys = xcalloc(t.nrows ? t.nrows : 1, sizeof(char *));
    *versions = xcalloc(t.nrows ? t.nrows : 1, sizeof(int64_t));
    for (size_t i = 0; i < t.nrows; i++) {
        (*keys)[i] = duck_table_dup(&t, i, 0);
        (*versions)[i] = duck_table_int64(&t, i, 1);
    }
    *n = t.nrows;
    duck_table_free(&t);
    return 0;
}

static char *lower_copy(const char *s)
{
    char *d = xstrdup(s);
    for (char *p = d; *p; p++)
        if (*p >= 'A' && *p <= 'Z')
            *p = (char)(*p - 'A' + 'a');
    return d;
}

/* The table or view with catalog id `id` in catalog c, as kind, schema id
 * and name; 0 when none. */
static int find_relation(const lk_catalog *c, int64_t id, const char **kind, int64_t *schema_id,
                         const char **name)
{
    const lk_table *t = lk_catalog_table_by_id(c, id);
    if (t) {
        *kind = "table";
        *schema_id = t->schema_id;
        *name = t->name;
        return 1;
    }
    for (size_t i = 0; i < c->nviews; i++)
        if (c->views[i].id == id) {
            *kind = "view";
            *schema_id = c->views[i].schema_id;
            *name = c->views[i].name;
            return 1;
        }
    return 0;
}

int tarn_session_object_name(tarn_session *s, const char *alias, int64_t id, int schema_only,
                             char **kind, char **schema, char **name)
{
    *kind = *schema = *name = NULL;
    lk_lake *l = facts_lake(s, alias);
    if (!l)
        return TARN_ENOTFOUND;
    lk_catalog *c = &l->cat;
    const char *k = "schema", *n = NULL;
    int64_t schema_id = id;
    if (!schema_only && !find_relation(c, id, &k, &schema_id, &n))
        return TARN_ENOTFOUND;
    const lk_schema *sc = lk_catalog_schema_by_id(c, schema_id);
    if (!sc)
        return TARN_ENOTFOUND;
    *kind = xstrdup(k);
    *schema = lower_copy(sc->name);
    *name = n ? lower_copy(n) : NULL;
    return 0;
}

int tarn_session_table_partitioned(tarn_session *s, const char *alias, const char *schema,
                                   const char *table, int *out)
{
    *out = 0;
    lk_lake *l = facts_lake(s, alias);
    if (!l)
        return TARN_ENOTFOUND;
    const lk_table *t = lk_catalog_table_named(&l->cat, schema, table);
    *out = t && t->partition_id >= 0;
    return 0;
}

int tarn_session_table_exists(tarn_session *s, const char *alias, const char *schema,
                              const char *table, int *out)
{
    *out = 0;
    lk_lake *l = session_lake(s, alias);
    if (!l)
        return 0; /* no such lake attached: no such table either */
    *out = lk_catalog_table_named(&l->cat, schema, table) != NULL;
    return 0;
}

static void push_object(char ***names, int **kinds, size_t *n, size_t *cap, char *name, int kind)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 32;
        *names = xrealloc(*names, *cap * sizeof(char *));
        *kinds = xrealloc(*kinds, *cap * sizeof(int));
    }
    (*names)[*n] = name;
    (*kinds)[(*n)++] = kind;
}

int tarn_session_lake_objects(tarn_session *s, const char *alias, char ***names, int **kinds,
                              size_t *n)
{
    *names = NULL;
    *kinds = NULL;
    *n = 0;
    lk_lake *l = facts_lake(s, alias);
    if (!l)
        return TARN_ENOTFOUND;
    const lk_catalog *c = &l->cat;
    size_t cap = 0;
    for (size_t i = 0; i < c->nschemas; i++)
        push_object(names, kinds, n, &cap, lower_copy(c->schemas[i].name), TARN_LAKE_SCHEMA);
    for (size_t i = 0; i < c->ntables + c->nviews; i++) {
        int view = i >= c->ntables;
        int64_t schema_id = view ? c->views[i - c->ntables].schema_id : c->tables[i].schema_id;
        const char *name = view ? c->views[i - c->ntables].name : c->tables[i].name;
        const lk_schema *sc = lk_catalog_schema_by_id((lk_catalog *)c, schema_id);
        if (!sc)
            continue;
        char *k = xasprintf("%s.%s", sc->name, name);
        char *lk = lower_copy(k);
        free(k);
        push_object(names, kinds, n, &cap, lk, view ? TARN_LAKE_VIEW : TARN_LAKE_TABLE);
    }
    return 0;
}

int tarn_session_catalog_query(tarn_session *s, const char *alias, const char *sql,
                               const tarn_sink *sink)
{
    lk_lake *l = facts_lake(s, alias);
    if (!l)
        return TARN_ENOTFOUND;
    duck_table t;
    int rc = lk_catdb_query(&t, &l->db, s->con, sql);
    if (rc)
        return rc;
    if (sink && sink->begin)
        sink->begin(sink->ctx, t.ncols, (const char *const *)t.names);
    for (size_t i = 0; sink && sink->row && i < t.nrows; i++)
        sink->row(sink->ctx, (const char *const *)&t.cells[i * t.ncols]);
    if (sink && sink->end)
        sink->end(sink->ctx);
    duck_table_free(&t);
    return 0;
}

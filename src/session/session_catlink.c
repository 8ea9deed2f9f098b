/*
 * session_catlink.c — links to a lake's catalog database for tarn's shared
 * tables (include/tarn/session.h, lake/catlink.h): the session only finds
 * the lake; the link then stands on its own.
 */
#include "lake/catlink.h"
#include "session/session_int.h"
#include "tarn/error.h"

#include <stdlib.h>

struct tarn_catlink {
    lk_catlink *l;
};

static int find(lk_lake **out, tarn_session *s, const char *alias)
{
    *out = session_lake(s, alias);
    if (!*out)
        return tarn_error_set(TARN_ENOTFOUND, "no lake is attached as \"%s\"", alias);
    return 0;
}

int tarn_session_catalog_shared(tarn_session *s, const char *alias, int *out)
{
    lk_lake *l;
    int rc = find(&l, s, alias);
    *out = !rc && lk_catdb_is_postgres(&l->db);
    return rc;
}

int tarn_catlink_open(tarn_catlink **out, tarn_session *s, const char *alias)
{
    *out = NULL;
    lk_lake *l;
    int rc = find(&l, s, alias);
    if (rc)
        return rc;
    lk_catlink *link;
    rc = lk_catlink_open(&link, &l->db);
    if (rc)
        return rc;
    *out = xcalloc(1, sizeof(**out));
    (*out)->l = link;
    return 0;
}

void tarn_catlink_close(tarn_catlink *l)
{
    if (!l)
        return;
    lk_catlink_close(l->l);
    free(l);
}

int tarn_catlink_exec(tarn_catlink *l, const char *sql, const tarn_sink *sink)
{
    if (!sink || !sink->row) {
        int64_t n = -1;
        int rc = lk_catlink_exec(l->l, sql, &n);
        if (!rc && sink && sink->count)
            sink->count(sink->ctx, n);
        return rc;
    }
    duck_table t;
    int rc = lk_catlink_query(&t, l->l, sql);
    if (rc)
        return rc;
    if (sink->begin)
        sink->begin(sink->ctx, t.ncols, (const char *const *)t.names);
    for (size_t i = 0; i < t.nrows; i++)
        sink->row(sink->ctx, (const char *const *)&t.cells[i * t.ncols]);
    if (sink->end)
        sink->end(sink->ctx);
    duck_table_free(&t);
    return 0;
}

int tarn_session_catch_up(tarn_session *s, const char *alias)
{
    lk_lake *l;
    int rc = find(&l, s, alias);
    return rc ? rc : lk_lake_catch_up(l, s->con);
}

char *tarn_session_commit_snapshot_sql(const char *cat, int64_t provisional)
{
    return lk_catlink_commit_snapshot_sql(cat, provisional);
}

/*
 * weblake.c — the web view's per-request read of the project and its lake
 * (see weblake.h).
 */
#include "web/weblake.h"

#include "project/attach.h"
#include "project/load.h"
#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

int web_is_lock_error(const char *msg)
{
    return msg && strstr(msg, "Could not set lock on file") != NULL;
}

int web_lake_open(web_lake *l, web_reply *r)
{
    memset(l, 0, sizeof(*l));
    if (tarn_session_open(&l->s) != 0) {
        reply_error(r, 500, "%s", tarn_error_last());
        tarn_error_clear();
        return -1;
    }
    if (project_load(&l->p, ".", l->s) != 0) {
        reply_error(r, 500, "the project does not load: %s", tarn_error_last());
        tarn_error_clear();
        web_lake_close(l);
        return -1;
    }
    if (!project_lake_exists(l->p))
        return 0;
    if (project_attach_read_only(l->p, l->s) != 0) {
        if (web_is_lock_error(tarn_error_last()))
            reply_busy(r, "the lake is busy: a build holds its catalog");
        else
            reply_error(r, 500, "%s", tarn_error_last());
        tarn_error_clear();
        web_lake_close(l);
        return -1;
    }
    l->cat = tarn_session_catalog_prefix(l->s, l->p->lake_alias);
    l->has_runs = l->cat && query_catalog_columns(l->s, l->cat, "tarn_run", NULL) > 0 &&
                  query_catalog_columns(l->s, l->cat, "tarn_model_run", NULL) > 0;
    return 0;
}

void web_lake_close(web_lake *l)
{
    project_free(l->p);
    if (l->s)
        tarn_session_close(l->s);
    memset(l, 0, sizeof(*l));
}

void web_records_table(char **out, const web_lake *l, const char *table)
{
    tarn_buf b = {0};
    quote_prefixed(&b, l->cat, table);
    *out = buf_detach(&b);
}

static json_t *cell_json(const char *cell, char type)
{
    if (!cell)
        return json_null();
    switch (type) {
    case 'i': {
        char *end = NULL;
        long long v = strtoll(cell, &end, 10);
        return end && *end == '\0' ? json_integer(v) : json_string(cell);
    }
    case 'f': {
        char *end = NULL;
        double v = strtod(cell, &end);
        return end && *end == '\0' ? json_real(v) : json_string(cell);
    }
    case 'j': {
        json_t *j = json_loads(cell, JSON_DECODE_ANY, NULL);
        return j ? j : json_string(cell);
    }
    default: {
        /* json_string refuses bytes that are not UTF-8: those show as '?' */
        json_t *j = json_string(cell);
        if (j)
            return j;
        char *copy = xstrdup(cell);
        for (char *c = copy; *c; c++)
            if ((unsigned char)*c >= 0x80)
                *c = '?';
        j = json_string(copy);
        free(copy);
        return j;
    }
    }
}

int web_rows(json_t **out, tarn_session *s, const char *sql, const char *types)
{
    qrows q;
    int rc = query_rows(&q, s, sql);
    if (rc != 0)
        return rc;
    size_t nt = strlen(types);
    json_t *arr = json_array();
    for (size_t i = 0; i < q.nrows; i++) {
        json_t *o = json_object();
        for (size_t c = 0; c < q.ncols; c++)
            json_object_set_new(o, q.names[c],
                                cell_json(qrows_get(&q, i, c), c < nt ? types[c] : 's'));
        json_array_append_new(arr, o);
    }
    qrows_free(&q);
    *out = arr;
    return 0;
}

int web_row(json_t **out, tarn_session *s, const char *sql, const char *types)
{
    json_t *rows = NULL;
    int rc = web_rows(&rows, s, sql, types);
    if (rc != 0)
        return rc;
    *out = json_array_size(rows) ? json_incref(json_array_get(rows, 0)) : NULL;
    json_decref(rows);
    return 0;
}

const tarn_model *web_model(const web_lake *l, const char *name)
{
    for (size_t i = 0; i < l->p->nmodels; i++)
        if (strcmp(l->p->models[i].name, name) == 0)
            return &l->p->models[i];
    return NULL;
}

int web_latest_snapshot(web_lake *l, int64_t *out)
{
    if (!l->cat)
        return tarn_error_set(TARN_ENOTFOUND, "lake \"%s\" has not been built yet",
                              l->p->lake_alias);
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT max(snapshot_id) FROM ducklake_snapshots(");
    quote_literal(&sql, l->p->lake_alias);
    buf_putc(&sql, ')');
    int rc = query_int64(out, l->s, buf_cstr(&sql));
    buf_free(&sql);
    return rc;
}

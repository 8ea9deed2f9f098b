/*
 * api_version.c — a model's table at a version of the lake:
 *
 *   preview?version=N[&limit=R]  its first rows AT (VERSION => N), the
 *                                clause and the query that reproduce them
 *   schema?version=N             its columns and types at N
 *   changes?from=A&to=B[&limit=R]  what changed after A up to B: the counts
 *                                of inserted, deleted and updated rows and
 *                                the first rows of ducklake_table_changes()
 *
 * A version the lake does not have, or at which the table did not exist,
 * is a 404 saying so; a version that is no number a 400.
 */
#include "web/api.h"
#include "web/weblake.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* The version argument `name`, checked against the lake's snapshots. */
static int version_arg(long long *out, web_reply *r, web_lake *l, const web_req *q,
                       const char *name)
{
    const char *a = q->arg(q, name);
    if (!a) {
        reply_error(r, 400, "which version? add ?%s=N (a snapshot id of lake \"%s\")", name,
                    l->p->lake_alias);
        return -1;
    }
    char *what = xasprintf("%s (a snapshot id)", name);
    int rc = api_int_arg(out, r, a, what);
    free(what);
    if (rc != 0)
        return -1;
    int64_t latest = -1;
    if (web_latest_snapshot(l, &latest) != 0) {
        tarn_error_clear();
        latest = -1;
    }
    if (*out > latest) {
        if (latest < 0)
            reply_error(r, 404, "lake \"%s\" has no snapshots yet: nothing was built",
                        l->p->lake_alias);
        else
            reply_error(r, 404, "lake \"%s\" has no version %lld (its versions are 0 to %lld)",
                        l->p->lake_alias, *out, (long long)latest);
        return -1;
    }
    return 0;
}

static json_t *rows_json(const qrows *rows)
{
    json_t *cols = json_array(), *data = json_array();
    for (size_t c = 0; c < rows->ncols; c++)
        json_array_append_new(cols, json_string(rows->names[c]));
    for (size_t i = 0; i < rows->nrows; i++) {
        json_t *row = json_array();
        for (size_t c = 0; c < rows->ncols; c++) {
            const char *cell = qrows_get(rows, i, c);
            json_t *v = cell ? json_string(cell) : json_null();
            json_array_append_new(row, v ? v : json_string("(not UTF-8)"));
        }
        json_array_append_new(data, row);
    }
    return json_pack("{s:o,s:o}", "columns", cols, "rows", data);
}

/* A failed read of the table at a version: the table did not exist then
 * (404), or something else broke (500). */
static void read_failed(web_reply *r, const web_lake *l, const tarn_model *m, long long v)
{
    if (tarn_error_code() == TARN_ENOTFOUND || strstr(tarn_error_last(), "does not exist") ||
        strstr(tarn_error_last(), "not exist"))
        reply_error(r, 404, "%s did not exist at version %lld of lake \"%s\"", m->name, v,
                    l->p->lake_alias);
    else
        reply_error(r, 500, "reading %s at version %lld: %s", m->name, v, tarn_error_last());
    tarn_error_clear();
}

static void preview(web_reply *r, web_lake *l, const web_req *q, const tarn_model *m)
{
    long long v, limit = 50;
    if (version_arg(&v, r, l, q, "version") != 0)
        return;
    const char *a = q->arg(q, "limit");
    if (a && api_int_arg(&limit, r, a, "limit") != 0)
        return;
    tarn_buf from = {0}, sql = {0};
    quote_qualified(&from, l->p->lake_alias, m->schema, m->table);
    buf_printf(&from, " AT (VERSION => %lld)", v);
    buf_printf(&sql, "SELECT * FROM %s LIMIT %lld", buf_cstr(&from), limit);
    qrows rows;
    int64_t total = 0;
    char *count = xasprintf("SELECT count(*) FROM %s", buf_cstr(&from));
    if (query_rows(&rows, l->s, buf_cstr(&sql)) != 0) {
        read_failed(r, l, m, v);
    } else {
        if (query_int64(&total, l->s, count) != 0) {
            tarn_error_clear();
            total = -1;
        }
        json_t *o = rows_json(&rows);
        qrows_free(&rows);
        char *clause = xasprintf("AT (VERSION => %lld)", v);
        char *query = xasprintf("SELECT * FROM %s", buf_cstr(&from));
        json_object_set_new(o, "version", json_integer(v));
        json_object_set_new(o, "clause", json_string(clause));
        json_object_set_new(o, "query", json_string(query));
        json_object_set_new(o, "total_rows", total >= 0 ? json_integer(total) : json_null());
        json_object_set_new(o, "limit", json_integer(limit));
        free(clause);
        free(query);
        reply_json(r, 200, o);
    }
    free(count);
    buf_free(&from);
    buf_free(&sql);
}

static void schema(web_reply *r, web_lake *l, const web_req *q, const tarn_model *m)
{
    long long v;
    if (version_arg(&v, r, l, q, "version") != 0)
        return;
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT column_name AS name, column_type AS type, \"null\" = 'YES' AS nullable "
                   "FROM (DESCRIBE SELECT * FROM ");
    quote_qualified(&sql, l->p->lake_alias, m->schema, m->table);
    buf_printf(&sql, " AT (VERSION => %lld))", v);
    json_t *cols = NULL;
    if (web_rows(&cols, l->s, buf_cstr(&sql), "sss") != 0) {
        read_failed(r, l, m, v);
    } else {
        size_t i;
        json_t *c;
        json_array_foreach(cols, i, c)
        {
            const char *n = json_string_value(json_object_get(c, "nullable"));
            json_object_set_new(c, "nullable", json_boolean(n && strcmp(n, "true") == 0));
        }
        reply_json(r, 200, json_pack("{s:I,s:o}", "version", (json_int_t)v, "columns", cols));
    }
    buf_free(&sql);
}

static void changes_sql(tarn_buf *b, const web_lake *l, const tarn_model *m, long long from,
                        long long to)
{
    buf_puts(b, "ducklake_table_changes(");
    quote_literal(b, l->p->lake_alias);
    buf_puts(b, ", ");
    quote_literal(b, m->schema);
    buf_puts(b, ", ");
    quote_literal(b, m->table);
    buf_printf(b, ", %lld, %lld)", from + 1, to);
}

static void changes(web_reply *r, web_lake *l, const web_req *q, const tarn_model *m)
{
    long long from, to, limit = 100;
    if (version_arg(&from, r, l, q, "from") != 0 || version_arg(&to, r, l, q, "to") != 0)
        return;
    const char *a = q->arg(q, "limit");
    if (a && api_int_arg(&limit, r, a, "limit") != 0)
        return;
    if (from >= to) {
        reply_error(r, 400, "from (%lld) must be an earlier version than to (%lld)", from, to);
        return;
    }
    tarn_buf feed = {0}, sql = {0}, counts = {0};
    changes_sql(&feed, l, m, from, to);
    buf_printf(&sql, "SELECT * FROM %s ORDER BY snapshot_id, rowid, change_type LIMIT %lld",
               buf_cstr(&feed), limit);
    buf_printf(&counts,
               "SELECT count(*) FILTER (change_type = 'insert') AS inserted, count(*) FILTER "
               "(change_type = 'delete') AS deleted, count(*) FILTER (change_type = "
               "'update_postimage') AS updated FROM %s",
               buf_cstr(&feed));
    qrows rows;
    json_t *c = NULL;
    if (web_row(&c, l->s, buf_cstr(&counts), "iii") != 0 ||
        query_rows(&rows, l->s, buf_cstr(&sql)) != 0) {
        json_decref(c);
        read_failed(r, l, m, from + 1);
    } else {
        json_t *o = rows_json(&rows);
        qrows_free(&rows);
        json_object_set_new(o, "from", json_integer(from));
        json_object_set_new(o, "to", json_integer(to));
        json_object_set_new(o, "counts", c);
        json_object_set_new(o, "limit", json_integer(limit));
        reply_json(r, 200, o);
    }
    buf_free(&feed);
    buf_free(&sql);
    buf_free(&counts);
}

void api_version(web_reply *r, const web_req *q, const char *name, const char *what)
{
    web_lake l;
    if (web_lake_open(&l, r) != 0)
        return;
    const tarn_model *m = web_model(&l, name);
    if (!m)
        reply_error(r, 404, "no model %s in the project", name);
    else if (strcmp(what, "preview") == 0)
        preview(r, &l, q, m);
    else if (strcmp(what, "schema") == 0)
        schema(r, &l, q, m);
    else
        changes(r, &l, q, m);
    web_lake_close(&l);
}

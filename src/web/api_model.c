/*
 * api_model.c — GET /api/models/NAME: one model of the project (its file,
 * strategy, schedule, SQL, the models it reads and that read it), its
 * builds newest first (tarn_model_run), and its history: every snapshot a
 * build of it committed (version, time, commit message, rows written, why
 * it ran), from tarn_model_run joined with ducklake_snapshots().
 */
#include "web/api.h"
#include "web/weblake.h"

#include "project/annot.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

static json_t *names(const tarn_project *p, const model_edge *up, size_t nup, const size_t *down,
                     size_t ndown)
{
    json_t *a = json_array();
    for (size_t i = 0; i < nup; i++)
        json_array_append_new(a, json_string(p->models[up[i].model].name));
    for (size_t i = 0; i < ndown; i++)
        json_array_append_new(a, json_string(p->models[down[i]].name));
    return a;
}

static json_t *info(const web_lake *l, const tarn_model *m)
{
    tarn_buf table = {0};
    quote_qualified(&table, l->p->lake_alias, m->schema, m->table);
    json_t *o =
        json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "name", m->name, "schema", m->schema, "table",
                  m->table, "path", m->path, "strategy", annot_strategy_label(&m->annot), "sql",
                  m->text, "relation", buf_cstr(&table));
    buf_free(&table);
    json_object_set_new(o, "schedule",
                        m->annot.schedule ? json_string(m->annot.schedule) : json_null());
    json_object_set_new(o, "upstream", names(l->p, m->up, m->nup, NULL, 0));
    json_object_set_new(o, "downstream", names(l->p, NULL, 0, m->down, m->ndown));
    return o;
}

static int builds(json_t **out, web_lake *l, const tarn_model *m)
{
    char *t = NULL;
    web_records_table(&t, l, "tarn_model_run");
    tarn_buf sql = {0};
    buf_printf(&sql,
               "SELECT run_id, status, snapshot_id AS snapshot, rows_written AS \"rows\", "
               "run_reason, round(duration_ms) AS duration_ms, error, note, tests, "
               "strftime(finished_at, '%%Y-%%m-%%dT%%H:%%M:%%SZ') AS finished_at FROM %s WHERE "
               "model = ",
               t);
    quote_literal(&sql, m->name);
    buf_puts(&sql, " AND coalesce(note, '') <> 'unchanged' ORDER BY run_id DESC, started_at DESC "
                   "LIMIT 200");
    int rc = web_rows(out, l->s, buf_cstr(&sql), "isiisfssjs");
    buf_free(&sql);
    free(t);
    return rc;
}

static int snapshots(json_t **out, web_lake *l, const tarn_model *m)
{
    char *t = NULL;
    web_records_table(&t, l, "tarn_model_run");
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT b.snapshot_id AS version, strftime(s.snapshot_time, "
                   "'%Y-%m-%dT%H:%M:%SZ') AS time, s.commit_message, b.rows_written AS \"rows\", "
                   "b.rows_deleted, b.run_reason AS reason, b.run_id FROM ");
    buf_puts(&sql, t);
    buf_puts(&sql, " b JOIN ducklake_snapshots(");
    quote_literal(&sql, l->p->lake_alias);
    buf_puts(&sql,
             ") s ON s.snapshot_id = b.snapshot_id WHERE b.status = 'success' AND b.model = ");
    quote_literal(&sql, m->name);
    buf_puts(&sql, " ORDER BY b.snapshot_id DESC");
    int rc = web_rows(out, l->s, buf_cstr(&sql), "isssiisi");
    buf_free(&sql);
    free(t);
    return rc;
}

void api_model(web_reply *r, const web_req *q, const char *name)
{
    (void)q;
    web_lake l;
    if (web_lake_open(&l, r) != 0)
        return;
    const tarn_model *m = web_model(&l, name);
    if (!m) {
        reply_error(r, 404, "no model %s in the project", name);
        web_lake_close(&l);
        return;
    }
    json_t *o = info(&l, m), *b = NULL, *s = NULL;
    int64_t latest = -1;
    int rc = 0;
    if (l.has_runs) {
        rc = builds(&b, &l, m);
        if (rc == 0)
            rc = snapshots(&s, &l, m);
    }
    if (l.cat && rc == 0 && web_latest_snapshot(&l, &latest) != 0)
        tarn_error_clear();
    if (rc != 0) {
        reply_error(r, 500, "%s", tarn_error_last());
        tarn_error_clear();
        json_decref(o);
        json_decref(b);
        json_decref(s);
    } else {
        json_object_set_new(o, "builds", b ? b : json_array());
        json_object_set_new(o, "snapshots", s ? s : json_array());
        json_object_set_new(o, "latest_snapshot", latest >= 0 ? json_integer(latest) : json_null());
        reply_json(r, 200, o);
    }
    web_lake_close(&l);
}

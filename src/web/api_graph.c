/*
 * api_graph.c — GET /api/graph: every model of the project as a node (its
 * strategy, schedule, tests, the last build's status, rows now in its
 * table, age of its last good build) and the edges between them: "data"
 * for a model read by another, "test" for a relationships data test's
 * ordering edge (the tested model needs the referenced one built first,
 * but does not read it). Reads tarn_model_run.
 */
#include "web/api.h"
#include "web/weblake.h"

#include "project/annot.h"
#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* The last build of each model (not counting those skipped as unchanged)
 * and its last successful one, keyed by model name. */
static json_t *last_builds(web_lake *l)
{
    json_t *by_model = json_object();
    if (!l->has_runs)
        return by_model;
    char *t = NULL;
    web_records_table(&t, l, "tarn_model_run");
    char *sql = xasprintf(
        "SELECT model, status, run_id, error, "
        "(SELECT snapshot_id FROM %s g WHERE g.model = m.model AND g.status = 'success' AND "
        "g.snapshot_id IS NOT NULL ORDER BY run_id DESC LIMIT 1) AS snapshot, "
        "(SELECT CAST(epoch(now()) - epoch(finished_at) AS BIGINT) FROM %s g WHERE g.model = "
        "m.model AND g.status = 'success' ORDER BY run_id DESC LIMIT 1) AS age_s "
        "FROM (SELECT *, row_number() OVER (PARTITION BY model ORDER BY run_id DESC, started_at "
        "DESC) AS rn FROM %s WHERE coalesce(note, '') <> 'unchanged') m WHERE rn = 1",
        t, t, t);
    json_t *rows = NULL;
    if (web_rows(&rows, l->s, sql, "ssisii") == 0) {
        size_t i;
        json_t *row;
        json_array_foreach(rows, i, row)
        {
            json_object_set(by_model, json_string_value(json_object_get(row, "model")), row);
        }
        json_decref(rows);
    } else {
        tarn_error_clear();
    }
    free(sql);
    free(t);
    return by_model;
}

/* Rows in the model's table now; null when it has no table (not built). */
static json_t *table_rows(web_lake *l, const tarn_model *m)
{
    if (!l->cat)
        return json_null();
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT count(*) FROM ");
    quote_qualified(&sql, l->p->lake_alias, m->schema, m->table);
    int64_t n = 0;
    int rc = query_int64(&n, l->s, buf_cstr(&sql));
    buf_free(&sql);
    if (rc != 0) {
        tarn_error_clear();
        return json_null();
    }
    return json_integer(n);
}

static json_t *node(web_lake *l, const tarn_model *m, json_t *builds)
{
    json_t *b = json_object_get(builds, m->name);
    json_t *o = json_pack("{s:s,s:s,s:s,s:i}", "name", m->name, "path", m->path, "strategy",
                          annot_strategy_label(&m->annot), "tests", (json_int_t)m->annot.ntests);
    json_object_set_new(o, "schedule",
                        m->annot.schedule ? json_string(m->annot.schedule) : json_null());
    json_object_set_new(o, "status", b ? json_incref(json_object_get(b, "status")) : json_null());
    json_object_set_new(o, "run_id", b ? json_incref(json_object_get(b, "run_id")) : json_null());
    json_object_set_new(o, "error", b ? json_incref(json_object_get(b, "error")) : json_null());
    json_object_set_new(o, "snapshot",
                        b ? json_incref(json_object_get(b, "snapshot")) : json_null());
    json_object_set_new(o, "age_s", b ? json_incref(json_object_get(b, "age_s")) : json_null());
    json_object_set_new(o, "rows", table_rows(l, m));
    return o;
}

static json_t *edges(const tarn_project *p)
{
    json_t *a = json_array();
    for (size_t i = 0; i < p->nmodels; i++) {
        const tarn_model *m = &p->models[i];
        for (size_t u = 0; u < m->nup; u++)
            json_array_append_new(a,
                                  json_pack("{s:s,s:s,s:s}", "from", p->models[m->up[u].model].name,
                                            "to", m->name, "kind", "data"));
        for (size_t t = 0; t < m->annot.ntests; t++) {
            const data_test *dt = &m->annot.tests[t];
            if (dt->kind != DT_RELATIONSHIPS)
                continue;
            long ref = project_find_model(p, dt->ref_schema, dt->ref_table);
            if (ref < 0 || (size_t)ref == i)
                continue;
            json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "from", p->models[ref].name, "to",
                                               m->name, "kind", "test"));
        }
    }
    return a;
}

void api_graph(web_reply *r, const web_req *q)
{
    (void)q;
    web_lake l;
    if (web_lake_open(&l, r) != 0)
        return;
    json_t *builds = last_builds(&l);
    json_t *nodes = json_array();
    for (size_t i = 0; i < l.p->nmodels; i++)
        json_array_append_new(nodes, node(&l, &l.p->models[i], builds));
    json_decref(builds);
    json_t *o = json_pack("{s:s,s:b,s:o,s:o}", "lake", l.p->lake_alias, "built", l.cat != NULL,
                          "nodes", nodes, "edges", edges(l.p));
    web_lake_close(&l);
    reply_json(r, 200, o);
}

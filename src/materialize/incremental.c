/*
 * incremental.c — the incremental strategy (`-- materialize incremental
 * watermark=col [key=…]`): each build writes only the new slice of the
 * query's rows.
 *
 * The covered-through mark is max(col) in the table as it stands (none on
 * the first build, or with `tarn run --full-refresh`). The model sees it
 * as {watermark}: a typed literal, CAST('…' AS <col's type>), or NULL
 * when there is none — `WHERE {watermark} IS NULL OR ts > {watermark}`.
 * A model that does not use {watermark} has its rows filtered to col >
 * mark by tarn, so it is correct either way; a model that does use it
 * filters itself (and may look back, e.g. for late rows merged by key).
 * The new rows are appended, or merged by key= (the merge strategy's
 * steps, duplicate keys refused). The marks before and after are in the
 * snapshot's extra info and the run record.
 */
#include "materialize/codegen.h"
#include "materialize/model_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int uses_placeholder(const tarn_model *m)
{
    for (size_t i = 0; i < m->body.n; i++)
        if (m->body.items[i].nwm)
            return 1;
    return 0;
}

/* A type name as DuckDB's typeof() prints it (TIMESTAMP WITH TIME ZONE,
 * DECIMAL(18,3)…): spliced after CAST … AS only when it is that simple. */
static int plain_type_name(const char *t)
{
    if (!*t)
        return 0;
    for (const char *p = t; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(" _(),", *p))
            return 0;
    return 1;
}

/* The table's mark: its text in *text (NULL when the table has no value
 * yet) and the typed literal {watermark} becomes in *sql. */
static int read_mark(build_state *b, const char *col, char **text, char **sql)
{
    char *q = cg_watermark(b->target, col);
    qrows rows;
    int rc = mb_run_rows(b, &rows, q);
    free(q);
    if (rc)
        return tarn_error_prefix(rc, "reading the watermark max(%s) of %s", col, b->m->name);
    const char *v = qrows_get(&rows, 0, 0), *type = qrows_get(&rows, 0, 1);
    if (v && type && !plain_type_name(type)) {
        rc = tarn_error_set(TARN_EINVALID,
                            "watermark column %s has type %s, which cannot be a watermark; use "
                            "a timestamp, date, number or string column",
                            col, type);
    } else if (v) {
        tarn_buf lit = {0};
        buf_puts(&lit, "CAST(");
        quote_literal(&lit, v);
        buf_printf(&lit, " AS %s)", type);
        *text = xstrdup(v);
        *sql = buf_detach(&lit);
    }
    qrows_free(&rows);
    return rc;
}

static int check_watermark_column(build_state *b, const strlist *cols)
{
    const model_annot *a = &b->m->annot;
    if (strlist_find_nocase(cols, a->watermark) >= 0)
        return 0;
    return tarn_error_set(TARN_EINVALID,
                          "watermark column %s is not a column of the SELECT; select it, or fix "
                          "watermark= on line %d",
                          a->watermark, a->materialize_line);
}

/* Stages the query's rows; with a mark and no {watermark} in the model,
 * only those past the mark. The query's columns are checked first (on
 * an empty stage), so that a missing watermark column is named as such
 * rather than as an error in the filter tarn added. */
static int stage_slice(build_state *b, strlist *cols)
{
    const model_annot *a = &b->m->annot;
    int filter = b->watermark_sql && !uses_placeholder(b->m);
    b->staged = 1;
    char *q = mb_query_text(b, NULL);
    char *sql = NULL;
    int rc = 0;
    if (filter) {
        char *empty = xasprintf("SELECT * FROM (\n%s\n) LIMIT 0", q);
        sql = cg_stage(empty);
        free(empty);
        rc = mb_run(b, sql, NULL, 1);
        free(sql);
        if (!rc)
            rc = mb_stage_columns(b, cols);
        if (!rc)
            rc = check_watermark_column(b, cols);
        strlist_free(cols);
    }
    sql = filter ? cg_stage_after(q, a->watermark, b->watermark_sql) : cg_stage(q);
    if (!rc)
        rc = mb_run(b, sql, NULL, 1);
    free(sql);
    free(q);
    if (!rc)
        rc = mb_stage_columns(b, cols);
    if (!rc)
        rc = check_watermark_column(b, cols);
    return rc;
}

/* Writes the staged rows: the whole table on a first or full build, else
 * appended or merged by key. */
static int write_slice(build_state *b, strlist *cols, int rebuild)
{
    const model_annot *a = &b->m->annot;
    model_result *r = b->r;
    if (rebuild) {
        char *sql = cg_replace(b->target, "SELECT * FROM " CG_STAGE);
        int rc = mb_run(b, sql, &r->rows_written, 1);
        free(sql);
        b->altered |= b->exists;
        b->exists = !rc;
        return rc;
    }
    int rc = mb_check_columns(b, cols, NULL, 0);
    if (rc)
        return rc;
    if (a->key.n)
        return mb_merge_staged(b, cols);
    char *sql = cg_insert_from_stage(b->target, NULL);
    rc = mb_run(b, sql, &r->rows_written, 1);
    free(sql);
    return rc;
}

static int read_mark_after(build_state *b)
{
    char *text = NULL, *sql = NULL;
    int rc = read_mark(b, b->m->annot.watermark, &text, &sql);
    free(sql);
    free(b->r->watermark_to);
    b->r->watermark_to = text;
    return rc;
}

int build_incremental(build_state *b)
{
    const model_annot *a = &b->m->annot;
    model_result *r = b->r;
    /* --full-refresh, or changed SQL (model_build.c starts it over) */
    r->full_refresh = b->c->o->full_refresh || (b->existed && !b->exists);
    int rebuild = !b->exists || r->full_refresh;
    int rc = 0;
    if (!rebuild)
        rc = read_mark(b, a->watermark, &r->watermark_from, &b->watermark_sql);
    b->c->watermark_sql = b->watermark_sql;
    if (!rc)
        rc = mb_run_setup(b, NULL);
    strlist cols = {0};
    if (!rc)
        rc = stage_slice(b, &cols);
    if (!rc && a->key.n)
        rc = mb_check_keys(b, &cols);
    if (!rc)
        rc = write_slice(b, &cols, rebuild);
    if (!rc)
        rc = read_mark_after(b);
    strlist_free(&cols);
    return rc;
}

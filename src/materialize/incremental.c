/*
 * incremental.c — the incremental strategy (`-- materialize incremental
 * watermark=col [key=…] [lookback=2h]`): each build reads and writes only
 * the bounded range [from, frontier) of the watermark column.
 *
 * The range starts at the covered-through mark of the last good build (as
 * its run record says: tarn_model_run.details covered_through; a build
 * recorded by an older tarn: max(col) in the table), moved back by
 * lookback= to re-read rows that arrived late. For a date or timestamp
 * watermark it ends before the frontier, the run's start (rows stamped
 * later may still be arriving: the next build takes them); a numeric or
 * string watermark has no upper bound. A first build, or `tarn run
 * --full-refresh`, reads everything below the frontier (rows with a NULL
 * watermark included).
 *
 * {watermark} in the model is the range's included lower bound as a typed
 * literal, CAST('…' AS <col's type>), or NULL when the build reads from the
 * start (`WHERE {watermark} IS NULL OR ts >= {watermark}`); tarn keeps only
 * the staged rows in the range either way. Without key= the range is
 * replaced — its rows deleted from the table and the staged ones inserted
 * — so a build that reads a range again (a lookback, a rerun after a crash
 * whose transaction never committed) never appends a row twice; with key=
 * the staged rows are merged by key (the merge strategy's steps). The
 * range, the mark after and the lookback are in the snapshot's extra info
 * and the run record, committed with the snapshot in one transaction.
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
#include <time.h>

/* The range of one build, as typed SQL literals (NULL: open). */
typedef struct {
    char *type;     /* the watermark column's DuckDB type */
    int time;       /* DATE or TIMESTAMP…: bounded above by the frontier */
    char *from_sql; /* included lower bound, or NULL */
    char *to_sql;   /* excluded upper bound (the frontier), or NULL */
    char *covered;  /* the mark before the build (text), or NULL */
} inc_range;

static void range_free(inc_range *g)
{
    free(g->type);
    free(g->from_sql);
    free(g->to_sql);
    free(g->covered);
}

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

static int is_time_type(const char *t)
{
    return strncasecmp(t, "DATE", 4) == 0 || strncasecmp(t, "TIMESTAMP", 9) == 0;
}

static int is_number_type(const char *t)
{
    static const char *const nums[] = {"TINYINT",  "SMALLINT",  "INTEGER",  "BIGINT",  "HUGEINT",
                                       "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT",
                                       "FLOAT",    "DOUBLE",    "DECIMAL"};
    for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
        if (strncasecmp(t, nums[i], strlen(nums[i])) == 0)
            return 1;
    return 0;
}

/* CAST('text' AS type) */
static char *typed_literal(const char *text, const char *type)
{
    tarn_buf lit = {0};
    buf_puts(&lit, "CAST(");
    quote_literal(&lit, text);
    buf_printf(&lit, " AS %s)", type);
    return buf_detach(&lit);
}

/* One value of one row, as text (NULL: SQL NULL), into *out. */
static int one_value(build_state *b, char **out, const char *sql)
{
    qrows rows;
    int rc = mb_run_rows(b, &rows, sql);
    if (rc)
        return rc;
    const char *v = rows.nrows && rows.ncols ? qrows_get(&rows, 0, 0) : NULL;
    *out = v ? xstrdup(v) : NULL;
    qrows_free(&rows);
    return 0;
}

static int bad_type(build_state *b, const char *type)
{
    return tarn_error_set(TARN_EINVALID,
                          "%s:%d: watermark column %s has type %s, which cannot be a watermark; "
                          "use a timestamp, date, number or string column",
                          b->m->path, b->m->annot.materialize_line, b->m->annot.watermark, type);
}

/* The watermark column's type in relation `rel`. */
static int column_type(build_state *b, const char *rel, char **type)
{
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT type FROM pragma_table_info(");
    quote_literal(&sql, rel);
    buf_puts(&sql, ") WHERE lower(name) = lower(");
    quote_literal(&sql, b->m->annot.watermark);
    buf_puts(&sql, ")");
    int rc = one_value(b, type, buf_cstr(&sql));
    buf_free(&sql);
    if (!rc && !*type)
        rc = strcmp(rel, CG_STAGE) == 0
                 ? tarn_error_set(TARN_EINVALID,
                                  "watermark column %s is not a column of the SELECT; select it, "
                                  "or fix watermark= on line %d",
                                  b->m->annot.watermark, b->m->annot.materialize_line)
                 : tarn_error_set(TARN_EINVALID,
                                  "the table %s has no column %s to continue from (it was built "
                                  "without it): rebuild it with tarn run %s --full-refresh",
                                  b->m->name, b->m->annot.watermark, b->m->name);
    if (!rc && !plain_type_name(*type))
        rc = bad_type(b, *type);
    return rc;
}

/* The frontier, the run's start, as a literal of the column's type (UTC). */
static char *frontier_sql(build_state *b, const char *type)
{
    time_t t = (time_t)run_now(b->c);
    struct tm tm;
    gmtime_r(&t, &tm);
    char text[40];
    if (strncasecmp(type, "DATE", 4) == 0)
        strftime(text, sizeof text, "%Y-%m-%d", &tm);
    else if (strcasestr(type, "TIME ZONE") || strcasecmp(type, "TIMESTAMPTZ") == 0)
        strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S+00", &tm);
    else
        strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S", &tm);
    return typed_literal(text, type);
}

/* The covered-through mark of the model's last good build, from its run
 * record (NULL when none recorded it: an older tarn's, or a table built
 * without a record). */
static int recorded_mark(build_state *b, char **out, int *found)
{
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT (details::JSON->>'covered_through'), (details::JSON->'covered_through') "
                   "IS NOT NULL FROM ");
    quote_prefixed(&sql, b->c->cat, "tarn_model_run");
    buf_puts(&sql, " WHERE model = ");
    quote_literal(&sql, b->m->name);
    buf_puts(&sql, " AND status = 'success' AND json_valid(details) AND "
                   "(details::JSON->>'watermark_column') = ");
    quote_literal(&sql, b->m->annot.watermark);
    buf_puts(&sql, " ORDER BY run_id DESC, finished_at DESC LIMIT 1");
    qrows rows;
    int rc = mb_run_rows(b, &rows, buf_cstr(&sql));
    buf_free(&sql);
    if (rc)
        return rc;
    const char *v = rows.nrows ? qrows_get(&rows, 0, 0) : NULL;
    const char *has = rows.nrows ? qrows_get(&rows, 0, 1) : NULL;
    *found = has && strcmp(has, "true") == 0;
    *out = v ? xstrdup(v) : NULL;
    qrows_free(&rows);
    return 0;
}

/* lookback= against the column's type: a duration for a date or
 * timestamp, a number for a number, nothing for a string. */
static int check_lookback(build_state *b, const inc_range *g)
{
    const model_annot *a = &b->m->annot;
    if (!a->inc_lookback)
        return 0;
    if (g->time && a->inc_lookback_s < 0)
        return tarn_error_set(TARN_EINVALID,
                              "%s:%d: lookback=%s needs a unit for the %s watermark %s: write "
                              "lookback=%sh (or s, m, d)",
                              b->m->path, a->materialize_line, a->inc_lookback, g->type,
                              a->watermark, a->inc_lookback);
    if (!g->time && !is_number_type(g->type))
        return tarn_error_set(TARN_EINVALID,
                              "%s:%d: lookback= needs a date, timestamp or numeric watermark; "
                              "%s is %s: drop lookback=",
                              b->m->path, a->materialize_line, a->watermark, g->type);
    if (!g->time && a->inc_lookback_s >= 0)
        return tarn_error_set(TARN_EINVALID,
                              "%s:%d: lookback=%s is a duration but watermark %s is %s: write "
                              "lookback=N, N in the column's units",
                              b->m->path, a->materialize_line, a->inc_lookback, a->watermark,
                              g->type);
    return 0;
}

/* The range of a build that keeps the table: from the mark (moved back by
 * lookback=) to the frontier. */
static int plan_range(build_state *b, inc_range *g)
{
    const model_annot *a = &b->m->annot;
    int rc = column_type(b, b->target, &g->type);
    if (rc)
        return rc;
    g->time = is_time_type(g->type);
    rc = check_lookback(b, g);
    int found = 0;
    if (!rc)
        rc = recorded_mark(b, &g->covered, &found);
    if (!rc && !found) {
        char *q = cg_watermark(b->target, a->watermark);
        rc = one_value(b, &g->covered, q);
        free(q);
    }
    if (rc)
        return rc;
    if (g->time)
        g->to_sql = frontier_sql(b, g->type);
    if (!g->covered)
        return 0;
    char *mark = typed_literal(g->covered, g->type);
    if (!a->inc_lookback) {
        g->from_sql = mark;
        return 0;
    }
    char *sql =
        g->time ? xasprintf("SELECT CAST(%s - INTERVAL %lld SECOND AS %s)::VARCHAR", mark,
                            (long long)a->inc_lookback_s, g->type)
                : xasprintf("SELECT CAST(%s - %s AS %s)::VARCHAR", mark, a->inc_lookback, g->type);
    char *from = NULL;
    rc = one_value(b, &from, sql);
    free(sql);
    free(mark);
    if (!rc && from)
        g->from_sql = typed_literal(from, g->type);
    free(from);
    return rc;
}

/* col >= from AND col < to (NULL when the range is unbounded both ways). */
static char *range_filter(const char *col, const inc_range *g)
{
    if (!g->from_sql && !g->to_sql)
        return NULL;
    tarn_buf b = {0};
    if (g->from_sql) {
        quote_ident(&b, col);
        buf_printf(&b, " >= %s", g->from_sql);
    }
    if (g->to_sql) {
        if (g->from_sql)
            buf_puts(&b, " AND ");
        quote_ident(&b, col);
        buf_printf(&b, " < %s", g->to_sql);
    }
    return buf_detach(&b);
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

/* Stages the query's rows in the range. The query's columns are checked
 * first (on an empty stage), so that a missing watermark column is named
 * as such rather than as an error in the filter tarn added. */
static int stage_range(build_state *b, const inc_range *g, strlist *cols)
{
    const model_annot *a = &b->m->annot;
    char *where = range_filter(a->watermark, g);
    b->staged = 1;
    char *q = mb_query_text(b, NULL);
    char *sql = NULL;
    int rc = 0;
    if (where) {
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
    sql = where ? cg_stage_where(q, where) : cg_stage(q);
    if (!rc)
        rc = mb_run(b, sql, NULL, 1);
    free(sql);
    free(q);
    free(where);
    if (!rc)
        rc = mb_stage_columns(b, cols);
    if (!rc)
        rc = check_watermark_column(b, cols);
    return rc;
}

/* A first or full build: the whole query below the frontier (NULL
 * watermarks included), its type read from the stage. */
static int stage_all(build_state *b, inc_range *g, strlist *cols)
{
    const model_annot *a = &b->m->annot;
    int rc = stage_range(b, g, cols);
    if (!rc)
        rc = column_type(b, CG_STAGE, &g->type);
    if (rc)
        return rc;
    g->time = is_time_type(g->type);
    rc = check_lookback(b, g);
    if (rc || !g->time)
        return rc;
    g->to_sql = frontier_sql(b, g->type);
    tarn_buf sql = {0};
    buf_puts(&sql, "DELETE FROM " CG_STAGE " WHERE ");
    quote_ident(&sql, a->watermark);
    buf_printf(&sql, " >= %s", g->to_sql);
    rc = mb_run(b, buf_cstr(&sql), NULL, 1);
    buf_free(&sql);
    return rc;
}

/* Whether the table's rows in the range are already the staged ones (as
 * multisets, over the staged columns): then replacing the range would
 * write a snapshot that changes nothing. */
static int range_unchanged(build_state *b, const strlist *cols, const char *where, int *same)
{
    tarn_buf c = {0};
    for (size_t i = 0; i < cols->n; i++) {
        if (i)
            buf_puts(&c, ", ");
        quote_ident(&c, cols->items[i]);
    }
    char *in = xasprintf("SELECT %s FROM %s%s%s", buf_cstr(&c), b->target, where ? " WHERE " : "",
                         where ? where : "");
    char *sql = xasprintf(
        "SELECT (SELECT count(*) FROM (SELECT %s FROM " CG_STAGE
        " EXCEPT ALL %s)) + (SELECT count(*) FROM (%s EXCEPT ALL SELECT %s FROM " CG_STAGE "))",
        buf_cstr(&c), in, in, buf_cstr(&c));
    char *n = NULL;
    int rc = one_value(b, &n, sql);
    *same = !rc && n && strcmp(n, "0") == 0;
    free(n);
    free(sql);
    free(in);
    buf_free(&c);
    return rc;
}

/* Writes the staged rows: the whole table on a first or full build, else
 * merged by key, or the range replaced. */
static int write_range(build_state *b, const inc_range *g, strlist *cols, int rebuild)
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
    char *where = range_filter(a->watermark, g);
    int same = 0;
    rc = range_unchanged(b, cols, where, &same);
    if (rc || same) {
        free(where);
        return rc;
    }
    if (where) {
        char *sql = xasprintf("DELETE FROM %s WHERE %s", b->target, where);
        rc = mb_run(b, sql, &r->rows_deleted, 1);
        free(sql);
        free(where);
        if (r->rows_deleted < 0)
            r->rows_deleted = 0;
    }
    char *sql = cg_insert_from_stage(b->target, NULL);
    if (!rc)
        rc = mb_run(b, sql, &r->rows_written, 1);
    free(sql);
    return rc;
}

static char *literal_text(build_state *b, const char *sql_lit, int *rc)
{
    if (!sql_lit || *rc)
        return NULL;
    char *q = xasprintf("SELECT CAST(%s AS VARCHAR)", sql_lit), *v = NULL;
    *rc = one_value(b, &v, q);
    free(q);
    return v;
}

/* The range read, as text, for the run record and the extra info. */
static int record_bounds(build_state *b, const inc_range *g)
{
    model_result *r = b->r;
    int rc = 0;
    free(r->watermark_from);
    free(r->watermark_to);
    r->watermark_from = literal_text(b, g->from_sql, &rc);
    r->watermark_to = literal_text(b, g->to_sql, &rc);
    return rc;
}

/* The mark after: the newest watermark in the table, never past the
 * frontier (rows beyond it, written before there was one, are read again
 * once the frontier passes them). */
static int record_mark(build_state *b, const inc_range *g)
{
    model_result *r = b->r;
    int rc = 0;
    char *max = cg_watermark(b->target, b->m->annot.watermark);
    char *sql = g->to_sql ? xasprintf("SELECT CAST(least(CAST(m.v AS %s), %s) AS VARCHAR) FROM "
                                      "(%s) m(v, t) WHERE m.v IS NOT NULL",
                                      g->type, g->to_sql, max)
                          : xstrdup(max);
    rc = one_value(b, &r->covered_through, sql);
    free(sql);
    free(max);
    return rc;
}

int inc_describe(build_state *b, int rebuild, char **filter, char **mark_sql, char **note)
{
    *filter = *mark_sql = *note = NULL;
    const model_annot *a = &b->m->annot;
    if (rebuild) {
        time_t t = (time_t)run_now(b->c);
        struct tm tm;
        gmtime_r(&t, &tm);
        char at[32];
        strftime(at, sizeof at, "%Y-%m-%d %H:%M:%S", &tm);
        *note = xasprintf("a first or full build: every row (a date or timestamp %s before the "
                          "run's start, %s UTC)",
                          a->watermark, at);
        return 0;
    }
    inc_range g = {0};
    int rc = plan_range(b, &g);
    char *from = literal_text(b, g.from_sql, &rc), *to = literal_text(b, g.to_sql, &rc);
    if (!rc) {
        *filter = range_filter(a->watermark, &g);
        *mark_sql = g.from_sql ? xstrdup(g.from_sql) : NULL;
        char *since = !from             ? xstrdup("every row")
                      : a->inc_lookback ? xasprintf("from %s (the mark %s less lookback=%s)", from,
                                                    g.covered, a->inc_lookback)
                                        : xasprintf("from the mark %s", from);
        *note =
            to ? xasprintf("%s %s, before %s (the run's start)", a->watermark, since, to)
               : xasprintf("%s %s (no upper bound: a %s watermark)", a->watermark, since, g.type);
        free(since);
    }
    free(from);
    free(to);
    range_free(&g);
    return rc;
}

int build_incremental(build_state *b)
{
    const model_annot *a = &b->m->annot;
    model_result *r = b->r;
    /* --full-refresh, or changed SQL (model_build.c starts it over) */
    r->full_refresh = b->c->o->full_refresh || (b->existed && !b->exists);
    int rebuild = !b->exists || r->full_refresh;
    inc_range g = {0};
    int rc = rebuild ? 0 : plan_range(b, &g);
    if (!rc)
        rc = record_bounds(b, &g); /* a failed build's record says what it read too */
    if (!rc && !rebuild && uses_placeholder(b->m) && g.from_sql)
        b->watermark_sql = xstrdup(g.from_sql);
    b->c->watermark_sql = b->watermark_sql;
    if (!rc)
        rc = mb_run_setup(b, NULL);
    strlist cols = {0};
    if (!rc)
        rc = rebuild ? stage_all(b, &g, &cols) : stage_range(b, &g, &cols);
    if (!rc && rebuild)
        rc = record_bounds(b, &g);
    if (!rc && a->key.n)
        rc = mb_check_keys(b, &cols);
    if (!rc)
        rc = write_range(b, &g, &cols, rebuild);
    if (!rc)
        rc = record_mark(b, &g);
    strlist_free(&cols);
    range_free(&g);
    return rc;
}

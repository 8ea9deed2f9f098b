/*
 * session_merge.c — MERGE INTO a lake table.
 *
 * DuckDB carries out the user's MERGE itself, on a TEMP copy of the
 * table's rows (the insert stage: the table's columns, types, defaults and
 * NOT NULL constraints, and nothing else, so that INSERT *, UPDATE without
 * SET and positional VALUES mean what they mean on the table). The copy's
 * rows are put in a known order next to a map of their places in the lake
 * (file and position, row id); DuckDB updates a TEMP table's rows in
 * place and appends new ones, so afterwards
 *   - a mapped row that is gone was deleted,
 *   - a mapped row whose values changed was updated: deleted in the lake
 *     and written again with its row id, as DuckLake's UPDATE does,
 *   - a row past the mapped ones was inserted.
 * An update that leaves a row as it was is told apart from no action by
 * the actions DuckDB reports (RETURNING merge_action): the matched rows
 * left unchanged are those updates when their number adds up. A row that
 * several source rows update fails as DuckLake fails it. As DuckLake's,
 * the new images of updated rows are inlined within the table's limit,
 * the inserted rows always go to a Parquet file.
 */
#include "duck/duck.h"
#include "lake/scan.h"
#include "lake/txn.h"
#include "lake/write.h"
#include "session/rewrite.h"
#include "session/session_int.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAP "temp.main.__tarn_merge_map"
#define RES "temp.main.__tarn_merge_res"

/* The first token at depth 0 from `from` that is keyword kw; tk->n if none. */
static size_t find_top(const sql_tokens *tk, size_t from, const char *kw)
{
    int depth = 0;
    for (size_t i = from; i < tk->n; i++) {
        if (sql_tok_is_op(&tk->toks[i], "("))
            depth++;
        else if (sql_tok_is_op(&tk->toks[i], ")"))
            depth--;
        else if (depth == 0 && sql_tok_is_kw(&tk->toks[i], kw))
            return i;
    }
    return tk->n;
}

/* The parts of a MERGE statement tarn needs, as source text. */
typedef struct {
    char *alias;     /* the target's name in the statement, quoted */
    char *source;    /* "src [AS s] ON … | USING (…)": from USING up to WHEN, rewritten */
    char *clauses;   /* the WHEN clauses, rewritten */
    char *returning; /* the user's RETURNING list, or NULL */
} merge_parts;

static void parts_free(merge_parts *p)
{
    free(p->alias);
    free(p->source);
    free(p->clauses);
    free(p->returning);
}

static int read_parts(merge_parts *p, tarn_session *s, const sql_tokens *tk, const char *sql,
                      const qname *q, const lk_table *t)
{
    memset(p, 0, sizeof(*p));
    size_t i = q->end;
    tarn_buf a = {0};
    if (i < tk->n && sql_tok_is_kw(&tk->toks[i], "AS"))
        i++;
    if (i < tk->n && !sql_tok_is_kw(&tk->toks[i], "USING") &&
        (tk->toks[i].type == SQL_TOK_IDENT || tk->toks[i].type == SQL_TOK_QIDENT))
        quote_ident(&a, tk->toks[i++].text);
    else
        quote_ident(&a, t->name);
    p->alias = buf_detach(&a);
    if (i >= tk->n || !sql_tok_is_kw(&tk->toks[i], "USING"))
        return tarn_error_set(TARN_EINVALID, "MERGE INTO %s: expected USING", t->name);
    size_t when = find_top(tk, i + 1, "WHEN");
    if (when == tk->n)
        return tarn_error_set(TARN_EINVALID, "MERGE INTO %s: expected WHEN", t->name);
    size_t ret = find_top(tk, when, "RETURNING");
    char *src = session_token_text(tk, sql, i + 1, when);
    char *cl = session_token_text(tk, sql, when, ret);
    char *rl = ret < tk->n ? session_token_text(tk, sql, ret + 1, tk->n) : NULL;
    int rc = rewrite_reads(&p->source, s, src);
    if (!rc)
        rc = rewrite_reads(&p->clauses, s, cl);
    if (!rc && rl)
        rc = rewrite_reads(&p->returning, s, rl);
    free(src);
    free(cl);
    free(rl);
    return rc;
}

static void column_list(tarn_buf *b, const lk_table *t, const char *prefix)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (c)
            buf_puts(b, ", ");
        buf_puts(b, prefix);
        quote_ident(b, t->cols[c].name);
    }
}

/* ROW(prefix.c1, …): a row's values as one, for comparing rows. */
static void row_value(tarn_buf *b, const lk_table *t, const char *prefix)
{
    buf_puts(b, "ROW(");
    column_list(b, t, prefix);
    buf_putc(b, ')');
}

/* The map of the table's rows (k: their order in the copy) and the copy. */
static int copy_rows(tarn_session *s, lk_lake *l, const lk_table *t, int64_t *nrows, int64_t *base)
{
    char *scan = NULL;
    int rc = lk_scan_sql(&scan, l, s->con, lk_txn_catalog(l), t, -1, LK_SCAN_IDENTITY);
    if (rc)
        return rc;
    tarn_buf b = {0};
    buf_printf(&b,
               "CREATE OR REPLACE TEMP TABLE __tarn_merge_map AS SELECT row_number() OVER () - 1 "
               "AS __tarn_k, __tarn_fid, __tarn_pos, rowid AS __tarn_rowid, ");
    column_list(&b, t, "");
    buf_printf(&b, " FROM (%s)", scan);
    free(scan);
    rc = duck_exec(s->con, buf_cstr(&b));
    if (!rc)
        rc = lk_stage_create(l, s->con, t, 0);
    if (!rc) {
        /* an ordered insert numbers the rows in order: rowid = base + k
         * (base is 0, or a transaction-local offset inside BEGIN) */
        buf_clear(&b);
        buf_printf(&b, "INSERT INTO %s SELECT ", lk_stage_name());
        column_list(&b, t, "");
        buf_puts(&b, " FROM " MAP " ORDER BY __tarn_k");
        rc = duck_exec_count(s->con, buf_cstr(&b), nrows);
    }
    buf_clear(&b);
    buf_printf(&b, "SELECT COALESCE(min(rowid), 0) FROM %s", lk_stage_name());
    if (!rc)
        rc = duck_query_int64(base, NULL, s->con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

/* DuckDB's MERGE on the copy; *actions gets its RETURNING rows: the
 * action first, then the user's RETURNING list, if any. */
static int run_merge(tarn_session *s, const merge_parts *p, duck_table *actions)
{
    tarn_buf b = {0};
    buf_printf(&b, "MERGE INTO %s AS %s USING %s %s RETURNING merge_action AS __tarn_action",
               lk_stage_name(), p->alias, p->source, p->clauses);
    if (p->returning)
        buf_printf(&b, ", %s", p->returning);
    int rc = duck_table_query_stmt(actions, s->con, buf_cstr(&b));
    if (rc) {
        tarn_error_replace("temp.main.__tarn_stage", p->alias);
        tarn_error_replace("__tarn_stage", p->alias);
    }
    buf_free(&b);
    return rc;
}

static int64_t count_action(const duck_table *a, const char *action)
{
    int64_t n = 0;
    for (size_t r = 0; r < a->nrows; r++)
        if (duck_table_get(a, r, 0) && strcmp(duck_table_get(a, r, 0), action) == 0)
            n++;
    return n;
}

static int query_count(duckdb_connection con, const char *sql, int64_t *n)
{
    return duck_query_int64(n, NULL, con, sql);
}

/* Matched rows (by the statement's join) that several source rows match:
 * the rows the MERGE may have updated more than once. Those left unchanged
 * go to *unchanged_matched. */
static int matched_rows(tarn_session *s, const merge_parts *p, const lk_table *t, int64_t *dups,
                        int64_t *unchanged_matched)
{
    tarn_buf b = {0};
    buf_puts(&b, "SELECT count(*) FROM (SELECT ");
    quote_ident(&b, "__tarn_k");
    buf_printf(&b, " FROM (SELECT __tarn_k, ");
    column_list(&b, t, "");
    buf_printf(&b, " FROM " MAP ") AS %s JOIN %s GROUP BY ALL HAVING count(*) > 1)", p->alias,
               p->source);
    int rc = query_count(s->con, buf_cstr(&b), dups);
    if (!rc) {
        buf_clear(&b);
        buf_printf(&b, "SELECT count(DISTINCT __tarn_k) FROM (SELECT __tarn_k, ");
        column_list(&b, t, "");
        buf_printf(&b,
                   " FROM " MAP ") AS %s JOIN %s WHERE __tarn_k IN (SELECT m.__tarn_k FROM " MAP
                   " m JOIN " RES " r ON r.__tarn_r = m.__tarn_k WHERE ",
                   p->alias, p->source);
        row_value(&b, t, "r.");
        buf_puts(&b, " IS NOT DISTINCT FROM ");
        row_value(&b, t, "m.");
        buf_putc(&b, ')');
        rc = query_count(s->con, buf_cstr(&b), unchanged_matched);
    }
    buf_free(&b);
    return rc;
}

/* The rows the MERGE deleted or updated, with their new images (updated:
 * __tarn_upd), for lk_delete_matching. noop_updates: the matched rows
 * left unchanged were updated too. */
static void changed_sql(tarn_buf *b, const merge_parts *p, const lk_table *t, int noop_updates)
{
    buf_puts(b, "SELECT m.__tarn_fid, m.__tarn_pos, m.__tarn_rowid, r.__tarn_r IS NOT NULL AS "
                "__tarn_upd");
    for (size_t c = 0; c < t->ncols; c++) {
        buf_puts(b, ", r.");
        quote_ident(b, t->cols[c].name);
    }
    buf_puts(b,
             " FROM " MAP " m LEFT JOIN " RES " r ON r.__tarn_r = m.__tarn_k WHERE r.__tarn_r IS "
             "NULL OR ");
    row_value(b, t, "r.");
    buf_puts(b, " IS DISTINCT FROM ");
    row_value(b, t, "m.");
    if (noop_updates) {
        buf_puts(b, " OR m.__tarn_k IN (SELECT __tarn_k FROM (SELECT __tarn_k, ");
        column_list(b, t, "");
        buf_printf(b, " FROM " MAP ") AS %s JOIN %s)", p->alias, p->source);
    }
}

/* Writes the MERGE's effect into the lake transaction. */
static int apply(tarn_session *s, lk_lake *l, const merge_parts *p, const lk_table *t,
                 int64_t nrows, int64_t base, const duck_table *actions)
{
    char *q = xasprintf("CREATE OR REPLACE TEMP TABLE __tarn_merge_res AS SELECT rowid - %lld AS "
                        "__tarn_r, * FROM %s",
                        (long long)base, lk_stage_name());
    int rc = duck_exec(s->con, q);
    free(q);
    int64_t inserted = 0, survived_changed = 0;
    tarn_buf b = {0};
    buf_printf(&b,
               "SELECT count(*) FROM " MAP " m JOIN " RES " r ON r.__tarn_r = m.__tarn_k WHERE ");
    row_value(&b, t, "r.");
    buf_puts(&b, " IS DISTINCT FROM ");
    row_value(&b, t, "m.");
    if (!rc)
        rc = query_count(s->con, buf_cstr(&b), &survived_changed);
    int noop = 0;
    int64_t updates = count_action(actions, "UPDATE");
    if (!rc && updates > survived_changed) {
        int64_t dups = 0, unchanged = 0;
        rc = matched_rows(s, p, t, &dups, &unchanged);
        if (!rc && dups > 0)
            rc = tarn_error_set(TARN_EUNSUPPORTED,
                                "Not implemented Error: The same row was updated multiple times - "
                                "this is not (yet) supported in DuckLake. Eliminate duplicate "
                                "matches prior to running the UPDATE");
        noop = !rc && unchanged == updates - survived_changed;
    }
    buf_clear(&b);
    changed_sql(&b, p, t, noop);
    int64_t changed = 0;
    if (!rc)
        rc = lk_delete_matching(l, s->con, t->id, buf_cstr(&b), &changed);
    if (!rc && changed > 0) {
        /* the new images keep their row ids (DuckLake's UPDATE) */
        rc = lk_stage_create(l, s->con, t, 1);
        buf_clear(&b);
        buf_printf(&b, "INSERT INTO %s SELECT ", lk_stage_name());
        column_list(&b, t, "");
        buf_puts(&b, ", __tarn_rowid FROM temp.main.__tarn_match WHERE __tarn_upd ORDER BY "
                     "__tarn_rowid");
        int64_t n = 0;
        if (!rc)
            rc = duck_exec_count(s->con, buf_cstr(&b), &n);
        if (!rc && n > 0)
            rc = lk_insert_stage(l, s->con, t->id, &n);
    }
    if (!rc) {
        rc = lk_stage_create(l, s->con, t, 0);
        buf_clear(&b);
        buf_printf(&b, "INSERT INTO %s SELECT ", lk_stage_name());
        column_list(&b, t, "");
        buf_printf(&b, " FROM " RES " WHERE __tarn_r >= %lld ORDER BY __tarn_r", (long long)nrows);
        if (!rc)
            rc = duck_exec_count(s->con, buf_cstr(&b), &inserted);
        if (!rc && inserted > 0)
            rc = lk_insert_stage_file(l, s->con, t->id, &inserted);
    }
    buf_free(&b);
    return rc;
}

static void deliver(const duck_table *a, int returning, const tarn_sink *sink)
{
    if (!sink)
        return;
    if (!returning) {
        if (sink->count)
            sink->count(sink->ctx, (int64_t)a->nrows);
        return;
    }
    if (sink->begin)
        sink->begin(sink->ctx, a->ncols - 1, (const char *const *)a->names + 1);
    for (size_t r = 0; r < a->nrows; r++)
        if (sink->row)
            sink->row(sink->ctx, (const char *const *)a->cells + r * a->ncols + 1);
    if (sink->end)
        sink->end(sink->ctx);
}

static void drop_scratch(lk_lake *l, duckdb_connection con)
{
    duck_exec(con, "DROP TABLE IF EXISTS " MAP);
    duck_exec(con, "DROP TABLE IF EXISTS " RES);
    lk_write_cleanup(l, con);
}

int session_merge_stmt(tarn_session *s, lk_lake *l, const sql_tokens *tk, const char *sql,
                       const qname *q, const lk_table *t, const tarn_sink *sink)
{
    int64_t table_id = t->id;
    int rc = session_write_begin(s, l);
    merge_parts p = {0};
    duck_table actions = {0};
    int64_t nrows = 0, base = 0;
    if (!rc) {
        t = lk_catalog_table_by_id(&l->txn->cat, table_id);
        rc = read_parts(&p, s, tk, sql, q, t);
    }
    if (!rc)
        rc = copy_rows(s, l, t, &nrows, &base);
    int ran = 0;
    if (!rc)
        ran = !(rc = run_merge(s, &p, &actions));
    if (!rc)
        rc = apply(s, l, &p, t, nrows, base, &actions);
    tarn_error_saved saved = tarn_error_save();
    drop_scratch(l, s->con);
    tarn_error_restore(&saved);
    rc = session_write_end(s, l, rc);
    if (!rc)
        deliver(&actions, p.returning != NULL, sink);
    if (ran)
        duck_table_free(&actions);
    parts_free(&p);
    return rc;
}

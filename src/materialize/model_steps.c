/*
 * model_steps.c — the steps of one model build that its strategies share
 * (declared in model_int.h): running a statement (timed), the model's
 * setup statements and its pinned query, staging the query's rows, the
 * staged and the table's columns and what on_schema_change does when they
 * differ, the key checks, merging staged rows by key, and refusing an
 * empty result that would empty a table. model_build.c (replace, append,
 * merge) and the strategies of their own files (history.c,
 * incremental.c, partition.c, manual.c, guard.c) use them; this file
 * calls none of those.
 */
#include "materialize/codegen.h"
#include "materialize/model_int.h"

#include "project/query.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/clock.h"
#include "util/quote.h"
#include "util/textmap.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- statements ---------------------------------------------------- */

int mb_run(build_state *b, const char *sql, int64_t *count, int timed)
{
    double t0 = clock_mono_ms();
    int rc = query_exec(b->c->s, sql, count);
    if (timed)
        b->r->query_ms += clock_mono_ms() - t0;
    return rc;
}

int mb_run_rows(build_state *b, qrows *out, const char *sql)
{
    double t0 = clock_mono_ms();
    int rc = query_rows(out, b->c->s, sql);
    b->r->query_ms += clock_mono_ms() - t0;
    return rc;
}

int mb_error_at(const tarn_model *m, const model_stmt *st, int rc)
{
    const char *ran = NULL;
    long pos = tarn_error_position(&ran);
    long at = pos >= 0 ? textmap_locate(st->text, ran, pos) : -1;
    tarn_buf msg = {0};
    buf_printf(&msg, "%s:%d: %s", m->path, at >= 0 ? body_line_of(st, (size_t)at) : st->line,
               tarn_error_last());
    if (at >= 0)
        textmap_excerpt(&msg, st->text, (size_t)at, st->line);
    rc = tarn_error_set(rc, "%s", buf_cstr(&msg));
    buf_free(&msg);
    return rc;
}

/* The setup statements: every statement but the trailing query. */
int mb_run_setup(build_state *b, const char *partition)
{
    const tarn_model *m = b->m;
    for (size_t i = 0; i + 1 < m->body.n; i++) {
        const model_stmt *st = &m->body.items[i];
        char *sql = pin_statement(b->c, b->mi, st, partition, b->r);
        int rc = mb_run(b, sql, NULL, 1);
        free(sql);
        if (rc)
            return mb_error_at(m, st, rc);
    }
    return 0;
}

char *mb_query_text(build_state *b, const char *partition)
{
    const model_stmt *q = &b->m->body.items[b->m->body.n - 1];
    char *text = pin_statement(b->c, b->mi, q, partition, b->r);
    double worker_ms = 0;
    const char *staged = b->c->pf ? prefetch_result(b->c->pf, b->mi, text, &worker_ms) : NULL;
    if (staged) {
        /* a worker evaluated exactly this query: read its rows */
        free(text);
        text = xstrdup(staged);
        b->r->query_ms += worker_ms;
        b->worker_ms += worker_ms;
        b->r->prefetch = PREFETCH_USED;
    }
    free(b->last_query);
    b->last_query = xstrdup(text);
    return text;
}

int mb_stage(build_state *b, const char *partition)
{
    b->staged = 1;
    char *q = mb_query_text(b, partition);
    char *sql = cg_stage(q);
    int rc = mb_run(b, sql, NULL, 1);
    free(sql);
    free(q);
    return rc;
}

/* ---- columns --------------------------------------------------------- */

/* Column names (and DuckDB types, when `types` is not NULL) of relation
 * `rel`, a qualified name. pragma_table_info reads the one relation;
 * duckdb_columns() and information_schema list (and bind) every column of
 * every view of the lake. */
static int column_types(build_state *b, const char *rel, strlist *names, strlist *types)
{
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT name, type FROM pragma_table_info(");
    quote_literal(&sql, rel);
    buf_puts(&sql, ") ORDER BY cid");
    qrows q;
    int rc = query_rows(&q, b->c->s, buf_cstr(&sql));
    buf_free(&sql);
    for (size_t i = 0; !rc && i < q.nrows; i++) {
        strlist_push(names, qrows_get(&q, i, 0));
        if (types)
            strlist_push(types, qrows_get(&q, i, 1));
    }
    if (!rc)
        qrows_free(&q);
    return rc;
}

int mb_stage_columns(build_state *b, strlist *out)
{
    return column_types(b, CG_STAGE, out, NULL);
}

int mb_target_columns(build_state *b, strlist *out)
{
    tarn_buf name = {0};
    quote_qualified(&name, b->c->lake, b->m->schema, b->m->table);
    int rc = column_types(b, buf_cstr(&name), out, NULL);
    buf_free(&name);
    return rc;
}

/* Whether `name` is one of the columns a strategy adds itself. */
static int is_extra(const char *const *extra, size_t nextra, const char *name)
{
    for (size_t k = 0; k < nextra; k++)
        if (strcasecmp(extra[k], name) == 0)
            return 1;
    return 0;
}

/* on_schema_change=sync: the table gains the SELECT's new columns (typed
 * as staged) and loses the ones the SELECT no longer has (the strategy's
 * own columns stay), through the lake inside the build's transaction. */
static int sync_table(build_state *b, const strlist *stage, const strlist *have,
                      const char *const *extra, size_t nextra, tarn_buf *note)
{
    strlist names = {0}, types = {0};
    int rc = column_types(b, CG_STAGE, &names, &types);
    for (size_t i = 0; !rc && i < names.n; i++) {
        if (strlist_find_nocase(have, names.items[i]) >= 0 ||
            strlist_find_nocase(stage, names.items[i]) < 0)
            continue;
        tarn_buf sql = {0};
        buf_printf(&sql, "ALTER TABLE %s ADD COLUMN ", b->target);
        quote_ident(&sql, names.items[i]);
        buf_printf(&sql, " %s", types.items[i]); /* a DuckDB type name from the catalog */
        rc = mb_run(b, buf_cstr(&sql), NULL, 0);
        buf_free(&sql);
        buf_printf(note, "%sadded %s %s", note->len ? "; " : "", names.items[i], types.items[i]);
    }
    for (size_t i = 0; !rc && i < have->n; i++) {
        if (is_extra(extra, nextra, have->items[i]) ||
            strlist_find_nocase(stage, have->items[i]) >= 0)
            continue;
        tarn_buf sql = {0};
        buf_printf(&sql, "ALTER TABLE %s DROP COLUMN ", b->target);
        quote_ident(&sql, have->items[i]);
        rc = mb_run(b, buf_cstr(&sql), NULL, 0);
        buf_free(&sql);
        buf_printf(note, "%sdropped %s", note->len ? "; " : "", have->items[i]);
    }
    if (!rc)
        b->altered = 1;
    strlist_free(&names);
    strlist_free(&types);
    return rc;
}

/* Rebuilds the stage with exactly `cols` (the table's, strategy columns
 * left out), in that order: a column the SELECT lacks is NULL. */
static int reshape_stage(build_state *b, const strlist *stage, const strlist *cols)
{
    tarn_buf sql = {0};
    buf_puts(&sql, "CREATE OR REPLACE TEMP TABLE _tarn_stage_shaped AS SELECT ");
    for (size_t i = 0; i < cols->n; i++) {
        if (i)
            buf_puts(&sql, ", ");
        if (strlist_find_nocase(stage, cols->items[i]) >= 0)
            quote_ident(&sql, cols->items[i]);
        else
            buf_puts(&sql, "NULL");
        buf_puts(&sql, " AS ");
        quote_ident(&sql, cols->items[i]);
    }
    buf_puts(&sql, " FROM " CG_STAGE);
    int rc = mb_run(b, buf_cstr(&sql), NULL, 0);
    buf_free(&sql);
    if (!rc)
        rc = mb_run(b, "DROP TABLE " CG_STAGE, NULL, 0);
    if (!rc)
        rc = mb_run(b, "ALTER TABLE temp.main._tarn_stage_shaped RENAME TO _tarn_stage", NULL, 0);
    return rc;
}

/* The staged columns plus `extra` (columns the strategy adds, e.g.
 * _tarn_partition) against the table's, in order. When they differ the
 * model's on_schema_change says what happens: fail (the default: an
 * error, nothing written), warn / ignore (write the table's columns: the
 * SELECT's new ones are left out, its missing ones are NULL; warn says so
 * in the run's output), sync (ALTER the table to the SELECT's columns
 * first). On success `stage` lists the columns to write. */
int mb_check_columns(build_state *b, strlist *stage, const char *const *extra, size_t nextra)
{
    strlist want = {0}, have = {0};
    strlist_copy(&want, stage);
    for (size_t i = 0; i < nextra; i++)
        strlist_push(&want, extra[i]);
    int rc = mb_target_columns(b, &have);
    int same = !rc && want.n == have.n;
    for (size_t i = 0; same && i < want.n; i++)
        same = strcasecmp(want.items[i], have.items[i]) == 0;
    const char *mode = b->m->annot.on_schema_change ? b->m->annot.on_schema_change : "fail";
    if (!rc && !same && strcmp(mode, "fail") != 0) {
        tarn_buf note = {0};
        if (strcmp(mode, "sync") == 0) {
            rc = sync_table(b, stage, &have, extra, nextra, &note);
            strlist_free(&have);
            if (!rc)
                rc = mb_target_columns(b, &have);
        }
        strlist cols = {0}; /* the table's columns the stage must provide */
        for (size_t i = 0; i < have.n; i++)
            if (!is_extra(extra, nextra, have.items[i]))
                strlist_push(&cols, have.items[i]);
        for (size_t i = 0; strcmp(mode, "sync") != 0 && i < stage->n; i++)
            if (strlist_find_nocase(&cols, stage->items[i]) < 0)
                buf_printf(&note, "%signored new column %s", note.len ? "; " : "", stage->items[i]);
        for (size_t i = 0; strcmp(mode, "sync") != 0 && i < cols.n; i++)
            if (strlist_find_nocase(stage, cols.items[i]) < 0)
                buf_printf(&note, "%s%s left NULL", note.len ? "; " : "", cols.items[i]);
        if (!rc)
            rc = reshape_stage(b, stage, &cols);
        if (!rc) {
            strlist_free(stage);
            strlist_copy(stage, &cols);
            free(b->r->schema_change);
            b->r->schema_change =
                xstrdup(note.len ? buf_cstr(&note) : "columns reordered to the table's");
        }
        strlist_free(&cols);
        buf_free(&note);
        same = 1;
    }
    if (!rc && !same) {
        /* Name the SELECT's columns and the table's, apart from the ones
         * the strategy adds itself. */
        strlist own = {0}, added = {0};
        for (size_t i = 0; i < have.n; i++)
            strlist_push(is_extra(extra, nextra, have.items[i]) ? &added : &own, have.items[i]);
        char *w = strlist_join(stage, ", "), *h = strlist_join(&own, ", ");
        char *x = strlist_join(&added, ", ");
        const char *label = annot_strategy_label(&b->m->annot);
        rc = tarn_error_set(TARN_EINVALID,
                            "the SELECT's columns (%s) differ from %s's (%s%s%s%s%s): %s keeps the "
                            "table's columns; set on_schema_change=sync (alter the table), "
                            "ignore or warn (write the table's columns) in the model's "
                            "materialize line, or drop the table to rebuild it",
                            w, b->m->name, h, added.n ? "; " : "", added.n ? label : "",
                            added.n ? " adds " : "", x, label);
        free(w);
        free(h);
        free(x);
        strlist_free(&own);
        strlist_free(&added);
    }
    strlist_free(&want);
    strlist_free(&have);
    return rc;
}

/* ---- keys and empty results ------------------------------------------ */

int mb_check_keys(build_state *b, const strlist *cols)
{
    const strlist *key = &b->m->annot.key;
    for (size_t i = 0; i < key->n; i++) {
        int found = 0;
        for (size_t j = 0; j < cols->n && !found; j++)
            found = strcasecmp(cols->items[j], key->items[i]) == 0;
        if (!found)
            return tarn_error_set(TARN_EINVALID, "key column %s is not a column of the SELECT",
                                  key->items[i]);
    }
    char *sql = cg_duplicate_keys(key, 5);
    qrows d;
    int rc = mb_run_rows(b, &d, sql);
    free(sql);
    if (rc)
        return rc;
    if (d.nrows > 0) {
        tarn_buf msg = {0};
        char *k = strlist_join(key, ", ");
        int one = strcmp(qrows_get(&d, 0, 2), "1") == 0;
        buf_printf(&msg,
                   "%s key (%s) is not unique in the SELECT: %s key%s appear%s more than "
                   "once: ",
                   strategy_name(b->m->annot.strategy), k, qrows_get(&d, 0, 2), one ? "" : "s",
                   one ? "s" : "");
        for (size_t i = 0; i < d.nrows; i++)
            buf_printf(&msg, "%s%s (%s rows)", i ? "; " : "", qrows_get(&d, i, 0),
                       qrows_get(&d, i, 1));
        buf_printf(&msg,
                   "; nothing was written (deduplicate in the SELECT, e.g. QUALIFY "
                   "row_number() OVER (PARTITION BY %s ORDER BY …) = 1)",
                   k);
        rc = tarn_error_set(TARN_EINVALID, "%s", buf_cstr(&msg));
        buf_free(&msg);
        free(k);
    }
    qrows_free(&d);
    return rc;
}

int mb_merge_staged(build_state *b, const strlist *cols)
{
    const strlist *key = &b->m->annot.key;
    char *sql = cg_changed_keys(b->target, cols, key);
    int rc = mb_run(b, sql, NULL, 1);
    free(sql);
    sql = rc ? NULL : cg_delete_keys(b->target, key);
    if (sql)
        rc = mb_run(b, sql, &b->r->rows_deleted, 1);
    free(sql);
    sql = rc ? NULL : cg_insert_keys(b->target, key);
    if (sql)
        rc = mb_run(b, sql, &b->r->rows_written, 1);
    free(sql);
    return rc;
}

int mb_empty_refused(const tarn_model *m, const char *what)
{
    return tarn_error_set(TARN_EINVALID,
                          "the SELECT returned no rows and %s; nothing was written. If the source "
                          "is meant to be empty, add allow_empty to the materialize line%s, or run "
                          "with --allow-empty",
                          what, m->annot.materialize_line ? "" : " (-- materialize allow_empty)");
}

int mb_check_empty(build_state *b)
{
    const tarn_model *m = b->m;
    int64_t staged = 0, rows = b->had_rows;
    if (rows <= 0)
        return 0;
    int rc = query_int64(&staged, b->c->s, "SELECT count(*) FROM " CG_STAGE);
    if (rc || staged > 0)
        return rc;
    /* history: of its rows, the current versions (a scan of one column,
     * so only now; the count before the BEGIN found the table readable) */
    int history = m->annot.strategy == STRAT_HISTORY && !b->restarted;
    char *sql =
        history ? xasprintf("SELECT count(*) FROM %s WHERE " CG_IS_CURRENT, b->target) : NULL;
    rc = sql ? query_int64(&rows, b->c->s, sql) : 0;
    free(sql);
    if (rc || rows == 0)
        return rc;
    /* An empty result is most often a source gone empty or a filter that
     * matches nothing, not every entity gone. */
    char *what =
        history ? xasprintf("deletes=close would close all %lld current versions", (long long)rows)
                : xasprintf("%s has %lld rows", m->name, (long long)rows);
    rc = mb_empty_refused(m, what);
    free(what);
    return rc;
}

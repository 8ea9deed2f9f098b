/*
 * history.c — the history strategy (`-- materialize key=… history
 * [track=…] [deletes=close]`): SCD type 2 in the build's one transaction.
 *
 * The table is the query's columns plus valid_from, valid_to (NULL while
 * current) and is_current, with a lake view <table>_current over the
 * current rows. A build stages the query, refuses duplicate keys, and
 * compares key + tracked columns (track=, default every non-key column)
 * with the current rows; only the keys that changed (or are new, or —
 * with deletes=close — are gone from the query) are written: an UPDATE
 * closes their current row and an INSERT opens the new one, so DuckLake
 * writes delete files and new files for those rows alone. Every change of
 * one run carries the same time, the run's start, so a re-run over the
 * same input changes nothing and commits no snapshot.
 */
#include "materialize/codegen.h"
#include "materialize/model_int.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static const char *const history_columns[] = {CG_VALID_FROM, CG_VALID_TO, CG_IS_CURRENT};
#define NHISTORY_COLUMNS (sizeof(history_columns) / sizeof(history_columns[0]))

/* The run's start as a TIMESTAMP literal (UTC, microseconds); its text in
 * *text. */
static char *run_timestamp(double epoch, char **text)
{
    time_t sec = (time_t)epoch;
    long usec = (long)((epoch - (double)sec) * 1e6);
    if (usec < 0)
        usec = 0;
    if (usec > 999999)
        usec = 999999;
    struct tm tm;
    gmtime_r(&sec, &tm);
    *text = xasprintf("%04d-%02d-%02d %02d:%02d:%02d.%06ld", tm.tm_year + 1900, tm.tm_mon + 1,
                      tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
    tarn_buf b = {0};
    buf_puts(&b, "TIMESTAMP ");
    quote_literal(&b, *text);
    return buf_detach(&b);
}

/* The query may not bring the columns history adds. */
static int check_reserved(const strlist *cols)
{
    for (size_t i = 0; i < NHISTORY_COLUMNS; i++)
        if (strlist_find_nocase(cols, history_columns[i]) >= 0)
            return tarn_error_set(TARN_EINVALID,
                                  "the SELECT has a column named %s, which history adds "
                                  "(valid_from, valid_to, is_current): rename it in the SELECT",
                                  history_columns[i]);
    return 0;
}

/* track=, or every staged column that is not a key. */
static int tracked_columns(build_state *b, const strlist *cols, strlist *out)
{
    const model_annot *a = &b->m->annot;
    if (a->track.n) {
        for (size_t i = 0; i < a->track.n; i++) {
            if (strlist_find_nocase(cols, a->track.items[i]) < 0)
                return tarn_error_set(TARN_EINVALID,
                                      "track column %s is not a column of the SELECT (fix "
                                      "track= on line %d)",
                                      a->track.items[i], a->materialize_line);
            strlist_push(out, a->track.items[i]);
        }
        return 0;
    }
    for (size_t i = 0; i < cols->n; i++)
        if (strlist_find_nocase(&a->key, cols->items[i]) < 0)
            strlist_push(out, cols->items[i]);
    return 0;
}

/* Whether the lake has the view <table>_current (in this transaction). */
static int has_current_view(build_state *b)
{
    char *view = xasprintf("%s" CG_CURRENT_SUFFIX, b->m->table);
    tarn_buf sql = {0};
    buf_puts(&sql, "SELECT count(*) FROM information_schema.tables WHERE table_type = 'VIEW' AND "
                   "table_catalog = ");
    quote_literal(&sql, b->c->lake);
    buf_puts(&sql, " AND table_schema = ");
    quote_literal(&sql, b->m->schema);
    buf_puts(&sql, " AND table_name = ");
    quote_literal(&sql, view);
    int64_t n = 0;
    int rc = query_int64(&n, b->c->s, buf_cstr(&sql));
    buf_free(&sql);
    free(view);
    if (rc) {
        tarn_error_clear();
        return 0;
    }
    return n > 0;
}

static int run_counted(build_state *b, char *sql, int64_t *count)
{
    int rc = mb_run(b, sql, count, 1);
    free(sql);
    if (count && *count < 0)
        *count = 0;
    return rc;
}

/* An existing table: close the changed (and gone) keys, open the changed
 * and new ones. */
static int history_update(build_state *b, strlist *cols, const strlist *track, const char *ts)
{
    const model_annot *a = &b->m->annot;
    model_result *r = b->r;
    int rc = mb_check_columns(b, cols, history_columns, NHISTORY_COLUMNS);
    if (!rc)
        rc = run_counted(b, cg_history_keys(b->target, &a->key, track, a->deletes_close), NULL);
    if (!rc)
        rc = run_counted(b, cg_history_close(b->target, &a->key, ts), &r->rows_closed);
    if (!rc)
        rc = run_counted(b, cg_history_open(b->target, &a->key, ts), &r->rows_opened);
    return rc;
}

int build_history(build_state *b)
{
    model_result *r = b->r;
    strlist cols = {0}, track = {0};
    int rc = mb_stage(b, NULL);
    if (!rc)
        rc = mb_stage_columns(b, &cols);
    if (!rc)
        rc = check_reserved(&cols);
    if (!rc)
        rc = mb_check_keys(b, &cols);
    if (!rc && b->m->annot.deletes_close)
        rc = mb_check_empty(b);
    if (!rc)
        rc = tracked_columns(b, &cols, &track);
    free(r->valid_at);
    char *ts = run_timestamp(b->c->sum->started_at, &r->valid_at);
    if (!rc && !b->exists) {
        rc = run_counted(b, cg_history_create(b->target, ts), &r->rows_opened);
        b->exists = !rc;
    } else if (!rc) {
        rc = history_update(b, &cols, &track, ts);
    }
    if (!rc && (!b->existed || !has_current_view(b))) {
        rc = run_counted(b, cg_history_view(b->c->lake, b->m->schema, b->m->table), NULL);
        b->altered = 1;
    }
    r->rows_written = r->rows_opened;
    free(ts);
    strlist_free(&cols);
    strlist_free(&track);
    return rc;
}

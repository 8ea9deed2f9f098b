/*
 * commit.c — committing a lake transaction: its pending state becomes
 * catalog rows and one new snapshot (see commit.h).
 *
 * The commit runs, in one transaction on the catalog database:
 *   the commit lock                        (PostgreSQL, see below)
 *   the newest snapshot                    (a rebase when it is not ours)
 *   INSERT INTO ducklake_snapshot          (the new snapshot and counters)
 *   the commit batch, txn->stmts, in order:
 *     the catalog rows and statements of every change, as recorded
 *     pending deletions and inlined rows   (from the TEMP tables)
 *     ducklake_table_stats, column stats   (record counts, next row id)
 *     id renumbering                       (renumber.c)
 *   the rebase's statements                (rebase.c)
 *   INSERT INTO ducklake_snapshot_changes  (changes_made + commit message)
 * Parquet files were already written by the statements, outside the
 * catalog transaction, so writers do the heavy part at once; if the
 * catalog transaction fails they are deleted (or left as orphans if the
 * process dies, for cleanup).
 *
 * Several writers (a PostgreSQL catalog): every tarn writer takes a
 * transaction-scoped advisory lock keyed by the catalog's schema first
 * (catdb.h: lk_catdb_lock_commits), so the catalog parts of commits run
 * one at a time and tarn writers never collide on ducklake_snapshot's key.
 * Under the lock the newest snapshot is read again: when another writer
 * committed since this transaction began, rebase.c reads what the newer
 * snapshots changed (changes_made), applies DuckLake's conflict rules
 * (conflict.c: a real conflict fails with DuckLake's message and leaves
 * the lake as it was) and otherwise moves the transaction onto the newest
 * snapshot: the next snapshot id and schema version, file ids and row ids
 * after the others', the table stats added to theirs. That move counts
 * as DuckLake's first retry. Writers that take no lock (DuckLake itself)
 * can still make the batch fail on a key; such a failure is retried as
 * DuckLake retries it, up to ducklake_max_retry_count attempts in all,
 * waiting ducklake_retry_wait_ms (times 0.5-1, times
 * ducklake_retry_backoff per retry) in between. A DuckDB-file catalog has
 * one writer process: no lock and no newer snapshot, the same path.
 *
 * Nothing here touches the session's catalog model, caches or views:
 * lake.c brings those up to date from the transaction handed back.
 */
#include "lake/commit.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/colstats.h"
#include "lake/deletes.h"
#include "lake/idorder.h"
#include "lake/macro.h"
#include "lake/rebase.h"
#include "lake/renumber.h"
#include "lake/settings.h"
#include "lake/sort.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* Test hook: TARN_CRASH_AT=<point> makes the process exit abruptly there,
 * so tests can prove that a crash at any point leaves the lake readable at
 * its last committed snapshot. */
static void crash_point(const char *point)
{
    const char *at = getenv("TARN_CRASH_AT");
    if (at && strcmp(at, point) == 0) {
        fprintf(stderr, "tarn: TARN_CRASH_AT=%s: exiting abruptly\n", point);
        _exit(99);
    }
}

/* Test hook: TARN_COMMIT_HOLD=<path> makes the next commit, once a file
 * <path> exists, remove it and wait TARN_COMMIT_HOLD_S seconds (default 3)
 * inside its catalog transaction, its statements sent and its COMMIT not,
 * saying so on stderr: a test drops the catalog connection there. */
static void commit_hold_point(void)
{
    const char *path = getenv("TARN_COMMIT_HOLD");
    if (!path || !*path || unlink(path) != 0)
        return;
    const char *sec = getenv("TARN_COMMIT_HOLD_S");
    double s = sec ? strtod(sec, NULL) : 3;
    fprintf(stderr, "tarn: TARN_COMMIT_HOLD: holding inside the catalog transaction\n");
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Test hook: TARN_COMMIT_WAIT=<path> stops a commit before its catalog
 * transaction until a test lets it go, so that another writer can commit
 * in between: the commit writes a line to the fifo <path>.ready (blocking
 * until the test reads it), then reads the fifo <path> to its end
 * (blocking until the test writes and closes it). No timing involved. */
static void commit_wait_point(void)
{
    const char *path = getenv("TARN_COMMIT_WAIT");
    if (!path || !*path)
        return;
    char *ready = xasprintf("%s.ready", path);
    int fd = open(ready, O_WRONLY);
    if (fd >= 0) {
        ssize_t w = write(fd, "ready\n", 6);
        (void)w;
        close(fd);
    }
    free(ready);
    fd = open(path, O_RDONLY);
    if (fd >= 0) {
        char buf[64];
        while (read(fd, buf, sizeof(buf)) > 0)
            ;
        close(fd);
    }
}

/* DuckLake writes changes_made tokens grouped by kind in a fixed order. */
static const char *const TOKEN_ORDER[] = {
    "dropped_schema:",       "dropped_table:",       "dropped_view:",
    "created_schema:",       "created_table:",       "created_view:",
    "created_scalar_macro:", "created_table_macro:", "dropped_scalar_macro:",
    "dropped_table_macro:",  "inserted_into_table:", "deleted_from_table:",
    "altered_table:",        "altered_view:",        "inlined_insert:",
    "inlined_delete:",       "inline_flush:",        "merge_adjacent:",
    "rewrite_delete:",
};

/* The id of an id token ("inlined_insert:4"), or -1 for a name token. */
static int64_t token_id(const char *tok)
{
    const char *colon = strchr(tok, ':');
    return colon && colon[1] != '"' ? strtoll(colon + 1, NULL, 10) : -1;
}

/* The schema a name token names ("created_table:\"s\".\"t\"" -> s), into
 * out (at most size bytes). */
static void token_schema(const char *tok, char *out, size_t size)
{
    const char *p = strchr(tok, ':');
    size_t n = 0;
    if (p && p[1] == '"') {
        for (p += 2; *p && n + 1 < size; p++) {
            if (*p == '"' && p[1] == '"')
                p++;
            else if (*p == '"')
                break;
            out[n++] = *p;
        }
    }
    out[n] = 0;
}

/* Position of a name token's schema in DuckLake's listing order. */
static size_t schema_rank(const char *tok, const char **order, size_t norder)
{
    char schema[512];
    token_schema(tok, schema, sizeof(schema));
    for (size_t i = 0; i < norder; i++)
        if (strcasecmp(order[i], schema) == 0)
            return i;
    return norder;
}

/* changes_made lists the kinds in DuckLake's order; within a kind, ids in
 * ascending order (DuckLake keeps them in ordered sets), new schemas and
 * the new tables' schemas in the order of DuckLake's hash sets
 * (idorder.c), and names within one schema in the order they were made
 * (DuckLake's order there depends on memory addresses). */
static void build_changes(lk_txn *txn)
{
    size_t nkinds = sizeof(TOKEN_ORDER) / sizeof(TOKEN_ORDER[0]);
    char **picked = xmalloc((txn->nchange_tokens + 1) * sizeof(char *));
    const char **schemas = NULL, **tables = NULL;
    size_t nschemas = lk_idorder_change_schemas(txn->ids, 0, &schemas);
    size_t ntables = lk_idorder_change_schemas(txn->ids, 1, &tables);
    for (size_t k = 0; k < nkinds; k++) {
        size_t plen = strlen(TOKEN_ORDER[k]), n = 0;
        int by_schema = strcmp(TOKEN_ORDER[k], "created_schema:") == 0 ? 1
                        : strcmp(TOKEN_ORDER[k], "created_table:") == 0 ||
                                strcmp(TOKEN_ORDER[k], "created_view:") == 0
                            ? 2
                            : 0;
        for (size_t i = 0; i < txn->nchange_tokens; i++)
            if (strncmp(txn->change_tokens[i], TOKEN_ORDER[k], plen) == 0)
                picked[n++] = txn->change_tokens[i];
        for (size_t i = 1; i < n; i++) /* insertion sort: stable, lists are short */
            for (size_t j = i;
                 j > 0 && (by_schema == 1 ? schema_rank(picked[j - 1], schemas, nschemas) >
                                                schema_rank(picked[j], schemas, nschemas)
                           : by_schema == 2 ? schema_rank(picked[j - 1], tables, ntables) >
                                                  schema_rank(picked[j], tables, ntables)
                                            : token_id(picked[j - 1]) > token_id(picked[j]));
                 j--) {
                char *tmp = picked[j];
                picked[j] = picked[j - 1];
                picked[j - 1] = tmp;
            }
        for (size_t i = 0; i < n; i++) {
            if (txn->changes.len)
                buf_putc(&txn->changes, ',');
            buf_puts(&txn->changes, picked[i]);
        }
    }
    free(picked);
    free(schemas);
    free(tables);
}

static void stats_sql(lk_txn *txn, const char *meta, const lk_rebase *rb)
{
    for (size_t i = 0; i < txn->ndeltas; i++) {
        lk_table_delta *d = &txn->deltas[i];
        if (!d->touched)
            continue;
        /* a table dropped later in the transaction keeps no stats */
        if (d->stats.n && lk_catalog_table_by_id(&txn->cat, d->table_id))
            lk_stats_merge_into_table(txn, d, meta, d->table_id, &d->stats);
        if (!d->had_stats_row)
            lk_txn_row(txn, "ducklake_table_stats", "(%lld, %lld, %lld, %lld)",
                       (long long)d->table_id, (long long)d->added_records,
                       (long long)lk_rebase_next_row_id(rb, d), (long long)d->added_bytes);
        else
            lk_txn_sql(txn,
                       "UPDATE %s.ducklake_table_stats SET record_count = record_count + %lld, "
                       "next_row_id = %lld, file_size_bytes = file_size_bytes + %lld WHERE "
                       "table_id = %lld",
                       meta, (long long)d->added_records, (long long)lk_rebase_next_row_id(rb, d),
                       (long long)d->added_bytes, (long long)d->table_id);
    }
}

/* One statement of the commit batch: SQL, or a mixed write the catalog
 * runs itself (one PostgreSQL cannot read the session's TEMP tables). */
typedef struct {
    char *sql;
    const lk_catdb_write *write;
} batch_item;

typedef struct {
    batch_item *v;
    size_t n;
} batch;

static void batch_push(batch *b, char *sql, const lk_catdb_write *w)
{
    b->v = xrealloc(b->v, (b->n + 1) * sizeof *b->v);
    b->v[b->n++] = (batch_item){sql, w};
}

static void batch_free(batch *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->v[i].sql);
    free(b->v);
    b->v = NULL;
    b->n = 0;
}

/* Appends the commit batch to `out`: a row group becomes one multi-row
 * INSERT (DuckDB's cost is per statement, ~0.3 ms, far more than per
 * row); a mixed write is SQL when the catalog is DuckDB's. */
static void batch_statements(batch *out, const lk_txn *txn, const lk_catdb *db, const lk_rebase *rb)
{
    const char *meta = lk_catdb_name(db);
    for (size_t i = 0; i < txn->nstmts; i++) {
        const lk_txn_stmt *st = &txn->stmts[i];
        if (st->write && !lk_catdb_mixed_native(db)) {
            batch_push(out, NULL, st->write);
        } else if (st->write) {
            tarn_buf b = {0};
            lk_catdb_write_sql(&b, db, st->write);
            batch_push(out, buf_detach(&b), NULL);
        } else if (st->sql) {
            batch_push(out, xstrdup(st->sql), NULL);
        } else {
            char *moved = lk_rebase_rows(rb, txn, st->table, st->rows.ptr);
            batch_push(out,
                       xasprintf("INSERT INTO %s.%s VALUES %s", meta, st->table,
                                 moved ? moved : st->rows.ptr),
                       NULL);
            free(moved);
        }
    }
}

/* Runs items [from, to) of the batch: the SQL ones as one batch of
 * statements, a mixed write on its own. */
static int run_items(lk_catdb *db, duckdb_connection con, const batch *stmts, size_t from,
                     size_t to)
{
    int rc = 0;
    size_t i = from;
    while (i < to && !rc) {
        if (stmts->v[i].write) {
            rc = lk_catdb_mixed_write(db, con, stmts->v[i++].write);
            continue;
        }
        strlist sql = {0};
        for (; i < to && !stmts->v[i].write; i++)
            strlist_push(&sql, stmts->v[i].sql);
        char *joined = strlist_join(&sql, ";\n");
        rc = lk_catdb_exec(db, con, joined);
        free(joined);
        strlist_free(&sql);
    }
    return rc;
}

/* Runs the commit's catalog statements inside the open catalog
 * transaction. They go to the catalog as one batch (a round trip each cost
 * more than the statements themselves); DuckDB stops a batch at its first
 * failing statement. To name that statement the batch is rolled back and
 * replayed one statement at a time in a transaction of its own, which the
 * caller rolls back like any failed commit. */
static int run_statements(lk_catdb *db, duckdb_connection con, const batch *stmts)
{
    if (stmts->n == 0)
        return 0;
    int rc = run_items(db, con, stmts, 0, stmts->n);
    if (!rc)
        return 0;
    char *batch_error = xstrdup(tarn_error_last());
    lk_catdb_rollback(db, con);
    rc = lk_catdb_begin(db, con);
    for (size_t i = 0; i < stmts->n && !rc; i++) {
        rc = run_items(db, con, stmts, i, i + 1);
        if (rc)
            rc = tarn_error_prefix(rc, "catalog statement %zu", i + 1);
    }
    if (!rc) /* the replay passed: report what the batch said */
        rc = tarn_error_set(TARN_ERROR, "%s", batch_error);
    free(batch_error);
    return rc;
}

/* Runs `stmts` as one catalog transaction: all of them or none. A
 * snapshot's commit passes its crash point (TARN_CRASH_AT=in-catalog-txn);
 * other commits NULL. */
static int run_catalog_txn(lk_lake *lake, duckdb_connection con, const batch *stmts,
                           const char *crash)
{
    int rc = lk_catdb_begin(&lake->db, con);
    if (!rc)
        rc = run_statements(&lake->db, con, stmts);
    if (!rc) {
        if (crash)
            crash_point(crash);
        rc = lk_catdb_commit(&lake->db, con);
    } else {
        lk_catdb_rollback(&lake->db, con);
    }
    return rc;
}

/* What the commit adds to txn->stmts and the deltas, to undo before a
 * retry builds them again. */
typedef struct {
    size_t nstmts, open_rows;
    size_t *lens; /* rows.len of stmts[0..nstmts) */
    size_t ndeltas;
    int64_t *table_ids;
    int *had_stats, *stats_inserted;
} commit_mark;

static void mark_take(commit_mark *m, const lk_txn *txn)
{
    m->nstmts = txn->nstmts;
    m->open_rows = txn->open_rows;
    m->lens = xmalloc((txn->nstmts + 1) * sizeof(size_t));
    for (size_t i = 0; i < txn->nstmts; i++)
        m->lens[i] = txn->stmts[i].rows.len;
    m->ndeltas = txn->ndeltas;
    m->table_ids = xmalloc((txn->ndeltas + 1) * sizeof(int64_t));
    m->had_stats = xmalloc((txn->ndeltas + 1) * sizeof(int));
    m->stats_inserted = xmalloc((txn->ndeltas + 1) * sizeof(int));
    for (size_t i = 0; i < txn->ndeltas; i++) {
        m->table_ids[i] = txn->deltas[i].table_id;
        m->had_stats[i] = txn->deltas[i].had_stats_row;
        m->stats_inserted[i] = txn->deltas[i].stats_inserted;
    }
}

static void mark_restore(const commit_mark *m, lk_txn *txn)
{
    for (size_t i = m->nstmts; i < txn->nstmts; i++) {
        lk_txn_stmt *st = &txn->stmts[i];
        free(st->sql);
        free(st->table);
        buf_free(&st->rows);
        if (st->write) {
            lk_catdb_write_free(st->write);
            free(st->write);
        }
    }
    txn->nstmts = m->nstmts;
    txn->open_rows = m->open_rows;
    for (size_t i = 0; i < m->nstmts; i++)
        if (txn->stmts[i].rows.len > m->lens[i]) {
            txn->stmts[i].rows.len = m->lens[i];
            txn->stmts[i].rows.ptr[m->lens[i]] = 0;
        }
    for (size_t i = 0; i < m->ndeltas && i < txn->ndeltas; i++) {
        txn->deltas[i].table_id = m->table_ids[i];
        txn->deltas[i].had_stats_row = m->had_stats[i];
        txn->deltas[i].stats_inserted = m->stats_inserted[i];
    }
}

static void mark_free(commit_mark *m)
{
    free(m->lens);
    free(m->table_ids);
    free(m->had_stats);
    free(m->stats_inserted);
}

/* The statements of one attempt, snapshot row first, changes row last. */
static void commit_batch(batch *all, lk_lake *lake, const lk_rebase *rb)
{
    lk_txn *txn = lake->txn;
    const char *meta = lk_catdb_name(&lake->db);
    int moved = rb && rb->active;
    int64_t snap = moved ? rb->to_snapshot : txn->snapshot_id;
    for (size_t i = 0; moved && i < txn->ndeltas; i++)
        txn->deltas[i].had_stats_row = rb->had_stats[i];
    batch_push(all,
               xasprintf("INSERT INTO %s.ducklake_snapshot VALUES (%lld, now(), %lld, %lld, %lld)",
                         meta, (long long)snap,
                         (long long)(moved ? rb->schema_version : lk_txn_schema_version(txn)),
                         (long long)(moved ? rb->next_catalog_id : txn->cat.next_catalog_id),
                         (long long)(moved ? rb->next_file_id
                                           : txn->cat.next_file_id + txn->file_id_bumps)),
               NULL);
    stats_sql(txn, meta, rb);
    lk_renumber_files_sql(txn, meta, rb);
    lk_renumber_sql(txn, meta, moved ? rb->cat_shift : 0);
    batch_statements(all, txn, &lake->db, rb);
    strlist moves = {0};
    lk_rebase_sql(&moves, rb, txn, meta, lk_catdb_own_rows(&lake->db));
    lk_renumber_names_sql(&moves, txn, meta, moved ? rb->cat_shift : 0, moved ? rb->sv_shift : 0);
    for (size_t i = 0; i < moves.n; i++)
        batch_push(all, xstrdup(moves.items[i]), NULL);
    strlist_free(&moves);
    tarn_buf b = {0};
    buf_printf(&b, "INSERT INTO %s.ducklake_snapshot_changes VALUES (%lld, ", meta,
               (long long)snap);
    char *shifted = lk_rebase_changes(rb, txn);
    quote_literal(&b, shifted ? shifted : txn->changes.len ? buf_cstr(&txn->changes) : NULL);
    free(shifted);
    buf_puts(&b, ", ");
    quote_literal(&b, txn->author);
    buf_puts(&b, ", ");
    quote_literal(&b, txn->message);
    buf_puts(&b, ", ");
    quote_literal(&b, txn->extra_info);
    buf_puts(&b, ")");
    batch_push(all, buf_detach(&b), NULL);
}

/* The retry settings, read once per commit that needs them. */
typedef struct {
    int read;
    lk_retry_settings v;
} retry_state;

static const lk_retry_settings *retry_settings(retry_state *r, duckdb_connection con)
{
    if (!r->read) {
        lk_setting_retry(&r->v, con);
        r->read = 1;
    }
    return &r->v;
}

/* DuckLake's message when the attempts are used up (`cause`: the last
 * attempt's error). */
static int retries_exhausted(int64_t max, const char *cause)
{
    return tarn_error_set(TARN_ECONFLICT,
                          "TransactionContext Error: Failed to commit: Failed to commit DuckLake "
                          "transaction.\nExceeded the maximum retry count of %lld set by the "
                          "ducklake_max_retry_count setting.\n. Consider increasing the value "
                          "with: e.g., \"SET ducklake_max_retry_count = %lld;\"\n%s",
                          (long long)max, (long long)max * 10, cause);
}

/* The constraint a PostgreSQL unique violation names ("…" after `unique
 * constraint `), or NULL; *len its length. */
static const char *violated_constraint(const char *msg, size_t *len)
{
    const char *p = msg ? strstr(msg, "unique constraint \"") : NULL;
    if (!p)
        return NULL;
    p += strlen("unique constraint \"");
    const char *end = strchr(p, '"');
    *len = end ? (size_t)(end - p) : strlen(p);
    return p;
}

/* A catalog statement of the commit failed. A clash of DuckLake's ids or
 * rows with another writer's is worth another attempt (*retry). A
 * duplicate key in a table of the caller's own (tarn_session_commit_sql's
 * rows, such as a build's guard row) is not: another process committed
 * that row first, and any attempt would fail again. */
static int statement_failed(int rc, int *retry)
{
    const char *m = tarn_error_last();
    size_t n = 0;
    const char *c = violated_constraint(m, &n);
    if (c && strncmp(c, "ducklake_", 9) != 0) {
        *retry = 0;
        char *cause = xstrdup(m);
        rc = tarn_error_set(TARN_ECONFLICT,
                            "another process committed a row this commit adds first, so nothing "
                            "was committed (%s)",
                            cause);
        free(cause);
        return rc;
    }
    char *low = xstrdup(m ? m : "");
    for (char *p = low; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    *retry = strstr(low, "primary key") || strstr(low, "unique") || strstr(low, "conflict") ||
             strstr(low, "concurrent");
    free(low);
    return rc;
}

/* One attempt of the catalog transaction. *failed counts the attempts
 * that failed so far (DuckLake's retry counter); a newer snapshot found
 * under the lock is a failed first attempt, as it is for DuckLake. Sets
 * *retry when another attempt could succeed. */
static int commit_attempt(lk_lake *lake, duckdb_connection con, int64_t *failed, int *retry,
                          retry_state *rs, int *rebased)
{
    lk_txn *txn = lake->txn;
    *retry = 0;
    lk_rebase rb = {0};
    int locked = lk_catdb_has_commit_lock(&lake->db);
    const lk_retry_settings *s = locked ? retry_settings(rs, con) : NULL; /* not under the lock */
    int rc = lk_catdb_begin(&lake->db, con);
    if (!rc && locked) {
        lk_snap_counters newest;
        rc = lk_catdb_lock_commits(&lake->db, con);
        if (!rc)
            rc = lk_rebase_newest(&newest, lake, con);
        if (!rc && newest.snapshot_id != txn->cat.snapshot_id) {
            if (*failed == 0 && ++*failed >= s->max_retry_count) {
                char *cause = xasprintf("Failed to flush changes into DuckLake: duplicate key "
                                        "value violates unique constraint "
                                        "\"ducklake_snapshot_pkey\": snapshot %lld was committed "
                                        "by another transaction",
                                        (long long)txn->snapshot_id);
                rc = retries_exhausted(s->max_retry_count, cause);
                free(cause);
            } else {
                rc = lk_rebase_prepare(&rb, lake, con, &newest);
            }
        }
    }
    batch all = {0};
    if (!rc) {
        commit_batch(&all, lake, &rb);
        rc = run_statements(&lake->db, con, &all);
        if (rc)
            rc = statement_failed(rc, retry);
    }
    if (!rc)
        rc = lk_rebase_check_files(&rb, lake, con);
    if (!rc) {
        crash_point("in-catalog-txn");
        commit_hold_point();
        rc = lk_catdb_commit(&lake->db, con);
        if (rc) {
            /* the failed COMMIT ended the transaction; a connection lost
             * inside it takes this ROLLBACK before it runs anything else
             * (duck/pgscan.c) */
            tarn_error_saved e = tarn_error_save();
            lk_catdb_rollback(&lake->db, con);
            tarn_error_restore(&e);
        }
    } else {
        lk_catdb_rollback(&lake->db, con);
    }
    if (!rc && rb.active) { /* the session's counters become the committed ones */
        txn->snapshot_id = rb.to_snapshot;
        txn->cat_shift = rb.cat_shift;
        txn->sv_shift = rb.sv_shift;
        txn->other_changes = rb.theirs;
        rb.theirs = NULL;
        for (size_t i = 0; i < txn->ndeltas; i++)
            txn->deltas[i].next_row_id = lk_rebase_next_row_id(&rb, &txn->deltas[i]);
        *rebased = 1;
    }
    batch_free(&all);
    lk_rebase_free(&rb);
    return rc;
}

/* DuckLake's wait before retry `i` (from 0): retry_wait_ms times a random
 * factor in [0.5, 1) times retry_backoff^i. */
static void retry_wait(const lk_retry_settings *s, int64_t i)
{
    double factor = 0.5 + 0.5 * ((double)rand() / ((double)RAND_MAX + 1.0));
    double ms = (double)s->retry_wait_ms * factor * pow(s->retry_backoff, (double)i);
    if (ms <= 0)
        return;
    struct timespec ts = {(time_t)(ms / 1000), (long)(fmod(ms, 1000.0) * 1e6)};
    nanosleep(&ts, NULL);
}

static int commit_catalog(lk_lake *lake, duckdb_connection con, int *rebased)
{
    commit_wait_point();
    commit_mark mark;
    mark_take(&mark, lake->txn);
    retry_state rs = {0};
    int64_t failed = 0;
    int rc;
    for (;;) {
        int retry = 0;
        rc = commit_attempt(lake, con, &failed, &retry, &rs, rebased);
        if (!rc || !retry)
            break;
        const lk_retry_settings *s = retry_settings(&rs, con);
        if (++failed >= s->max_retry_count) {
            char *cause = xstrdup(tarn_error_last());
            rc = retries_exhausted(s->max_retry_count, cause);
            free(cause);
            break;
        }
        retry_wait(s, failed - 1);
        mark_restore(&mark, lake->txn);
    }
    mark_free(&mark);
    return rc;
}

/* The lake option require_commit_message: a snapshot needs
 * ducklake_set_commit_message first (DuckLake's error, word for word). */
static int commit_info_provided(lk_lake *lake, duckdb_connection con)
{
    const char *v = lk_lake_option(lake, con, "require_commit_message", NULL);
    if (!v || strcmp(v, "true") != 0 || lake->txn->has_message)
        return 0;
    return tarn_error_set(
        TARN_EINVALID,
        "Invalid Configuration Error: Commit Information for the snapshot is required but has not "
        "been provided. \n * Provide the information with \"CALL "
        "ducklake.set_commit_message('author_name', 'commit_message'); \n * Set the required "
        "commit message to false with \"CALL ducklake.set_option('require_commit_message', "
        "False)\" '\"");
}

/* Ends the transaction without a commit (see lk_txn_commit). */
static int not_committed(lk_txn **done, lk_lake *lake, int rc)
{
    *done = lk_txn_discard(lake);
    return rc;
}

int lk_txn_commit(lk_txn **done, lk_lake *lake, duckdb_connection con)
{
    *done = NULL;
    lk_txn *txn = lake->txn;
    if (!txn)
        return 0;
    lake->db.views_held = 0; /* the session's DuckDB transaction has ended */
    if (txn->failed)
        return not_committed(done, lake, 0);
    if (txn->conflict)
        return not_committed(
            done, lake,
            tarn_error_set(TARN_ECONFLICT, "TransactionContext Error: %s", txn->conflict));
    int rc = lk_deletes_flush(lake, con);
    if (rc)
        return not_committed(done, lake, rc);
    lk_renumber_files_plan(txn);
    lk_write_move_pending(lake, con);
    lk_sort_commit(lake);
    lk_renumber_plan(txn);
    lk_macro_commit(txn); /* DuckLake numbers new macros after all else */
    build_changes(txn);
    /* DuckLake advances next_file_id once per table that received inlined
     * rows but no file, so that caches keyed by it see the data change. */
    for (size_t i = 0; i < txn->ndeltas; i++)
        if (txn->deltas[i].inlined && !txn->deltas[i].got_file)
            txn->file_id_bumps++;
    txn->file_id_bumps += (int64_t)txn->new_maps.n; /* their ids (see txn.h) */
    if (txn->nchange_tokens == 0 && txn->nstmts == 0)
        return not_committed(done, lake, 0);
    if (!lk_txn_makes_snapshot(txn)) {
        /* only rows of the caller's own (tarn_session_commit_sql): no lake
         * change, so no snapshot, as DuckLake does for a transaction that
         * writes nothing */
        batch own = {0};
        batch_statements(&own, txn, &lake->db, NULL);
        rc = run_catalog_txn(lake, con, &own, NULL);
        batch_free(&own);
        return not_committed(done, lake, rc);
    }
    rc = commit_info_provided(lake, con);
    if (rc)
        return not_committed(done, lake, rc);
    crash_point("after-parquet-write");
    int rebased = 0;
    rc = commit_catalog(lake, con, &rebased);
    if (rc) {
        if (rc != TARN_ECONFLICT) /* DuckLake's conflict messages stand as they are */
            tarn_error_prefix(rc, "committing to lake \"%s\"", lake->alias);
        return not_committed(done, lake, rc);
    }
    crash_point("after-commit");
    lake->txn = NULL;
    txn->committed = 1;
    txn->rebased = rebased;
    *done = txn;
    return 0;
}

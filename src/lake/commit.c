/*
 * commit.c — committing a lake transaction: its pending state becomes
 * catalog rows and one new snapshot (see commit.h).
 *
 * The commit runs, in one DuckDB transaction on the catalog database:
 *   INSERT INTO ducklake_snapshot          (the new snapshot and counters)
 *   the commit batch, txn->stmts, in order:
 *     the catalog rows and statements of every change, as recorded
 *     pending deletions and inlined rows   (from the TEMP tables)
 *     ducklake_table_stats, column stats   (record counts, next row id)
 *     id renumbering                       (renumber.c)
 *   INSERT INTO ducklake_snapshot_changes  (changes_made + commit message)
 * The snapshot row goes first so that a concurrent writer's commit fails on
 * its primary key before anything else is written. Parquet files were
 * already written by the statements; if the catalog transaction fails they
 * are deleted (or left as orphans if the process dies, for cleanup).
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
#include "lake/renumber.h"
#include "lake/sort.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
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

static void stats_sql(lk_txn *txn, const char *meta)
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
                       (long long)d->next_row_id, (long long)d->added_bytes);
        else
            lk_txn_sql(txn,
                       "UPDATE %s.ducklake_table_stats SET record_count = record_count + %lld, "
                       "next_row_id = %lld, file_size_bytes = file_size_bytes + %lld WHERE "
                       "table_id = %lld",
                       meta, (long long)d->added_records, (long long)d->next_row_id,
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
static void batch_statements(batch *out, const lk_txn *txn, const lk_catdb *db)
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
            batch_push(out, xasprintf("INSERT INTO %s.%s VALUES %s", meta, st->table, st->rows.ptr),
                       NULL);
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

static int commit_catalog(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    int64_t sv = lk_txn_schema_version(txn);
    char *snap = xasprintf("INSERT INTO %s.ducklake_snapshot VALUES (%lld, now(), %lld, %lld, "
                           "%lld)",
                           lk_catdb_name(&lake->db), (long long)txn->snapshot_id, (long long)sv,
                           (long long)txn->cat.next_catalog_id,
                           (long long)(txn->cat.next_file_id + txn->file_id_bumps));
    stats_sql(txn, lk_catdb_name(&lake->db));
    lk_renumber_files_sql(txn, lk_catdb_name(&lake->db));
    lk_renumber_sql(txn, lk_catdb_name(&lake->db));
    tarn_buf b = {0};
    buf_printf(&b, "INSERT INTO %s.ducklake_snapshot_changes VALUES (%lld, ",
               lk_catdb_name(&lake->db), (long long)txn->snapshot_id);
    quote_literal(&b, txn->changes.len ? buf_cstr(&txn->changes) : NULL);
    buf_puts(&b, ", ");
    quote_literal(&b, txn->author);
    buf_puts(&b, ", ");
    quote_literal(&b, txn->message);
    buf_puts(&b, ", ");
    quote_literal(&b, txn->extra_info);
    buf_puts(&b, ")");
    /* one round trip: the snapshot row, the changes, the snapshot's
     * changes_made row */
    batch all = {0};
    batch_push(&all, snap, NULL);
    batch_statements(&all, txn, &lake->db);
    batch_push(&all, buf_detach(&b), NULL);
    int rc = run_catalog_txn(lake, con, &all, "in-catalog-txn");
    batch_free(&all);
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
        batch_statements(&own, txn, &lake->db);
        rc = run_catalog_txn(lake, con, &own, NULL);
        batch_free(&own);
        return not_committed(done, lake, rc);
    }
    rc = commit_info_provided(lake, con);
    if (rc)
        return not_committed(done, lake, rc);
    crash_point("after-parquet-write");
    rc = commit_catalog(lake, con);
    if (rc) {
        tarn_error_prefix(rc, "committing to lake \"%s\"", lake->alias);
        return not_committed(done, lake, rc);
    }
    crash_point("after-commit");
    lake->txn = NULL;
    txn->committed = 1;
    *done = txn;
    return 0;
}

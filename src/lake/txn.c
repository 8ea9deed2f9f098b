/*
 * txn.c — lake transactions: pending state and the commit (see txn.h).
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
 * are deleted here (or left as orphans if the process dies, for cleanup).
 */
#include "lake/txn.h"
#include "lake/idorder.h"
#include "lake/renumber.h"
#include "lake/scan.h"

#include "duck/duck.h"
#include "lake/colstats.h"
#include "lake/deletes.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdarg.h>
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

const lk_catalog *lk_txn_catalog(lk_lake *lake)
{
    return lake->txn ? &lake->txn->cat : &lake->cat;
}

static char *temp_name(lk_lake *lake, const char *kind, int64_t id)
{
    tarn_buf b = {0};
    char *raw = id >= 0 ? xasprintf("__tarn_%s_%s_%lld", kind, lake->alias, (long long)id)
                        : xasprintf("__tarn_%s_%s", kind, lake->alias);
    buf_puts(&b, "temp.main.");
    quote_ident(&b, raw);
    free(raw);
    return buf_detach(&b);
}

char *lk_txn_pending_inserts(lk_lake *lake, int64_t table_id)
{
    return temp_name(lake, "pins", table_id);
}

char *lk_txn_pending_deletes(lk_lake *lake)
{
    return temp_name(lake, "pdel", -1);
}

char *lk_txn_pending_inline_deletes(lk_lake *lake)
{
    return temp_name(lake, "pidel", -1);
}

static int exec_fmt(duckdb_connection con, const char *fmt, const char *arg)
{
    char *sql = xasprintf(fmt, arg);
    int rc = duck_exec(con, sql);
    free(sql);
    return rc;
}

int lk_txn_begin(lk_lake *lake, duckdb_connection con, int explicit_txn)
{
    if (lake->read_only)
        return tarn_error_set(TARN_EINVALID,
                              "lake \"%s\" is attached read-only (READ_ONLY or a pinned "
                              "SNAPSHOT_VERSION): it cannot be written",
                              lake->alias);
    lk_txn *txn = xcalloc(1, sizeof(*txn));
    /* Start from the latest committed snapshot: the session's catalog when
     * nobody committed since (one query instead of a reload), its tables
     * shared until the transaction changes one (model.h). */
    char *q = xasprintf("SELECT max(snapshot_id) FROM %s.ducklake_snapshot", lake->meta);
    int64_t latest = -1;
    int rc = duck_query_int64(&latest, NULL, con, q);
    free(q);
    if (!rc && latest == lake->cat.snapshot_id && lake->pinned < 0)
        lk_catalog_share(&txn->cat, &lake->cat);
    else if (!rc) {
        lk_lake_caches_forget(lake); /* another process committed */
        rc = lk_catalog_load(&txn->cat, con, lake->meta, -1);
    }
    if (rc) {
        free(txn);
        return rc;
    }
    txn->snapshot_id = txn->cat.snapshot_id + 1;
    txn->base_catalog_id = txn->cat.next_catalog_id;
    txn->base_file_id = txn->cat.next_file_id;
    txn->ids = lk_idorder_new();
    txn->explicit_txn = explicit_txn;
    lake->txn = txn;
    return 0;
}

void lk_txn_change(lk_txn *txn, const char *token)
{
    for (size_t i = 0; i < txn->nchange_tokens; i++)
        if (strcmp(txn->change_tokens[i], token) == 0)
            return;
    txn->change_tokens = xrealloc(txn->change_tokens, (txn->nchange_tokens + 1) * sizeof(char *));
    txn->change_tokens[txn->nchange_tokens++] = xstrdup(token);
}

/* The commit batch. A catalog row joins the group of its table recorded
 * after the last statement (lk_txn_sql), or starts one at the end; a
 * statement closes every open group. So the commit writes each table's
 * rows in the order they were recorded, and each row keeps its place
 * relative to every statement: only rows of different tables recorded
 * between the same two statements change order, and those commute (the
 * catalog tables have no triggers, foreign keys or defaults reading
 * another table, and now() is the catalog transaction's start time).
 * Closing the groups at every statement is the rule because a statement
 * may read or change rows recorded before it (the UPDATE … SET
 * end_snapshot of a table created and dropped in one transaction, an
 * INSERT … SELECT, renumber.c's moves of every id this transaction wrote,
 * a caller's own statement, which may read anything), and rows recorded
 * after it may rely on its effect (the DELETE of an inlined-data table's
 * row before the new row of that name; the UPDATE ending a comment tag
 * before the new tag row). Keeping a group open across a statement that
 * touches none of the open groups' tables would need to know what each
 * statement reads, for nothing in a model build's batch, where no table
 * has rows on both sides of a statement. */
static lk_txn_stmt *push_stmt(lk_txn *txn)
{
    txn->stmts = xrealloc(txn->stmts, (txn->nstmts + 1) * sizeof(lk_txn_stmt));
    lk_txn_stmt *st = &txn->stmts[txn->nstmts++];
    memset(st, 0, sizeof(*st));
    return st;
}

/* The rows of `table` that a new row joins (a ", " added when it has
 * rows): its open group, made at the end of the batch when there is none. */
static tarn_buf *row_group(lk_txn *txn, const char *table)
{
    for (size_t i = txn->open_rows; i < txn->nstmts; i++) {
        if (strcmp(txn->stmts[i].table, table) == 0) {
            buf_puts(&txn->stmts[i].rows, ", ");
            return &txn->stmts[i].rows;
        }
    }
    lk_txn_stmt *st = push_stmt(txn);
    st->table = xstrdup(table);
    return &st->rows;
}

void lk_txn_row(lk_txn *txn, const char *table, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(row_group(txn, table), fmt, ap);
    va_end(ap);
}

void lk_txn_schedule_deletion(lk_txn *txn, int64_t file_id, const char *path, int relative)
{
    tarn_buf p = {0};
    quote_literal(&p, path);
    lk_txn_row(txn, "ducklake_files_scheduled_for_deletion", "(%lld, %s, %s, now())",
               (long long)file_id, buf_cstr(&p), relative ? "true" : "false");
    buf_free(&p);
}

void lk_txn_sql(lk_txn *txn, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tarn_buf b = {0};
    buf_vprintf(&b, fmt, ap);
    va_end(ap);
    push_stmt(txn)->sql = buf_detach(&b);
    txn->open_rows = txn->nstmts; /* closes every row group */
}

int lk_ids_add(int64_t **ids, size_t *n, int64_t id)
{
    for (size_t i = 0; i < *n; i++)
        if ((*ids)[i] == id)
            return 0;
    *ids = xrealloc(*ids, (*n + 1) * sizeof(int64_t));
    (*ids)[(*n)++] = id;
    return 1;
}

void lk_txn_view_dirty(lk_txn *txn, int64_t table_id)
{
    lk_ids_add(&txn->dirty, &txn->ndirty, table_id);
    lk_ids_add(&txn->touched, &txn->ntouched, table_id);
}

void lk_txn_view_dropped(lk_txn *txn, const char *schema, const char *name)
{
    size_t ls = strlen(schema), ln = strlen(name);
    char *key = xmalloc(ls + ln + 2);
    memcpy(key, schema, ls + 1);
    memcpy(key + ls + 1, name, ln + 1);
    txn->dropped = xrealloc(txn->dropped, (txn->ndropped + 1) * sizeof(char *));
    txn->dropped[txn->ndropped++] = key;
}

void lk_txn_meta_table(lk_txn *txn, char op, const char *name)
{
    strlist_push_owned(&txn->meta_ops, xasprintf("%c%s", op, name));
}

void lk_txn_schema_changed(lk_txn *txn, int64_t table_id)
{
    lk_ids_add(&txn->schema_changed, &txn->nschema_changed, table_id);
}

void lk_txn_views_all(lk_txn *txn)
{
    txn->views_all = txn->views_all_ever = 1;
}

int64_t lk_txn_new_catalog_id(lk_txn *txn)
{
    return txn->cat.next_catalog_id++;
}

int64_t lk_txn_new_file_id(lk_txn *txn)
{
    return txn->cat.next_file_id++;
}

void lk_txn_wrote(lk_txn *txn, const char *abs_path)
{
    txn->written = xrealloc(txn->written, (txn->nwritten + 1) * sizeof(char *));
    txn->written[txn->nwritten++] = xstrdup(abs_path);
}

lk_table_delta *lk_txn_find_delta(lk_txn *txn, int64_t table_id)
{
    for (size_t i = 0; i < txn->ndeltas; i++)
        if (txn->deltas[i].table_id == table_id)
            return &txn->deltas[i];
    return NULL;
}

int lk_txn_created_table(const lk_lake *lake, const lk_txn *txn, const lk_table *t)
{
    return t->begin == txn->snapshot_id && !lk_catalog_table_by_id(&lake->cat, t->id);
}

lk_table_delta *lk_txn_delta(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    lk_txn *txn = lake->txn;
    lk_txn_view_dirty(txn, table_id); /* every write to the table goes through here */
    lk_table_delta *found = lk_txn_find_delta(txn, table_id);
    if (found)
        return found;
    txn->deltas = xrealloc(txn->deltas, (txn->ndeltas + 1) * sizeof(lk_table_delta));
    lk_table_delta *d = &txn->deltas[txn->ndeltas++];
    memset(d, 0, sizeof(*d));
    d->table_id = table_id;
    /* the session knows it when its last commit was the lake's last */
    for (size_t i = 0; txn->cat.snapshot_id == lake->cat.snapshot_id && i < lake->nrow_ids; i++) {
        if (lake->row_ids[i] == table_id) {
            d->had_stats_row = 1;
            d->next_row_id = d->base_row_id = lake->row_vals[i];
            return d;
        }
    }
    const lk_table *t = lk_catalog_table_by_id(&txn->cat, table_id);
    if (t && lk_txn_created_table(lake, txn, t))
        return d; /* created by this transaction: no stats row yet, row ids from 0 */
    char *sql = xasprintf("SELECT next_row_id FROM %s.ducklake_table_stats WHERE table_id = %lld",
                          lake->meta, (long long)table_id);
    int64_t next = 0;
    int is_null = 1;
    if (duck_query_int64(&next, &is_null, con, sql) == 0) {
        d->had_stats_row = 1;
        d->next_row_id = d->base_row_id = is_null ? 0 : next;
    } else {
        tarn_error_clear();
    }
    free(sql);
    return d;
}

static void txn_free(lk_txn *txn)
{
    lk_catalog_free(&txn->cat);
    for (size_t i = 0; i < txn->nstmts; i++) {
        free(txn->stmts[i].sql);
        free(txn->stmts[i].table);
        buf_free(&txn->stmts[i].rows);
    }
    free(txn->stmts);
    buf_free(&txn->changes);
    for (size_t i = 0; i < txn->nchange_tokens; i++)
        free(txn->change_tokens[i]);
    free(txn->change_tokens);
    for (size_t i = 0; i < txn->nfiles; i++) {
        free(txn->files[i].path);
        free(txn->files[i].abs_path);
    }
    free(txn->files);
    for (size_t i = 0; i < txn->nwritten; i++)
        free(txn->written[i]);
    free(txn->written);
    for (size_t i = 0; i < txn->ndeltas; i++)
        lk_stats_free(&txn->deltas[i].stats);
    free(txn->deltas);
    free(txn->pins);
    free(txn->author);
    free(txn->message);
    free(txn->extra_info);
    lk_idorder_free(txn->ids);
    free(txn->dirty);
    free(txn->touched);
    for (size_t i = 0; i < txn->ndropped; i++)
        free(txn->dropped[i]);
    free(txn->dropped);
    strlist_free(&txn->meta_ops);
    free(txn->schema_changed);
    free(txn->renum.from);
    free(txn->renum.to);
    free(txn->del_file_ids);
    free(txn->file_renum.from);
    free(txn->file_renum.to);
    free(txn);
}

/* Drops the transaction's pending-insert and pending-deletion tables (tracked in C: the names are
 * exact, so lake "lake" never touches lake "x_lake"'s tables). */
static void drop_temp_tables(lk_lake *lake, lk_txn *txn, duckdb_connection con)
{
    for (size_t i = 0; i < txn->npins; i++) {
        char *pins = lk_txn_pending_inserts(lake, txn->pins[i]);
        exec_fmt(con, "DROP TABLE IF EXISTS %s", pins);
        free(pins);
    }
    if (txn->has_deletes) {
        char *pd = lk_txn_pending_deletes(lake), *pid = lk_txn_pending_inline_deletes(lake);
        exec_fmt(con, "DROP TABLE IF EXISTS %s", pd);
        exec_fmt(con, "DROP TABLE IF EXISTS %s", pid);
        free(pd);
        free(pid);
    }
    tarn_error_clear();
}

void lk_txn_rollback(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    if (!txn)
        return;
    for (size_t i = 0; i < txn->nwritten; i++)
        unlink(txn->written[i]);
    lake->txn = NULL;
    lk_lake_views_forget(lake); /* a DuckDB ROLLBACK may have undone views */
    /* schemas and lake views changed: rebuild everything; else only the
     * views the transaction changed (a failed build must not cost a
     * rebuild of every view in the lake) */
    if (txn->views_all_ever || txn->cat.nschemas != lake->cat.nschemas ||
        txn->cat.nviews != lake->cat.nviews ||
        lk_lake_restore_views(lake, con, &txn->cat, txn->touched, txn->ntouched))
        lk_lake_refresh_views(lake, con);
    drop_temp_tables(lake, txn, con);
    txn_free(txn);
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

/* Appends the commit batch to `out` as SQL statements: a row group becomes
 * one multi-row INSERT (DuckDB's cost is per statement, ~0.3 ms, far more
 * than per row). */
static void batch_statements(strlist *out, const lk_txn *txn, const char *meta)
{
    for (size_t i = 0; i < txn->nstmts; i++) {
        const lk_txn_stmt *st = &txn->stmts[i];
        if (st->sql)
            strlist_push(out, st->sql);
        else
            strlist_push_owned(
                out, xasprintf("INSERT INTO %s.%s VALUES %s", meta, st->table, st->rows.ptr));
    }
}

/* Runs the commit's catalog statements inside the open catalog
 * transaction. They go to DuckDB as one batch (a round trip each cost
 * more than the statements themselves); DuckDB stops a batch at its first
 * failing statement. To name that statement the batch is rolled back and
 * replayed one statement at a time in a transaction of its own, which the
 * caller rolls back like any failed commit. */
static int run_statements(duckdb_connection con, const strlist *stmts)
{
    if (stmts->n == 0)
        return 0;
    char *batch = strlist_join(stmts, ";\n");
    int rc = duck_exec(con, batch);
    free(batch);
    if (!rc)
        return 0;
    char *batch_error = xstrdup(tarn_error_last());
    duck_exec(con, "ROLLBACK");
    rc = duck_exec(con, "BEGIN TRANSACTION");
    for (size_t i = 0; i < stmts->n && !rc; i++) {
        rc = duck_exec(con, stmts->items[i]);
        if (rc)
            rc = tarn_error_prefix(rc, "catalog statement %zu", i + 1);
    }
    if (!rc) /* the replay passed: report what the batch said */
        rc = tarn_error_set(TARN_ERROR, "%s", batch_error);
    free(batch_error);
    return rc;
}

static int commit_catalog(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    int64_t sv = txn->cat.schema_version + (txn->catalog_changed ? 1 : 0);
    char *snap = xasprintf("INSERT INTO %s.ducklake_snapshot VALUES (%lld, now(), %lld, %lld, "
                           "%lld)",
                           lake->meta, (long long)txn->snapshot_id, (long long)sv,
                           (long long)txn->cat.next_catalog_id,
                           (long long)(txn->cat.next_file_id + txn->file_id_bumps));
    stats_sql(txn, lake->meta);
    lk_renumber_files_sql(txn, lake->meta);
    lk_renumber_sql(txn, lake->meta);
    tarn_buf b = {0};
    buf_printf(&b, "INSERT INTO %s.ducklake_snapshot_changes VALUES (%lld, ", lake->meta,
               (long long)txn->snapshot_id);
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
    strlist all = {0};
    strlist_push_owned(&all, snap);
    batch_statements(&all, txn, lake->meta);
    strlist_push_owned(&all, buf_detach(&b));
    int rc = duck_exec(con, "BEGIN TRANSACTION");
    if (!rc)
        rc = run_statements(con, &all);
    if (!rc) {
        crash_point("in-catalog-txn");
        rc = duck_exec(con, "COMMIT");
    } else {
        duck_exec(con, "ROLLBACK");
    }
    strlist_free(&all);
    return rc;
}

static void remember_row_ids(lk_lake *lake, const lk_txn *txn)
{
    for (size_t i = 0; i < txn->ndeltas; i++) {
        const lk_table_delta *d = &txn->deltas[i];
        if (!d->touched)
            continue;
        size_t k = 0;
        while (k < lake->nrow_ids && lake->row_ids[k] != d->table_id)
            k++;
        if (k == lake->nrow_ids) {
            lake->row_ids = xrealloc(lake->row_ids, (k + 1) * sizeof(int64_t));
            lake->row_vals = xrealloc(lake->row_vals, (k + 1) * sizeof(int64_t));
            lake->row_ids[k] = d->table_id;
            lake->nrow_ids++;
        }
        lake->row_vals[k] = d->next_row_id;
    }
}

/* After a commit that renumbered ids the working catalog's ids are stale:
 * read the committed catalog back (a rare path: several objects created in
 * one transaction). */
static int promote_renumbered(lk_lake *lake, lk_txn *txn, duckdb_connection con)
{
    lk_catalog fresh = {0};
    int rc = lk_catalog_load(&fresh, con, lake->meta, -1);
    if (rc)
        return rc;
    lk_catalog_free(&txn->cat); /* before the tables it borrows go */
    lk_catalog_free(&lake->cat);
    lake->cat = fresh;
    remember_row_ids(lake, txn);
    return lk_lake_refresh_views(lake, con);
}

/* After a commit the working catalog is the committed one: it becomes the
 * session's catalog with the new snapshot's counters, and only the views
 * of the tables the commit changed are rebuilt (a reload and a full
 * rebuild cost queries per table in the lake, per commit). */
static int promote(lk_lake *lake, lk_txn *txn, duckdb_connection con)
{
    if (txn->renum.n)
        return promote_renumbered(lake, txn, con);
    lk_catalog old = lake->cat;
    lk_catalog_take_over(&txn->cat, &old);
    lake->cat = txn->cat;
    memset(&txn->cat, 0, sizeof(txn->cat));
    lake->cat.snapshot_id = txn->snapshot_id;
    lake->cat.schema_version += txn->catalog_changed ? 1 : 0;
    lake->cat.next_file_id += txn->file_id_bumps;
    remember_row_ids(lake, txn);
    int rc;
    /* Inside BEGIN … COMMIT the views of the tables the transaction
     * touched were rebuilt over its pending rows: they must drop those
     * parts now, besides the views the commit's changes call for. */
    if (txn->views_all_ever)
        rc = lk_lake_refresh_views(lake, con);
    else
        rc = lk_lake_sync_views(lake, con, &old, txn->change_tokens, txn->nchange_tokens,
                                txn->touched, txn->ntouched);
    lk_catalog_free(&old);
    return rc;
}

int lk_txn_makes_snapshot(const lk_txn *txn)
{
    return txn->nchange_tokens > 0 || txn->catalog_changed;
}

int lk_txn_commit(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    if (!txn)
        return 0;
    if (txn->failed) {
        lk_txn_rollback(lake, con);
        return 0;
    }
    int rc = lk_deletes_flush(lake, con);
    if (rc) {
        lk_txn_rollback(lake, con);
        return rc;
    }
    lk_renumber_files_plan(txn);
    lk_write_move_pending(lake, con);
    lk_renumber_plan(txn);
    build_changes(txn);
    /* DuckLake advances next_file_id once per table that received inlined
     * rows but no file, so that caches keyed by it see the data change. */
    for (size_t i = 0; i < txn->ndeltas; i++)
        if (txn->deltas[i].inlined && !txn->deltas[i].got_file)
            txn->file_id_bumps++;
    if (txn->nchange_tokens == 0 && txn->nstmts == 0) {
        lk_txn_rollback(lake, con);
        return 0;
    }
    if (!lk_txn_makes_snapshot(txn)) {
        /* only rows of the caller's own (tarn_session_commit_sql): no lake
         * change, so no snapshot, as DuckLake does for a transaction that
         * writes nothing */
        strlist own = {0};
        batch_statements(&own, txn, lake->meta);
        rc = duck_exec(con, "BEGIN TRANSACTION");
        if (!rc)
            rc = run_statements(con, &own);
        strlist_free(&own);
        if (rc)
            duck_exec(con, "ROLLBACK");
        else
            rc = duck_exec(con, "COMMIT");
        lk_txn_rollback(lake, con);
        return rc;
    }
    crash_point("after-parquet-write");
    rc = commit_catalog(lake, con);
    if (rc) {
        tarn_error_prefix(rc, "committing to lake \"%s\"", lake->alias);
        lk_txn_rollback(lake, con);
        return rc;
    }
    crash_point("after-commit");
    if (txn->renum.n) { /* renamed inlined tables, moved ids: read again */
        lk_lake_caches_forget(lake);
    } else {
        lk_lake_meta_tables_apply(lake, &txn->meta_ops);
        lk_scan_cache_commit(lake, txn);
        lk_lake_snapshot_live(lake, txn->snapshot_id);
        lk_lake_schema_changed(lake, txn->schema_changed, txn->nschema_changed, txn->snapshot_id);
    }
    lake->txn = NULL;
    rc = promote(lake, txn, con);
    if (rc)
        tarn_error_prefix(rc, "snapshot %lld is committed, but reading it back failed",
                          (long long)txn->snapshot_id);
    drop_temp_tables(lake, txn, con);
    txn_free(txn);
    return rc;
}

int lk_txn_prepare_deletes(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    if (txn->has_deletes)
        return 0;
    char *pd = lk_txn_pending_deletes(lake), *pid = lk_txn_pending_inline_deletes(lake);
    int rc = exec_fmt(con,
                      "CREATE TEMP TABLE IF NOT EXISTS %s (table_id BIGINT, file_id BIGINT, "
                      "pos BIGINT)",
                      pd + strlen("temp.main."));
    if (!rc)
        rc = exec_fmt(con, "CREATE TEMP TABLE IF NOT EXISTS %s (table_id BIGINT, row_id BIGINT)",
                      pid + strlen("temp.main."));
    free(pd);
    free(pid);
    if (!rc)
        txn->has_deletes = 1;
    return rc;
}

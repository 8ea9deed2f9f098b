/*
 * txn.c — a lake transaction's pending state (see txn.h): the working
 * catalog model, the catalog rows and statements recorded for the commit
 * (lk_txn_row, lk_txn_sql; commit.c writes them), the per-table deltas of
 * ducklake_table_stats (read from the committed row on first use), the
 * ids it allocates from the snapshot's counters, the files it wrote, the
 * TEMP tables of pending inlined rows and deletions, and which views its
 * statements made stale. Nothing here writes the catalog.
 */
#include "lake/txn.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/colstats_set.h"
#include "lake/idorder.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

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

/* A provisional catalog-id range for a transaction on a catalog several
 * processes write: 2^40 ids from a random multiple of 2^40 (below 2^61),
 * so two open transactions almost never share one, and none meets a
 * committed id. */
static int64_t provisional_catalog_base(void)
{
    static unsigned counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = (uint64_t)getpid() * 0x9E3779B97F4A7C15ull ^
                 (uint64_t)ts.tv_nsec * 0xBF58476D1CE4E5B9ull ^
                 (uint64_t)(++counter) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    return (int64_t)(1 + (x & 0xFFFFF)) << 40;
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
    int64_t latest = -1;
    int rc = lk_catdb_query_int64f(&latest, NULL, &lake->db, con,
                                   "SELECT max(snapshot_id) FROM %s.ducklake_snapshot", lake->meta);
    /* Inside BEGIN … COMMIT the session's DuckDB transaction writes the
     * lake's views, and one DuckDB transaction writes one database: the
     * catalog's views (catdb.h) are held until the transaction ends. */
    lake->db.views_held = explicit_txn;
    if (!rc && latest == lake->cat.snapshot_id && lake->pinned < 0)
        lk_catalog_share(&txn->cat, &lake->cat);
    else if (!rc && (rc = lk_catalog_load(&txn->cat, &lake->db, con, -1)) == 0) {
        /* another process committed: its inlined-data tables may be newer
         * than the views, and the lake schemas it created have no DuckDB
         * schema here yet (the first statement's views make them, before
         * a table of this transaction gets its view in one) */
        lake->db.views_behind = 1;
        txn->schemas_created = 1;
    }
    if (!rc && lake->db.views_behind && (rc = lk_catdb_refresh(&lake->db, con)) != 0)
        lk_catalog_free(&txn->cat);
    if (rc) {
        free(txn);
        return rc;
    }
    txn->base_snapshot = txn->cat.snapshot_id;
    txn->snapshot_id = txn->cat.snapshot_id + 1;
    txn->final_catalog_id = txn->base_catalog_id = txn->cat.next_catalog_id;
    if (lk_catdb_has_commit_lock(&lake->db))
        txn->base_catalog_id = txn->cat.next_catalog_id = provisional_catalog_base();
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

static lk_catdb_write *push_write(lk_txn *txn, const char *table)
{
    lk_catdb_write *w = xcalloc(1, sizeof *w);
    w->table = xstrdup(table);
    push_stmt(txn)->write = w;
    txn->open_rows = txn->nstmts;
    return w;
}

void lk_txn_insert_select(lk_txn *txn, const char *table, const char *select)
{
    push_write(txn, table)->select = xstrdup(select);
}

void lk_txn_update_mixed(lk_txn *txn, const char *table, const char *const *cols,
                         const char *const *exprs, size_t n, const char *where)
{
    lk_catdb_write *w = push_write(txn, table);
    w->nset = n;
    w->cols = xcalloc(n ? n : 1, sizeof(char *));
    w->exprs = xcalloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        w->cols[i] = xstrdup(cols[i]);
        w->exprs[i] = xstrdup(exprs[i]);
    }
    w->where = where ? xstrdup(where) : NULL;
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

int64_t lk_txn_schema_version(const lk_txn *txn)
{
    return txn->cat.schema_version + (txn->catalog_changed ? 1 : 0) + txn->schema_bumps;
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
    int64_t next = 0;
    int is_null = 1;
    if (lk_catdb_query_int64f(&next, &is_null, &lake->db, con,
                              "SELECT next_row_id FROM %s.ducklake_table_stats WHERE table_id = "
                              "%lld",
                              lake->meta, (long long)table_id) == 0) {
        d->had_stats_row = 1;
        d->next_row_id = d->base_row_id = is_null ? 0 : next;
    } else {
        tarn_error_clear();
    }
    return d;
}

static void txn_free(lk_txn *txn)
{
    lk_catalog_free(&txn->cat);
    for (size_t i = 0; i < txn->nstmts; i++) {
        free(txn->stmts[i].sql);
        free(txn->stmts[i].table);
        buf_free(&txn->stmts[i].rows);
        if (txn->stmts[i].write) {
            lk_catdb_write_free(txn->stmts[i].write);
            free(txn->stmts[i].write);
        }
    }
    free(txn->stmts);
    buf_free(&txn->changes);
    for (size_t i = 0; i < txn->nchange_tokens; i++)
        free(txn->change_tokens[i]);
    free(txn->change_tokens);
    for (size_t i = 0; i < txn->nfiles; i++) {
        free(txn->files[i].path);
        free(txn->files[i].abs_path);
        free(txn->files[i].del_name);
        free(txn->files[i].del_abs);
    }
    free(txn->files);
    for (size_t i = 0; i < txn->nwritten; i++)
        free(txn->written[i]);
    free(txn->written);
    for (size_t i = 0; i < txn->ndeltas; i++)
        lk_stats_free(&txn->deltas[i].stats);
    free(txn->deltas);
    free(txn->pins);
    free(txn->staged_pins_sql);
    free(txn->author);
    free(txn->other_changes);
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
    free(txn->sort_changed);
    free(txn->maintained);
    free(txn->forgotten);
    for (size_t i = 0; i < txn->nmfiles; i++) {
        free(txn->mfiles[i].abs_path);
        free(txn->mfiles[i].del_path);
    }
    free(txn->mfiles);
    free(txn->replaced_files);
    strlist_free(&txn->replaced_inlined);
    free(txn->conflict);
    free(txn->renum.from);
    free(txn->renum.to);
    free(txn->del_file_ids);
    free(txn->big_del_files);
    free(txn->file_renum.from);
    free(txn->file_renum.to);
    lk_namemap_set_free(&txn->new_maps);
    free(txn);
}

/* Drops the transaction's pending-insert and pending-deletion tables (tracked in C: the names are
 * exact, so lake "lake" never touches lake "x_lake"'s tables). */
static void drop_temp_tables(lk_lake *lake, lk_txn *txn, duckdb_connection con)
{
    for (size_t i = 0; i < txn->npins; i++) {
        if (txn->staged_pins_sql && txn->pins[i] == txn->staged_pins_table)
            continue; /* its rows were the stage's: no table was made */
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

lk_txn *lk_txn_discard(lk_lake *lake)
{
    lk_txn *txn = lake->txn;
    if (!txn)
        return NULL;
    lake->db.views_held = 0;
    for (size_t i = 0; i < txn->nwritten; i++)
        unlink(txn->written[i]);
    lake->txn = NULL;
    if (txn->options_changed) /* the pending options are gone, or now committed */
        lk_lake_options_changed(lake);
    return txn;
}

void lk_txn_free(lk_lake *lake, lk_txn *txn, duckdb_connection con)
{
    if (!txn)
        return;
    drop_temp_tables(lake, txn, con);
    txn_free(txn);
}

int lk_txn_makes_snapshot(const lk_txn *txn)
{
    return txn->nchange_tokens > 0 || txn->catalog_changed || txn->new_maps.n > 0;
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

/* 1 when count query q (freed) finds rows, or cannot tell: a caller
 * that refuses a change on rows then refuses it. */
static int pending_rows(duckdb_connection con, char *q)
{
    int64_t n = 0;
    if (duck_query_int64(&n, NULL, con, q) != 0) {
        tarn_error_clear();
        n = 1; /* cannot tell: say there are */
    }
    free(q);
    return n > 0;
}

int lk_txn_table_deleted(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    if (!lake->txn->has_deletes)
        return 0;
    char *pd = lk_txn_pending_deletes(lake), *pid = lk_txn_pending_inline_deletes(lake);
    char *q = xasprintf("SELECT (SELECT count(*) FROM %s WHERE table_id = %lld) + (SELECT count(*) "
                        "FROM %s WHERE table_id = %lld)",
                        pd, (long long)table_id, pid, (long long)table_id);
    free(pd);
    free(pid);
    return pending_rows(con, q);
}

int lk_txn_table_inline_deleted(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    if (!lake->txn->has_deletes)
        return 0;
    char *pid = lk_txn_pending_inline_deletes(lake);
    char *q = xasprintf("SELECT count(*) FROM %s WHERE table_id = %lld", pid, (long long)table_id);
    free(pid);
    return pending_rows(con, q);
}

int lk_txn_check_not_maintained(const lk_txn *txn, const char *table_name, int64_t table_id)
{
    for (size_t i = 0; i < txn->nmaintained; i++)
        if (txn->maintained[i] == table_id)
            return tarn_error_set(TARN_EUNSUPPORTED,
                                  "the rows of table %s were rewritten by a maintenance function "
                                  "earlier in this transaction: delete or update them after "
                                  "COMMIT",
                                  table_name);
    return 0;
}

void lk_txn_unchange(lk_txn *txn, const char *token)
{
    size_t k = 0;
    for (size_t i = 0; i < txn->nchange_tokens; i++) {
        if (strcmp(txn->change_tokens[i], token) == 0)
            free(txn->change_tokens[i]);
        else
            txn->change_tokens[k++] = txn->change_tokens[i];
    }
    txn->nchange_tokens = k;
}

static void ids_remove(int64_t *ids, size_t *n, int64_t id)
{
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (ids[i] != id)
            ids[k++] = ids[i];
    *n = k;
}

/* Tokens "kind:<id>" of the table (its inserts, deletes, flushes, …). */
static void unchange_table(lk_txn *txn, int64_t table_id)
{
    char *suffix = xasprintf(":%lld", (long long)table_id);
    size_t ls = strlen(suffix), k = 0;
    for (size_t i = 0; i < txn->nchange_tokens; i++) {
        char *tok = txn->change_tokens[i];
        size_t lt = strlen(tok);
        if (lt > ls && strcmp(tok + lt - ls, suffix) == 0 && !strchr(tok, '"'))
            free(tok);
        else
            txn->change_tokens[k++] = tok;
    }
    txn->nchange_tokens = k;
    free(suffix);
}

void lk_txn_forget_table(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    lk_txn *txn = lake->txn;
    size_t k = 0;
    for (size_t i = 0; i < txn->nfiles; i++) {
        lk_pending_file *p = &txn->files[i];
        if (p->table_id != table_id) {
            txn->files[k++] = *p;
            continue;
        }
        unlink(p->abs_path); /* as DuckLake: at the DROP, with its delete file */
        if (p->del_abs)
            unlink(p->del_abs);
        free(p->path);
        free(p->abs_path);
        free(p->del_name);
        free(p->del_abs);
    }
    txn->nfiles = k;
    for (size_t i = 0; i < txn->npins; i++) {
        if (txn->pins[i] != table_id)
            continue;
        char *pins = lk_txn_pending_inserts(lake, table_id);
        exec_fmt(con, "DROP TABLE IF EXISTS %s", pins);
        free(pins);
    }
    ids_remove(txn->pins, &txn->npins, table_id);
    if (txn->has_deletes) {
        char *pd = lk_txn_pending_deletes(lake), *pid = lk_txn_pending_inline_deletes(lake);
        char *id = xasprintf("%lld", (long long)table_id);
        char *q1 = xasprintf("DELETE FROM %s WHERE table_id = %s", pd, id);
        char *q2 = xasprintf("DELETE FROM %s WHERE table_id = %s", pid, id);
        duck_exec(con, q1);
        duck_exec(con, q2);
        free(q1);
        free(q2);
        free(id);
        free(pd);
        free(pid);
    }
    tarn_error_clear();
    k = 0;
    for (size_t i = 0; i < txn->ndeltas; i++) {
        if (txn->deltas[i].table_id == table_id)
            lk_stats_free(&txn->deltas[i].stats);
        else
            txn->deltas[k++] = txn->deltas[i];
    }
    txn->ndeltas = k;
    unchange_table(txn, table_id);
    ids_remove(txn->dirty, &txn->ndirty, table_id);
    ids_remove(txn->touched, &txn->ntouched, table_id);
    ids_remove(txn->schema_changed, &txn->nschema_changed, table_id);
    ids_remove(txn->sort_changed, &txn->nsort_changed, table_id);
    ids_remove(txn->maintained, &txn->nmaintained, table_id);
}

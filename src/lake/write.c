/*
 * write.c — INSERT and DELETE inside a lake transaction (see write.h): the
 * stage, inlined inserts, and where an insert's rows go.
 *
 * An insert's rows go, as in DuckLake, to the catalog when they are at
 * most the table's inlining limit, else to Parquet (write_files.c, and
 * write_part.c for a partitioned table; the SQL of the rows they take is
 * write_source.c's). Inlined rows first collect in a
 * TEMP table per table and transaction (its pending inserts); the commit
 * moves them into the table's newest inlined-data table
 *   ducklake_inlined_data_<table_id>_<schema_version>
 *       (row_id, begin_snapshot, end_snapshot, <the table's columns>)
 * made with its ducklake_inlined_data_tables row when the table has none
 * for its current columns. A delete finds the matching rows through the
 * table's identity scan and hands them to deletes.c. Invariants: row ids
 * are handed out in write order from the table's next_row_id; rows an
 * UPDATE rewrites keep their row id; a committed row is never changed in
 * place (ended by end_snapshot or a delete file).
 */
#include "lake/write.h"
#include "lake/write_int.h"

#include "duck/duck.h"
#include "lake/colstats.h"
#include "lake/deletes.h"
#include "lake/pqopts.h"
#include "lake/sort.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/quote.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MATCH "temp.main.__tarn_match"

const char *lk_stage_name(void)
{
    return LK_STAGE;
}

static void column_default(tarn_buf *b, const lk_column *c)
{
    if (!c->default_value || strcmp(c->default_value, "NULL") == 0)
        return;
    buf_puts(b, " DEFAULT ");
    if (c->default_value_type && strcmp(c->default_value_type, "expression") == 0)
        buf_puts(b, c->default_value);
    else
        quote_literal(b, c->default_value);
}

int lk_stage_create(lk_lake *lake, duckdb_connection con, const lk_table *t, int with_rowid)
{
    int bad = lk_table_check_types(t);
    if (!bad) /* a new stage replaces the rows an earlier insert left there */
        bad = lk_write_pins_settle(lake, con);
    if (bad)
        return bad;
    lake->txn->stage_rowid = with_rowid;
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE TEMP TABLE __tarn_stage (");
    for (size_t i = 0; i < t->ncols; i++) {
        const lk_column *c = &t->cols[i];
        if (i)
            buf_puts(&b, ", ");
        quote_ident(&b, c->name);
        buf_putc(&b, ' ');
        lk_type_to_sql(&b, c);
        column_default(&b, c);
        if (!c->nulls_allowed)
            buf_puts(&b, " NOT NULL");
    }
    if (with_rowid)
        buf_puts(&b, ", __tarn_rowid BIGINT");
    buf_putc(&b, ')');
    int rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    return rc;
}

/* Records that the transaction has a pending-insert table for `t`. */
static void pending_inserts_made(lk_lake *lake, const lk_table *t)
{
    lk_txn *txn = lake->txn;
    txn->pins = xrealloc(txn->pins, (txn->npins + 1) * sizeof(int64_t));
    txn->pins[txn->npins++] = t->id;
}

/* The TEMP table holding this transaction's inlined rows for `t`, created
 * on first use. The commit moves its rows into the table's newest
 * inlined-data table (lk_write_move_pending), so rows inserted before an
 * ALTER in the same transaction land in the final layout, as in DuckLake. */
static int ensure_pending_inserts(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    if (lk_write_pending_exists(lake, con, t->id))
        return lk_write_pins_settle(lake, con);
    char *pins = lk_txn_pending_inserts(lake, t->id);
    tarn_buf b = {0};
    int rc = 0;
    {
        buf_printf(&b, "CREATE TEMP TABLE %s AS SELECT NULL::BIGINT AS row_id, ",
                   pins + strlen("temp.main."));
        lk_write_columns(&b, t);
        buf_puts(&b, " FROM " LK_STAGE " LIMIT 0");
        rc = duck_exec(con, buf_cstr(&b));
    }
    if (!rc)
        pending_inserts_made(lake, t);
    buf_free(&b);
    free(pins);
    return rc;
}

int lk_write_pins_settle(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake ? lake->txn : NULL;
    if (!txn || !txn->staged_pins_sql)
        return 0;
    char *pins = lk_txn_pending_inserts(lake, txn->staged_pins_table);
    char *sql =
        xasprintf("CREATE TEMP TABLE %s AS %s", pins + strlen("temp.main."), txn->staged_pins_sql);
    int rc = duck_exec(con, sql);
    free(sql);
    free(pins);
    if (!rc) {
        free(txn->staged_pins_sql);
        txn->staged_pins_sql = NULL;
    }
    return rc;
}

/* The source of table_id's pending inserts for the commit's move: its
 * TEMP table, or the stage's SELECT while they are still there. */
static char *pins_source(lk_lake *lake, int64_t table_id)
{
    lk_txn *txn = lake->txn;
    if (txn->staged_pins_sql && txn->staged_pins_table == table_id)
        return xasprintf("(%s) AS pins", txn->staged_pins_sql);
    return lk_txn_pending_inserts(lake, table_id);
}

/* An UPDATE keeps a committed row's id; a row this transaction inserted
 * is, as in DuckLake's transaction-local storage, deleted and appended
 * again, so its new image takes the next id: *fresh counts those. */
static int count_fresh_images(int64_t *fresh, duckdb_connection con, const lk_table_delta *d,
                              int with_rowid)
{
    *fresh = 0;
    if (!with_rowid || d->next_row_id <= d->base_row_id)
        return 0;
    char *q = xasprintf("SELECT count(*) FROM " LK_STAGE " WHERE __tarn_rowid >= %lld",
                        (long long)d->base_row_id);
    int rc = duck_query_int64(fresh, NULL, con, q);
    free(q);
    return rc;
}

/* SELECT of the stage's `n` rows in pending-insert layout: (row_id,
 * columns), in the order they take their ids. */
static void pending_select(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                           const lk_table_delta *d, int64_t n, int with_rowid, int64_t fresh)
{
    buf_puts(b, "SELECT ");
    /* sort_on_insert (the default) sorts the inlined rows too */
    int sorted = lk_sort_on_insert(lake, con, t);
    if (with_rowid && fresh > 0)
        buf_printf(b,
                   "CASE WHEN __tarn_rowid >= %lld THEN %lld + row_number() OVER (PARTITION BY "
                   "__tarn_rowid >= %lld ORDER BY rowid) - 1 ELSE __tarn_rowid END, ",
                   (long long)d->base_row_id, (long long)d->next_row_id, (long long)d->base_row_id);
    else if (with_rowid)
        buf_puts(b, "__tarn_rowid, ");
    else if (n == 1) /* one row: its id, without a window and a sort (half the cost) */
        buf_printf(b, "%lld::BIGINT AS row_id, ", (long long)d->next_row_id);
    else {
        buf_printf(b, "(%lld + row_number() OVER (", (long long)d->next_row_id);
        lk_write_stage_order(b, t, with_rowid, sorted);
        buf_puts(b, ") - 1)::BIGINT AS row_id, ");
    }
    lk_write_columns(b, t);
    buf_puts(b, " FROM " LK_STAGE);
    if (with_rowid || n != 1)
        lk_write_stage_order(b, t, with_rowid, sorted);
}

/* Adds the rows `sel` selects to t's pending inserts. The first rows of a
 * plain insert (`first`) stay in the stage, their SELECT remembered
 * (staged_pins_sql): an autocommit INSERT's commit moves them from there,
 * two statements fewer than copying them into a pending-insert table and
 * dropping it (a fifth of a one-row commit's time). Whatever comes first
 * of a new stage, the statement's end inside BEGIN … COMMIT, or another
 * read of the pending rows makes the table (lk_write_pins_settle). */
static int pending_add(lk_lake *lake, duckdb_connection con, const lk_table *t, int first,
                       tarn_buf *sel)
{
    if (first) {
        lake->txn->staged_pins_table = t->id;
        lake->txn->staged_pins_sql = buf_detach(sel);
        pending_inserts_made(lake, t);
        return 0;
    }
    int rc = ensure_pending_inserts(lake, con, t);
    if (rc)
        return rc;
    char *pins = lk_txn_pending_inserts(lake, t->id);
    char *sql = xasprintf("INSERT INTO %s %s", pins, buf_cstr(sel));
    rc = duck_exec(con, sql);
    free(sql);
    free(pins);
    return rc;
}

static int insert_inlined(lk_lake *lake, duckdb_connection con, const lk_table *t,
                          lk_table_delta *d, int64_t n, int with_rowid, const duck_table *figures)
{
    int first = !with_rowid && !lk_write_pending_exists(lake, con, t->id);
    int64_t fresh = 0;
    int rc = count_fresh_images(&fresh, con, d, with_rowid);
    if (rc)
        return rc;
    tarn_buf sel = {0};
    pending_select(&sel, lake, con, t, d, n, with_rowid, fresh);
    rc = pending_add(lake, con, t, first, &sel);
    buf_free(&sel);
    if (rc)
        return rc;
    lk_stats_set st;
    lk_stats_init(&st, t);
    if (figures && n == 1) /* the INSERT returned them (lk_insert_returning) */
        rc = lk_stats_from_row(&st, t, figures);
    else
        rc = n == 1 ? lk_stats_from_one_row(&st, con, LK_STAGE, t)
                    : lk_stats_from_rows(&st, con, LK_STAGE, t);
    if (!rc)
        rc = lk_stats_accumulate(&d->stats, &st, con);
    lk_stats_free(&st);
    d->next_row_id += with_rowid ? fresh : n;
    d->pending_rows = (first ? 0 : d->pending_rows) + n;
    if (fresh > 0)
        d->pending_holes = 1;
    d->added_records += n;
    d->inlined = 1;
    d->touched = 1;
    char *tok = xasprintf("inlined_insert:%lld", (long long)t->id);
    lk_txn_change(lake->txn, tok);
    free(tok);
    return rc;
}

/* How many rows an insert into `t` may inline: the lake's or table's
 * limit, or 0 when its columns cannot be inlined (a GEOMETRY column, a
 * reserved name: DuckLake's GetInliningLimit). A table created while
 * inlining was off gets its inlined-data table with the commit. */
static int64_t insert_inline_limit(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    if (!lk_table_inlinable(t))
        return 0;
    return lk_lake_inline_limit(lake, con, t);
}

/* 1 when rows that go to Parquet are written in t's sort order: always
 * with sort_on_insert; without it only when inlining is on, as DuckLake
 * then sorts what passes its inlining step (with inlining off nothing
 * sorts a write). */
static int parquet_sorted(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    if (t->nsorts == 0 || lk_sort_on_insert(lake, con, t))
        return 1;
    return insert_inline_limit(lake, con, t) > 0;
}

static int insert_parquet(lk_lake *lake, duckdb_connection con, const lk_table *t,
                          lk_table_delta *d, int with_rowid, const char *source)
{
    lk_table unsorted; /* t as written without its sort order: a shallow view */
    if (!parquet_sorted(lake, con, t)) {
        unsorted = *t;
        unsorted.nsorts = 0;
        t = &unsorted;
    }
    if (t->nkeys > 0)
        return lk_write_partitioned(lake, con, t, d, with_rowid, source);
    return lk_write_files(lake, con, t, d, with_rowid, source, "", NULL);
}

/* The stage's `n` rows into table `t`: inlined within the limit, else
 * written to Parquet. */
static int insert_staged(lk_lake *lake, duckdb_connection con, const lk_table *t, int64_t n,
                         const duck_table *figures)
{
    /* nothing to write, unless DuckLake's per-thread COPY gets the rows
     * (inlining off): it writes one empty file */
    if (n == 0 && (t->nkeys > 0 || !lk_pqopts_per_thread(lake, con, t) ||
                   insert_inline_limit(lake, con, t) > 0))
        return 0;
    int with_rowid = lake->txn->stage_rowid;
    lk_table_delta *d = lk_txn_delta(lake, con, t->id);
    if (n <= insert_inline_limit(lake, con, t))
        return insert_inlined(lake, con, t, d, n, with_rowid, figures);
    return insert_parquet(lake, con, t, d, with_rowid, NULL);
}

/* DuckLake creates a table's directory whenever it plans an insert into
 * it, whether the rows then go to a file or to the catalog: users COPY
 * their own files there (to add them with ducklake_add_data_files). Local
 * paths only; failing to create it is not an error (the write that needs
 * it reports that). */
static void ensure_table_dir(lk_lake *lake, const lk_table *t)
{
    char *dir = lk_lake_table_dir(lake, &lake->txn->cat, t);
    if (!strstr(dir, "://") && fs_mkdir_p(dir) != 0)
        tarn_error_clear();
    free(dir);
}

static int insert_stage(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t known,
                        int64_t *count, int never_inline, const duck_table *figures)
{
    lk_txn *txn = lake->txn;
    const lk_table *t = lk_catalog_table_by_id(&txn->cat, table_id);
    if (!t)
        return tarn_error_set(TARN_ENOTFOUND, "table %lld not found", (long long)table_id);
    ensure_table_dir(lake, t);
    int64_t n = known;
    int rc = known >= 0 ? 0 : duck_query_int64(&n, NULL, con, "SELECT count(*) FROM " LK_STAGE);
    if (rc)
        return rc;
    *count = n;
    if (never_inline && n > 0)
        return insert_parquet(lake, con, t, lk_txn_delta(lake, con, t->id), txn->stage_rowid, NULL);
    return insert_staged(lake, con, t, n, figures);
}

int lk_insert_stage_known(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t known,
                          int64_t *count)
{
    return insert_stage(lake, con, table_id, known, count, 0, NULL);
}

char *lk_insert_returning(lk_lake *lake, int64_t table_id)
{
    const lk_table *t = lk_catalog_table_by_id(&lake->txn->cat, table_id);
    if (!t)
        return NULL;
    lk_stats_set st;
    lk_stats_init(&st, t);
    tarn_buf b = {0};
    int ok = lk_stats_one_row_list(&b, &st, t);
    lk_stats_free(&st);
    if (!ok) {
        buf_free(&b);
        return NULL;
    }
    return buf_detach(&b);
}

int lk_insert_stage_returned(lk_lake *lake, duckdb_connection con, int64_t table_id,
                             const duck_table *row, int64_t *count)
{
    return insert_stage(lake, con, table_id, (int64_t)row->nrows, count, 0, row);
}

int lk_insert_stage(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t *count)
{
    return insert_stage(lake, con, table_id, -1, count, 0, NULL);
}

int lk_insert_stage_file(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t *count)
{
    return insert_stage(lake, con, table_id, -1, count, 1, NULL);
}

/* SELECT CAST(c1 AS T1) AS "col1", … FROM (query) AS q(c1, …): the query's
 * columns matched to the table's by position, as INSERT does. */
static void cast_query(tarn_buf *b, const lk_table *t, const char *query)
{
    buf_puts(b, "SELECT ");
    for (size_t i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(b, ", ");
        buf_printf(b, "CAST(__tarn_c%zu AS ", i);
        lk_type_to_sql(b, &t->cols[i]);
        buf_puts(b, ") AS ");
        quote_ident(b, t->cols[i].name);
    }
    buf_printf(b, " FROM (%s) AS __tarn_q(", query);
    for (size_t i = 0; i < t->ncols; i++)
        buf_printf(b, "%s__tarn_c%zu", i ? ", " : "", i);
    buf_putc(b, ')');
}

/* A failed cast of cast_query names its source column __tarn_cN: say
 * which of the table's columns the value was for instead (from the last
 * index down, so that __tarn_c1 does not match __tarn_c10). */
static void name_cast_columns(const lk_table *t)
{
    for (size_t i = t->ncols; i-- > 0;) {
        char *from = xasprintf(" when casting from source column __tarn_c%zu", i);
        tarn_buf to = {0};
        buf_puts(&to, " for column ");
        quote_ident(&to, t->cols[i].name);
        tarn_error_replace(from, buf_cstr(&to));
        buf_free(&to);
        free(from);
    }
}

/* 1 when every value of column c reads back from Parquet as it was written:
 * DuckDB writes HUGEINT and UHUGEINT as DOUBLE and TIMETZ shifted to UTC. */
static int column_round_trips(const lk_column *c)
{
    if (strcmp(c->type, "int128") == 0 || strcmp(c->type, "uint128") == 0 ||
        strcmp(c->type, "timetz") == 0)
        return 0;
    for (size_t i = 0; i < c->nchildren; i++)
        if (!column_round_trips(&c->children[i]))
            return 0;
    return 1;
}

static int table_round_trips(const lk_table *t)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (!column_round_trips(&t->cols[i]))
            return 0;
    return 1;
}

/* Evaluates `src` once into the stage, which then goes to the catalog or
 * to Parquet as lk_insert_stage decides. */
static int insert_query_staged(lk_lake *lake, duckdb_connection con, const lk_table *t,
                               const char *src, int64_t *count)
{
    int rc = lk_stage_create(lake, con, t, 0);
    if (!rc) {
        char *sql = xasprintf("INSERT INTO " LK_STAGE " %s", src);
        rc = duck_exec(con, sql);
        free(sql);
    }
    return rc ? rc : lk_insert_stage(lake, con, t->id, count);
}

/* Evaluates `src` once, straight into a Parquet file, as a large result
 * goes. A result of at most `limit` rows is then read back into the stage
 * and inlined, and the file deleted before it took a file id (ids are
 * given when a file is registered), so the catalog gets exactly the rows
 * DuckLake writes, which buffers up to the limit and switches to Parquet
 * beyond it. */
static int insert_query_file_first(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                   const char *src, int64_t limit, int64_t *count)
{
    lk_new_files f;
    int rc = lk_new_files_write(&f, lake, con, t, 0, src, "");
    int64_t n = rc ? 0 : f.count;
    if (!rc && n > limit) {
        lk_table_delta *d = lk_txn_delta(lake, con, t->id);
        rc = lk_new_files_register(&f, lake, con, t, d, 0, NULL);
        *count = n;
    } else if (!rc && n > 0) {
        tarn_buf b = {0};
        buf_puts(&b, "INSERT INTO " LK_STAGE " SELECT * FROM read_parquet([");
        for (size_t i = 0; i < f.n; i++) {
            buf_puts(&b, i ? ", " : "");
            quote_literal(&b, f.abs[i]);
        }
        buf_puts(&b, "])");
        rc = lk_stage_create(lake, con, t, 0);
        if (!rc)
            rc = duck_exec(con, buf_cstr(&b));
        buf_free(&b);
        lk_new_files_discard(&f);
        *count = n; /* the COPY counted them: no count(*) of the stage */
        if (!rc)
            rc = insert_staged(lake, con, t, n, NULL);
    } else if (!rc) {
        lk_new_files_discard(&f);
    }
    lk_new_files_free(&f);
    return rc;
}

int lk_insert_query(lk_lake *lake, duckdb_connection con, int64_t table_id, const char *query,
                    int64_t *count)
{
    lk_txn *txn = lake->txn;
    const lk_table *t = lk_catalog_table_by_id(&txn->cat, table_id);
    if (!t)
        return tarn_error_set(TARN_ENOTFOUND, "table %lld not found", (long long)table_id);
    if (lk_table_check_types(t) != 0)
        return TARN_EINVALID;
    /* cast_query names the query's columns by position, which would drop
     * extra ones silently: the counts must match, as INSERT says */
    size_t ncols = 0;
    int bad = duck_query_columns(&ncols, con, query);
    if (!bad && ncols != t->ncols)
        bad = tarn_error_set(TARN_EINVALID,
                             "Binder Error: table %s has %zu columns but %zu values were supplied",
                             t->name, t->ncols, ncols);
    if (bad)
        return bad;
    ensure_table_dir(lake, t);
    tarn_buf src = {0};
    cast_query(&src, t, query);
    int64_t limit = insert_inline_limit(lake, con, t);
    int rc = 0;
    *count = 0;
    /* without sort_on_insert a sorted table's inlined rows keep their
     * order, which the file-first path (rows read back from a sorted
     * file) would lose */
    int keep_order = t->nsorts > 0 && !lk_sort_on_insert(lake, con, t);
    if (limit > 0 && t->nkeys == 0 && table_round_trips(t) && !keep_order) {
        rc = insert_query_file_first(lake, con, t, buf_cstr(&src), limit, count);
    } else if (limit > 0) {
        rc = insert_query_staged(lake, con, t, buf_cstr(&src), count);
    } else {
        lk_table_delta *d = lk_txn_delta(lake, con, table_id);
        int64_t before = d->added_records;
        rc = insert_parquet(lake, con, t, d, 0, buf_cstr(&src));
        *count = d->added_records - before;
    }
    buf_free(&src);
    if (rc)
        name_cast_columns(t);
    return rc;
}

int lk_write_pending_exists(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    (void)con;
    lk_txn *txn = lake->txn;
    for (size_t i = 0; txn && i < txn->npins; i++)
        if (txn->pins[i] == table_id)
            return 1;
    return 0;
}

/* DuckLake numbers a transaction's new rows when it commits: a table's new
 * data files first, then its new inlined rows, in the order they were
 * appended, so rows inserted and deleted again leave no gap. tarn
 * numbered them on insert: here the inlined rows move to where DuckLake
 * puts them (renumber.c decided where the files go), closing any gaps. A
 * table whose files carry their own row ids (UPDATE images) keeps them. */
static void row_id_at_commit(tarn_buf *b, lk_lake *lake, duckdb_connection con, int64_t table_id,
                             const char *pins)
{
    lk_table_delta *d = lk_txn_find_delta(lake->txn, table_id);
    int holes = d && d->pending_holes && (!d->got_file || d->reorder_rows);
    if (!d || (!holes && !d->reorder_rows)) {
        buf_puts(b, "row_id");
        return;
    }
    int64_t base = d->base_row_id, start = d->reorder_rows ? d->inline_start : base, kept = 0;
    if (holes) {
        char *q = xasprintf("SELECT count(*) FROM %s WHERE row_id >= %lld", pins, (long long)base);
        int rc = duck_query_int64(&kept, NULL, con, q);
        free(q);
        if (rc) {
            tarn_error_clear();
            buf_puts(b, "row_id");
            return;
        }
        d->next_row_id = start + kept;
    }
    buf_printf(b,
               "CASE WHEN row_id >= %lld THEN %lld + row_number() OVER (PARTITION BY row_id >= "
               "%lld ORDER BY row_id) - 1 ELSE row_id END",
               (long long)base, (long long)start, (long long)base);
}

void lk_write_inlined_table(lk_lake *lake, lk_table *t, int64_t sv)
{
    lk_txn *txn = lake->txn;
    char *name = xasprintf("ducklake_inlined_data_%lld_%lld", (long long)t->id, (long long)sv);
    lk_txn_row(txn, "ducklake_inlined_data_tables", "(%lld, '%s', %lld)", (long long)t->id, name,
               (long long)sv);
    tarn_buf b = {0};
    buf_printf(&b,
               "CREATE TABLE IF NOT EXISTS %s.%s(row_id BIGINT, begin_snapshot BIGINT, "
               "end_snapshot BIGINT",
               lake->meta, name);
    for (size_t i = 0; i < t->ncols; i++) {
        buf_puts(&b, ", ");
        quote_ident(&b, t->cols[i].name);
        buf_putc(&b, ' ');
        if (lk_catdb_is_postgres(&lake->db))
            lk_type_to_pg_sql(&b, &t->cols[i]);
        else
            lk_type_to_sql(&b, &t->cols[i]);
    }
    buf_putc(&b, ')');
    lk_txn_sql(txn, "%s", buf_cstr(&b));
    lk_txn_meta_table(txn, '+', name);
    buf_free(&b);
    t->inlined = xrealloc(t->inlined, (t->ninlined + 1) * sizeof(lk_inlined));
    t->inlined[t->ninlined].name = name;
    t->inlined[t->ninlined].schema_version = sv;
    t->ninlined++;
}

void lk_write_move_pending(lk_lake *lake, duckdb_connection con)
{
    lk_txn *txn = lake->txn;
    for (size_t i = 0; i < txn->cat.ntables; i++) {
        lk_table *t = &txn->cat.tables[i];
        if (!lk_write_pending_exists(lake, con, t->id))
            continue;
        /* inlining was off when the table was created: DuckLake makes its
         * inlined-data table now, under a schema version of its own (the
         * snapshot's moves once more, no ducklake_schema_versions row) */
        if (t->ninlined == 0) {
            txn->schema_bumps++;
            lk_write_inlined_table(lake, t, lk_txn_schema_version(txn));
        }
        /* closing row-id gaps counts the pending table's rows: made first */
        const lk_table_delta *d = lk_txn_find_delta(txn, t->id);
        if (d && (d->pending_holes || d->reorder_rows) && lk_write_pins_settle(lake, con) != 0)
            tarn_error_clear(); /* the stage's SELECT still reads them */
        char *pins = pins_source(lake, t->id);
        tarn_buf b = {0};
        buf_puts(&b, "SELECT ");
        row_id_at_commit(&b, lake, con, t->id, pins);
        buf_printf(&b, ", %lld, NULL, ", (long long)txn->snapshot_id);
        lk_write_columns(&b, t);
        buf_printf(&b, " FROM %s", pins);
        /* one row needs no sort (half the statement's cost: an autocommit
         * INSERT of one row) */
        if (!d || d->pending_rows != 1)
            buf_puts(&b, " ORDER BY row_id");
        lk_txn_insert_select(txn, t->inlined[t->ninlined - 1].name, buf_cstr(&b));
        buf_free(&b);
        free(pins);
    }
}

void lk_write_cleanup(lk_lake *lake, duckdb_connection con)
{
    /* rows still in the stage outlive it as a pending-insert table; when
     * that fails they are lost with the stage, and so the transaction can
     * only roll back (the error is the statement's: it goes on to fail) */
    if (lk_write_pins_settle(lake, con) != 0) {
        tarn_error_clear();
        lake->txn->failed = 1;
        free(lake->txn->staged_pins_sql);
        lake->txn->staged_pins_sql = NULL;
    }
    /* one round trip for the three scratch tables a statement may use */
    duck_exec(con, "DROP TABLE IF EXISTS " LK_STAGE "; DROP TABLE IF EXISTS " MATCH
                   "; DROP TABLE IF EXISTS temp.main.__tarn_shape");
}

/* DuckLake decides per DELETE statement and file: up to the inlining limit
 * of a committed file's rows become inlined deletions (added to those of
 * earlier statements), more make a delete file. The files of this
 * statement's match that went over are remembered for the commit. */
static int note_big_deletes(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    lk_txn *txn = lake->txn;
    int64_t limit = lk_lake_inline_limit(lake, con, t);
    char *sql = xasprintf("SELECT __tarn_fid FROM " MATCH " WHERE __tarn_fid >= 0 GROUP BY "
                          "__tarn_fid HAVING count(*) > %lld",
                          (long long)(limit > 0 ? limit : -1));
    duck_table r;
    int rc = duck_table_query(&r, con, sql);
    free(sql);
    if (rc)
        return rc;
    txn->big_del_files =
        xrealloc(txn->big_del_files, (txn->nbig_del_files + r.nrows + 1) * sizeof(int64_t));
    for (size_t i = 0; i < r.nrows; i++)
        txn->big_del_files[txn->nbig_del_files++] = duck_table_int64(&r, i, 0);
    duck_table_free(&r);
    return 0;
}

int lk_delete_matching(lk_lake *lake, duckdb_connection con, int64_t table_id,
                       const char *match_sql, int64_t *count)
{
    char *sql = xasprintf("CREATE OR REPLACE TEMP TABLE __tarn_match AS %s", match_sql);
    int rc = duck_exec(con, sql);
    free(sql);
    if (rc)
        return rc;
    rc = duck_query_int64(count, NULL, con, "SELECT count(*) FROM " MATCH);
    if (rc || *count == 0)
        return rc;
    const lk_table *t = lk_catalog_table_by_id(&lake->txn->cat, table_id);
    rc = lk_txn_check_not_maintained(lake->txn, t ? t->name : "", table_id);
    if (rc)
        return rc;
    lk_txn_view_dirty(lake->txn, table_id);
    rc = lk_txn_prepare_deletes(lake, con);
    if (rc)
        return rc;
    char *pd = lk_txn_pending_deletes(lake), *pid = lk_txn_pending_inline_deletes(lake),
         *pins = lk_txn_pending_inserts(lake, table_id);
    sql = xasprintf("INSERT INTO %s SELECT %lld, __tarn_fid, __tarn_pos FROM " MATCH
                    " WHERE __tarn_fid >= 0",
                    pd, (long long)table_id);
    rc = duck_exec(con, sql);
    free(sql);
    if (!rc && t)
        rc = note_big_deletes(lake, con, t);
    if (!rc)
        rc = lk_deletes_write_local(lake, con, table_id);
    int64_t ninl = 0, npend = 0;
    if (!rc)
        rc = duck_query_int64(&ninl, NULL, con,
                              "SELECT count(*) FROM " MATCH " WHERE __tarn_fid = -1");
    if (!rc)
        rc = duck_query_int64(&npend, NULL, con,
                              "SELECT count(*) FROM " MATCH " WHERE __tarn_fid = -2");
    if (!rc && ninl > 0) {
        sql =
            xasprintf("INSERT INTO %s SELECT %lld, __tarn_pos FROM " MATCH " WHERE __tarn_fid = -1",
                      pid, (long long)table_id);
        rc = duck_exec(con, sql);
        free(sql);
        lk_deletes_note_inlined(lake, table_id);
    }
    if (!rc && npend > 0) {
        /* rows this transaction inserted: they simply stop being pending,
         * and no longer count as inserted */
        sql = xasprintf("DELETE FROM %s WHERE row_id IN (SELECT __tarn_pos FROM " MATCH
                        " WHERE __tarn_fid = -2)",
                        pins);
        rc = duck_exec(con, sql);
        free(sql);
        lk_table_delta *d = lk_txn_delta(lake, con, table_id);
        d->added_records -= npend;
        d->pending_rows -= npend;
        d->pending_holes = 1;
    }
    free(pd);
    free(pid);
    free(pins);
    return rc;
}

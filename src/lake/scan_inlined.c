/*
 * scan_inlined.c — the part of a table's read SQL that reads its inlined
 * rows (see scan.c for the whole query).
 *
 * DuckLake keeps small inserts in the catalog, one table per table and
 * schema version:
 *   ducklake_inlined_data_<table_id>_<schema_version>
 *       (row_id, begin_snapshot, end_snapshot, <columns as they were named
 *        at that schema version>)
 * A row is live at snapshot S when begin_snapshot <= S < end_snapshot (or
 * end_snapshot IS NULL). Columns are matched by column id through the
 * names they had at the table's schema version (ducklake_column,
 * ducklake_schema_versions), so a renamed or added column reads right; a
 * column added later reads as its initial default. The open transaction's
 * own inlined rows are in a TEMP table (lk_txn_pending_inserts), read with
 * transaction-local row ids as DuckLake numbers them.
 */
#include "lake/scan.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/delmask.h"
#include "lake/hive.h"
#include "lake/namemap.h"
#include "lake/prune.h"
#include "lake/scan_input.h"
#include "lake/scan_int.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "lake/write.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
/* The names the columns of `t` had in inlined table `inl` (written under an
 * older schema version): old[i] is the name of t->cols[i] there, or NULL
 * when the column did not exist yet. Matched by column id. */
static char **inlined_names_read(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                 const lk_inlined *inl);

static char **inlined_names(lk_lake *lake, duckdb_connection con, const lk_table *t,
                            const lk_inlined *inl)
{
    inlined_info *x = scan_inlined_find(lake, inl->name, 0);
    if (!x || !x->have_names)
        return inlined_names_read(lake, con, t, inl);
    char **old = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
    for (size_t i = 0; i < t->ncols; i++)
        for (size_t k = 0; k < x->n; k++)
            if (x->ids[k] == t->cols[i].id) {
                old[i] = xstrdup(x->names[k]);
                break;
            }
    return old;
}

/* inlined_names from the catalog; remembered when the table is committed
 * (the names at a past snapshot never change). */
static char **inlined_names_read(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                 const lk_inlined *inl)
{
    duck_table r;
    int ok =
        lk_catdb_queryf(&r, &lake->db, con,
                        "SELECT c.column_id, c.column_name FROM %s.ducklake_column c, (SELECT "
                        "COALESCE((SELECT max(begin_snapshot) FROM "
                        "%s.ducklake_schema_versions WHERE table_id = %lld AND "
                        "schema_version <= %lld), %lld) AS s) v WHERE c.table_id = %lld AND "
                        "c.parent_column IS NULL AND v.s >= c.begin_snapshot AND (v.s < "
                        "c.end_snapshot OR c.end_snapshot IS NULL)",
                        lake->meta, lake->meta, (long long)t->id, (long long)inl->schema_version,
                        (long long)t->begin, (long long)t->id) == 0 &&
        r.nrows > 0;
    if (!ok) {
        /* created in this transaction: it has the current columns */
        if (r.ncols)
            duck_table_free(&r);
        tarn_error_clear();
        char **old = xcalloc(t->ncols ? t->ncols : 1, sizeof(char *));
        for (size_t i = 0; i < t->ncols; i++)
            old[i] = xstrdup(t->cols[i].name);
        return old;
    }
    int64_t *ids = xcalloc(r.nrows, sizeof(int64_t));
    char **names = xcalloc(r.nrows, sizeof(char *));
    for (size_t k = 0; k < r.nrows; k++) {
        ids[k] = duck_table_int64(&r, k, 0);
        names[k] = (char *)duck_table_get(&r, k, 1);
    }
    scan_inlined_set_names(scan_inlined_find(lake, inl->name, 1), ids, names, r.nrows);
    free(ids);
    free(names);
    duck_table_free(&r);
    return inlined_names(lake, con, t, inl);
}

/* Column c of an inlined table: its value there (under its old name) as
 * the column's type now. In a PostgreSQL catalog VARCHAR values are
 * bytea (DuckLake's type there), read back as the text they hold. */
static void inlined_column(tarn_buf *b, const lk_lake *lake, const lk_column *c, const char *old)
{
    buf_puts(b, "CAST(");
    if (old && lk_catdb_is_postgres(&lake->db) && lk_type_pg_is_bytea(c)) {
        buf_puts(b, "decode(");
        quote_ident(b, old);
        buf_putc(b, ')');
    } else if (old)
        quote_ident(b, old);
    else
        quote_literal(b, c->initial_default);
    buf_puts(b, " AS ");
    lk_type_to_sql(b, c);
    buf_puts(b, ") AS ");
    quote_ident(b, c->name);
}

/* The table as it was when inlined table `inl` got its layout (for the
 * child names of nested columns); NULL when that cannot be known. */
static const lk_table *inlined_layout(lk_catalog *then, lk_lake *lake, duckdb_connection con,
                                      const lk_table *t, const lk_inlined *inl)
{
    int64_t begin = -1;
    int is_null = 1;
    int rc = lk_catdb_query_int64f(&begin, &is_null, &lake->db, con,
                                   "SELECT max(begin_snapshot) FROM %s.ducklake_schema_versions "
                                   "WHERE table_id = %lld AND schema_version <= %lld",
                                   lake->meta, (long long)t->id, (long long)inl->schema_version);
    tarn_error_clear();
    if (rc || is_null || lk_catalog_load(then, &lake->db, con, begin) != 0) {
        tarn_error_clear();
        return NULL;
    }
    return lk_catalog_table_by_id(then, t->id);
}

/* 1 when some row of the inlined table was ended (deleted or updated); a
 * commit that ends one rebuilds the table's view, so this holds until then. */
static int any_ended(lk_lake *lake, duckdb_connection con, const lk_inlined *inl)
{
    inlined_info *x = scan_inlined_find(lake, inl->name, 0);
    if (x && x->have_ended)
        return x->ended;
    tarn_buf b = {0};
    buf_printf(&b, "SELECT count(*) FROM (SELECT 1 FROM %s.", lake->meta);
    quote_ident(&b, inl->name);
    buf_puts(&b, " WHERE end_snapshot IS NOT NULL LIMIT 1) AS e");
    int64_t n = 1;
    if (lk_catdb_query_int64(&n, NULL, &lake->db, con, buf_cstr(&b)) != 0) {
        tarn_error_clear();
    } else {
        x = scan_inlined_find(lake, inl->name, 1);
        x->have_ended = 1;
        x->ended = n > 0;
    }
    buf_free(&b);
    return n > 0;
}

void lk_scan_inlined_part(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                          const lk_inlined *inl, const char *snap, int flags, int pending,
                          int latest, int64_t file_index)
{
    char **old = inlined_names(lake, con, t, inl);
    lk_catalog then = {0};
    const lk_table *tt = lk_table_has_nested(t) ? inlined_layout(&then, lake, con, t, inl) : NULL;
    buf_puts(b, "SELECT ");
    for (size_t i = 0; i < t->ncols; i++) {
        const lk_column *c = &t->cols[i], *was = NULL;
        for (size_t k = 0; tt && k < tt->ncols; k++)
            if (tt->cols[k].id == c->id)
                was = &tt->cols[k];
        if (i)
            buf_puts(b, ", ");
        if (was && old[i] && lk_type_is_nested(c->type) && !lk_column_same_tree(c, was)) {
            tarn_buf e = {0};
            quote_ident(&e, old[i]);
            lk_scan_rebuild(b, buf_cstr(&e), c, was);
            buf_free(&e);
            buf_puts(b, " AS ");
            quote_ident(b, c->name);
        } else {
            inlined_column(b, lake, c, old[i]);
        }
        free(old[i]);
    }
    free(old);
    if (then.tables)
        lk_catalog_free(&then);
    if (flags & (LK_SCAN_ROWID | LK_SCAN_IDENTITY))
        buf_puts(b, ", row_id AS rowid");
    if (flags & LK_SCAN_IDENTITY)
        buf_puts(b, ", -1::BIGINT AS __tarn_fid, row_id AS __tarn_pos, begin_snapshot AS "
                    "__tarn_rsnap");
    if (flags & LK_SCAN_VIRTUAL) {
        tarn_buf name = {0}, index = {0};
        quote_literal(&name, inl->name);
        buf_printf(&index, "%lld::UBIGINT", (long long)file_index);
        lk_scan_virtual_columns(b, flags, "begin_snapshot", buf_cstr(&name),
                                "row_number() OVER (ORDER BY row_id) - 1", buf_cstr(&index));
        buf_free(&name);
        buf_free(&index);
    }
    buf_printf(b, " FROM %s.", lake->meta);
    quote_ident(b, inl->name);
    /* At the lake's latest snapshot (the session's own view: one writer,
     * this session) a row is live iff it was never ended — a filter DuckDB
     * can estimate from the column's statistics, which keeps its join
     * order, and so the order of unordered results, the same as DuckLake's. */
    int unended = latest && !any_ended(lake, con, inl);
    if (unended)
        buf_puts(b, " WHERE true"); /* nothing ended yet: no filter, exact estimates */
    else if (latest)
        buf_puts(b, " WHERE end_snapshot IS NULL");
    else
        buf_printf(b, " WHERE %s >= begin_snapshot AND (%s < end_snapshot OR end_snapshot IS NULL)",
                   snap, snap);
    if (pending && lake->txn->has_deletes) {
        char *pid = lk_txn_pending_inline_deletes(lake);
        buf_printf(b, " AND row_id NOT IN (SELECT row_id FROM %s WHERE table_id = %lld)", pid,
                   (long long)t->id);
        free(pid);
    }
    /* DuckLake reads inlined rows in row id order: queries whose result
     * order is scan order (single-threaded) then see the same order. With
     * no row ended, the table holds its rows in that order already (each
     * commit appends its rows, ids rising), and an ORDER BY would only
     * change what DuckDB does above it: a window over ordered input
     * returns its partitions in another order than over a plain scan. */
    if (!unended)
        buf_puts(b, " ORDER BY row_id");
}

/* `local_start`: the transaction-local row id of its first new inlined
 * row (after its new files' rows, as DuckLake counts them). */
void lk_scan_pending_part(tarn_buf *b, lk_lake *lake, const lk_table *t, int flags,
                          int64_t local_start, int64_t file_index)
{
    char *pi = lk_txn_pending_inserts(lake, t->id);
    buf_puts(b, "SELECT ");
    lk_scan_column_list(b, t, NULL);
    const lk_table_delta *dl = lk_txn_find_delta(lake->txn, t->id);
    long long base = dl ? (long long)dl->base_row_id : 0;
    if ((flags & LK_SCAN_LOCAL_ROWIDS) && !(flags & LK_SCAN_IDENTITY))
        /* new rows (an UPDATE's images keep their ids) */
        buf_printf(b,
                   ", CASE WHEN row_id >= %lld THEN %lld + row_number() OVER (PARTITION BY row_id "
                   ">= %lld ORDER BY row_id) - 1 ELSE row_id END AS rowid",
                   base, (long long)local_start, base);
    else if (flags & (LK_SCAN_ROWID | LK_SCAN_IDENTITY))
        buf_puts(b, ", row_id AS rowid");
    if (flags & LK_SCAN_IDENTITY)
        buf_printf(b,
                   ", -2::BIGINT AS __tarn_fid, row_id AS __tarn_pos, %lld::BIGINT AS "
                   "__tarn_rsnap",
                   (long long)lake->txn->snapshot_id);
    if (flags & LK_SCAN_VIRTUAL) {
        char *index = xasprintf("%lld::UBIGINT", (long long)file_index);
        lk_scan_virtual_columns(b, flags, "NULL::BIGINT",
                                "'__ducklake_inlined_transaction_local_data'",
                                "row_number() OVER (ORDER BY row_id) - 1", index);
        free(index);
    }
    buf_printf(b, " FROM %s", pi);
    free(pi);
}
/*
 * maintain_flush.c — ducklake_flush_inlined_data: moving the rows kept in
 * the catalog's inlined-data tables into Parquet files (DuckLake §6.5).
 *
 * Every row ever inserted into an inlined table (ended ones too) goes into
 * one file per inlined table (per partition when the table was partitioned
 * then), written with the layout of that table's schema version and with
 * each row's row id and snapshot embedded, so time travel and the change
 * feed read the same before and after. The file begins at its oldest row's
 * snapshot (partial_max: the newest); rows already deleted get a delete
 * file with the snapshot of each deletion. The inlined rows are deleted
 * in the same commit (token inline_flush:T), and, after it, inlined tables
 * of older schema versions that are now empty are dropped. Deletions of
 * file rows kept inline (ducklake_inlined_delete_T) move into delete files.
 */
#include "duck/duck.h"
#include "lake/dvec.h"
#include "lake/catdb.h"
#include "lake/lake.h"
#include "lake/maintain_int.h"
#include "lake/sort.h"
#include "lake/write.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

static int table_in_meta(const mt_call *c, const char *name)
{
    return lk_catdb_table_exists(&c->lake->db, c->con, name);
}

/* The table as it was at schema version `sv` (the layout of its inlined
 * table of that version). */
static int version_model(const mt_call *c, const lk_table *t, int64_t sv, lk_catalog *cat,
                         const lk_table **out)
{
    int64_t snap = 0;
    int rc = lk_catdb_query_int64f(
        &snap, NULL, &c->lake->db, c->con,
        "SELECT COALESCE((SELECT max(begin_snapshot) FROM %s.ducklake_schema_versions "
        "WHERE table_id = %lld AND schema_version <= %lld), %lld)",
        c->lake->meta, (long long)t->id, (long long)sv, (long long)t->begin);
    if (!rc)
        rc = mt_catalog_load(cat, c, snap);
    if (rc)
        return rc;
    *out = lk_catalog_table_by_id(cat, t->id);
    if (!*out) {
        lk_catalog_free(cat);
        return tarn_error_set(TARN_ERROR, "table %lld not found at snapshot %lld", (long long)t->id,
                              (long long)snap);
    }
    return 0;
}

/* One file's worth of an inlined table: its rows (all of them, or those
 * of one partition). */
typedef struct {
    const mt_call *c;
    const lk_table *cur, *tv; /* the table now / at the inlined table's version */
    const char *inl;          /* inlined table, quoted and qualified */
    int64_t snap;             /* the flush reads rows with begin_snapshot <= snap */
    lk_table_delta *delta;
} flush_job;

static void rows_where(tarn_buf *b, const flush_job *j, const char *part_filter)
{
    buf_printf(b, " FROM %s WHERE begin_snapshot <= %lld", j->inl, (long long)j->snap);
    if (part_filter && *part_filter)
        buf_printf(b, " AND %s", part_filter);
}

static int write_part(const flush_job *j, const char *filter, const char *subdir, char **values,
                      int64_t *rows)
{
    const mt_call *c = j->c;
    tarn_buf q = {0}, src = {0}, pos = {0}, order = {0};
    buf_puts(&q, "SELECT min(row_id), min(begin_snapshot), max(begin_snapshot)");
    rows_where(&q, j, filter);
    duck_table r;
    int rc = duck_table_query(&r, c->con, buf_cstr(&q));
    if (rc)
        goto out;
    /* a sorted table's rows go in its order now (SET SORTED BY), row id and
     * snapshot breaking ties, as DuckLake's flush writes them */
    if (lk_sort_order_by(&order, j->cur, j->tv))
        buf_puts(&order, ", ");
    buf_puts(&order, "__rid, __snap");
    mt_file_spec sp = {.t = j->tv,
                       .cur = j->cur,
                       .order_by = buf_cstr(&order),
                       .with_rid = 1,
                       .with_snap = 1,
                       .subdir = subdir,
                       .partition_id = j->tv->nkeys ? j->tv->partition_id : -1,
                       .part_values = values,
                       .nparts = j->tv->nkeys,
                       .row_id_start = duck_table_int64(&r, 0, 0),
                       .begin_snapshot = duck_table_int64(&r, 0, 1),
                       .partial_max = duck_table_int64(&r, 0, 2),
                       .stats = j->delta};
    duck_table_free(&r);
    buf_puts(&src, "SELECT ");
    for (size_t i = 0; i < j->tv->ncols; i++) {
        buf_puts(&src, "CAST(");
        quote_ident(&src, j->tv->cols[i].name);
        buf_puts(&src, " AS ");
        lk_type_to_sql(&src, &j->tv->cols[i]);
        buf_puts(&src, ") AS ");
        quote_ident(&src, j->tv->cols[i].name);
        buf_puts(&src, ", ");
    }
    buf_puts(&src, "row_id AS __rid, begin_snapshot AS __snap");
    rows_where(&src, j, filter);
    sp.source = buf_cstr(&src);
    mt_written w;
    rc = mt_write_data_file(c, &sp, &w);
    if (rc || w.file_id < 0)
        goto out;
    *rows += w.record_count;
    /* rows already deleted: positions in the file's order */
    buf_puts(&pos, "SELECT pos, snap FROM (SELECT end_snapshot AS snap, row_number() OVER (ORDER "
                   "BY ");
    if (lk_sort_order_by(&pos, j->cur, j->tv))
        buf_puts(&pos, ", ");
    buf_puts(&pos, "row_id, begin_snapshot) - 1 AS pos");
    rows_where(&pos, j, filter);
    buf_puts(&pos, ") WHERE snap IS NOT NULL");
    int64_t ndel = 0;
    rc = mt_write_delete_file(c, j->cur, w.file_id, w.abs_path, buf_cstr(&pos), 0, &ndel);
    mt_written_free(&w);
out:
    buf_free(&q);
    buf_free(&src);
    buf_free(&pos);
    buf_free(&order);
    return rc;
}

/* One file per partition of the inlined table (when the table was
 * partitioned at its version), each in its hive directory. */
static int write_partitions(const flush_job *j, int64_t *rows)
{
    const lk_table *tv = j->tv;
    tarn_buf keys = {0}, q = {0};
    int rc = 0;
    for (size_t k = 0; !rc && k < tv->nkeys; k++) {
        buf_puts(&keys, k ? ", (" : "(");
        rc = lk_write_key_expr(&keys, tv, &tv->keys[k]);
        buf_printf(&keys, ")::VARCHAR AS k%zu", k);
    }
    duck_table parts = {0};
    if (!rc) {
        buf_printf(&q, "SELECT * EXCLUDE (__f) FROM (SELECT %s, min(row_id) AS __f",
                   buf_cstr(&keys));
        rows_where(&q, j, NULL);
        buf_puts(&q, " GROUP BY ALL) ORDER BY __f");
        rc = duck_table_query(&parts, j->c->con, buf_cstr(&q));
    }
    for (size_t r = 0; !rc && r < parts.nrows; r++) {
        tarn_buf where = {0}, dir = {0};
        for (size_t k = 0; k < tv->nkeys; k++) {
            const lk_partkey *pk = &tv->keys[k];
            buf_puts(&where, k ? " AND (" : "(");
            lk_write_key_expr(&where, tv, pk);
            buf_puts(&where, ")::VARCHAR IS NOT DISTINCT FROM ");
            quote_literal(&where, duck_table_get(&parts, r, k));
        }
        lk_write_hive_dir(&dir, j->c->lake, j->c->con, tv,
                          (const char *const *)parts.cells + r * parts.ncols);
        rc = write_part(j, buf_cstr(&where), buf_cstr(&dir), parts.cells + r * parts.ncols, rows);
        buf_free(&where);
        buf_free(&dir);
    }
    if (parts.ncols)
        duck_table_free(&parts);
    buf_free(&keys);
    buf_free(&q);
    return rc;
}

static int flush_inlined_table(const mt_call *c, const lk_table *t, const lk_inlined *inl,
                               int64_t *rows)
{
    lk_txn *txn = c->lake->txn;
    /* flushed earlier in this transaction: its rows are in a pending file
     * already, and the catalog still holds them until COMMIT */
    if (strlist_find(&txn->replaced_inlined, inl->name) >= 0 || !table_in_meta(c, inl->name))
        return 0;
    tarn_buf name = {0};
    buf_printf(&name, "%s.", c->lake->meta);
    quote_ident(&name, inl->name);
    int64_t n = 0;
    int rc = lk_catdb_query_int64f(&n, NULL, &c->lake->db, c->con,
                                   "SELECT count(*) FROM %s WHERE begin_snapshot <= %lld",
                                   buf_cstr(&name), (long long)txn->cat.snapshot_id);
    if (rc || n == 0) {
        buf_free(&name);
        return rc;
    }
    lk_catalog vcat;
    const lk_table *tv = NULL;
    rc = version_model(c, t, inl->schema_version, &vcat, &tv);
    if (rc) {
        buf_free(&name);
        return rc;
    }
    flush_job j = {
        c, t, tv, buf_cstr(&name), txn->cat.snapshot_id, lk_txn_delta(c->lake, c->con, t->id)};
    if (tv->nkeys)
        rc = write_partitions(&j, rows);
    else
        rc = write_part(&j, NULL, "", NULL, rows);
    if (!rc)
        lk_txn_sql(txn, "DELETE FROM %s WHERE begin_snapshot <= %lld", buf_cstr(&name),
                   (long long)txn->cat.snapshot_id);
    if (!rc && c->explicit_txn) /* the transaction reads the new files instead */
        strlist_push(&txn->replaced_inlined, inl->name);
    lk_catalog_free(&vcat);
    buf_free(&name);
    return rc;
}

/* The SQL of the positions deleted from data file `fid` and their
 * snapshots: its rows in ducklake_inlined_delete_T and those of its
 * current delete file (at old_path, begun at snapshot old_begin; NULL:
 * none). */
static void file_deletions_sql(tarn_buf *pos, const mt_call *c, const lk_table *t, const char *fid,
                               const char *old_path, const char *old_begin)
{
    buf_printf(pos,
               "SELECT pos, min(snap) AS snap FROM (SELECT row_id AS pos, begin_snapshot "
               "AS snap FROM %s.ducklake_inlined_delete_%lld WHERE file_id = %s",
               c->lake->meta, (long long)t->id, fid);
    if (old_path) {
        /* an old file without embedded snapshots deleted everything at
         * its begin snapshot */
        buf_puts(pos, " UNION ALL SELECT pos, COALESCE(snap, ");
        buf_puts(pos, old_begin);
        buf_puts(pos, ") FROM ");
        if (lk_dvec_file_is(old_path)) { /* DuckLake's deletion vector */
            lk_dvec_source_sql(pos, old_path, "snap");
        } else {
            buf_puts(pos, "read_parquet(");
            quote_literal(pos, old_path);
            buf_printf(pos,
                       ", schema = MAP {2147483645: {name: 'pos', type: 'BIGINT', "
                       "default_value: NULL::VARCHAR}, %lld: {name: 'snap', type: "
                       "'BIGINT', default_value: NULL::VARCHAR}})",
                       LK_FIELD_ID_SNAPSHOT);
        }
    }
    buf_puts(pos, ") GROUP BY pos");
}

/* Deletions of file rows kept in ducklake_inlined_delete_T become
 * (snapshot-embedded) delete files, merged with each file's current one. */
static int flush_file_deletions(const mt_call *c, const lk_table *t)
{
    char *name = xasprintf("ducklake_inlined_delete_%lld", (long long)t->id);
    int exists = table_in_meta(c, name);
    free(name);
    if (!exists)
        return 0;
    lk_txn *txn = c->lake->txn;
    char *dir = lk_lake_table_dir(c->lake, &txn->cat, t);
    duck_table r;
    int rc = lk_catdb_queryf(
        &r, &c->lake->db, c->con,
        "SELECT DISTINCT i.file_id, d.path, d.path_is_relative, x.delete_file_id, x.path, "
        "x.path_is_relative, x.begin_snapshot FROM %s.ducklake_inlined_delete_%lld i JOIN "
        "%s.ducklake_data_file d ON d.data_file_id = i.file_id LEFT JOIN (SELECT * FROM "
        "%s.ducklake_delete_file WHERE table_id = %lld AND %lld >= begin_snapshot AND (%lld "
        "< end_snapshot OR end_snapshot IS NULL)) x ON x.data_file_id = i.file_id ORDER BY "
        "i.file_id",
        c->lake->meta, (long long)t->id, c->lake->meta, c->lake->meta, (long long)t->id,
        (long long)txn->cat.snapshot_id, (long long)txn->cat.snapshot_id);
    int queried = rc == 0; /* r is to be freed, also when a write below fails */
    for (size_t i = 0; !rc && i < r.nrows; i++) {
        const char *fid = duck_table_get(&r, i, 0);
        int rel = !duck_table_get(&r, i, 2) || strcmp(duck_table_get(&r, i, 2), "true") == 0;
        char *data = rel ? xasprintf("%s%s", dir, duck_table_get(&r, i, 1))
                         : xstrdup(duck_table_get(&r, i, 1));
        const char *old = duck_table_get(&r, i, 3);
        char *old_path = NULL;
        if (old) {
            int orel = strcmp(duck_table_get(&r, i, 5), "true") == 0;
            old_path = orel ? xasprintf("%s%s", dir, duck_table_get(&r, i, 4))
                            : xstrdup(duck_table_get(&r, i, 4));
        }
        tarn_buf pos = {0};
        file_deletions_sql(&pos, c, t, fid, old_path, duck_table_get(&r, i, 6));
        int64_t ndel = 0, id = strtoll(fid, NULL, 10);
        rc = mt_write_delete_file(c, t, id, data, buf_cstr(&pos), 1, &ndel);
        if (!rc && old) {
            int64_t old_id = strtoll(old, NULL, 10);
            rc = mt_drop_delete_file_now(c, old_id);
        }
        free(old_path);
        free(data);
        buf_free(&pos);
    }
    if (!rc && r.nrows) {
        lk_txn_sql(txn, "DELETE FROM %s.ducklake_inlined_delete_%lld", c->lake->meta,
                   (long long)t->id);
        char *tok = xasprintf("deleted_from_table:%lld", (long long)t->id);
        lk_txn_change(txn, tok);
        free(tok);
    }
    if (queried)
        duck_table_free(&r);
    free(dir);
    return rc;
}

/* After the commit, as DuckLake does: inlined tables of older schema
 * versions left empty are unregistered and dropped (no snapshot). */
static int drop_superseded(const mt_call *c)
{
    const char *m = c->lake->meta;
    duck_table r;
    int rc = lk_catdb_queryf(&r, &c->lake->db, c->con,
                             "SELECT table_id, schema_version, table_name FROM "
                             "%s.ducklake_inlined_data_tables i WHERE schema_version < (SELECT "
                             "max(schema_version) FROM %s.ducklake_inlined_data_tables j WHERE "
                             "j.table_id = i.table_id)",
                             m, m);
    int dropped = 0;
    for (size_t i = 0; !rc && i < r.nrows; i++) {
        const char *name = duck_table_get(&r, i, 2);
        tarn_buf b = {0};
        buf_printf(&b, "SELECT count(*) FROM %s.", m);
        quote_ident(&b, name);
        int64_t n = 1;
        if (!table_in_meta(c, name))
            n = 0;
        else if (lk_catdb_query_int64(&n, NULL, &c->lake->db, c->con, buf_cstr(&b)) != 0)
            rc = TARN_ERROR;
        if (!rc && n == 0) {
            buf_clear(&b);
            buf_printf(&b,
                       "DELETE FROM %s.ducklake_inlined_data_tables WHERE table_id = %s AND "
                       "schema_version = %s",
                       m, duck_table_get(&r, i, 0), duck_table_get(&r, i, 1));
            rc = lk_catdb_exec(&c->lake->db, c->con, buf_cstr(&b));
            buf_clear(&b);
            buf_printf(&b, "DROP TABLE IF EXISTS %s.", m);
            quote_ident(&b, name);
            if (!rc)
                rc = lk_catdb_exec(&c->lake->db, c->con, buf_cstr(&b));
            dropped++;
        }
        buf_free(&b);
    }
    if (r.ncols)
        duck_table_free(&r);
    if (!rc && dropped)
        rc = lk_lake_reload(c->lake, c->con);
    return rc;
}

static int flush_tables(const mt_call *c, mt_result *res, int *any)
{
    const lk_table **tables = NULL;
    size_t n = 0;
    int rc = mt_tables(c, lk_args_named(c->a, "schema_name"), lk_args_named(c->a, "table_name"),
                       &tables, &n);
    lk_catalog *cat = &c->lake->txn->cat;
    for (size_t i = 0; !rc && i < n; i++) {
        const lk_table *t = tables[i];
        if (!mt_auto_compact(c, t) || mt_checkpoint_skips(c, t, 1))
            continue;
        int64_t rows = 0;
        size_t mark = 0;
        rc = mt_table_begin(c, t, &mark);
        for (size_t k = 0; !rc && k < t->ninlined; k++) {
            *any = 1;
            rc = flush_inlined_table(c, t, &t->inlined[k], &rows);
        }
        if (!rc)
            rc = flush_file_deletions(c, t);
        mt_table_end(c, t, mark);
        if (rc || rows == 0)
            continue;
        char *tok = xasprintf("inline_flush:%lld", (long long)t->id);
        lk_txn_change(c->lake->txn, tok);
        free(tok);
        lk_schema *sc = lk_catalog_schema_by_id(cat, t->schema_id);
        char *cells[3] = {mt_lit(sc ? sc->name : ""), mt_lit(t->name), mt_int(rows)};
        mt_result_row(res, (const char *const *)cells);
        for (size_t k = 0; k < 3; k++)
            free(cells[k]);
    }
    free(tables);
    return rc;
}

int mt_flush_inlined(char **out, const mt_call *c)
{
    static const char *const NAMED[] = {"schema_name", "table_name", "dry_run", NULL};
    static const char *const NAMES[] = {"schema_name", "table_name", "rows_flushed"};
    static const char *const TYPES[] = {"VARCHAR", "VARCHAR", "BIGINT"};
    int rc = mt_check_named(c, NAMED);
    if (!rc)
        rc = mt_write_begin(c);
    if (rc)
        return rc;
    mt_result res = {3, NAMES, TYPES, {0}, 0};
    int any = 0;
    rc = flush_tables(c, &res, &any);
    rc = mt_write_end(c, rc);
    /* inside BEGIN … COMMIT the flushed rows leave at COMMIT; their empty
     * tables stay until a flush outside one */
    if (!rc && any && !mt_bool(c, "dry_run", 0) && !c->explicit_txn)
        rc = drop_superseded(c);
    *out = mt_result_sql(&res);
    return rc;
}

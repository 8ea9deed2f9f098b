/*
 * deletes.c — pending deletions to delete files, inlined deletions and
 * ended files (see deletes.h for the choice).
 *
 * Catalog rows written at commit: ducklake_delete_file (a row per new
 * Parquet delete file; the row of the one it replaces is removed and its
 * file scheduled for deletion in ducklake_files_scheduled_for_deletion,
 * since the new file holds every position, each with the snapshot that
 * deleted it in _ducklake_internal_snapshot_id), ducklake_inlined_delete_<t>
 * (file_id, row_id, begin_snapshot; the table made on first use),
 * ducklake_data_file.end_snapshot for a file whose every row is gone, and
 * end_snapshot of deleted rows in the inlined-data tables. Read: the data
 * files' record counts and their live delete files.
 */
#include "lake/dvec.h"
#include "lake/deletes.h"

#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/filestats.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/quote.h"
#include "util/uuid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void lk_deletes_note_inlined(lk_lake *lake, int64_t table_id)
{
    lk_txn *txn = lake->txn;
    char *tok = xasprintf("inlined_delete:%lld", (long long)table_id);
    for (size_t i = 0; i < txn->nchange_tokens; i++) {
        if (strcmp(txn->change_tokens[i], tok) == 0) {
            free(tok);
            return;
        }
    }
    lk_txn_change(txn, tok);
    free(tok);
    const lk_table *t = lk_catalog_table_by_id(&txn->cat, table_id);
    if (!t)
        return;
    char *pid = lk_txn_pending_inline_deletes(lake);
    /* the row ids are in a TEMP table: a mixed write */
    char *end = xasprintf("%lld", (long long)txn->snapshot_id);
    char *where = xasprintf("row_id IN (SELECT row_id FROM %s WHERE table_id = %lld) AND "
                            "end_snapshot IS NULL AND begin_snapshot <> %lld",
                            pid, (long long)table_id, (long long)txn->snapshot_id);
    const char *col = "end_snapshot", *expr = end;
    for (size_t i = 0; i < t->ninlined; i++)
        lk_txn_update_mixed(txn, t->inlined[i].name, &col, &expr, 1, where);
    free(end);
    free(where);
    free(pid);
}

typedef struct {
    int64_t table_id, file_id, n;
} file_deletes;

/* State of one committed data file before this transaction. */
typedef struct {
    int64_t record_count;
    char *path, *rel;         /* data file path (as read) and stored form */
    int64_t del_id;           /* current delete file id, -1 none */
    char *del_path, *del_rel; /* its path (as read) and stored path */
    int64_t del_count, del_begin;
    int del_has_snap;
    int64_t inlined_deleted;
} file_state;

static void state_free(file_state *s)
{
    free(s->path);
    free(s->rel);
    free(s->del_path);
    free(s->del_rel);
}

static int load_state(file_state *s, lk_lake *lake, duckdb_connection con, const lk_table *t,
                      int64_t file_id)
{
    memset(s, 0, sizeof(*s));
    s->del_id = -1;
    char *dir = lk_lake_table_dir(lake, &lake->txn->cat, t);
    duck_table r;
    int rc = lk_catdb_queryf(
        &r, &lake->db, con,
        "SELECT d.record_count, d.path, x.delete_file_id, x.path, x.delete_count, "
        "x.begin_snapshot, x.partial_max FROM %s.ducklake_data_file d LEFT JOIN "
        "%s.ducklake_delete_file x ON x.data_file_id = d.data_file_id AND x.end_snapshot IS NULL "
        "WHERE d.data_file_id = %lld",
        lake->meta, lake->meta, (long long)file_id);
    if (!rc && r.nrows == 0)
        rc = tarn_error_set(TARN_ENOTFOUND, "data file %lld not found", (long long)file_id);
    if (!rc) {
        s->record_count = duck_table_int64(&r, 0, 0);
        s->rel = xstrdup(duck_table_get(&r, 0, 1));
        s->path = xasprintf("%s%s", dir, s->rel);
        if (duck_table_get(&r, 0, 2)) {
            s->del_id = duck_table_int64(&r, 0, 2);
            s->del_rel = xstrdup(duck_table_get(&r, 0, 3));
            s->del_path = xasprintf("%s%s", dir, s->del_rel);
            s->del_count = duck_table_int64(&r, 0, 4);
            s->del_begin = duck_table_int64(&r, 0, 5);
            s->del_has_snap = duck_table_get(&r, 0, 6) != NULL;
        }
    }
    duck_table_free(&r);
    if (!rc) {
        char *name = xasprintf("ducklake_inlined_delete_%lld", (long long)t->id);
        int exists = lk_lake_meta_table_exists(lake, con, name);
        free(name);
        if (exists)
            rc = lk_catdb_query_int64f(&s->inlined_deleted, NULL, &lake->db, con,
                                       "SELECT count(*) FROM %s.ducklake_inlined_delete_%lld "
                                       "WHERE file_id = %lld",
                                       lake->meta, (long long)t->id, (long long)file_id);
    }
    free(dir);
    return rc;
}

static void change(lk_txn *txn, const char *kind, int64_t table_id)
{
    char *tok = xasprintf("%s:%lld", kind, (long long)table_id);
    lk_txn_change(txn, tok);
    free(tok);
}

static int inline_deletes(lk_lake *lake, duckdb_connection con, const file_deletes *fd)
{
    lk_txn *txn = lake->txn;
    char *pd = lk_txn_pending_deletes(lake);
    lk_txn_sql(txn,
               "CREATE TABLE IF NOT EXISTS %s.ducklake_inlined_delete_%lld(file_id BIGINT, row_id "
               "BIGINT, begin_snapshot BIGINT)",
               lake->meta, (long long)fd->table_id);
    char *made = xasprintf("ducklake_inlined_delete_%lld", (long long)fd->table_id);
    lk_txn_meta_table(txn, '+', made);
    free(made);
    /* the positions are copied now: the TEMP table is gone at commit time
     * only if the batch reads it after the drop, which it never does */
    char *into = xasprintf("ducklake_inlined_delete_%lld", (long long)fd->table_id);
    char *rows =
        xasprintf("SELECT DISTINCT file_id, pos, %lld FROM %s WHERE table_id = %lld AND "
                  "file_id = %lld ORDER BY pos",
                  (long long)txn->snapshot_id, pd, (long long)fd->table_id, (long long)fd->file_id);
    lk_txn_insert_select(txn, into, rows); /* the positions are in a TEMP table */
    free(into);
    free(rows);
    free(pd);
    change(txn, "inlined_delete", fd->table_id);
    (void)con;
    return 0;
}

static void file_row(lk_txn *txn, int64_t id, int64_t table_id, int64_t begin, int64_t data_file_id,
                     const char *path, const char *format, const lk_file_stats *fs,
                     int64_t partial_max)
{
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, %lld, %lld, NULL, %lld, ", (long long)id, (long long)table_id,
               (long long)begin, (long long)data_file_id);
    quote_literal(&b, path);
    buf_printf(&b, ", true, '%s', %lld, %lld, %lld, NULL, ", format, (long long)fs->count,
               (long long)fs->file_size, (long long)fs->footer_size);
    if (partial_max >= 0)
        buf_printf(&b, "%lld)", (long long)partial_max);
    else
        buf_puts(&b, "NULL)");
    lk_txn_row(txn, "ducklake_delete_file", "%s", buf_cstr(&b));
    buf_free(&b);
}

void lk_deletes_file_row(lk_txn *txn, int64_t id, int64_t table_id, int64_t begin,
                         int64_t data_file_id, const char *path, const lk_file_stats *fs,
                         int64_t partial_max)
{
    file_row(txn, id, table_id, begin, data_file_id, path, "parquet", fs, partial_max);
}

static void schedule_old_delete_file(lk_lake *lake, const lk_table *t, const file_state *s)
{
    lk_txn *txn = lake->txn;
    lk_schema *sc = lk_catalog_schema_by_id(&txn->cat, t->schema_id);
    char *rel =
        xasprintf("%s%s%s", sc && sc->path ? sc->path : "", t->path ? t->path : "", s->del_rel);
    lk_txn_schedule_deletion(txn, s->del_id, rel, 1);
    free(rel);
    lk_txn_sql(txn, "DELETE FROM %s.ducklake_delete_file WHERE delete_file_id = %lld", lake->meta,
               (long long)s->del_id);
}

/* The positions of the new delete file: earlier ones with the snapshot
 * that deleted them, then this transaction's. */
static void positions_sql(tarn_buf *b, lk_lake *lake, const file_deletes *fd, const file_state *s,
                          int with_snap)
{
    char *pd = lk_txn_pending_deletes(lake);
    int64_t snap = lake->txn->snapshot_id;
    buf_puts(b, "SELECT pos");
    if (with_snap)
        buf_puts(b, ", min(snap) AS _ducklake_internal_snapshot_id");
    buf_puts(b, " FROM (");
    if (s && s->del_id >= 0) {
        /* a file without embedded snapshots deleted everything at its
         * begin; one with them may still have no partial_max (flush) */
        buf_printf(b, "SELECT pos, COALESCE(__tarn_dsnap, %lld) AS snap FROM ",
                   (long long)s->del_begin);
        if (lk_dvec_file_is(s->del_path)) { /* DuckLake's deletion vector */
            lk_dvec_source_sql(b, s->del_path, "__tarn_dsnap");
            buf_puts(b, " UNION ALL ");
        } else {
            buf_puts(b, "read_parquet(");
            quote_literal(b, s->del_path);
            buf_puts(b, ", schema = MAP {2147483645: {name: 'pos', type: 'BIGINT', "
                        "default_value: NULL::VARCHAR}, 2147483539: {name: '__tarn_dsnap', "
                        "type: 'BIGINT', default_value: NULL::VARCHAR}}) UNION ALL ");
        }
    }
    buf_printf(b, "SELECT pos, %lld AS snap FROM %s WHERE table_id = %lld AND file_id = %lld)",
               (long long)snap, pd, (long long)fd->table_id, (long long)fd->file_id);
    buf_puts(b, " GROUP BY pos ORDER BY pos");
    free(pd);
}

/* Writes the delete file of `fd` (the positions pending for it, after those
 * of its committed delete file `s` when there is one) into t's directory:
 * *name its file name, *abs its path, *fs its stats (when DuckDB reports
 * exactly one file). */
static int delete_parquet(char **name, char **abs, lk_file_stats **fs, size_t *nfs, lk_lake *lake,
                          duckdb_connection con, const lk_table *t, const file_deletes *fd,
                          const file_state *s, const char *data_path)
{
    lk_txn *txn = lake->txn;
    int with_snap = s && s->del_id >= 0;
    char *dir = lk_lake_table_dir(lake, &txn->cat, t);
    char *uuid = uuid_v7();
    int rc = fs_mkdir_p(dir);
    *name = xasprintf("ducklake-%s-delete.parquet", uuid);
    *abs = xasprintf("%s%s", dir, *name);
    tarn_buf b = {0};
    buf_puts(&b, "COPY (SELECT ");
    quote_literal(&b, data_path);
    buf_puts(&b, " AS file_path, pos");
    if (with_snap)
        buf_puts(&b, ", _ducklake_internal_snapshot_id");
    buf_puts(&b, " FROM (");
    positions_sql(&b, lake, fd, s, with_snap);
    buf_puts(&b, ")) TO ");
    quote_literal(&b, *abs);
    buf_printf(&b, " (FORMAT parquet, FIELD_IDS {file_path: %lld, pos: %lld",
               LK_FIELD_ID_DELETE_PATH, LK_FIELD_ID_DELETE_POS);
    if (with_snap)
        buf_printf(&b, ", _ducklake_internal_snapshot_id: %lld", LK_FIELD_ID_SNAPSHOT);
    buf_puts(&b, "}, RETURN_STATS)");
    *fs = NULL;
    *nfs = 0;
    if (!rc) {
        lk_txn_wrote(txn, *abs);
        rc = lk_copy_with_stats(fs, nfs, con, buf_cstr(&b));
    }
    buf_free(&b);
    free(uuid);
    free(dir);
    return rc;
}

/* Records the ducklake_delete_file row of delete file `name` of fd's file. */
static void delete_file_row(lk_lake *lake, const lk_table *t, const file_deletes *fd,
                            const file_state *s, const char *name, const lk_file_stats *fs)
{
    lk_txn *txn = lake->txn;
    int64_t begin = txn->snapshot_id, partial = -1;
    if (s && s->del_id >= 0) {
        begin = s->del_begin;
        partial = txn->snapshot_id;
        schedule_old_delete_file(lake, t, s);
    }
    int64_t id = lk_txn_new_file_id(txn);
    txn->del_file_ids = xrealloc(txn->del_file_ids, (txn->ndel_file_ids + 1) * sizeof(int64_t));
    txn->del_file_ids[txn->ndel_file_ids++] = id;
    lk_deletes_file_row(txn, id, t->id, begin, fd->file_id, name, fs, partial);
    change(txn, "deleted_from_table", t->id);
}

/* WRITE_DELETION_VECTORS: the file's positions (the committed delete
 * file's and the pending ones) as one deletion vector, which embeds no
 * snapshots, so it begins at this snapshot and the committed delete file
 * ends there (kept for time travel until its snapshots expire), as DuckLake
 * writes them. */
static int write_deletion_vector(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                 const file_deletes *fd, const file_state *s)
{
    lk_txn *txn = lake->txn;
    tarn_buf q = {0};
    positions_sql(&q, lake, fd, s, 0);
    duck_table r;
    int rc = duck_table_query(&r, con, buf_cstr(&q));
    buf_free(&q);
    if (rc)
        return rc;
    int64_t *pos = xmalloc((r.nrows ? r.nrows : 1) * sizeof(int64_t));
    for (size_t i = 0; i < r.nrows; i++)
        pos[i] = duck_table_int64(&r, i, 0);
    lk_file_stats fs = {.count = (int64_t)r.nrows};
    duck_table_free(&r);
    tarn_buf blob = {0};
    lk_dvec_encode(&blob, pos, (size_t)fs.count);
    free(pos);
    char *dir = lk_lake_table_dir(lake, &txn->cat, t);
    char *uuid = uuid_v7();
    char *name = xasprintf("ducklake-%s-delete.puffin", uuid);
    char *abs = xasprintf("%s%s", dir, name);
    rc = fs_mkdir_p(dir);
    if (!rc) {
        lk_txn_wrote(txn, abs);
        FILE *f = fopen(abs, "wb");
        if (!f || fwrite(blob.ptr, 1, blob.len, f) != blob.len)
            rc = tarn_error_set(TARN_ERROR, "cannot write delete file %s", abs);
        if (f && fclose(f) != 0 && !rc)
            rc = tarn_error_set(TARN_ERROR, "cannot write delete file %s", abs);
    }
    fs.file_size = (int64_t)blob.len;
    if (!rc) {
        if (s && s->del_id >= 0)
            lk_txn_sql(txn,
                       "UPDATE %s.ducklake_delete_file SET end_snapshot = %lld WHERE "
                       "delete_file_id = %lld",
                       lake->meta, (long long)txn->snapshot_id, (long long)s->del_id);
        int64_t id = lk_txn_new_file_id(txn);
        txn->del_file_ids = xrealloc(txn->del_file_ids, (txn->ndel_file_ids + 1) * sizeof(int64_t));
        txn->del_file_ids[txn->ndel_file_ids++] = id;
        file_row(txn, id, t->id, txn->snapshot_id, fd->file_id, name, "puffin", &fs, -1);
        change(txn, "deleted_from_table", t->id);
    }
    buf_free(&blob);
    free(name);
    free(abs);
    free(uuid);
    free(dir);
    return rc;
}

static int write_delete_file(lk_lake *lake, duckdb_connection con, const lk_table *t,
                             const file_deletes *fd, const file_state *s, const char *data_path)
{
    if (lake->write_dvs)
        return write_deletion_vector(lake, con, t, fd, s);
    char *name = NULL, *abs = NULL;
    lk_file_stats *fs = NULL;
    size_t nfs = 0;
    int rc = delete_parquet(&name, &abs, &fs, &nfs, lake, con, t, fd, s, data_path);
    if (!rc && nfs == 1)
        delete_file_row(lake, t, fd, s, name, &fs[0]);
    lk_file_stats_free(fs, nfs);
    free(abs);
    free(name);
    return rc;
}

/* Forgets the delete file written for pending file `pf` at a DELETE,
 * removing it from disk. */
static void local_delete_drop(lk_pending_file *pf)
{
    if (!pf->del_abs)
        return;
    unlink(pf->del_abs);
    free(pf->del_abs);
    free(pf->del_name);
    pf->del_abs = pf->del_name = NULL;
    pf->del_count = 0;
}

static int pending_count(int64_t *n, lk_lake *lake, duckdb_connection con, int64_t table_id,
                         int64_t file_id)
{
    char *pd = lk_txn_pending_deletes(lake);
    char *q = xasprintf("SELECT count(DISTINCT pos) FROM %s WHERE table_id = %lld AND file_id = "
                        "%lld",
                        pd, (long long)table_id, (long long)file_id);
    int rc = duck_query_int64(n, NULL, con, q);
    free(q);
    free(pd);
    return rc;
}

int lk_deletes_write_local(lk_lake *lake, duckdb_connection con, int64_t table_id)
{
    lk_txn *txn = lake->txn;
    const lk_table *t = lk_catalog_table_by_id(&txn->cat, table_id);
    int rc = 0;
    for (size_t i = 0; t && !rc && i < txn->nfiles; i++) {
        lk_pending_file *pf = &txn->files[i];
        int64_t n = 0;
        if (pf->table_id != table_id)
            continue;
        rc = pending_count(&n, lake, con, table_id, pf->file_id);
        if (rc || n == 0 || (pf->del_abs && n == pf->del_count))
            continue;
        file_deletes fd = {table_id, pf->file_id, n};
        char *name = NULL, *abs = NULL;
        lk_file_stats *fs = NULL;
        size_t nfs = 0;
        rc = delete_parquet(&name, &abs, &fs, &nfs, lake, con, t, &fd, NULL, pf->abs_path);
        if (!rc && nfs == 1) {
            local_delete_drop(pf); /* the new file holds its positions too */
            pf->del_name = name;
            pf->del_abs = abs;
            pf->del_count = n;
            pf->del_size = fs[0].file_size;
            pf->del_footer = fs[0].footer_size;
            name = abs = NULL;
        }
        lk_file_stats_free(fs, nfs);
        free(name);
        free(abs);
    }
    return rc;
}

static lk_pending_file *pending_file(lk_txn *txn, int64_t file_id)
{
    for (size_t i = 0; i < txn->nfiles; i++)
        if (txn->files[i].file_id == file_id)
            return &txn->files[i];
    return NULL;
}

/* Whether a DELETE statement of the transaction removed more of the file's
 * rows than the inlining limit (see note_big_deletes, write.c). */
static int big_deletes(const lk_txn *txn, int64_t file_id)
{
    for (size_t i = 0; i < txn->nbig_del_files; i++)
        if (txn->big_del_files[i] == file_id)
            return 1;
    return 0;
}

static int flush_file(lk_lake *lake, duckdb_connection con, const file_deletes *fd)
{
    lk_txn *txn = lake->txn;
    const lk_table *t = lk_catalog_table_by_id(&txn->cat, fd->table_id);
    if (!t)
        return 0; /* the table was dropped later in the transaction */
    lk_pending_file *pf = pending_file(txn, fd->file_id);
    if (pf && pf->del_abs && pf->del_count == fd->n) {
        /* written at the DELETE (lk_deletes_write_local) */
        lk_file_stats fs = {
            .count = pf->del_count, .file_size = pf->del_size, .footer_size = pf->del_footer};
        delete_file_row(lake, t, fd, NULL, pf->del_name, &fs);
        return 0;
    }
    if (pf) {
        local_delete_drop(pf);
        return write_delete_file(lake, con, t, fd, NULL, pf->abs_path);
    }
    file_state s;
    int rc = load_state(&s, lake, con, t, fd->file_id);
    if (rc)
        return rc;
    int64_t already = s.del_count + s.inlined_deleted;
    if (already + fd->n >= s.record_count) {
        lk_txn_sql(txn,
                   "UPDATE %s.ducklake_data_file SET end_snapshot = %lld WHERE end_snapshot IS "
                   "NULL AND data_file_id = %lld",
                   lake->meta, (long long)txn->snapshot_id, (long long)fd->file_id);
        change(txn, "deleted_from_table", t->id);
    } else if (!big_deletes(txn, fd->file_id)) {
        rc = inline_deletes(lake, con, fd);
    } else {
        rc = write_delete_file(lake, con, t, fd, &s, s.path);
    }
    state_free(&s);
    return rc;
}

int lk_deletes_flush(lk_lake *lake, duckdb_connection con)
{
    if (!lake->txn->has_deletes)
        return 0;
    char *pd = lk_txn_pending_deletes(lake);
    char *sql = xasprintf("SELECT table_id, file_id, count(DISTINCT pos) FROM %s GROUP BY ALL "
                          "ORDER BY table_id, file_id",
                          pd);
    free(pd);
    duck_table r;
    int rc = duck_table_query(&r, con, sql);
    free(sql);
    if (rc)
        return rc;
    for (size_t i = 0; i < r.nrows && !rc; i++) {
        file_deletes fd = {duck_table_int64(&r, i, 0), duck_table_int64(&r, i, 1),
                           duck_table_int64(&r, i, 2)};
        rc = flush_file(lake, con, &fd);
    }
    duck_table_free(&r);
    return rc;
}

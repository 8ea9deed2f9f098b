/*
 * scan.c — building the read SQL of a table at a snapshot (see scan.h).
 *
 * Shape of the generated query, parts left out when empty:
 *
 *   SELECT cols FROM read_parquet([files], schema = MAP{field_id: {name,
 *          type, default}}, filename = true, file_row_number = true) d
 *     ANTI JOIN (deleted (file, pos) pairs) x ON …      -- inlined / pending deletes
 *     WHERE NOT __tarn_deleted('spec', [d.file_index,] d.file_row_number)
 *                                                        -- delete files (delmask.h)
 *       AND __tarn_snap <= S                             -- partial files
 *   UNION ALL SELECT cols FROM <inlined table> WHERE <live at S>
 *   UNION ALL SELECT cols FROM <pending inserts>        -- open transaction
 *
 * Files are matched by Parquet field id (= column id), so renamed and
 * dropped columns read right; the two internal columns DuckLake may embed
 * (_ducklake_internal_row_id / _snapshot_id, field ids 2147483540 / 539)
 * come in under private names when row ids or per-row snapshots matter.
 *
 * What the SQL needs from the catalog (a table's live files, delete files
 * and partition values; an inlined table's column names, ended rows and
 * emptiness) is read through the per-lake cache of scan_cache.c: a commit
 * drops what it changed and records what it added, attaching fills it for
 * every table in a few queries, so a build's views and pinned reads cost
 * no catalog query.
 *
 * The parts: scan_files.c reads data files (read_parquet by field id, or
 * through a name mapping, with their deletes); scan_inlined.c reads the
 * inlined-data tables and the transaction's pending rows; this file lists a
 * table's sources at the snapshot, groups its files and joins the parts.
 */
#include "lake/scan.h"

#include "duck/duck.h"
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
static int load_committed_files(scan_input *in, lk_lake *lake, duckdb_connection con,
                                const lk_table *t, const lk_catalog *cat, int64_t s)
{
    duck_table r;
    int rc = scan_query_files(&r, lake, con, t->id, s);
    if (rc)
        return rc;
    char *dir = lk_lake_table_dir(lake, cat, t);
    scan_add_file_rows(in, &r, 0, r.nrows, dir);
    free(dir);
    duck_table_free(&r);
    return 0;
}

static void empty_part(tarn_buf *b, const lk_table *t, int flags)
{
    buf_puts(b, "SELECT ");
    for (size_t i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(b, ", ");
        buf_puts(b, "NULL::");
        lk_type_to_sql(b, &t->cols[i]);
        buf_puts(b, " AS ");
        quote_ident(b, t->cols[i].name);
    }
    if (flags & (LK_SCAN_ROWID | LK_SCAN_IDENTITY))
        buf_puts(b, ", NULL::BIGINT AS rowid");
    if (flags & LK_SCAN_IDENTITY)
        buf_puts(b, ", NULL::BIGINT AS __tarn_fid, NULL::BIGINT AS __tarn_pos, NULL::BIGINT AS "
                    "__tarn_rsnap");
    lk_scan_virtual_columns(b, flags, "NULL::BIGINT", "NULL::VARCHAR", "NULL::BIGINT",
                            "NULL::UBIGINT");
    buf_puts(b, " LIMIT 0");
}

static int pending_inserts_exist(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    return lk_write_pending_exists(lake, con, t->id);
}

static int inlined_table_exists(lk_lake *lake, duckdb_connection con, const char *name)
{
    return lk_lake_meta_table_exists(lake, con, name);
}

/* 1 when the nested columns of `t` are laid out in `layout` as they are
 * now (so the files can be read with the current types). */
static int nested_unchanged(const lk_table *t, const lk_table *then)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (!lk_type_is_nested(t->cols[i].type))
            continue;
        for (size_t k = 0; k < then->ncols; k++)
            if (then->cols[k].id == t->cols[i].id &&
                !lk_column_same_tree(&then->cols[k], &t->cols[i]))
                return 0;
    }
    return 1;
}

/* Reads each committed file's identity partition values (from whichever
 * partition spec it was written under) and builds its group signature. */
static int load_partition_constants(scan_input *in, lk_lake *lake, duckdb_connection con,
                                    const lk_table *t)
{
    duck_table r;
    int rc = scan_query_partition_values(&r, lake, con, t->id);
    if (rc)
        return rc;
    scan_apply_partition_values(in, t, &r);
    duck_table_free(&r);
    return 0;
}

/* Up to this many files with a delete file are read each on its own: the
 * deleted-row filter of a one-file read takes only the row number, so
 * DuckDB runs it inside the Parquet scan, before the other columns are
 * read (cheaper than the file-index form a read of several files needs). */
#define OWN_READ_DELETE_FILES 8

static int same_group(const scan_file *a, const scan_file *b, int by_begin, int64_t since,
                      int split_deletes)
{
    if (a != b && split_deletes && (a->del_path || b->del_path))
        return 0;
    /* (what a mapping reads is in the signature: lk_scan_mapped_signatures) */
    if ((a->mapping_id < 0) != (b->mapping_id < 0))
        return 0;
    if (by_begin && a->mapping_id < 0 && a->begin != b->begin)
        return 0;
    if (a->mapping_id < 0 && (a->begin >= since) != (b->begin >= since))
        return 0; /* read by name vs by field id (mapped files: by name) */
    return strcmp(a->pconst ? a->pconst : "", b->pconst ? b->pconst : "") == 0;
}

/* Files grouped, one read_parquet per group, by what has to be constant
 * within a read: the layout of nested columns they were written with (the
 * table as of each file's first snapshot; DuckDB matches struct children
 * by name) and their identity partition values (for pruning). */
static int grouped_parts(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                         scan_input *in, int64_t s, const char *snap, int flags, int pending,
                         const lk_namemap_set *maps, int *parts)
{
    int nested = lk_table_has_nested(t);
    int64_t since = lk_scan_layout_since(t->cols, t->ncols);
    int rc = 0;
    size_t ndel = 0;
    for (size_t i = 0; i < in->n; i++)
        ndel += in->files[i].del_path != NULL;
    int split = ndel <= OWN_READ_DELETE_FILES;
    char *done = xcalloc(in->n, 1);
    for (size_t i = 0; i < in->n && !rc; i++) {
        if (done[i])
            continue;
        lk_catalog then = {0};
        const lk_table *tt = NULL;
        int64_t begin = in->files[i].begin;
        if (nested && in->files[i].mapping_id < 0 && begin <= lake->cat.snapshot_id &&
            lk_catalog_load(&then, &lake->db, con, begin) == 0)
            tt = lk_catalog_table_by_id(&then, t->id);
        tarn_error_clear();
        int current = !tt || nested_unchanged(t, tt);
        scan_input group = {0};
        group.has_inline_deletes = in->has_inline_deletes;
        for (size_t k = i; k < in->n; k++) {
            if (done[k] || !same_group(&in->files[i], &in->files[k], nested, since, split))
                continue;
            done[k] = 1;
            group.files = xrealloc(group.files, (group.n + 1) * sizeof(scan_file));
            group.files[group.n++] = in->files[k];
        }
        if (*parts)
            buf_puts(b, " UNION ALL ");
        const lk_namemap *m = group.files[0].mapping_id >= 0
                                  ? lk_namemap_set_find(maps, group.files[0].mapping_id)
                                  : NULL;
        if (group.files[0].mapping_id >= 0 && !m)
            rc = tarn_error_set(TARN_ERROR,
                                "data file %s of table %s names a column mapping the catalog "
                                "does not have",
                                group.files[0].path, t->name);
        else if (m)
            lk_scan_mapped_part(b, lake, t, &group, s, snap, flags, pending, m);
        else
            lk_scan_parquet_part(b, lake, t, &group, s, snap, flags, pending,
                                 current ? NULL : tt->cols, current ? 0 : tt->ncols);
        (*parts)++;
        free(group.files); /* the files themselves belong to `in` */
        if (then.tables)
            lk_catalog_free(&then);
    }
    free(done);
    return rc;
}

/* The table's committed files at snapshot s, with their identity
 * partition values: from the cache, or read (and cached when s is the
 * lake's snapshot). A table the open transaction created has none. */
static int committed_input(scan_input *in, lk_lake *lake, duckdb_connection con, const lk_table *t,
                           const lk_catalog *cat, int64_t s)
{
    if (t->begin > s && !lk_catalog_table_by_id(&lake->cat, t->id))
        return 0; /* (a renamed table's row begins at the rename) */
    if (scan_cache_lookup(in, lake, t->id, s))
        return 0;
    int rc = load_committed_files(in, lake, con, t, cat, s);
    /* partition values only exist for files written under a spec: an
     * unpartitioned table costs no query for them */
    if (!rc && in->any_partitioned)
        rc = load_partition_constants(in, lake, con, t);
    if (!rc && s == lake->cat.snapshot_id)
        scan_cache_store(lake, t->id, s, in);
    return rc;
}

/* DuckLake numbers a transaction's new rows from 10^18 until its commit. */
#define LOCAL_ROW_ID_START 1000000000000000000LL

int lk_scan_virtual_flags(const lk_table *t, int flags)
{
    static const struct {
        int flag;
        const char *name;
    } V[] = {{LK_SCAN_SNAPSHOT, "snapshot_id"},
             {LK_SCAN_FILENAME, "filename"},
             {LK_SCAN_FILE_ROW, "file_row_number"},
             {LK_SCAN_FILE_INDEX, "file_index"}};
    for (size_t k = 0; k < sizeof(V) / sizeof(V[0]); k++)
        for (size_t i = 0; (flags & V[k].flag) && i < t->ncols; i++)
            if (strcasecmp(t->cols[i].name, V[k].name) == 0)
                flags &= ~V[k].flag;
    return flags;
}

int lk_scan_sql(char **out, lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                const lk_table *t, int64_t snapshot, int flags)
{
    return lk_scan_sql_pruned(out, lake, con, cat, t, snapshot, flags, NULL);
}

/* file_index and the transaction-local row ids, as DuckLake lists the
 * sources: committed files, the transaction's files, inlined tables, the
 * transaction's inlined rows. Returns the next local row id (that of the
 * pending inlined rows). */
static int64_t number_sources(scan_input *in)
{
    int64_t local = LOCAL_ROW_ID_START;
    for (size_t i = 0; i < in->n; i++) {
        in->files[i].index = (int64_t)i;
        if (in->files[i].pending && in->files[i].local_start >= 0) {
            in->files[i].local_start = local;
            local += in->files[i].record_count;
        }
    }
    return local;
}

/* The data files' parts into b (read by field id, name mapping or
 * position, in groups of one layout). */
static int file_parts(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                      scan_input *in, int64_t s, const char *snap, int flags, int pending,
                      int *parts)
{
    if (!in->n)
        return 0;
    lk_namemap_set maps = {0};
    int rc = lk_scan_mapped_load(&maps, lake, con, in);
    if (!rc)
        lk_scan_legacy_mappings(&maps, con, t, in);
    if (!rc && maps.n)
        lk_scan_mapped_signatures(in, &maps);
    if (!rc)
        rc = grouped_parts(b, lake, con, t, in, s, snap, flags, pending, &maps, parts);
    lk_namemap_set_free(&maps);
    return rc;
}

/* The parts of t's inlined-data tables into b; their file_index follows
 * the nfiles files'. */
static void inlined_parts(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                          int64_t snapshot, const char *snap, int flags, int pending, size_t nfiles,
                          int *parts)
{
    for (size_t i = 0; i < t->ninlined; i++) {
        if (!inlined_table_exists(lake, con, t->inlined[i].name))
            continue;
        /* flushed earlier in the transaction: its rows are in new files */
        if (pending && strlist_find(&lake->txn->replaced_inlined, t->inlined[i].name) >= 0)
            continue;
        /* an empty one adds nothing to the session's view; the commit that
         * first inlines rows into it rebuilds the view */
        inlined_info *x = scan_inlined_find(lake, t->inlined[i].name, 0);
        if (x && x->empty && snapshot < 0 && lake->pinned < 0)
            continue;
        if ((*parts)++)
            buf_puts(b, " UNION ALL ");
        buf_putc(b, '(');
        lk_scan_inlined_part(b, lake, con, t, &t->inlined[i], snap, flags, pending,
                             snapshot < 0 && lake->pinned < 0, (int64_t)(nfiles + i));
        buf_putc(b, ')');
    }
}

int lk_scan_sql_pruned(char **out, lk_lake *lake, duckdb_connection con, const lk_catalog *cat,
                       const lk_table *t, int64_t snapshot, int flags, const lk_prune *prune)
{
    lk_txn *txn = lake->txn;
    int pending = snapshot < 0 && txn != NULL;
    int64_t s = snapshot >= 0 ? snapshot : (txn ? txn->cat.snapshot_id : lake->cat.snapshot_id);
    scan_input in = {0};
    int rc = committed_input(&in, lake, con, t, cat, s);
    if (rc)
        return rc;
    if (pending && (txn->nmfiles || txn->nreplaced_files))
        scan_apply_maintenance(&in, txn, t->id);
    if (pending)
        scan_add_pending_files(&in, txn, t->id, 0);
    flags = lk_scan_virtual_flags(t, flags);
    int64_t local = number_sources(&in);
    /* after the numbering: file_index stays the place in the whole list */
    size_t nfiles = in.n;
    lk_prune_files(&in, lake, con, t, s, prune);
    char *idel = xasprintf("ducklake_inlined_delete_%lld", (long long)t->id);
    in.has_inline_deletes = in.n > 0 && lk_lake_meta_table_exists(lake, con, idel);
    free(idel);
    /* A literal, never session state: other connections of the database
     * read the views too. The session's view needs no rebuild after a
     * commit that only inlines rows: at the latest snapshot its inlined
     * part has no snapshot filter, and `s` bounds only deletions (which
     * come with a commit that rebuilds it). */
    char *snap = xasprintf("%lld", (long long)s);
    tarn_buf b = {0};
    int parts = 0;
    rc = file_parts(&b, lake, con, t, &in, s, snap, flags, pending, &parts);
    if (rc) {
        scan_input_free(&in);
        buf_free(&b);
        free(snap);
        return rc;
    }
    inlined_parts(&b, lake, con, t, snapshot, snap, flags, pending, nfiles, &parts);
    if (pending && pending_inserts_exist(lake, con, t)) {
        if (parts++)
            buf_puts(&b, " UNION ALL ");
        lk_scan_pending_part(&b, lake, t, flags, local, (int64_t)(nfiles + t->ninlined));
    }
    if (!parts)
        empty_part(&b, t, flags);
    /* One file left by pruning: DuckDB would answer COUNT(*) from its
     * footer once the filter holds for the whole file, and EXPLAIN ANALYZE
     * would show no read at all; beside an empty part the read stays, and
     * its "Total Files Read" shows what pruning left, as in DuckLake.
     * Not under LIMIT / OFFSET: the union would keep DuckDB from reading
     * the file's row ids whole first (its late materialization), and a
     * read the limit cuts short counts no file. */
    if (parts == 1 && in.n == 1 && nfiles > 1 && !(prune && prune->limited)) {
        buf_puts(&b, " UNION ALL (");
        empty_part(&b, t, flags);
        buf_putc(&b, ')');
    }
    scan_input_free(&in);
    free(snap);
    *out = buf_detach(&b);
    return 0;
}

/*
 * maintain_files.c — the files a maintenance commit writes and removes
 * (see maintain_int.h): data files carrying DuckLake's internal row-id and
 * snapshot-id columns with their catalog rows, snapshot-embedded delete
 * files, files dropped from the catalog at once and scheduled for
 * deletion, and the path checks that keep every deletion inside the
 * lake's data path.
 */
#include "duck/duck.h"
#include "lake/catdb.h"
#include "lake/colstats.h"
#include "lake/deletes.h"
#include "lake/filestats.h"
#include "lake/maintain_int.h"
#include "lake/pqopts.h"
#include "lake/write.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/quote.h"
#include "util/uuid.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *new_name(duckdb_connection con, const char *suffix)
{
    char *uuid = uuid_v7();
    char *name = xasprintf("ducklake-%s%s.parquet", uuid, suffix);
    free(uuid);
    return name;
}

static void copy_sql(tarn_buf *b, const mt_call *c, const mt_file_spec *sp, const char *abs)
{
    buf_puts(b, "COPY (SELECT ");
    for (size_t i = 0; i < sp->t->ncols; i++) {
        buf_puts(b, i ? ", " : "");
        quote_ident(b, sp->t->cols[i].name);
    }
    if (sp->with_rid)
        buf_puts(b, ", __rid AS _ducklake_internal_row_id");
    if (sp->with_snap)
        buf_puts(b, ", __snap AS _ducklake_internal_snapshot_id");
    buf_printf(b, " FROM (%s) __src ORDER BY %s) TO ", sp->source, sp->order_by);
    quote_literal(b, abs);
    /* the table's codec and row groups, as its inserts write them */
    buf_puts(b, " (FORMAT parquet, ");
    lk_pqopts_sql(b, c->lake, c->con, sp->cur);
    buf_puts(b, "FIELD_IDS {");
    for (size_t i = 0; i < sp->t->ncols; i++) {
        buf_puts(b, i ? ", " : "");
        lk_type_field_ids(b, &sp->t->cols[i]);
    }
    if (sp->with_rid)
        buf_printf(b, ", _ducklake_internal_row_id: %lld", LK_FIELD_ID_ROW_ID);
    if (sp->with_snap)
        buf_printf(b, ", _ducklake_internal_snapshot_id: %lld", LK_FIELD_ID_SNAPSHOT);
    /* native Parquet geometry, as write.c writes it */
    buf_puts(b, "}, GEOPARQUET_VERSION 'NONE', RETURN_STATS)");
}

static void opt_int(tarn_buf *b, int64_t v)
{
    if (v < 0)
        buf_puts(b, "NULL");
    else
        buf_printf(b, "%lld", (long long)v);
}

/* ducklake_file_column_stats rows of the file (leaf columns of the layout
 * written; the internal columns get none), as write.c records them. */
static const lk_column *find_column(const lk_column *cols, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++) {
        if (cols[i].id == id)
            return &cols[i];
        const lk_column *in = find_column(cols[i].children, cols[i].nchildren, id);
        if (in)
            return in;
    }
    return NULL;
}

/* DuckLake cannot compare bounds of a column whose type changed since the
 * file's layout (an int32 file of a column now int64): merging them makes
 * the table's bounds unknown. */
static void unknown_if_retyped(lk_stats_set *st, const lk_table *cur)
{
    for (size_t i = 0; i < st->n; i++) {
        lk_leaf_stats *l = &st->leaves[i];
        const lk_column *now = find_column(cur->cols, cur->ncols, l->col->id);
        if (!now || strcmp(now->type, l->col->type) == 0)
            continue;
        free(l->min);
        free(l->max);
        l->min = l->max = NULL;
    }
}

static int register_file(const mt_call *c, const mt_file_spec *sp, const char *rel,
                         const lk_file_stats *fs, int64_t file_id)
{
    lk_txn *txn = c->lake->txn;
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, %lld, %lld, NULL, NULL, ", (long long)file_id, (long long)sp->cur->id,
               (long long)sp->begin_snapshot);
    quote_literal(&b, rel);
    buf_printf(&b, ", true, 'parquet', %lld, %lld, %lld, ", (long long)fs->count,
               (long long)fs->file_size, (long long)fs->footer_size);
    opt_int(&b, sp->row_id_start);
    buf_puts(&b, ", ");
    opt_int(&b, sp->partition_id);
    buf_puts(&b, ", NULL, NULL, ");
    opt_int(&b, sp->partial_max);
    buf_putc(&b, ')');
    lk_txn_row(txn, "ducklake_data_file", "%s", buf_cstr(&b));
    buf_free(&b);
    lk_write_partition_values(txn, file_id, sp->cur->id, sp->part_values, sp->nparts);
    lk_stats_set st;
    lk_stats_init(&st, sp->t);
    lk_write_file_stats(c->lake->txn, sp->cur->id, file_id, fs, &st);
    int rc = 0;
    if (sp->stats) {
        unknown_if_retyped(&st, sp->cur);
        sp->stats->added_bytes += fs->file_size;
        sp->stats->touched = 1;
        rc = lk_stats_accumulate(&sp->stats->stats, &st, c->con);
    }
    lk_stats_free(&st);
    return rc;
}

/* Inside BEGIN … COMMIT the transaction reads the file it wrote (txn.h). */
static void note_maint_file(lk_txn *txn, const mt_file_spec *sp, const mt_written *w)
{
    txn->mfiles = xrealloc(txn->mfiles, (txn->nmfiles + 1) * sizeof(lk_maint_file));
    lk_maint_file *m = &txn->mfiles[txn->nmfiles++];
    memset(m, 0, sizeof(*m));
    m->table_id = sp->cur->id;
    m->file_id = w->file_id;
    m->row_id_start = sp->row_id_start;
    m->record_count = w->record_count;
    m->begin = sp->begin_snapshot;
    m->partial_max = sp->partial_max;
    m->abs_path = xstrdup(w->abs_path);
}

int mt_write_data_file(const mt_call *c, const mt_file_spec *sp, mt_written *out)
{
    lk_txn *txn = c->lake->txn;
    memset(out, 0, sizeof(*out));
    out->file_id = -1;
    char *dir = lk_lake_table_dir(c->lake, &txn->cat, sp->cur);
    char *name = new_name(c->con, "");
    char *rel = xasprintf("%s%s", sp->subdir, name ? name : "");
    char *abs = xasprintf("%s%s", dir, rel);
    char *fdir = xasprintf("%s%s", dir, sp->subdir);
    int rc = name ? fs_mkdir_p(fdir) : TARN_ERROR;
    lk_file_stats *files = NULL;
    size_t nfiles = 0;
    if (!rc) {
        tarn_buf b = {0};
        copy_sql(&b, c, sp, abs);
        lk_txn_wrote(txn, abs);
        rc = lk_copy_with_stats(&files, &nfiles, c->con, buf_cstr(&b));
        buf_free(&b);
    }
    if (!rc && nfiles == 1 && files[0].count == 0) {
        unlink(abs);
    } else if (!rc && nfiles == 1) {
        out->file_id = lk_txn_new_file_id(txn);
        out->record_count = files[0].count;
        out->file_size = files[0].file_size;
        out->abs_path = xstrdup(abs);
        rc = register_file(c, sp, rel, &files[0], out->file_id);
        if (!rc && c->explicit_txn)
            note_maint_file(txn, sp, out);
    } else if (!rc) {
        rc = tarn_error_set(TARN_ERROR, "expected one Parquet file from the write, got %zu",
                            nfiles);
    }
    lk_file_stats_free(files, nfiles);
    free(fdir);
    free(abs);
    free(rel);
    free(name);
    free(dir);
    return rc;
}

void mt_written_free(mt_written *w)
{
    free(w->abs_path);
    w->abs_path = NULL;
}

int mt_write_delete_file(const mt_call *c, const lk_table *cur, int64_t data_file_id,
                         const char *data_path, const char *positions, int with_partial_max,
                         int64_t *count)
{
    lk_txn *txn = c->lake->txn;
    *count = 0;
    char *dir = lk_lake_table_dir(c->lake, &txn->cat, cur);
    char *name = new_name(c->con, "-delete");
    int rc = name ? fs_mkdir_p(dir) : TARN_ERROR;
    char *abs = xasprintf("%s%s", dir, name ? name : "");
    tarn_buf b = {0};
    buf_puts(&b, "COPY (SELECT ");
    quote_literal(&b, data_path);
    buf_printf(&b, " AS file_path, pos, snap AS _ducklake_internal_snapshot_id FROM (%s) ORDER BY "
                   "pos) TO ",
               positions);
    quote_literal(&b, abs);
    buf_printf(&b,
               " (FORMAT parquet, FIELD_IDS {file_path: %lld, pos: %lld, "
               "_ducklake_internal_snapshot_id: %lld}, RETURN_STATS)",
               LK_FIELD_ID_DELETE_PATH, LK_FIELD_ID_DELETE_POS, LK_FIELD_ID_SNAPSHOT);
    lk_file_stats *fs = NULL;
    size_t nfs = 0;
    if (!rc) {
        lk_txn_wrote(txn, abs);
        rc = lk_copy_with_stats(&fs, &nfs, c->con, buf_cstr(&b));
    }
    int64_t begin = 0, max = 0;
    if (!rc && nfs == 1 && fs[0].count > 0) {
        char *q = xasprintf("SELECT min(snap) FROM (%s)", positions);
        rc = duck_query_int64(&begin, NULL, c->con, q);
        free(q);
        q = xasprintf("SELECT max(snap) FROM (%s)", positions);
        if (!rc)
            rc = duck_query_int64(&max, NULL, c->con, q);
        free(q);
    }
    if (!rc && nfs == 1 && fs[0].count > 0) {
        *count = fs[0].count;
        int64_t id = lk_txn_new_file_id(txn);
        lk_deletes_file_row(txn, id, cur->id, begin, data_file_id, name, &fs[0],
                            with_partial_max ? max : -1);
        for (size_t i = 0; c->explicit_txn && i < txn->nmfiles; i++)
            if (txn->mfiles[i].file_id == data_file_id) {
                free(txn->mfiles[i].del_path);
                txn->mfiles[i].del_path = xstrdup(abs);
                txn->mfiles[i].del_has_snap = with_partial_max;
            }
    } else if (!rc) {
        unlink(abs);
    }
    lk_file_stats_free(fs, nfs);
    buf_free(&b);
    free(abs);
    free(name);
    free(dir);
    return rc;
}

/* ---- dropping files from the catalog at once ---- */

static void id_list(tarn_buf *b, const int64_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf_printf(b, "%s%lld", i ? ", " : "", (long long)ids[i]);
}

int mt_drop_files_now(const mt_call *c, const int64_t *ids, size_t n)
{
    if (n == 0)
        return 0;
    lk_txn *txn = c->lake->txn;
    for (size_t i = 0; c->explicit_txn && i < n; i++)
        lk_ids_add(&txn->replaced_files, &txn->nreplaced_files, ids[i]);
    tarn_buf ids_sql = {0}, q = {0};
    id_list(&ids_sql, ids, n);
    buf_puts(&q, "SELECT f.data_file_id, ");
    mt_file_path_sql(&q, c->lake, "f");
    buf_printf(&q, " FROM %s.ducklake_data_file f", c->lake->meta);
    mt_file_path_joins(&q, c->lake, "f");
    buf_printf(&q, " WHERE f.data_file_id IN (%s) UNION ALL SELECT f.delete_file_id, ",
               buf_cstr(&ids_sql));
    mt_file_path_sql(&q, c->lake, "f");
    buf_printf(&q, " FROM %s.ducklake_delete_file f", c->lake->meta);
    mt_file_path_joins(&q, c->lake, "f");
    buf_printf(&q, " WHERE f.data_file_id IN (%s)", buf_cstr(&ids_sql));
    duck_table r;
    int rc = lk_catdb_query(&r, &c->lake->db, c->con, buf_cstr(&q));
    for (size_t i = 0; !rc && i < r.nrows; i++) {
        int rel = 0;
        char *p = mt_data_relative(c->lake, duck_table_get(&r, i, 1), &rel);
        lk_txn_schedule_deletion(txn, duck_table_int64(&r, i, 0), p, rel);
        free(p);
    }
    if (!rc)
        duck_table_free(&r);
    static const char *const TABLES[] = {"ducklake_data_file", "ducklake_file_column_stats",
                                         "ducklake_delete_file", "ducklake_file_partition_value",
                                         "ducklake_file_variant_stats"};
    for (size_t i = 0; !rc && i < sizeof(TABLES) / sizeof(TABLES[0]); i++)
        lk_txn_sql(txn, "DELETE FROM %s.%s WHERE data_file_id IN (%s)", c->lake->meta, TABLES[i],
                   buf_cstr(&ids_sql));
    buf_free(&ids_sql);
    buf_free(&q);
    return rc;
}

int mt_drop_delete_file_now(const mt_call *c, int64_t delete_file_id)
{
    tarn_buf q = {0};
    buf_puts(&q, "SELECT ");
    mt_file_path_sql(&q, c->lake, "f");
    buf_printf(&q, " FROM %s.ducklake_delete_file f", c->lake->meta);
    mt_file_path_joins(&q, c->lake, "f");
    buf_printf(&q, " WHERE f.delete_file_id = %lld", (long long)delete_file_id);
    char *full = NULL;
    int rc = lk_catdb_query_string(&full, &c->lake->db, c->con, buf_cstr(&q));
    if (!rc && full) {
        int rel = 0;
        char *p = mt_data_relative(c->lake, full, &rel);
        lk_txn_schedule_deletion(c->lake->txn, delete_file_id, p, rel);
        lk_txn_sql(c->lake->txn, "DELETE FROM %s.ducklake_delete_file WHERE delete_file_id = %lld",
                   c->lake->meta, (long long)delete_file_id);
        free(p);
    }
    free(full);
    buf_free(&q);
    return rc;
}

/* ---- paths ---- */

char *mt_data_relative(const lk_lake *lake, const char *full, int *rel)
{
    size_t n = strlen(lake->data_abs);
    if (strncmp(full, lake->data_abs, n) == 0) {
        *rel = 1;
        return xstrdup(full + n);
    }
    *rel = 0;
    return xstrdup(full);
}

/* realpath() of the longest existing prefix of `path`, plus the rest:
 * a file about to be deleted may already be gone. NULL when the rest
 * climbs with "..". */
static char *resolve_existing(const char *path)
{
    char *head = xstrdup(path);
    char *tail = NULL;
    for (;;) {
        char real[PATH_MAX];
        if (realpath(head, real)) {
            char *out = tail ? xasprintf("%s/%s", real, tail) : xstrdup(real);
            int bad = tail && (strstr(tail, "..") != NULL);
            free(head);
            free(tail);
            if (bad) {
                free(out);
                return NULL;
            }
            return out;
        }
        char *slash = strrchr(head, '/');
        if (!slash || slash == head) {
            free(head);
            free(tail);
            return NULL;
        }
        char *t = tail ? xasprintf("%s/%s", slash + 1, tail) : xstrdup(slash + 1);
        free(tail);
        tail = t;
        *slash = 0;
    }
}

int mt_inside_data_path(const lk_lake *lake, const char *path)
{
    char root[PATH_MAX];
    if (!realpath(lake->data_abs, root))
        return 0;
    char *real = resolve_existing(path);
    if (!real)
        return 0;
    size_t n = strlen(root);
    int inside = strncmp(real, root, n) == 0 && real[n] == '/' && real[n + 1] != 0;
    free(real);
    return inside;
}

void mt_file_path_sql(tarn_buf *b, const lk_lake *lake, const char *f)
{
    /* DuckLake's rule (§3.4): each level is relative to the one above
     * unless it says otherwise; a renamed table keeps its path. */
    buf_printf(b,
               "CASE WHEN NOT %s.path_is_relative THEN %s.path WHEN NOT "
               "COALESCE(t.path_is_relative, true) THEN COALESCE(t.path, '') || %s.path WHEN NOT "
               "COALESCE(s.path_is_relative, true) THEN COALESCE(s.path, '') || COALESCE(t.path, "
               "'') || %s.path ELSE ",
               f, f, f, f);
    quote_literal(b, lake->data_abs);
    buf_printf(b, " || COALESCE(s.path, '') || COALESCE(t.path, '') || %s.path END", f);
}

void mt_file_path_joins(tarn_buf *b, const lk_lake *lake, const char *f)
{
    buf_printf(b,
               " LEFT JOIN (SELECT DISTINCT ON (table_id) table_id, schema_id, path, "
               "path_is_relative FROM %s.ducklake_table ORDER BY table_id, begin_snapshot DESC) "
               "t ON t.table_id = %s.table_id LEFT JOIN %s.ducklake_schema s ON s.schema_id = "
               "t.schema_id",
               lake->meta, f, lake->meta);
}

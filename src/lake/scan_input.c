/*
 * scan_input.c — the inputs of a table's scan (see scan_input.h): its live
 * data files at a snapshot with their delete files and identity partition
 * values, read from the catalog, and the files an open transaction wrote.
 *
 * Reads ducklake_data_file, ducklake_delete_file (the delete file of each
 * data file live at the snapshot), ducklake_inlined_delete_<table> (whether
 * inlined deletions exist), ducklake_partition_info,
 * ducklake_partition_column and ducklake_file_partition_value (the values
 * of identity transforms). Writes nothing.
 */
#include "lake/scan_input.h"

#include "lake/catdb.h"

#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"

#include <stdlib.h>
#include <string.h>

/* Partition values that can stand in for a column's contents: identity
 * keys of types whose text form casts back to the same value. */
static int constant_friendly(const char *type)
{
    static const char *const OK[] = {"int8",   "int16",  "int32",   "int64", "uint8",  "uint16",
                                     "uint32", "uint64", "varchar", "date",  "boolean"};
    for (size_t i = 0; i < sizeof(OK) / sizeof(OK[0]); i++)
        if (strcmp(type, OK[i]) == 0)
            return 1;
    return strncmp(type, "decimal", 7) == 0;
}

void scan_file_free(scan_file *f)
{
    free(f->path);
    free(f->del_path);
    free(f->pconst);
    for (size_t k = 0; k < f->npk; k++)
        free(f->pk_vals[k]);
    free(f->pk_cols);
    free(f->pk_vals);
}

static void scan_input_free_files(scan_input *in)
{
    for (size_t i = 0; i < in->n; i++)
        scan_file_free(&in->files[i]);
}

void scan_input_free(scan_input *in)
{
    scan_input_free_files(in);
    free(in->files);
}

scan_file *scan_push_file(scan_input *in)
{
    in->files = xrealloc(in->files, (in->n + 1) * sizeof(scan_file));
    memset(&in->files[in->n], 0, sizeof(scan_file));
    in->files[in->n].mapping_id = -1;
    return &in->files[in->n++];
}

static char *resolve(const char *dir, const char *path, const char *rel)
{
    if (rel && strcmp(rel, "false") == 0)
        return xstrdup(path);
    return xasprintf("%s%s", dir, path);
}

/* The committed data files (and their delete files) live at snapshot s,
 * of table `table_id` or (-1) of every table, ordered by table and file:
 * columns table_id, data_file_id, path, path_is_relative, row_id_start,
 * begin_snapshot, partial_max, delete path, its path_is_relative, its
 * partial_max, record_count, partitioned, mapping_id. */
int scan_query_files(duck_table *r, lk_lake *lake, duckdb_connection con, int64_t table_id,
                     int64_t s)
{
    char *only =
        table_id >= 0 ? xasprintf(" AND d.table_id = %lld", (long long)table_id) : xstrdup("");
    int rc = lk_catdb_queryf(
        r, &lake->db, con,
        "SELECT d.table_id, d.data_file_id, d.path, d.path_is_relative, d.row_id_start, "
        "d.begin_snapshot, d.partial_max, x.path, x.path_is_relative, x.partial_max, "
        "d.record_count, d.partition_id IS NOT NULL, d.mapping_id FROM %s.ducklake_data_file d "
        "LEFT JOIN (SELECT * FROM %s.ducklake_delete_file WHERE %lld >= begin_snapshot AND "
        "(%lld < end_snapshot OR end_snapshot IS NULL)) x USING (data_file_id) WHERE %lld >= "
        "d.begin_snapshot AND (%lld < d.end_snapshot OR d.end_snapshot IS NULL)%s ORDER BY "
        "d.table_id, d.data_file_id",
        lake->meta, lake->meta, (long long)s, (long long)s, (long long)s, (long long)s, only);
    free(only);
    return rc;
}

/* Appends the files of rows [from, to) of a query_files result; `dir` is
 * the table's directory (relative paths are under it). */
void scan_add_file_rows(scan_input *in, const duck_table *r, size_t from, size_t to,
                        const char *dir)
{
    for (size_t i = from; i < to; i++) {
        scan_file *f = scan_push_file(in);
        f->id = duck_table_int64(r, i, 1);
        f->path = resolve(dir, duck_table_get(r, i, 2), duck_table_get(r, i, 3));
        const char *v = duck_table_get(r, i, 4);
        f->row_id_start = v ? strtoll(v, NULL, 10) : 0;
        f->begin = duck_table_int64(r, i, 5);
        v = duck_table_get(r, i, 6);
        f->partial_max = v ? strtoll(v, NULL, 10) : -1;
        if (duck_table_get(r, i, 7)) {
            f->del_path = resolve(dir, duck_table_get(r, i, 7), duck_table_get(r, i, 8));
            f->del_has_snap = duck_table_get(r, i, 9) != NULL;
        }
        v = duck_table_get(r, i, 10);
        f->record_count = v ? strtoll(v, NULL, 10) : 0;
        v = duck_table_get(r, i, 11);
        in->any_partitioned |= v && strcmp(v, "true") == 0;
        v = duck_table_get(r, i, 12);
        f->mapping_id = v ? strtoll(v, NULL, 10) : -1;
    }
}

static int replaced(const lk_txn *txn, int64_t file_id)
{
    for (size_t i = 0; i < txn->nreplaced_files; i++)
        if (txn->replaced_files[i] == file_id)
            return 1;
    return 0;
}

void scan_apply_maintenance(scan_input *in, const lk_txn *txn, int64_t table_id)
{
    size_t k = 0;
    for (size_t i = 0; i < in->n; i++) {
        if (!in->files[i].pending && replaced(txn, in->files[i].id)) {
            scan_input one = {&in->files[i], 1, 0, 0};
            scan_input_free_files(&one);
            continue;
        }
        in->files[k++] = in->files[i];
    }
    in->n = k;
    for (size_t i = 0; i < txn->nmfiles; i++) {
        const lk_maint_file *m = &txn->mfiles[i];
        if (m->table_id != table_id)
            continue;
        scan_file *f = scan_push_file(in);
        f->id = m->file_id;
        f->path = xstrdup(m->abs_path);
        f->row_id_start = m->row_id_start >= 0 ? m->row_id_start : 0;
        f->begin = m->begin;
        f->partial_max = m->partial_max;
        f->record_count = m->record_count;
        f->del_path = m->del_path ? xstrdup(m->del_path) : NULL;
        f->del_has_snap = m->del_has_snap;
    }
}

static int64_t renumbered_file(const lk_txn *txn, int64_t id)
{
    for (size_t i = 0; i < txn->file_renum.n; i++)
        if (txn->file_renum.from[i] == id)
            return txn->file_renum.to[i];
    return id;
}

void scan_add_pending_files(scan_input *in, const lk_txn *txn, int64_t table_id, int renumbered)
{
    for (size_t i = 0; i < txn->nfiles; i++) {
        const lk_pending_file *p = &txn->files[i];
        if (p->table_id != table_id)
            continue;
        scan_file *f = scan_push_file(in);
        f->id = renumbered ? renumbered_file(txn, p->file_id) : p->file_id;
        f->path = xstrdup(p->abs_path);
        f->row_id_start = p->row_id_start;
        f->begin = txn->snapshot_id;
        f->partial_max = -1;
        f->record_count = p->record_count;
        f->mapping_id = p->has_mapping ? p->mapping_id : -1;
        f->pending = !renumbered;
        f->local_start = p->rowids_embedded ? -1 : 0; /* set by lk_scan_sql */
    }
}

/* The identity partition values of committed files, of table `table_id`
 * or (-1) of every table: data_file_id, column_id, value, by file. */
int scan_query_partition_values(duck_table *r, lk_lake *lake, duckdb_connection con,
                                int64_t table_id)
{
    char *only =
        table_id >= 0 ? xasprintf("v.table_id = %lld AND ", (long long)table_id) : xstrdup("");
    int rc = lk_catdb_queryf(
        r, &lake->db, con,
        "SELECT v.data_file_id, k.column_id, v.partition_value FROM "
        "%s.ducklake_file_partition_value v JOIN %s.ducklake_data_file d USING (data_file_id) "
        "JOIN %s.ducklake_partition_column k ON k.partition_id = d.partition_id AND "
        "k.partition_key_index = v.partition_key_index WHERE %sk.\"transform\" = 'identity' "
        "ORDER BY v.data_file_id, k.column_id",
        lake->meta, lake->meta, lake->meta, only);
    free(only);
    return rc;
}

/* The first row of `r` (ordered by its first column, a file id) for file
 * `id`, or r->nrows. */
static size_t first_row_of(const duck_table *r, int64_t id)
{
    size_t lo = 0, hi = r->nrows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (duck_table_int64(r, mid, 0) < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Gives each file of `in` its identity partition values (the usable
 * ones: columns of `t` whose text form casts back) and group signature. */
void scan_apply_partition_values(scan_input *in, const lk_table *t, const duck_table *r)
{
    for (size_t i = 0; i < in->n; i++) {
        scan_file *f = &in->files[i];
        tarn_buf sig = {0};
        for (size_t k = first_row_of(r, f->id); k < r->nrows && duck_table_int64(r, k, 0) == f->id;
             k++) {
            int64_t cid = duck_table_int64(r, k, 1);
            const lk_column *c = NULL;
            for (size_t j = 0; j < t->ncols; j++)
                if (t->cols[j].id == cid)
                    c = &t->cols[j];
            if (!c || !constant_friendly(c->type))
                continue;
            const char *v = duck_table_get(r, k, 2);
            f->pk_cols = xrealloc(f->pk_cols, (f->npk + 1) * sizeof(int64_t));
            f->pk_vals = xrealloc(f->pk_vals, (f->npk + 1) * sizeof(char *));
            f->pk_cols[f->npk] = cid;
            f->pk_vals[f->npk++] = v ? xstrdup(v) : NULL;
            buf_printf(&sig, "%lld=", (long long)cid);
            if (v)
                quote_literal(&sig, v);
            else
                buf_puts(&sig, "NULL");
            buf_putc(&sig, ';');
        }
        f->pconst = buf_detach(&sig);
    }
}

/*
 * write_files.c — the Parquet data files of a write, and the catalog rows
 * that make them part of the transaction.
 *
 * A write COPYs its rows into new files under the table's directory
 * (lk_write_files): one file in a partition's directory, else as many as
 * the table's target file size and per_thread_output cut them into, named
 * ducklake-<uuidv7>.parquet as DuckLake names them, with the columns'
 * field ids (and _ducklake_internal_row_id for rows that keep their row
 * id). What DuckDB measured writing each file (RETURN_STATS) becomes its
 * rows, recorded in the transaction (lk_txn_row) for the commit:
 *   ducklake_data_file           one per file: id, table, begin_snapshot,
 *                                path relative to the table's directory,
 *                                record_count, file_size_bytes,
 *                                footer_size, row_id_start, partition_id
 *   ducklake_file_column_stats   one per column leaf: value_count,
 *                                null_count, min/max, contains_nan, extra
 *                                stats (GEOMETRY bounding boxes, VARIANT)
 *   ducklake_file_variant_stats  one per shredded VARIANT field
 *   ducklake_file_partition_value  one per partition key of a file
 * Invariants: a file is registered only once written whole; the row ids
 * of a table's files follow one another in the order DuckDB returned the
 * files (DuckLake's order); a write that fails or registers nothing leaves
 * no file and no directory it made behind (lk_txn_wrote lists every file
 * for a rollback to delete).
 */
#include "lake/write.h"
#include "lake/write_int.h"

#include "duck/duck.h"
#include "lake/colstats.h"
#include "lake/filestats.h"
#include "lake/pqopts.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/fs.h"
#include "util/quote.h"
#include "util/uuid.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The table's writer options (pqopts.h), FIELD_IDS {…}, GEOPARQUET_VERSION,
 * RETURN_STATS): the end of a COPY's options. GEOMETRY columns are written
 * as Parquet's native geometry type, as DuckLake writes them (DuckDB's
 * default is GeoParquet 1.0 metadata over plain WKB, which DuckLake
 * refuses to read as GEOMETRY). */
void lk_write_copy_options(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                           int with_rowid)
{
    lk_pqopts_sql(b, lake, con, t);
    buf_puts(b, "FIELD_IDS {");
    for (size_t i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(b, ", ");
        lk_type_field_ids(b, &t->cols[i]);
    }
    if (with_rowid)
        buf_printf(b, ", _ducklake_internal_row_id: %lld", LK_FIELD_ID_ROW_ID);
    buf_puts(b, "}, GEOPARQUET_VERSION 'NONE', RETURN_STATS)");
}

/* COPY (source) TO path with the table's field ids. `source` is a full
 * SELECT producing the table's columns (and __tarn_rowid with_rowid). */
static void copy_sql(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                     const char *path, int with_rowid, const char *source)
{
    buf_puts(b, "COPY (");
    lk_write_source_sql(b, t, with_rowid, source);
    buf_puts(b, ") TO ");
    quote_literal(b, path);
    buf_puts(b, " (FORMAT parquet, ");
    lk_write_copy_options(b, lake, con, t, with_rowid);
}

static char *new_file_name(const char *suffix)
{
    char *uuid = uuid_v7();
    char *name = xasprintf("ducklake-%s%s.parquet", uuid, suffix);
    free(uuid);
    return name;
}

/* A VARIANT leaf's figures from the file: the counts of its metadata leaf
 * and its fully shredded fields (variantstats.c). */
static void variant_from_file(lk_leaf_stats *l, const lk_file_stats *fs)
{
    int64_t nulls = 0, values = 0, size = 0;
    lk_variant_free(l->variant);
    lk_variant_from_file(l->variant, &nulls, &values, &size, fs, l->path);
    l->null_count = nulls;
    l->value_count = values > nulls ? values - nulls : 0;
    l->column_size = size;
    l->contains_nan = -1;
}

static void leaf_from_file(lk_leaf_stats *l, const lk_file_stats *fs)
{
    if (l->variant) {
        variant_from_file(l, fs);
        return;
    }
    const lk_column_stat *cs = lk_file_stats_column(fs, l->path);
    if (!cs)
        return;
    int no_bounds = strcmp(l->col->type, "int128") == 0 || strcmp(l->col->type, "uint128") == 0;
    l->null_count = cs->null_count;
    l->value_count = cs->num_values - cs->null_count;
    if (l->value_count < 0)
        l->value_count = 0;
    l->column_size = cs->column_size;
    l->contains_nan = cs->has_nan;
    l->min = cs->min && !no_bounds ? xstrdup(cs->min) : NULL;
    l->max = cs->max && !no_bounds ? xstrdup(cs->max) : NULL;
    if (l->geo && cs->has_geo) {
        lk_geo_free(l->geo);
        lk_geo_copy(l->geo, &cs->geo);
    }
}

/* The extra_stats of a file's leaf: a GEOMETRY box, a VARIANT's shredded
 * fields, else NULL. DuckLake's variant text went through its SQL literal
 * quoting (single quotes doubled) before its appender stored it, and keeps
 * the doubled quotes; so does this. */
static void file_extra_sql(tarn_buf *b, const lk_leaf_stats *l)
{
    tarn_buf j = {0};
    if (l->geo) {
        lk_geo_json(&j, l->geo);
    } else if (l->variant && l->variant->n) {
        tarn_buf raw = {0};
        lk_variant_json(&raw, l->variant);
        for (const char *p = buf_cstr(&raw); *p; p++)
            buf_puts(&j, *p == '\'' ? "\'\'" : (char[]){*p, 0});
        buf_free(&raw);
    } else {
        buf_puts(b, "NULL");
        return;
    }
    quote_literal(b, buf_cstr(&j));
    buf_free(&j);
}

/* ducklake_file_variant_stats: one row per fully shredded field */
static void variant_rows(lk_txn *txn, int64_t table_id, int64_t file_id, const lk_leaf_stats *l)
{
    for (size_t i = 0; l->variant && i < l->variant->n; i++) {
        const lk_variant_field *f = &l->variant->fields[i];
        tarn_buf b = {0};
        buf_printf(&b, "(%lld, %lld, %lld, ", (long long)file_id, (long long)table_id,
                   (long long)l->col->id);
        quote_literal(&b, f->path);
        buf_puts(&b, ", ");
        quote_literal(&b, f->type);
        buf_printf(&b, ", %lld, ", (long long)f->column_size);
        if (f->has_counts && f->null_count <= f->num_values)
            buf_printf(&b, "%lld, %lld, ", (long long)(f->num_values - f->null_count),
                       (long long)f->null_count);
        else
            buf_puts(&b, "NULL, NULL, ");
        quote_literal(&b, f->min);
        buf_puts(&b, ", ");
        quote_literal(&b, f->max);
        buf_printf(&b, ", %s, NULL)",
                   f->contains_nan < 0 ? "NULL"
                   : f->contains_nan   ? "true"
                                       : "false");
        lk_txn_row(txn, "ducklake_file_variant_stats", "%s", buf_cstr(&b));
        buf_free(&b);
    }
}

void lk_write_file_stats(lk_txn *txn, int64_t table_id, int64_t file_id, const lk_file_stats *fs,
                         lk_stats_set *st)
{
    for (size_t i = 0; i < st->n; i++) {
        lk_leaf_stats *l = &st->leaves[i];
        leaf_from_file(l, fs);
        tarn_buf b = {0};
        buf_printf(&b, "(%lld, %lld, %lld, %lld, %lld, %lld, ", (long long)file_id,
                   (long long)table_id, (long long)l->col->id, (long long)l->column_size,
                   (long long)l->value_count, (long long)l->null_count);
        quote_literal(&b, l->min);
        buf_puts(&b, ", ");
        quote_literal(&b, l->max);
        buf_printf(&b, ", %s, ", l->contains_nan < 0 ? "NULL" : l->contains_nan ? "true" : "false");
        file_extra_sql(&b, l);
        buf_putc(&b, ')');
        lk_txn_row(txn, "ducklake_file_column_stats", "%s", buf_cstr(&b));
        buf_free(&b);
        variant_rows(txn, table_id, file_id, l);
    }
}

void lk_write_partition_values(lk_txn *txn, int64_t file_id, int64_t table_id, char *const *values,
                               size_t n)
{
    tarn_buf b = {0};
    for (size_t k = 0; k < n; k++) {
        buf_clear(&b);
        quote_literal(&b, values[k]);
        lk_txn_row(txn, "ducklake_file_partition_value", "(%lld, %lld, %zu, %s)",
                   (long long)file_id, (long long)table_id, k, buf_cstr(&b));
    }
    buf_free(&b);
}

static void register_file(lk_lake *lake, const lk_table *t, int64_t file_id, const char *name,
                          const char *abs, const lk_file_stats *fs, int64_t row_id_start,
                          int with_rowid, const lk_file_partition *part)
{
    lk_txn *txn = lake->txn;
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, %lld, %lld, NULL, NULL, ", (long long)file_id, (long long)t->id,
               (long long)txn->snapshot_id);
    quote_literal(&b, name);
    buf_printf(&b, ", true, 'parquet', %lld, %lld, %lld, %lld, ", (long long)fs->count,
               (long long)fs->file_size, (long long)fs->footer_size, (long long)row_id_start);
    if (part)
        buf_printf(&b, "%lld", (long long)part->partition_id);
    else
        buf_puts(&b, "NULL");
    buf_puts(&b, ", NULL, NULL, NULL)");
    lk_txn_row(txn, "ducklake_data_file", "%s", buf_cstr(&b));
    buf_free(&b);
    if (part)
        lk_write_partition_values(txn, file_id, t->id, part->values, part->n);
    txn->files = xrealloc(txn->files, (txn->nfiles + 1) * sizeof(lk_pending_file));
    lk_pending_file *p = &txn->files[txn->nfiles++];
    memset(p, 0, sizeof(*p));
    p->table_id = t->id;
    p->file_id = file_id;
    p->path = xstrdup(name);
    p->abs_path = xstrdup(abs);
    p->record_count = fs->count;
    p->file_size = fs->file_size;
    p->footer_size = fs->footer_size;
    p->row_id_start = row_id_start;
    p->rowids_embedded = with_rowid;
}

/* The directories from `dir` up that do not exist yet, deepest first: the
 * ones a write creates, removed again when it keeps no file there. */
void lk_write_dirs_missing(tarn_buf *out, const char *dir)
{
    char *p = xstrdup(dir);
    size_t len = strlen(p);
    while (len > 1 && access(p, F_OK) != 0) {
        buf_puts(out, p);
        buf_putc(out, '\n');
        while (len > 1 && p[len - 1] == '/')
            p[--len] = 0;
        while (len > 1 && p[len - 1] != '/')
            p[--len] = 0;
    }
    free(p);
}

/* Removes the directories lk_write_dirs_missing listed, where empty. */
void lk_write_dirs_remove(const char *list)
{
    char *copy = xstrdup(list);
    for (char *save = NULL, *d = strtok_r(copy, "\n", &save); d; d = strtok_r(NULL, "\n", &save))
        rmdir(d);
    free(copy);
}

void lk_new_files_free(lk_new_files *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->rel[i]);
        free(f->abs[i]);
    }
    free(f->rel);
    free(f->abs);
    free(f->dir);
    buf_free(&f->made);
    lk_file_stats_free(f->stats, f->n);
    memset(f, 0, sizeof(*f));
}

/* Deletes the files again, and the directories made for them. */
void lk_new_files_discard(lk_new_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        unlink(f->abs[i]);
    lk_write_dirs_remove(buf_cstr(&f->made));
}

static void lk_new_files_take(lk_new_files *f, lk_file_stats *stats, size_t n)
{
    f->stats = stats;
    f->n = n;
    f->rel = xcalloc(n ? n : 1, sizeof(char *));
    f->abs = xcalloc(n ? n : 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        f->count += stats[i].count;
}

/* Empties and removes a scratch directory of a write. */
static void scratch_remove(const char *dir)
{
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char *p = xasprintf("%s/%s", dir, e->d_name);
        unlink(p);
        free(p);
    }
    if (d)
        closedir(d);
    rmdir(dir);
}

/* COPY (source) into one file in partition directory `subdir` (under the
 * table's directory). */
static int write_single(lk_new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
                        int with_rowid, const char *source, const char *subdir)
{
    char *fdir = xasprintf("%s%s", f->dir, subdir);
    char *name = new_file_name("");
    lk_write_dirs_missing(&f->made, fdir);
    int rc = fs_mkdir_p(fdir);
    char *rel = xasprintf("%s%s", subdir, name);
    char *abs = xasprintf("%s%s", f->dir, rel);
    lk_file_stats *stats = NULL;
    size_t n = 0;
    if (!rc) {
        tarn_buf b = {0};
        copy_sql(&b, lake, con, t, abs, with_rowid, source);
        lk_txn_wrote(lake->txn, abs);
        rc = lk_copy_with_stats(&stats, &n, con, buf_cstr(&b));
        buf_free(&b);
    }
    if (!rc && n != 1)
        rc = tarn_error_set(TARN_ERROR, "expected one Parquet file from the write, got %zu", n);
    if (!rc) {
        lk_new_files_take(f, stats, n);
        f->rel[0] = rel;
        f->abs[0] = abs;
    } else {
        lk_file_stats_free(stats, n);
        free(rel);
        free(abs);
    }
    free(name);
    free(fdir);
    return rc;
}

/* COPY (source) into the table's directory as DuckLake writes an insert:
 * a new file whenever one reaches the target file size, one per thread
 * with per_thread_output. DuckDB names the files (ducklake-<uuidv7>) in a
 * scratch directory of the write, from which they move into the table's
 * directory once written, so that a failed COPY leaves none behind. */
static int write_rotating(lk_new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
                          int with_rowid, const char *source)
{
    lk_write_dirs_missing(&f->made, f->dir);
    char *uuid = uuid_v7();
    char *scratch = xasprintf("%s.tarn-write-%s", f->dir, uuid);
    free(uuid);
    int rc = fs_mkdir_p(scratch);
    lk_file_stats *stats = NULL;
    size_t n = 0;
    if (!rc) {
        tarn_buf b = {0};
        buf_puts(&b, "COPY (");
        lk_write_source_sql(&b, t, with_rowid, source);
        buf_puts(&b, ") TO ");
        quote_literal(&b, scratch);
        buf_printf(&b,
                   " (FORMAT parquet, FILE_SIZE_BYTES %lld, FILENAME_PATTERN 'ducklake-{uuidv7}', "
                   "%s",
                   (long long)lk_pqopts_target_file_size(lake, con, t),
                   lk_pqopts_per_thread(lake, con, t) ? "PER_THREAD_OUTPUT, " : "");
        lk_write_copy_options(&b, lake, con, t, with_rowid);
        rc = lk_copy_with_stats(&stats, &n, con, buf_cstr(&b));
        buf_free(&b);
    }
    size_t slen = strlen(scratch);
    for (size_t i = 0; !rc && i < n; i++)
        if (strncmp(stats[i].filename, scratch, slen) != 0 || stats[i].filename[slen] != '/')
            rc = tarn_error_set(TARN_ERROR, "the write returned %s, outside %s", stats[i].filename,
                                scratch);
    if (!rc) {
        lk_new_files_take(f, stats, n);
        for (size_t i = 0; i < n && !rc; i++) {
            f->rel[i] = xstrdup(stats[i].filename + slen + 1);
            f->abs[i] = xasprintf("%s%s", f->dir, f->rel[i]);
            if (rename(stats[i].filename, f->abs[i]) != 0)
                rc = tarn_error_set(TARN_ERROR, "cannot move %s to %s: %s", stats[i].filename,
                                    f->abs[i], strerror(errno));
            else
                lk_txn_wrote(lake->txn, f->abs[i]);
        }
    } else {
        lk_file_stats_free(stats, n);
    }
    scratch_remove(scratch);
    free(scratch);
    return rc;
}

/* COPY (source) into new files under the table's directory (`subdir`:
 * hive partition directories, one file; "": as many as the table's
 * target file size makes); f->stats gets what DuckDB measured. */
int lk_new_files_write(lk_new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
                       int with_rowid, const char *source, const char *subdir)
{
    memset(f, 0, sizeof(*f));
    f->dir = lk_lake_table_dir(lake, &lake->txn->cat, t);
    if (*subdir)
        return write_single(f, lake, con, t, with_rowid, source, subdir);
    return write_rotating(f, lake, con, t, with_rowid, source);
}

/* Makes a written file (fs: its stats) part of the transaction: a data
 * file id, its catalog rows and statistics, the table's new row ids. */
int lk_write_file_register(lk_lake *lake, duckdb_connection con, const lk_table *t,
                           lk_table_delta *d, int with_rowid, const char *rel, const char *abs,
                           const lk_file_stats *fs, const lk_file_partition *part)
{
    lk_txn *txn = lake->txn;
    int64_t file_id = lk_txn_new_file_id(txn);
    register_file(lake, t, file_id, rel, abs, fs, d->next_row_id, with_rowid, part);
    lk_stats_set st;
    lk_stats_init(&st, t);
    lk_write_file_stats(txn, t->id, file_id, fs, &st);
    int rc = lk_stats_accumulate(&d->stats, &st, con);
    lk_stats_free(&st);
    d->next_row_id += fs->count;
    d->added_records += fs->count;
    d->added_bytes += fs->file_size;
    d->got_file = 1;
    d->touched = 1;
    char *tok = xasprintf("inserted_into_table:%lld", (long long)t->id);
    lk_txn_change(txn, tok);
    free(tok);
    return rc;
}

/* Registers every file of a write that holds rows, in the order DuckDB
 * returned them (DuckLake numbers them and gives them row ids in that
 * order); an empty one is deleted. */
int lk_new_files_register(lk_new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
                          lk_table_delta *d, int with_rowid, const lk_file_partition *part)
{
    int rc = 0;
    for (size_t i = 0; i < f->n && !rc; i++) {
        if (f->stats[i].count == 0)
            unlink(f->abs[i]);
        else
            rc = lk_write_file_register(lake, con, t, d, with_rowid, f->rel[i], f->abs[i],
                                        &f->stats[i], part);
    }
    return rc;
}

/* Writes the rows of `source` into new Parquet files under the table's
 * directory (`subdir`: hive partition directories, may be "") and records
 * them in the transaction. An empty result writes nothing. */
int lk_write_files(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_table_delta *d,
                   int with_rowid, const char *source, const char *subdir,
                   const lk_file_partition *part)
{
    lk_new_files f;
    int rc = lk_new_files_write(&f, lake, con, t, with_rowid, source, subdir);
    if (!rc && f.count == 0 && f.n > 0 && lk_pqopts_per_thread(lake, con, t)) {
        /* DuckLake's per-thread COPY registers one empty file for an empty
         * result (merge_adjacent_files later finds it); the others go */
        for (size_t i = 1; i < f.n; i++)
            unlink(f.abs[i]);
        rc = lk_write_file_register(lake, con, t, d, with_rowid, f.rel[0], f.abs[0], &f.stats[0],
                                    part);
    } else if (!rc && f.count == 0)
        lk_new_files_discard(&f); /* an empty result writes no file and no snapshot */
    else if (!rc)
        rc = lk_new_files_register(&f, lake, con, t, d, with_rowid, part);
    lk_new_files_free(&f);
    return rc;
}

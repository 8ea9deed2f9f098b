/*
 * write.c — INSERT and DELETE inside a lake transaction (see write.h).
 */
#include "lake/write.h"

#include "duck/duck.h"
#include "lake/bucket.h"
#include "lake/colstats.h"
#include "lake/deletes.h"
#include "lake/filestats.h"
#include "lake/pqopts.h"
#include "lake/sort.h"
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
#include <strings.h>
#include <unistd.h>

#define STAGE "temp.main.__tarn_stage"
#define MATCH "temp.main.__tarn_match"
#define ROW_ID_FIELD 2147483540LL

const char *lk_stage_name(void)
{
    return STAGE;
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

static void table_columns(tarn_buf *b, const lk_table *t)
{
    for (size_t i = 0; i < t->ncols; i++) {
        if (i)
            buf_puts(b, ", ");
        quote_ident(b, t->cols[i].name);
    }
}

/* " ORDER BY [sort keys, ]rowid" over the stage: the order rows are
 * written in, the table's sort order first (SET SORTED BY) unless they
 * are UPDATE images (with_rowid), which DuckLake writes as they come. */
static void stage_order(tarn_buf *b, const lk_table *t, int with_rowid, int sorted)
{
    buf_puts(b, " ORDER BY ");
    if (sorted && !with_rowid && lk_sort_order_by(b, t, NULL))
        buf_puts(b, ", ");
    buf_puts(b, "rowid");
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
        return 0;
    char *pins = lk_txn_pending_inserts(lake, t->id);
    tarn_buf b = {0};
    int rc = 0;
    {
        buf_printf(&b, "CREATE TEMP TABLE %s AS SELECT NULL::BIGINT AS row_id, ",
                   pins + strlen("temp.main."));
        table_columns(&b, t);
        buf_puts(&b, " FROM " STAGE " LIMIT 0");
        rc = duck_exec(con, buf_cstr(&b));
    }
    if (!rc)
        pending_inserts_made(lake, t);
    buf_free(&b);
    free(pins);
    return rc;
}

static int insert_inlined(lk_lake *lake, duckdb_connection con, const lk_table *t,
                          lk_table_delta *d, int64_t n, int with_rowid)
{
    /* the first rows of a plain insert create the table (one statement
     * instead of an empty CREATE and an INSERT: an autocommit INSERT's
     * rows are always the first) */
    int create = !with_rowid && !lk_write_pending_exists(lake, con, t->id);
    int rc = create ? 0 : ensure_pending_inserts(lake, con, t);
    if (rc)
        return rc;
    char *pins = lk_txn_pending_inserts(lake, t->id);
    tarn_buf b = {0};
    if (create)
        buf_printf(&b, "CREATE TEMP TABLE %s AS SELECT ", pins + strlen("temp.main."));
    else
        buf_printf(&b, "INSERT INTO %s SELECT ", pins);
    /* An UPDATE keeps a committed row's id; a row this transaction
     * inserted is, as in DuckLake's transaction-local storage, deleted and
     * appended again, so its new image takes the next id. */
    int64_t fresh = 0;
    if (with_rowid && d->next_row_id > d->base_row_id) {
        char *q = xasprintf("SELECT count(*) FROM " STAGE " WHERE __tarn_rowid >= %lld",
                            (long long)d->base_row_id);
        rc = duck_query_int64(&fresh, NULL, con, q);
        free(q);
        if (rc) {
            buf_free(&b);
            free(pins);
            return rc;
        }
    }
    /* sort_on_insert (the default) sorts the inlined rows too */
    int sorted = lk_sort_on_insert(lake, con, t);
    if (with_rowid && fresh > 0)
        buf_printf(&b,
                   "CASE WHEN __tarn_rowid >= %lld THEN %lld + row_number() OVER (PARTITION BY "
                   "__tarn_rowid >= %lld ORDER BY rowid) - 1 ELSE __tarn_rowid END, ",
                   (long long)d->base_row_id, (long long)d->next_row_id, (long long)d->base_row_id);
    else if (with_rowid)
        buf_puts(&b, "__tarn_rowid, ");
    else {
        buf_printf(&b, "(%lld + row_number() OVER (", (long long)d->next_row_id);
        stage_order(&b, t, with_rowid, sorted);
        buf_puts(&b, ") - 1)::BIGINT AS row_id, ");
    }
    table_columns(&b, t);
    buf_puts(&b, " FROM " STAGE);
    stage_order(&b, t, with_rowid, sorted);
    rc = duck_exec(con, buf_cstr(&b));
    buf_free(&b);
    free(pins);
    if (rc)
        return rc;
    if (create)
        pending_inserts_made(lake, t);
    lk_stats_set st;
    lk_stats_init(&st, t);
    rc = lk_stats_from_rows(&st, con, STAGE, t);
    if (!rc)
        rc = lk_stats_accumulate(&d->stats, &st, con);
    lk_stats_free(&st);
    d->next_row_id += with_rowid ? fresh : n;
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

/* The rows a write takes: `source` (in the table's sort order, if any),
 * or the stage's rows in order. */
static void source_sql(tarn_buf *b, const lk_table *t, int with_rowid, const char *source)
{
    if (source && (with_rowid || t->nsorts == 0)) {
        buf_puts(b, source);
        return;
    }
    if (source) {
        buf_printf(b, "SELECT * FROM (%s) AS __tarn_sorted ORDER BY ", source);
        lk_sort_order_by(b, t, NULL);
        return;
    }
    buf_puts(b, "SELECT ");
    table_columns(b, t);
    if (with_rowid)
        buf_puts(b, ", __tarn_rowid AS _ducklake_internal_row_id");
    buf_puts(b, " FROM " STAGE);
    stage_order(b, t, with_rowid, 1);
}

/* The table's writer options (pqopts.h), FIELD_IDS {…}, GEOPARQUET_VERSION,
 * RETURN_STATS): the end of a COPY's options. GEOMETRY columns are written
 * as Parquet's native geometry type, as DuckLake writes them (DuckDB's
 * default is GeoParquet 1.0 metadata over plain WKB, which DuckLake
 * refuses to read as GEOMETRY). */
static void copy_sql_tail(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
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
        buf_printf(b, ", _ducklake_internal_row_id: %lld", ROW_ID_FIELD);
    buf_puts(b, "}, GEOPARQUET_VERSION 'NONE', RETURN_STATS)");
}

/* COPY (source) TO path with the table's field ids. `source` is a full
 * SELECT producing the table's columns (and __tarn_rowid with_rowid). */
static void copy_sql(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                     const char *path, int with_rowid, const char *source)
{
    buf_puts(b, "COPY (");
    source_sql(b, t, with_rowid, source);
    buf_puts(b, ") TO ");
    quote_literal(b, path);
    buf_puts(b, " (FORMAT parquet, ");
    copy_sql_tail(b, lake, con, t, with_rowid);
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

/* The partition a file belongs to: the spec id and one value per key
 * (NULL for a NULL key). */
typedef struct {
    int64_t partition_id;
    char **values;
    size_t n;
} file_partition;

static void register_file(lk_lake *lake, const lk_table *t, int64_t file_id, const char *name,
                          const char *abs, const lk_file_stats *fs, int64_t row_id_start,
                          int with_rowid, const file_partition *part)
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
static void missing_dirs(tarn_buf *out, const char *dir)
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

/* Removes the directories missing_dirs listed, where empty. */
static void remove_dirs(const char *list)
{
    char *copy = xstrdup(list);
    for (char *save = NULL, *d = strtok_r(copy, "\n", &save); d; d = strtok_r(NULL, "\n", &save))
        rmdir(d);
    free(copy);
}

/* The Parquet files of one write, not yet part of the transaction: one
 * file in a partition's directory, else as many as DuckLake's target file
 * size and per_thread_output cut the rows into. */
typedef struct {
    char *dir;            /* the table's directory */
    char **rel, **abs;    /* file i, relative to dir and as written */
    lk_file_stats *stats; /* stats[i]: what DuckDB measured of file i */
    size_t n;
    int64_t count; /* rows in all of them */
    tarn_buf made; /* directories the write created (missing_dirs) */
} new_files;

static void new_files_free(new_files *f)
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
static void new_files_discard(new_files *f)
{
    for (size_t i = 0; i < f->n; i++)
        unlink(f->abs[i]);
    remove_dirs(buf_cstr(&f->made));
}

static void new_files_take(new_files *f, lk_file_stats *stats, size_t n)
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
static int write_single(new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
                        int with_rowid, const char *source, const char *subdir)
{
    char *fdir = xasprintf("%s%s", f->dir, subdir);
    char *name = new_file_name("");
    missing_dirs(&f->made, fdir);
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
        new_files_take(f, stats, n);
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
static int write_rotating(new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
                          int with_rowid, const char *source)
{
    missing_dirs(&f->made, f->dir);
    char *uuid = uuid_v7();
    char *scratch = xasprintf("%s.tarn-write-%s", f->dir, uuid);
    free(uuid);
    int rc = fs_mkdir_p(scratch);
    lk_file_stats *stats = NULL;
    size_t n = 0;
    if (!rc) {
        tarn_buf b = {0};
        buf_puts(&b, "COPY (");
        source_sql(&b, t, with_rowid, source);
        buf_puts(&b, ") TO ");
        quote_literal(&b, scratch);
        buf_printf(&b,
                   " (FORMAT parquet, FILE_SIZE_BYTES %lld, FILENAME_PATTERN 'ducklake-{uuidv7}', "
                   "%s",
                   (long long)lk_pqopts_target_file_size(lake, con, t),
                   lk_pqopts_per_thread(lake, con, t) ? "PER_THREAD_OUTPUT, " : "");
        copy_sql_tail(&b, lake, con, t, with_rowid);
        rc = lk_copy_with_stats(&stats, &n, con, buf_cstr(&b));
        buf_free(&b);
    }
    size_t slen = strlen(scratch);
    for (size_t i = 0; !rc && i < n; i++)
        if (strncmp(stats[i].filename, scratch, slen) != 0 || stats[i].filename[slen] != '/')
            rc = tarn_error_set(TARN_ERROR, "the write returned %s, outside %s", stats[i].filename,
                                scratch);
    if (!rc) {
        new_files_take(f, stats, n);
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
static int new_files_write(new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
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
static int new_file_register(lk_lake *lake, duckdb_connection con, const lk_table *t,
                             lk_table_delta *d, int with_rowid, const char *rel, const char *abs,
                             const lk_file_stats *fs, const file_partition *part)
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
static int new_files_register(new_files *f, lk_lake *lake, duckdb_connection con, const lk_table *t,
                              lk_table_delta *d, int with_rowid, const file_partition *part)
{
    int rc = 0;
    for (size_t i = 0; i < f->n && !rc; i++) {
        if (f->stats[i].count == 0)
            unlink(f->abs[i]);
        else
            rc = new_file_register(lake, con, t, d, with_rowid, f->rel[i], f->abs[i], &f->stats[i],
                                   part);
    }
    return rc;
}

/* Writes the rows of `source` into new Parquet files under the table's
 * directory (`subdir`: hive partition directories, may be "") and records
 * them in the transaction. An empty result writes nothing. */
static int write_files(lk_lake *lake, duckdb_connection con, const lk_table *t, lk_table_delta *d,
                       int with_rowid, const char *source, const char *subdir,
                       const file_partition *part)
{
    new_files f;
    int rc = new_files_write(&f, lake, con, t, with_rowid, source, subdir);
    if (!rc && f.count == 0 && f.n > 0 && lk_pqopts_per_thread(lake, con, t)) {
        /* DuckLake's per-thread COPY registers one empty file for an empty
         * result (merge_adjacent_files later finds it); the others go */
        for (size_t i = 1; i < f.n; i++)
            unlink(f.abs[i]);
        rc = new_file_register(lake, con, t, d, with_rowid, f.rel[0], f.abs[0], &f.stats[0], part);
    } else if (!rc && f.count == 0)
        new_files_discard(&f); /* an empty result writes no file and no snapshot */
    else if (!rc)
        rc = new_files_register(&f, lake, con, t, d, with_rowid, part);
    new_files_free(&f);
    return rc;
}

int lk_write_key_expr(tarn_buf *b, const lk_table *t, const lk_partkey *k)
{
    const lk_column *c = lk_table_column(t, k->column_id);
    if (!c)
        return tarn_error_set(TARN_ERROR, "partition key column %lld is gone",
                              (long long)k->column_id);
    if (strcmp(k->transform, "identity") == 0) {
        quote_ident(b, c->name);
        return 0;
    }
    static const char *const TEMPORAL[] = {"year", "month", "day", "hour"};
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(k->transform, TEMPORAL[i]) == 0) {
            buf_printf(b, "%s(", TEMPORAL[i]);
            quote_ident(b, c->name);
            buf_putc(b, ')');
            return 0;
        }
    }
    int32_t n = 0;
    if (lk_bucket_parse(k->transform, &n)) {
        lk_bucket_key_expr(b, c->name, c->type, n);
        return 0;
    }
    return tarn_error_set(TARN_EUNSUPPORTED,
                          "writing to a table partitioned by %s is not supported by tarn yet",
                          k->transform);
}

void lk_write_hive_value(tarn_buf *b, const char *v)
{
    if (!v) {
        buf_puts(b, "__HIVE_DEFAULT_PARTITION__");
        return;
    }
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
            *p == '-' || *p == '_' || (*p == '.' && p != (const unsigned char *)v))
            buf_putc(b, (char)*p);
        else
            buf_printf(b, "%%%02X", *p);
    }
}

/* The hive key of partition key k: the column name for identity, else the
 * transform's name (bucket(N) → bucket); a name an earlier key took
 * (case-insensitively) becomes <name>_<column>, as DuckLake names them. */
static char *hive_key_name(const lk_table *t, size_t k)
{
    char **names = xcalloc(k + 1, sizeof(char *));
    for (size_t i = 0; i <= k; i++) {
        const lk_partkey *pk = &t->keys[i];
        const lk_column *c = lk_table_column(t, pk->column_id);
        const char *col = c ? c->name : "";
        const char *base = strcmp(pk->transform, "identity") == 0 ? col : pk->transform;
        size_t len = strcspn(base, "(");
        names[i] = xasprintf("%.*s", (int)len, base);
        for (size_t j = 0; j < i; j++) {
            if (strcasecmp(names[j], names[i]) == 0) {
                char *longer = xasprintf("%s_%s", names[i], col);
                free(names[i]);
                names[i] = longer;
                break;
            }
        }
    }
    for (size_t i = 0; i < k; i++)
        free(names[i]);
    char *name = names[k];
    free(names);
    return name;
}

/* The hive_file_pattern option (true unless set): partitioned files go in
 * key=value directories, else straight into the table's directory. */
static int hive_pattern(lk_lake *lake, duckdb_connection con, const lk_table *t)
{
    const char *v = lk_lake_option(lake, con, "hive_file_pattern", t);
    return !v || strcasecmp(v, "true") == 0;
}

void lk_write_hive_dir(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                       const char *const *values)
{
    if (!hive_pattern(lake, con, t))
        return;
    for (size_t k = 0; k < t->nkeys; k++) {
        char *key = hive_key_name(t, k);
        lk_write_hive_value(b, key);
        free(key);
        buf_putc(b, '=');
        lk_write_hive_value(b, values[k]);
        buf_putc(b, '/');
    }
}

/* One COPY per partition value, over a TEMP copy of the rows, files in
 * order of each partition's first row: for the specs one COPY … PARTITION_BY
 * cannot write (see copy_partitioned). */
static int insert_per_partition(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                lk_table_delta *d, int with_rowid, const char *source)
{
    tarn_buf b = {0};
    buf_puts(&b, "CREATE OR REPLACE TEMP TABLE __tarn_psrc AS ");
    if (source) {
        source_sql(&b, t, with_rowid, source);
    } else {
        buf_puts(&b, "SELECT ");
        table_columns(&b, t);
        if (with_rowid)
            buf_puts(&b, ", __tarn_rowid");
        buf_puts(&b, " FROM " STAGE);
        stage_order(&b, t, with_rowid, 1);
    }
    int rc = duck_exec(con, buf_cstr(&b));
    tarn_buf keys = {0};
    for (size_t k = 0; !rc && k < t->nkeys; k++) {
        buf_puts(&keys, k ? ", " : "");
        buf_puts(&keys, "(");
        rc = lk_write_key_expr(&keys, t, &t->keys[k]);
        buf_printf(&keys, ")::VARCHAR AS k%zu", k);
    }
    duck_table parts = {0};
    if (!rc) {
        buf_clear(&b);
        buf_printf(&b,
                   "SELECT * EXCLUDE (f) FROM (SELECT %s, min(rowid) AS f FROM "
                   "temp.main.__tarn_psrc GROUP BY ALL) ORDER BY f",
                   buf_cstr(&keys));
        rc = duck_table_query(&parts, con, buf_cstr(&b));
    }
    file_partition fp = {t->partition_id, NULL, t->nkeys};
    for (size_t r = 0; !rc && r < parts.nrows; r++) {
        tarn_buf where = {0}, src = {0}, dir = {0};
        for (size_t k = 0; k < t->nkeys; k++) {
            buf_puts(&where, k ? " AND (" : "(");
            lk_write_key_expr(&where, t, &t->keys[k]);
            buf_puts(&where, ")::VARCHAR IS NOT DISTINCT FROM ");
            quote_literal(&where, duck_table_get(&parts, r, k));
        }
        buf_puts(&src, "SELECT ");
        table_columns(&src, t);
        if (with_rowid)
            buf_puts(&src, ", __tarn_rowid AS _ducklake_internal_row_id");
        buf_printf(&src, " FROM temp.main.__tarn_psrc WHERE %s ORDER BY rowid", buf_cstr(&where));
        fp.values = parts.cells + r * parts.ncols;
        lk_write_hive_dir(&dir, lake, con, t, (const char *const *)fp.values);
        rc = write_files(lake, con, t, d, with_rowid, buf_cstr(&src), buf_cstr(&dir), &fp);
        buf_free(&where);
        buf_free(&src);
        buf_free(&dir);
    }
    if (parts.ncols)
        duck_table_free(&parts);
    buf_free(&keys);
    buf_free(&b);
    duck_exec(con, "DROP TABLE IF EXISTS temp.main.__tarn_psrc");
    return rc;
}

static int spec_all_identity(const lk_table *t)
{
    for (size_t k = 0; k < t->nkeys; k++)
        if (strcmp(t->keys[k].transform, "identity") != 0)
            return 0;
    return 1;
}

/* 1 when one COPY … PARTITION_BY writes the table's spec as DuckLake does:
 * all keys identity (the columns themselves), or computed keys whose hive
 * names are no column's name (an identity key next to a transform is
 * computed under its column's name, which one SELECT cannot hold twice). */
static int spec_one_copy(const lk_table *t)
{
    if (spec_all_identity(t))
        return 1;
    for (size_t k = 0; k < t->nkeys; k++) {
        char *name = hive_key_name(t, k);
        int clash = 0;
        for (size_t i = 0; i < t->ncols && !clash; i++)
            clash = strcasecmp(t->cols[i].name, name) == 0 ||
                    strcasecmp(name, "_ducklake_internal_row_id") == 0;
        free(name);
        if (clash)
            return 0;
    }
    return 1;
}

/* COPY (rows [+ computed keys]) TO dir (…, PARTITION_BY (…), …), as
 * DuckLake builds it: identity keys partition on the columns, which the
 * files keep; otherwise every key is computed as an extra column named as
 * its hive directory and not written. */
static int copy_partitioned(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                            int with_rowid, const char *source, const char *dir)
{
    int identity = spec_all_identity(t);
    tarn_buf names = {0};
    buf_puts(b, "COPY (SELECT *");
    int rc = 0;
    for (size_t k = 0; k < t->nkeys; k++) {
        char *name = hive_key_name(t, k);
        if (!identity) {
            buf_puts(b, ", ");
            rc = rc ? rc : lk_write_key_expr(b, t, &t->keys[k]);
            buf_puts(b, " AS ");
            quote_ident(b, name);
        }
        buf_puts(&names, k ? ", " : "");
        quote_ident(&names, name);
        free(name);
    }
    buf_puts(b, " FROM (");
    source_sql(b, t, with_rowid, source);
    buf_puts(b, ")) TO ");
    quote_literal(b, dir);
    buf_printf(b,
               " (FORMAT parquet, PARTITION_BY (%s), %sFILENAME_PATTERN 'ducklake-{uuidv7}', "
               "OVERWRITE_OR_IGNORE, ",
               buf_cstr(&names), identity ? "WRITE_PARTITION_COLUMNS, " : "");
    copy_sql_tail(b, lake, con, t, with_rowid);
    buf_free(&names);
    return rc;
}

/* Registers the files of one partitioned COPY in the order DuckDB
 * returned them (DuckLake's order: it numbers them and gives them row ids
 * in that order), with the partition values it reported. */
static int register_partitioned(lk_lake *lake, duckdb_connection con, const lk_table *t,
                                lk_table_delta *d, int with_rowid, const char *dir,
                                const lk_file_stats *files, size_t nfiles)
{
    size_t dlen = strlen(dir);
    file_partition fp = {t->partition_id, xcalloc(t->nkeys, sizeof(char *)), t->nkeys};
    int rc = 0;
    for (size_t i = 0; !rc && i < nfiles; i++) {
        const lk_file_stats *f = &files[i];
        if (strncmp(f->filename, dir, dlen) != 0 || f->filename[dlen] != '/') {
            rc = tarn_error_set(TARN_ERROR, "partitioned write returned %s, outside %s",
                                f->filename, dir);
            break;
        }
        lk_txn_wrote(lake->txn, f->filename);
        for (size_t k = 0; k < t->nkeys; k++) {
            char *name = hive_key_name(t, k);
            fp.values[k] = NULL;
            for (size_t j = 0; j < f->nparts; j++)
                if (f->part_keys[j] && strcmp(f->part_keys[j], name) == 0)
                    fp.values[k] = f->part_values[j];
            free(name);
        }
        rc = new_file_register(lake, con, t, d, with_rowid, f->filename + dlen + 1, f->filename, f,
                               &fp);
    }
    free(fp.values);
    return rc;
}

/* One COPY … PARTITION_BY writing a file per partition into hive
 * directories under the table's directory. */
static int insert_partitioned(lk_lake *lake, duckdb_connection con, const lk_table *t,
                              lk_table_delta *d, int with_rowid, const char *source)
{
    /* DuckDB's COPY … PARTITION_BY reports no partition values without
     * hive folders: flat files are written one partition at a time */
    if (!spec_one_copy(t) || !hive_pattern(lake, con, t))
        return insert_per_partition(lake, con, t, d, with_rowid, source);
    char *dir = lk_lake_table_dir(lake, &lake->txn->cat, t);
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/')
        dir[--len] = 0;
    tarn_buf made = {0}, b = {0};
    missing_dirs(&made, dir);
    int rc = fs_mkdir_p(dir);
    if (!rc)
        rc = copy_partitioned(&b, lake, con, t, with_rowid, source, dir);
    lk_file_stats *files = NULL;
    size_t nfiles = 0;
    if (!rc)
        rc = lk_copy_with_stats(&files, &nfiles, con, buf_cstr(&b));
    if (!rc)
        rc = register_partitioned(lake, con, t, d, with_rowid, dir, files, nfiles);
    if (!rc && nfiles == 0)
        remove_dirs(buf_cstr(&made));
    lk_file_stats_free(files, nfiles);
    buf_free(&b);
    buf_free(&made);
    free(dir);
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
        return insert_partitioned(lake, con, t, d, with_rowid, source);
    return write_files(lake, con, t, d, with_rowid, source, "", NULL);
}

/* The stage's `n` rows into table `t`: inlined within the limit, else
 * written to Parquet. */
static int insert_staged(lk_lake *lake, duckdb_connection con, const lk_table *t, int64_t n)
{
    /* nothing to write, unless DuckLake's per-thread COPY gets the rows
     * (inlining off): it writes one empty file */
    if (n == 0 &&
        (t->nkeys > 0 || !lk_pqopts_per_thread(lake, con, t) || insert_inline_limit(lake, con, t) > 0))
        return 0;
    int with_rowid = lake->txn->stage_rowid;
    lk_table_delta *d = lk_txn_delta(lake, con, t->id);
    if (n <= insert_inline_limit(lake, con, t))
        return insert_inlined(lake, con, t, d, n, with_rowid);
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
                        int64_t *count, int never_inline)
{
    lk_txn *txn = lake->txn;
    const lk_table *t = lk_catalog_table_by_id(&txn->cat, table_id);
    if (!t)
        return tarn_error_set(TARN_ENOTFOUND, "table %lld not found", (long long)table_id);
    ensure_table_dir(lake, t);
    int64_t n = known;
    int rc = known >= 0 ? 0 : duck_query_int64(&n, NULL, con, "SELECT count(*) FROM " STAGE);
    if (rc)
        return rc;
    *count = n;
    if (never_inline && n > 0)
        return insert_parquet(lake, con, t, lk_txn_delta(lake, con, t->id), txn->stage_rowid, NULL);
    return insert_staged(lake, con, t, n);
}

int lk_insert_stage_known(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t known,
                          int64_t *count)
{
    return insert_stage(lake, con, table_id, known, count, 0);
}

int lk_insert_stage(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t *count)
{
    return insert_stage(lake, con, table_id, -1, count, 0);
}

int lk_insert_stage_file(lk_lake *lake, duckdb_connection con, int64_t table_id, int64_t *count)
{
    return insert_stage(lake, con, table_id, -1, count, 1);
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
        char *sql = xasprintf("INSERT INTO " STAGE " %s", src);
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
    new_files f;
    int rc = new_files_write(&f, lake, con, t, 0, src, "");
    int64_t n = rc ? 0 : f.count;
    if (!rc && n > limit) {
        lk_table_delta *d = lk_txn_delta(lake, con, t->id);
        rc = new_files_register(&f, lake, con, t, d, 0, NULL);
        *count = n;
    } else if (!rc && n > 0) {
        tarn_buf b = {0};
        buf_puts(&b, "INSERT INTO " STAGE " SELECT * FROM read_parquet([");
        for (size_t i = 0; i < f.n; i++) {
            buf_puts(&b, i ? ", " : "");
            quote_literal(&b, f.abs[i]);
        }
        buf_puts(&b, "])");
        rc = lk_stage_create(lake, con, t, 0);
        if (!rc)
            rc = duck_exec(con, buf_cstr(&b));
        buf_free(&b);
        new_files_discard(&f);
        *count = n; /* the COPY counted them: no count(*) of the stage */
        if (!rc)
            rc = insert_staged(lake, con, t, n);
    } else if (!rc) {
        new_files_discard(&f);
    }
    new_files_free(&f);
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
        char *pins = lk_txn_pending_inserts(lake, t->id);
        tarn_buf b = {0};
        buf_printf(&b, "INSERT INTO %s.", lake->meta);
        quote_ident(&b, t->inlined[t->ninlined - 1].name);
        buf_puts(&b, " SELECT ");
        row_id_at_commit(&b, lake, con, t->id, pins);
        buf_printf(&b, ", %lld, NULL, ", (long long)txn->snapshot_id);
        table_columns(&b, t);
        buf_printf(&b, " FROM %s ORDER BY row_id", pins);
        lk_txn_sql(txn, "%s", buf_cstr(&b));
        buf_free(&b);
        free(pins);
    }
}

void lk_write_cleanup(duckdb_connection con)
{
    /* one round trip for the three scratch tables a statement may use */
    duck_exec(con, "DROP TABLE IF EXISTS " STAGE "; DROP TABLE IF EXISTS " MATCH
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
        txn->big_del_files[txn->nbig_del_files++] = strtoll(duck_table_get(&r, i, 0), NULL, 10);
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
        d->pending_holes = 1;
    }
    free(pd);
    free(pid);
    free(pins);
    return rc;
}

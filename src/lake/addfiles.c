/*
 * addfiles.c — ducklake_add_data_files (see addfiles.h), following
 * DuckLake's src/functions/ducklake_add_data_files.cpp.
 *
 * Catalog rows it records, per file with rows: ducklake_data_file (the
 * file where it is, its footer's row count, sizes, mapping_id, the
 * table's partition spec), ducklake_file_column_stats (one row per mapped
 * leaf column, from the footer's row-group statistics, and per hive
 * column from its path value), ducklake_file_partition_value (a
 * partitioned table), and the table-level stats through the transaction's
 * delta; per new mapping ducklake_column_mapping / ducklake_name_mapping
 * (namemap.c). A file without rows only adds its mapping, as in DuckLake.
 *
 * The parts: addfiles_map.c checks a file's Parquet types against the
 * table's and maps its columns (by name, hive values from its path);
 * addfiles_stats.c turns its footer's row-group statistics into column
 * stats; this file finds the files, registers each and records its rows.
 */
#include "lake/addfiles.h"

#include "duck/duck.h"
#include "lake/addfiles_int.h"
#include "lake/colstats.h"
#include "lake/hive.h"
#include "lake/namemap.h"
#include "lake/txn.h"
#include "lake/types.h"
#include "tarn/error.h"
#include "util/buf.h"
#include "util/quote.h"
#include "util/strlist.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* ---- registering ---- */

/* Pre-order numbering, as DuckLake writes a mapping's entries. */
static void entry_rows(lk_txn *txn, const lk_nm_entry *e, int64_t id, int64_t parent,
                       int64_t *next)
{
    int64_t column_id = (*next)++;
    tarn_buf b = {0};
    quote_literal(&b, e->source);
    char *par = parent >= 0 ? xasprintf("%lld", (long long)parent) : xstrdup("NULL");
    lk_txn_row(txn, "ducklake_name_mapping", "(%lld, %lld, %s, %lld, %s, %s)", (long long)id,
               (long long)column_id, buf_cstr(&b), (long long)e->target, par,
               e->hive ? "true" : "false");
    free(par);
    buf_free(&b);
    for (size_t i = 0; i < e->nchildren; i++)
        entry_rows(txn, &e->children[i], id, column_id, next);
}

/* Records mapping `m`'s ducklake_column_mapping and ducklake_name_mapping
 * rows (under m->id). */
static void namemap_record(lk_txn *txn, const lk_namemap *m)
{
    lk_txn_row(txn, "ducklake_column_mapping", "(%lld, %lld, 'map_by_name')", (long long)m->id,
               (long long)m->table_id);
    int64_t next = 0;
    for (size_t i = 0; i < m->ncols; i++)
        entry_rows(txn, &m->cols[i], m->id, -1, &next);
}


/* The id of a mapping equal to `m` (the catalog's, then this
 * transaction's), or a new one: DuckLake's AddNameMap. */
static int64_t mapping_id(lk_lake *lake, const lk_namemap_set *committed, lk_namemap *m)
{
    lk_txn *txn = lake->txn;
    for (size_t i = 0; i < committed->n; i++)
        if (lk_namemap_compatible(&committed->maps[i], m))
            return committed->maps[i].id;
    for (size_t i = 0; i < txn->new_maps.n; i++)
        if (lk_namemap_compatible(&txn->new_maps.maps[i], m))
            return txn->new_maps.maps[i].id;
    m->id = txn->base_file_id + (int64_t)txn->new_maps.n;
    lk_namemap_set_add(&txn->new_maps, m);
    namemap_record(txn, m);
    return m->id;
}

/* DuckLake's partition check: a file of a partitioned table must give a
 * value for every key of its spec, and nothing else. */
static int check_partition(const file_map *f)
{
    int bad = f->npvs != f->t->nkeys;
    for (size_t i = 0; i < f->npvs && !bad; i++) {
        int found = 0;
        for (size_t k = 0; k < f->t->nkeys; k++)
            found |= f->t->keys[k].column_id == f->pvs[i].column_id;
        bad = !found;
    }
    if (bad)
        return tarn_error_set(TARN_EINVALID,
                              "Invalid Input Error: File \"%s\" contains an invalid partition "
                              "value for the table configuration.",
                              f->filename);
    return 0;
}

/* The path as stored: relative to the table's directory when under it. */
static void stored_path(char **path, int *relative, lk_lake *lake, const file_map *f)
{
    char *dir = lk_lake_table_dir(lake, &lake->txn->cat, f->t);
    char *abs = NULL;
    if (f->filename[0] != '/' && !strstr(f->filename, "://")) {
        char cwd[4096];
        if (getcwd(cwd, sizeof(cwd)))
            abs = xasprintf("%s/%s", cwd, f->filename);
    }
    const char *full = abs ? abs : f->filename;
    size_t n = strlen(dir);
    *relative = strncmp(full, dir, n) == 0;
    *path = xstrdup(*relative ? full + n : f->filename);
    free(abs);
    free(dir);
}

static void register_file(lk_lake *lake, const file_map *f, int64_t file_id, int64_t map_id,
                          const duck_table *fm, size_t row, lk_table_delta *d)
{
    lk_txn *txn = lake->txn;
    char *path = NULL;
    int relative = 0;
    stored_path(&path, &relative, lake, f);
    int64_t size = duck_table_int64(fm, row, 2), footer = duck_table_int64(fm, row, 3);
    tarn_buf b = {0};
    buf_printf(&b, "(%lld, %lld, %lld, NULL, NULL, ", (long long)file_id, (long long)f->t->id,
               (long long)txn->snapshot_id);
    quote_literal(&b, path);
    buf_printf(&b, ", %s, 'parquet', %lld, %lld, %lld, %lld, ", relative ? "true" : "false",
               (long long)f->rows, (long long)size, (long long)footer,
               (long long)d->next_row_id);
    if (f->t->nkeys)
        buf_printf(&b, "%lld", (long long)f->t->partition_id);
    else
        buf_puts(&b, "NULL");
    buf_printf(&b, ", NULL, %lld, NULL)", (long long)map_id);
    lk_txn_row(txn, "ducklake_data_file", "%s", buf_cstr(&b));
    buf_free(&b);
    txn->files = xrealloc(txn->files, (txn->nfiles + 1) * sizeof(lk_pending_file));
    lk_pending_file *p = &txn->files[txn->nfiles++];
    memset(p, 0, sizeof(*p));
    p->table_id = f->t->id;
    p->file_id = file_id;
    p->path = path;
    p->abs_path = xstrdup(f->filename);
    p->record_count = f->rows;
    p->file_size = size;
    p->footer_size = footer;
    p->row_id_start = d->next_row_id;
    p->has_mapping = 1;
    p->mapping_id = map_id;
}

/* DuckLake writes one partition value per path value, under the key index
 * of the last key of the spec on the same column. */
static void record_partition_values(lk_txn *txn, const file_map *f, int64_t file_id)
{
    for (size_t i = 0; i < f->npvs; i++) {
        size_t index = 0;
        for (size_t k = 0; k < f->t->nkeys; k++)
            if (f->t->keys[k].column_id == f->pvs[i].column_id)
                index = k;
        tarn_buf b = {0};
        quote_literal(&b, f->pvs[i].value);
        lk_txn_row(txn, "ducklake_file_partition_value", "(%lld, %lld, %zu, %s)",
                   (long long)file_id, (long long)f->t->id, index, buf_cstr(&b));
        buf_free(&b);
    }
}

/* Maps one file (schema rows [s0, s1), stats rows [m0, m1)) and adds it. */
static int add_file(lk_lake *lake, file_map *f, const lk_namemap_set *committed,
                    const duck_table *fm, size_t row, const duck_table *schema, size_t s0,
                    size_t s1, const duck_table *meta, size_t m0, size_t m1)
{
    lk_txn *txn = lake->txn;
    if (f->o->hive != 0)
        lk_hive_parse(&f->hive, f->filename);
    pcol root = {0};
    int64_t next_leaf = 0;
    size_t at = s0 + 1; /* the first element is the schema's root */
    lk_addfiles_schema_tree(&root, s1 > s0 ? duck_table_int64(schema, s0, 3) : 0, schema, &at, s1,
                            &next_leaf);
    lk_namemap m = {0};
    m.table_id = f->t->id;
    int rc = lk_addfiles_map_partition_keys(f);
    if (!rc)
        rc = lk_addfiles_map_columns(&m.cols, &m.ncols, f, root.children, root.nchildren,
                                     f->t->cols, f->t->ncols, "");
    if (!rc && f->t->nkeys)
        rc = check_partition(f);
    if (!rc) {
        int64_t map_id = mapping_id(lake, committed, &m);
        if (f->rows > 0) {
            lk_table_delta *d = lk_txn_delta(lake, f->con, f->t->id);
            int64_t file_id = lk_txn_new_file_id(txn);
            rc = lk_addfiles_record_stats(lake, f, file_id, meta, m0, m1, d);
            if (!rc) {
                register_file(lake, f, file_id, map_id, fm, row, d);
                if (f->t->nkeys)
                    record_partition_values(txn, f, file_id);
                d->next_row_id += f->rows;
                d->added_records += f->rows;
                d->added_bytes += duck_table_int64(fm, row, 2);
                d->got_file = 1;
                d->touched = 1;
                char *tok = xasprintf("inserted_into_table:%lld", (long long)f->t->id);
                lk_txn_change(txn, tok);
                free(tok);
                lk_txn_view_dirty(txn, f->t->id);
            }
        }
    }
    lk_namemap_free(&m);
    lk_addfiles_pcol_free(&root);
    return rc;
}

/* The first row at or after `from` of result `r` (sorted by its first
 * column, the file name) for file `name`, and the end of its run. */
static void rows_of(const duck_table *r, const char *name, size_t *from, size_t *to)
{
    size_t i = 0;
    while (i < r->nrows && strcmp(duck_table_get(r, i, 0), name) != 0)
        i++;
    *from = i;
    while (i < r->nrows && strcmp(duck_table_get(r, i, 0), name) == 0)
        i++;
    *to = i;
}

static int footer_query(duck_table *r, duckdb_connection con, const char *fmt, const char *glob)
{
    tarn_buf g = {0};
    quote_literal(&g, glob);
    char *sql = xasprintf(fmt, buf_cstr(&g));
    buf_free(&g);
    int rc = duck_table_query(r, con, sql);
    free(sql);
    if (rc) {
        /* DuckDB's message, without the position in tarn's query */
        char *msg = xstrdup(tarn_error_last());
        char *line = strstr(msg, "\nLINE ");
        while (line && line > msg && line[-1] == '\n')
            line--;
        if (line)
            *line = 0;
        rc = tarn_error_set(rc, "Invalid Input Error: Failed to add data files to DuckLake: %s",
                            msg);
        free(msg);
    }
    return rc;
}

static int add_glob(lk_lake *lake, duckdb_connection con, const lk_add_files_opts *o,
                    const lk_table *t, const char *glob, const lk_namemap_set *committed,
                    strlist *seen)
{
    duck_table fm = {0}, schema = {0}, meta = {0};
    int rc = footer_query(&fm, con,
                          "SELECT file_name, num_rows, file_size_bytes, footer_size FROM "
                          "parquet_file_metadata(%s)",
                          glob);
    if (!rc)
        rc = footer_query(&schema, con,
                          "SELECT file_name, name, \"type\", num_children, converted_type, "
                          "\"scale\", \"precision\", logical_type FROM parquet_schema(%s) ORDER "
                          "BY file_name, column_id",
                          glob);
    if (!rc)
        rc = footer_query(&meta, con,
                          "SELECT file_name, column_id, COALESCE(stats_min, stats_min_value), "
                          "COALESCE(stats_max, stats_max_value), stats_null_count, num_values, "
                          "total_compressed_size, geo_bbox.xmin, geo_bbox.xmax, geo_bbox.ymin, "
                          "geo_bbox.ymax, geo_bbox.zmin, geo_bbox.zmax, geo_bbox.mmin, "
                          "geo_bbox.mmax, geo_types::VARCHAR FROM parquet_metadata(%s) ORDER BY "
                          "file_name, "
                          "row_group_id, column_id",
                          glob);
    for (size_t i = 0; !rc && i < fm.nrows; i++) {
        const char *name = duck_table_get(&fm, i, 0);
        if (strlist_find(seen, name) >= 0)
            continue; /* overlapping globs: each file once */
        strlist_push(seen, name);
        file_map f = {0};
        f.con = con;
        f.o = o;
        f.t = t;
        f.filename = name;
        f.rows = duck_table_int64(&fm, i, 1);
        size_t s0, s1, m0, m1;
        rows_of(&schema, name, &s0, &s1);
        rows_of(&meta, name, &m0, &m1);
        rc = add_file(lake, &f, committed, &fm, i, &schema, s0, s1, &meta, m0, m1);
        lk_addfiles_map_free(&f);
    }
    if (fm.ncols)
        duck_table_free(&fm);
    if (schema.ncols)
        duck_table_free(&schema);
    if (meta.ncols)
        duck_table_free(&meta);
    return rc;
}

int lk_add_data_files(lk_lake *lake, duckdb_connection con, const lk_add_files_opts *o)
{
    lk_catalog *cat = &lake->txn->cat;
    const lk_table *t = lk_catalog_table_named(cat, o->schema, o->table);
    if (!t) {
        /* DuckDB's hint: the table in another schema */
        for (size_t i = 0; i < cat->nschemas; i++) {
            lk_schema *other = &cat->schemas[i];
            if (lk_catalog_table(cat, other->id, o->table))
                return tarn_error_set(TARN_ENOTFOUND,
                                      "Catalog Error: Table with name %s does not exist!\nDid you "
                                      "mean \"%s.%s\"?",
                                      o->table, other->name, o->table);
        }
        return tarn_error_set(TARN_ENOTFOUND, "Catalog Error: Table with name %s does not exist!",
                              o->table);
    }
    lk_namemap_set committed = {0};
    int rc = 0;
    if (lk_catalog_table_by_id(&lake->cat, t->id))
        rc = lk_namemap_load(&committed, &lake->db, con, t->id, NULL, 0);
    strlist seen = {0};
    for (size_t i = 0; i < o->nglobs && !rc; i++)
        rc = add_glob(lake, con, o, t, o->globs[i], &committed, &seen);
    strlist_free(&seen);
    lk_namemap_set_free(&committed);
    return rc;
}

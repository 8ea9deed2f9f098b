/*
 * scan_int.h — what the read SQL of a table (scan.c) and the per-lake
 * cache it reads through (scan_cache.c) share: a table's committed files
 * as a scan reads them, the catalog queries that list them (the cache's
 * prefill runs them for every table at once), and the cache's entries.
 * Not part of libtarn's API.
 */
#ifndef TARN_LAKE_SCAN_INT_H
#define TARN_LAKE_SCAN_INT_H

#include "duck/duck.h"
#include "lake/lake.h"
#include "lake/txn.h"

#include <stddef.h>
#include <stdint.h>

/* ---- a table's files (scan.c) ---- */

typedef struct {
    int64_t id, row_id_start, begin, partial_max; /* partial_max -1: none */
    int64_t record_count;
    char *path;     /* as passed to read_parquet */
    char *del_path; /* NULL: no delete file */
    int del_has_snap;
    char *pconst;     /* signature of the file's identity partition values ("" none) */
    int64_t *pk_cols; /* those values: column ids and texts (NULL: SQL NULL) */
    char **pk_vals;
    size_t npk;
} scan_file;

typedef struct {
    scan_file *files;
    size_t n;
    int has_inline_deletes;
    int any_partitioned; /* some committed file was written under a partition spec */
} scan_input;

void scan_input_free(scan_input *in);
/* A new zeroed file at the end of `in`. */
scan_file *scan_push_file(scan_input *in);
/* Appends the files transaction `txn` wrote for table `table_id` (begun
 * at its snapshot); with `renumbered`, under the ids its commit gave them. */
void scan_add_pending_files(scan_input *in, const lk_txn *txn, int64_t table_id, int renumbered);

/* The committed data files (and their delete files) live at snapshot s,
 * of table `table_id` or (-1) of every table, ordered by table and file. */
int scan_query_files(duck_table *r, lk_lake *lake, duckdb_connection con, int64_t table_id,
                     int64_t s);
/* Appends the files of rows [from, to) of a scan_query_files result; `dir`
 * is the table's directory (relative paths are under it). */
void scan_add_file_rows(scan_input *in, const duck_table *r, size_t from, size_t to,
                        const char *dir);
/* The identity partition values of committed files, of table `table_id`
 * or (-1) of every table, ordered by file. */
int scan_query_partition_values(duck_table *r, lk_lake *lake, duckdb_connection con,
                                int64_t table_id);
/* Gives each file of `in` its identity partition values from a
 * scan_query_partition_values result, and its group signature. */
void scan_apply_partition_values(scan_input *in, const lk_table *t, const duck_table *r);

/* ---- the cache (scan_cache.c) ---- */

/* What the view of an inlined table needs that only changes with the
 * catalog's history: the names its columns had (by column id), and whether
 * any of its rows was ended (deleted or updated). */
typedef struct {
    char *name; /* ducklake_inlined_data_<tid>_<sv> */
    int have_names;
    int64_t *ids;
    char **names;
    size_t n;
    int have_ended, ended;
    int empty; /* known to hold no row (made by a commit that inlined none) */
} inlined_info;

/* Copies into `in` the committed files of table `id` at snapshot s, when
 * the cache knows them; 0 when it does not. */
int scan_cache_lookup(scan_input *in, lk_lake *lake, int64_t id, int64_t s);
/* Remembers `in` (copied) as table_id's committed files since `snapshot`. */
void scan_cache_store(lk_lake *lake, int64_t table_id, int64_t snapshot, const scan_input *in);
/* The entry of inlined table `name` (made when `add`), or NULL. */
inlined_info *scan_inlined_find(lk_lake *lake, const char *name, int add);
/* Sets the column names (by column id) of an inlined table's entry. */
void scan_inlined_set_names(inlined_info *x, const int64_t *ids, char *const *names, size_t n);

#endif

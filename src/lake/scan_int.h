/*
 * scan_int.h — the entries of the per-lake cache (scan_cache.c) that the
 * read SQL of a table (scan.c) reads through: a table's committed files
 * (scan_input.h) and the facts of its inlined-data tables; and the parts
 * of that SQL that scan_files.c and scan_inlined.c build for scan.c.
 * Not part of libtarn's API.
 */
#ifndef TARN_LAKE_SCAN_INT_H
#define TARN_LAKE_SCAN_INT_H

#include "duck/duck.h"
#include "lake/handle.h"
#include "lake/namemap.h"
#include "lake/scan_input.h"
#include "lake/txn.h"

#include <stddef.h>
#include <stdint.h>

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

/* One column's statistics rows (ducklake_file_column_stats) of a table's
 * files, sorted by data_file_id; a NULL text or -1 count: not known. */
typedef struct {
    int64_t column_id;
    size_t n;
    int64_t *file_ids;
    char **mins, **maxs;
    int64_t *null_counts;
    signed char *nan; /* contains_nan: 1, 0, -1 not known */
} scan_colstats;

/* The statistics of column `column_id` of the committed files of table
 * `table_id` at snapshot s, read once and kept with the table's cached
 * files (dropped with them); NULL when the cache does not know the files
 * at s or the read fails. */
const scan_colstats *scan_cache_colstats(lk_lake *lake, duckdb_connection con, int64_t table_id,
                                         int64_t column_id, int64_t s);
/* The row of file `file_id` in `cs`, or -1. */
long scan_colstats_find(const scan_colstats *cs, int64_t file_id);

/* ---- the parts of a table's read SQL ---- */

/* The table's columns, quoted, each prefixed by `prefix` (may be NULL). */
void lk_scan_column_list(tarn_buf *b, const lk_table *t, const char *prefix);
/* The newest begin snapshot of the columns' layouts: files written before
 * it are read by field id through a rebuilt layout. */
int64_t lk_scan_layout_since(const lk_column *cols, size_t n);
/* The virtual columns `flags` asks for (snapshot_id, filename,
 * file_row_number, file_index), from these expressions. */
void lk_scan_virtual_columns(tarn_buf *b, int flags, const char *snap, const char *file,
                             const char *row, const char *index);
/* One read_parquet over the group of files `in` at snapshot s, by field
 * id; `layout` (may be NULL): the table's columns as the files were
 * written, when nested columns changed since. */
void lk_scan_parquet_part(tarn_buf *b, lk_lake *lake, const lk_table *t, const scan_input *in,
                          int64_t s, const char *snap, int flags, int pending,
                          const lk_column *layout, size_t nlayout);
/* The same for files registered through name mapping `m`. */
void lk_scan_mapped_part(tarn_buf *b, lk_lake *lake, const lk_table *t, const scan_input *in,
                         int64_t s, const char *snap, int flags, int pending, const lk_namemap *m);
/* The name mappings the files of `in` use (read from the catalog), and
 * their signature in each file's group key. */
int lk_scan_mapped_load(lk_namemap_set *out, lk_lake *lake, duckdb_connection con,
                        const scan_input *in);
void lk_scan_mapped_signatures(scan_input *in, const lk_namemap_set *maps);
/* The live rows of inlined table `inl` at snapshot `snap` (latest: the
 * lake's newest snapshot), file_index being its place among the sources. */
void lk_scan_inlined_part(tarn_buf *b, lk_lake *lake, duckdb_connection con, const lk_table *t,
                          const lk_inlined *inl, const char *snap, int flags, int pending,
                          int latest, int64_t file_index);
/* The open transaction's inlined rows of `t`; local_start: the
 * transaction-local row id of its first new row. */
void lk_scan_pending_part(tarn_buf *b, lk_lake *lake, const lk_table *t, int flags,
                          int64_t local_start, int64_t file_index);

/* ---- files without field ids or mapping (scan_legacy.c) ---- */

/* Gives each committed file of `in` that has neither a mapping nor field
 * ids (a file registered before DuckLake had mappings) a positional
 * mapping of table t's columns, added to `maps` under an id of its own. */
void lk_scan_legacy_mappings(lk_namemap_set *maps, duckdb_connection con, const lk_table *t,
                             scan_input *in);

#endif

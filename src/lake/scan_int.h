/*
 * scan_int.h — the entries of the per-lake cache (scan_cache.c) that the
 * read SQL of a table (scan.c) reads through: a table's committed files
 * (scan_input.h) and the facts of its inlined-data tables.
 * Not part of libtarn's API.
 */
#ifndef TARN_LAKE_SCAN_INT_H
#define TARN_LAKE_SCAN_INT_H

#include "duck/duck.h"
#include "lake/handle.h"
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

#endif

/*
 * changes.h — the changes_made lists of ducklake_snapshot_changes (see
 * changes.c): split into their entries, and read for a range of
 * snapshots.
 */
#ifndef TARN_LAKE_CHANGES_H
#define TARN_LAKE_CHANGES_H

#include "lake/catdb.h"
#include "util/strlist.h"

#include <stdint.h>

/* The entries of a changes_made list
 * ("created_table:\"s\".\"t\",inserted_into_table:4", split at the commas
 * outside double quotes) appended to *out: every one, or (catalog_only)
 * only the created_, dropped_ and altered_ ones. */
void lk_changes_split(strlist *out, const char *list, int catalog_only);

/* The same, for each snapshot after `after` up to `upto`, in snapshot
 * order, read from catalog `db` (its tables named meta.ducklake_…). */
int lk_changes_made(strlist *out, lk_catdb *db, const char *meta, duckdb_connection con,
                    int64_t after, int64_t upto, int catalog_only);

#endif

/*
 * info.h — what DuckLake's read-only table functions report about a lake,
 * as SQL over its catalog tables, and setting a catalog option.
 *
 * The session turns ducklake_table_info(), ducklake_options(),
 * ducklake_list_files(), ducklake_last_committed_snapshot() and
 * pragma_database_size() into subqueries; the catalog tables those read
 * are the lake's business, so the SQL is built here, qualified by the
 * catalog's name (catdb.h), and runs in the session's DuckDB.
 */
#ifndef TARN_LAKE_INFO_H
#define TARN_LAKE_INFO_H

#include "duck/duck.h"
#include "lake/handle.h"
#include "lake/model.h"
#include "util/buf.h"

#include <stdint.h>

/* ducklake_table_info(): per table live at `snapshot`, its files' and
 * delete files' counts and sizes. *out is malloc'd. */
int lk_info_table_info_sql(char **out, lk_lake *lake, int64_t snapshot);
/* ducklake_options(): every option set in ducklake_metadata, with its
 * description, scope and the schema or table it applies to. */
int lk_info_options_sql(char **out, lk_lake *lake, duckdb_connection con);
/* ducklake_list_files(): the data files of `t` at `snapshot` (`cat`: the
 * catalog at it) with their delete files, paths made absolute. */
int lk_info_list_files_sql(char **out, lk_lake *lake, const lk_catalog *cat, const lk_table *t,
                           int64_t snapshot);
/* ducklake_last_committed_snapshot(): the newest snapshot id. */
char *lk_info_last_snapshot_sql(lk_lake *lake);
/* Appends a scalar subquery: the bytes of the lake's live data and delete
 * files (pragma_database_size's figure for a lake). */
void lk_info_size_sql(tarn_buf *b, lk_lake *lake);
/* Each table's record_count (ducklake_table_stats): rows (table_id,
 * record_count). */
int lk_info_record_counts(duck_table *out, lk_lake *lake, duckdb_connection con);

/* Sets catalog option `key` to `value` (ducklake_metadata) for `scope`
 * ("table", "schema", or NULL for the whole lake) and `scope_id`: in the
 * open transaction (recorded for its commit, seen by its own reads) when
 * `in_txn`, else at once. */
int lk_info_set_option(lk_lake *lake, duckdb_connection con, const char *key, const char *value,
                       const char *scope, int64_t scope_id, int in_txn);

/* Each live table's content version: the newest snapshot that changed its
 * rows or columns (or created it), as rows ("schema.table" in lower case,
 * version). Maintenance is not a change: a snapshot that flushed, merged
 * or rewrote a table's files (its changes name inline_flush:T,
 * merge_adjacent:T or rewrite_delete:T, and a flush of inlined deletions
 * also deleted_from_table:T) does not count for T. Expiring snapshots
 * forgets their changes, so a version can go down, never up. */
int lk_info_table_versions(duck_table *out, lk_lake *lake, duckdb_connection con);

#endif

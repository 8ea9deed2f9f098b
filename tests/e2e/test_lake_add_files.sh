#!/usr/bin/env bash
# test_lake_add_files.sh — CALL ducklake_add_data_files(lake, table, files, …)
# registers Parquet files written outside the lake, as DuckLake does: the
# catalog rows (ducklake_data_file with the footer's row count and sizes and
# a mapping_id; one ducklake_column_mapping and its ducklake_name_mapping rows
# per distinct mapping, reused by a file with the same names; column stats
# from the footer), reads by name through the mapping (after the table's
# columns are renamed, dropped and added), hive path values, a list of files
# and overlapping globs (each file once), the type checks and their messages,
# a filter on a hive column reading only its files (also under OFFSET /
# LIMIT; the files of two registrations whose mappings differ only in the
# hive key's name in one read), a file without field ids or mapping (as
# DuckLake 0.3 registered them) read by position, also after a rename,
# and deleted from,
# allow_missing / ignore_extra_columns, a partitioned target, and a rollback
# that leaves the user's file in place.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
RAW="ATTACH 'm.ducklake' AS raw (READ_ONLY);"
last() { sed '/^$/d' | tail -n 1; }
rows() { sed '/^$/d' | tail -n +2; }
raw() { (cd "$d" && "$TARN" sql --format csv "$RAW $1") 2>>"$d/err" | rows; }
lake_err() { (cd "$d" && "$TARN" sql "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); $1" 2>&1 >/dev/null); }

lake_sql "$d" "CREATE TABLE l.t (a INTEGER, b VARCHAR); INSERT INTO l.t VALUES (1, 'one');" >/dev/null
lake_sql "$d" "COPY (SELECT 2 AS a, 'two' AS b UNION ALL SELECT 3, NULL) TO 'd/main/t/mine.parquet';
    COPY (SELECT 'four' AS B, 4::SMALLINT AS A) TO 'outside.parquet'" >/dev/null
check "a file in the table's directory is added" lake_sql "$d" \
    "CALL ducklake_add_data_files('l', 't', 'd/main/t/mine.parquet')"
check "a file elsewhere, columns in another order and case, a narrower type" lake_sql "$d" \
    "CALL ducklake_add_data_files('l', 't', 'outside.parquet')"
check_eq "the table reads them by name" "1,one
2,two
3,
4,four" "$(lake_sql "$d" "SELECT * FROM l.t ORDER BY a" | rows)"
check_eq "data file rows: path as stored, record count, footer size, mapping" \
    "mine.parquet,true,2,true,0
outside.parquet,false,1,true,1" \
    "$(raw "SELECT path, path_is_relative, record_count, footer_size > 0, dense_rank() OVER (ORDER BY mapping_id) - 1
        FROM raw.ducklake_data_file WHERE mapping_id IS NOT NULL ORDER BY data_file_id")"
check_eq "one column mapping per distinct mapping, map_by_name" "2,map_by_name" \
    "$(raw "SELECT count(*), any_value(type) FROM raw.ducklake_column_mapping")"
check_eq "name mapping rows: source names (as in the file) and target column ids" "0,a,1,,false
1,b,2,,false
0,B,2,,false
1,A,1,,false" "$(raw "SELECT column_id, source_name, target_field_id, parent_column, is_partition
        FROM raw.ducklake_name_mapping ORDER BY mapping_id, column_id")"
check_eq "column stats from the footer" "1,2,0,2,3
2,1,1,two,two" "$(raw "SELECT s.column_id, s.value_count, s.null_count, s.min_value, s.max_value
        FROM raw.ducklake_file_column_stats s JOIN raw.ducklake_data_file f USING (data_file_id)
        WHERE f.path = 'mine.parquet' ORDER BY s.column_id")"
check_eq "the table stats include them" "1,4" \
    "$(raw "SELECT min_value, max_value FROM raw.ducklake_table_column_stats WHERE column_id = 1")"
lake_sql "$d" "COPY (SELECT 5 AS a, 'five' AS b) TO 'd/main/t/again.parquet'" >/dev/null
lake_sql "$d" "CALL ducklake_add_data_files('l', 't', ['d/main/t/again.parquet', 'd/main/t/again.parquet'])" >/dev/null
check_eq "a file with the same names reuses the mapping; a file listed twice is added once" "2,3" \
    "$(raw "SELECT count(DISTINCT mapping_id), count(*) FROM raw.ducklake_data_file WHERE mapping_id IS NOT NULL")"
lake_sql "$d" "ALTER TABLE l.t RENAME a TO x; ALTER TABLE l.t DROP COLUMN b; ALTER TABLE l.t ADD COLUMN b VARCHAR" >/dev/null
check_eq "renamed, dropped and re-added columns read right (a new b is not the file's b)" "1,
2,
3,
4,
5," "$(lake_sql "$d" "SELECT x, b FROM l.t ORDER BY x" | rows)"

# errors
lake_sql "$d" "COPY (SELECT true AS x, 'y' AS b) TO 'bool.parquet'; COPY (SELECT 1 AS x, 2 AS z, 'b' AS b) TO 'extra.parquet';
    COPY (SELECT 7 AS x) TO 'missing.parquet'" >/dev/null
check_eq "a type the column cannot take is refused, saying why" \
    "tarn: statement 2 (line 1): Invalid Input Error: Failed to map column \"x\" from file \"bool.parquet\" to the column in table \"t\"
* Expected one of INTEGER, USMALLINT, SMALLINT, UTINYINT, TINYINT, found type BOOLEAN" \
    "$(lake_err "CALL ducklake_add_data_files('l', 't', 'bool.parquet')")"
check_fails "a column the table lacks is refused" lake_sql "$d" \
    "CALL ducklake_add_data_files('l', 't', 'extra.parquet')"
check "… unless ignore_extra_columns => true" lake_sql "$d" \
    "CALL ducklake_add_data_files('l', 't', 'extra.parquet', ignore_extra_columns => true)"
check_fails "a column the file lacks is refused" lake_sql "$d" \
    "CALL ducklake_add_data_files('l', 't', 'missing.parquet')"
check "… unless allow_missing => true" lake_sql "$d" \
    "CALL ducklake_add_data_files('l', 't', 'missing.parquet', allow_missing => true)"
check_eq "and those read right" "1,
1,b
7," "$(lake_sql "$d" "SELECT x, b FROM l.t WHERE x IN (1, 7) AND (b IS NULL OR b = 'b') ORDER BY x, b NULLS FIRST" | rows)"
check_eq "a missing file fails, saying so in DuckDB's words" \
    'tarn: statement 2 (line 1): Invalid Input Error: Failed to add data files to DuckLake: IO Error: No files found that match the pattern "nope.parquet"' \
    "$(lake_err "CALL ducklake_add_data_files('l', 't', 'nope.parquet')")"

# rollback keeps the user's file; the snapshot of a commit lists the insert
n0=$(raw "SELECT count(*) FROM raw.ducklake_data_file")
lake_sql "$d" "COPY (SELECT 8 AS x, 'e' AS b) TO 'keep.parquet';
    BEGIN; CALL ducklake_add_data_files('l', 't', 'keep.parquet'); ROLLBACK;" >/dev/null
[ -f "$d/keep.parquet" ] && ok "a rollback leaves the file" || fail "a rollback leaves the file"
check_eq "and registers nothing" "$n0" "$(raw "SELECT count(*) FROM raw.ducklake_data_file")"
check_eq "inside a transaction the file reads before the commit" "8" \
    "$(lake_sql "$d" "BEGIN; CALL ducklake_add_data_files('l', 't', 'keep.parquet');
        SELECT x FROM l.t WHERE x = 8; COMMIT;" | rows | tail -n 1)"
check_eq "the commit's changes" "inserted_into_table:1" \
    "$(raw "SELECT changes_made FROM raw.ducklake_snapshot_changes ORDER BY snapshot_id DESC LIMIT 1")"

# hive columns and a partitioned target
lake_sql "$d" "CREATE TABLE l.p (k INTEGER, v VARCHAR); ALTER TABLE l.p SET PARTITIONED BY (k);
    COPY (SELECT 3 AS k, 'a' AS v UNION ALL SELECT 4, 'b') TO 'hive' (FORMAT parquet, PARTITION_BY (k))" >/dev/null
check "files whose partition column is in their hive path" lake_sql "$d" \
    "CALL ducklake_add_data_files('l', 'p', 'hive/*/*.parquet')"
check_eq "read with the path's values" "3,a
4,b" "$(lake_sql "$d" "SELECT * FROM l.p ORDER BY k" | rows)"
check_eq "partition values" "0,3
0,4" "$(raw "SELECT partition_key_index, partition_value FROM raw.ducklake_file_partition_value
        JOIN raw.ducklake_table USING (table_id) WHERE table_name = 'p' ORDER BY partition_value")"
check_eq "and a hive entry in their (one) mapping" "k,true,1" \
    "$(raw "SELECT source_name, is_partition, count(DISTINCT mapping_id) FROM raw.ducklake_name_mapping
        WHERE is_partition GROUP BY ALL")"
check "ALTER … SET TYPE widens the hive column" lake_sql "$d" "ALTER TABLE l.p ALTER k SET TYPE BIGINT"
check_eq "which still reads from the path" "BIGINT,3,a
BIGINT,4,b" "$(lake_sql "$d" "SELECT typeof(k), * FROM l.p ORDER BY k" | rows)"
lake_sql "$d" "COPY (SELECT 5 AS k, 'c' AS v) TO 'nohive.parquet'" >/dev/null
check_fails "a file without the partition in its path is refused for a partitioned table" \
    lake_sql "$d" "CALL ducklake_add_data_files('l', 'p', 'nohive.parquet')"
# a registered file whose mapping the catalog lacks (DuckLake 0.3) and
# that has no field ids: its columns are the table's, in order
lake_sql "$d" "CREATE TABLE l.lg (old_id INTEGER, payload VARCHAR);
    COPY (SELECT 42 AS a, 'old' AS b UNION ALL SELECT 43, 'old2') TO 'legacy.parquet';
    CALL ducklake_add_data_files('l', 'lg', 'legacy.parquet', ignore_extra_columns => true, allow_missing => true);
    ALTER TABLE l.lg RENAME COLUMN old_id TO id" >/dev/null
(cd "$d" && "$TARN" sql "ATTACH 'm.ducklake' AS raw; UPDATE raw.ducklake_data_file SET mapping_id = NULL
    WHERE path LIKE '%legacy.parquet'" >/dev/null 2>>"$d/err")
check_eq "a file without field ids or mapping: read by position" "0,42,old
1,43,old2" "$(lake_sql "$d" "SELECT rowid, id, payload FROM l.lg ORDER BY rowid" | rows)"
check_eq "… filtered" "1" "$(lake_sql "$d" "SELECT count(*) FROM l.lg WHERE id = 42" | rows)"
lake_sql "$d" "DELETE FROM l.lg WHERE id = 42" >/dev/null
check_eq "… and deleted from" "43,old2" "$(lake_sql "$d" "SELECT id, payload FROM l.lg ORDER BY id" | rows)"

# hive values prune the files of an unpartitioned table (no inlined rows:
# the files are the table's only part)
h_sql() { (cd "$d" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 0); $1") </dev/null 2>>"$d/err"; }
files_read() { h_sql "EXPLAIN ANALYZE $1" | grep -o 'Total Files Read: [0-9]*' | awk '{n += $4} END {print n + 0}'; }
h_sql "CREATE TABLE l.h (pk INTEGER, v VARCHAR);
    COPY (SELECT 1 AS pk, 'a' AS v UNION ALL SELECT 2, 'b' UNION ALL SELECT 3, 'c') TO 'hv' (FORMAT parquet, PARTITION_BY (pk));
    CALL ducklake_add_data_files('l', 'h', 'hv/*/*.parquet', hive_partitioning => true)" >/dev/null
check_eq "a hive value: one file read" "1" "$(files_read "SELECT count(*) FROM l.h WHERE pk = 1")"
check_eq "… under OFFSET / LIMIT too" "1" "$(files_read "SELECT * FROM l.h WHERE pk = 1 OFFSET 0 LIMIT 1")"
check_eq "… with the row" "1,a" "$(h_sql "SELECT * FROM l.h WHERE pk = 1 OFFSET 0 LIMIT 1" | rows)"
h_sql "ALTER TABLE l.h RENAME pk TO pk2;
    COPY (SELECT 1 AS pk2, 'n' AS v) TO 'hv' (FORMAT parquet, PARTITION_BY (pk2), APPEND);
    CALL ducklake_add_data_files('l', 'h', 'hv/pk2=*/*.parquet')" >/dev/null
check_eq "two registrations, the hive key renamed: one read of both files" \
    "Total Files Read: 2" "$(h_sql "EXPLAIN ANALYZE SELECT count(*) FROM l.h WHERE pk2 = 1" | grep -o 'Total Files Read: [0-9]*')"
check_eq "… with their rows" "1,a
1,n" "$(h_sql "SELECT * FROM l.h WHERE pk2 = 1 ORDER BY v" | rows)"
check_eq "… and the whole table" "1,a
1,n
2,b
3,c" "$(h_sql "SELECT * FROM l.h ORDER BY ALL" | rows)"
finish

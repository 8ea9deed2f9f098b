#!/usr/bin/env bash
# test_lake_add_files_compact.sh — files registered with
# ducklake_add_data_files (columns by name, values from their hive path)
# take part in compaction: ducklake_merge_adjacent_files merges them with
# the table's own files into one file written by field id (no mapping),
# ducklake_rewrite_data_files drops their deleted rows; the rows, their row
# ids and the snapshots they read at stay the same.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
RAW="ATTACH 'm.ducklake' AS raw (READ_ONLY);"
rows() { sed '/^$/d' | tail -n +2; }
raw() { (cd "$d" && "$TARN" sql --format csv "$RAW $1") 2>>"$d/err" | rows; }

lake_sql "$d" "CALL ducklake_set_option('l', 'data_inlining_row_limit', 0);
    CREATE TABLE l.t (a INTEGER, b VARCHAR, k INTEGER); INSERT INTO l.t VALUES (1, 'own', 7);
    COPY (SELECT 'x' AS B, 2 AS A, 7 AS k UNION ALL SELECT 'y', 3, 7) TO 'ext' (FORMAT parquet, PARTITION_BY (k));" >/dev/null
check "a file with its k in its hive path is added" lake_sql "$d" \
    "CALL ducklake_add_data_files('l', 't', 'ext/*/*.parquet')"
before=$(lake_sql "$d" "SELECT rowid, * FROM l.t ORDER BY rowid" | rows)
check_eq "the table reads it" "0,1,own,7
1,2,x,7
2,3,y,7" "$before"
check "merge_adjacent_files runs" lake_sql "$d" "CALL ducklake_merge_adjacent_files('l')"
check_eq "one live file, written by field id" "1," \
    "$(raw "SELECT count(*), any_value(mapping_id) FROM raw.ducklake_data_file WHERE end_snapshot IS NULL")"
check_eq "the same rows and row ids" "$before" "$(lake_sql "$d" "SELECT rowid, * FROM l.t ORDER BY rowid" | rows)"

lake_sql "$d" "COPY (SELECT 4 AS a, 'z' AS b, 7 AS k UNION ALL SELECT 5, 'w', 7) TO 'plain.parquet';
    CALL ducklake_add_data_files('l', 't', 'plain.parquet'); DELETE FROM l.t WHERE a = 4" >/dev/null
check "rewrite_data_files over an added file with a deletion runs" lake_sql "$d" \
    "CALL ducklake_rewrite_data_files('l', 't', delete_threshold => 0)"
check_eq "the deleted row is gone, the others stay" "0,1,own,7
1,2,x,7
2,3,y,7
4,5,w,7" "$(lake_sql "$d" "SELECT rowid, * FROM l.t ORDER BY rowid" | rows)"
check_eq "no live file points at a mapping any more" "0" \
    "$(raw "SELECT count(*) FROM raw.ducklake_data_file WHERE end_snapshot IS NULL AND mapping_id IS NOT NULL")"
finish

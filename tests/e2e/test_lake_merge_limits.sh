#!/usr/bin/env bash
# tests/e2e/test_lake_merge_limits.sh — ducklake_merge_adjacent_files' max_compacted_files holds
# per table, as in DuckLake: a lake-wide merge with max_compacted_files => 1 compacts once in each
# table. With the per_thread_output option and inlining off, an INSERT of no rows still registers
# one empty data file (DuckDB's per-thread COPY writes one), and a merge of only empty files
# consumes them without writing a replacement. Rows read the same throughout.
#
# Run: `bash tests/e2e/test_lake_merge_limits.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1" | sed 1d; }
catalog() { lake_catalog "$d" "$1" | sed 1d; }
live_files() { catalog "SELECT count(*) FROM m.ducklake_data_file d JOIN m.ducklake_table t
    USING (table_id) WHERE d.end_snapshot IS NULL AND t.end_snapshot IS NULL AND t.table_name = '$1';"; }

ins=""
for i in 0 1 2 3 4 5; do ins="$ins INSERT INTO l.a VALUES ($i); INSERT INTO l.b VALUES ($i);"; done
check "two tables of six one-row files" q "CALL l.set_option('data_inlining_row_limit', 0);
    CALL l.set_option('target_file_size', '1KB'); CREATE TABLE l.a (k INTEGER);
    CREATE TABLE l.b (k INTEGER); $ins"
check_eq "six files each" "6 6" "$(live_files a) $(live_files b)"
check_eq "a lake-wide merge with max_compacted_files => 1 merges in each table" "a 1
b 1" "$(q "SELECT table_name || ' ' || files_created FROM ducklake_merge_adjacent_files('l',
    max_compacted_files => 1) ORDER BY table_name;")"
A=$(live_files a)
B=$(live_files b)
[ "$A" -lt 6 ] && [ "$B" -lt 6 ] && ok "both tables have fewer files" ||
    fail "both tables have fewer files" "a: $A, b: $B"
check_eq "the rows" "15 15" "$(q "SELECT (SELECT sum(k) FROM l.a) || ' ' || (SELECT sum(k) FROM l.b);")"

check "empty inserts with per_thread_output" q "CALL l.set_option('per_thread_output', 'true');
    CREATE TABLE l.e (id INTEGER, p VARCHAR);
    INSERT INTO l.e SELECT range, 'x' FROM range(10) WHERE range < 0;
    INSERT INTO l.e SELECT range, 'x' FROM range(10) WHERE range < 0;"
check_eq "two empty files registered" "2 0" "$(catalog "SELECT count(*) || ' ' || sum(record_count)
    FROM m.ducklake_data_file WHERE end_snapshot IS NULL AND table_id = $(lake_table_id "$d" e);")"
check_eq "merged without a new file" "e 2 0" "$(q "SELECT table_name || ' ' || files_processed || ' ' ||
    files_created FROM ducklake_merge_adjacent_files('l', 'e');")"
check_eq "no file left, no rows" "0 0" "$(live_files e) $(q "SELECT count(*) FROM l.e;")"
check "an empty insert with inlining on" q "CALL l.set_option('data_inlining_row_limit', 10);
    INSERT INTO l.e SELECT range, 'x' FROM range(10) WHERE range < 0;"
check_eq "writes no file" "0" "$(live_files e)"

finish

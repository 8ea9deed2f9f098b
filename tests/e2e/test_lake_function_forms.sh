#!/usr/bin/env bash
# tests/e2e/test_lake_function_forms.sh — DuckLake's functions reached through a lake's catalog.
#
# DuckLake puts a table macro for each of its functions in every schema of a lake, so
# `lake.snapshots()` is `ducklake_snapshots('lake')`, `lake.s.table_changes('t', a, b)` is
# `ducklake_table_changes('lake', 's', 't', a, b)`, and after `USE lake` the bare names work:
#   - lake.snapshots(), lake.table_info(), lake.options(), lake.current_snapshot(),
#     lake.last_committed_snapshot() read the same rows as the ducklake_ functions;
#   - CALL lake.set_option(…) and, after USE, CALL set_option(…) set options (schema/table scope too);
#   - lake.table_changes/insertions/deletions(table, start, end) read the feed of main, and
#     lake.s.table_changes(…) (or s.table_changes(…) after USE lake) that of schema s;
#   - the feed's bounds may be timestamps (first snapshot at or after the start, last at or
#     before the end), never NULL;
#   - CALL merge_adjacent_files() after USE merges the lake's files;
#   - without USE, a bare snapshots() is not a lake function (DuckDB refuses it).
#
# Run: `bash tests/e2e/test_lake_function_forms.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1" | grep .; }

q "CREATE SCHEMA l.s; CREATE TABLE l.t (i INTEGER); CREATE TABLE l.s.u (v VARCHAR);
INSERT INTO l.t VALUES (1), (2); INSERT INTO l.s.u VALUES ('a'); DELETE FROM l.t WHERE i = 1;" >/dev/null

check_eq "lake.snapshots() reads ducklake_snapshots" \
    "$(q "SELECT snapshot_id, schema_version, changes FROM ducklake_snapshots('l') ORDER BY ALL")" \
    "$(q "SELECT snapshot_id, schema_version, changes FROM l.snapshots() ORDER BY ALL")"
check_eq "lake.table_info() reads ducklake_table_info" \
    "$(q "SELECT * FROM ducklake_table_info('l') ORDER BY ALL")" \
    "$(q "SELECT * FROM l.table_info() ORDER BY ALL")"
check_eq "lake.current_snapshot() and last_committed_snapshot()" "6,6" \
    "$(q "SELECT c.id, x.id FROM l.current_snapshot() c, l.last_committed_snapshot() x" | tail -n 1)"

q "CALL l.set_option('parquet_row_group_size', 1000); CALL l.set_option('data_inlining_row_limit', 7, table_name => 't')" >/dev/null
check_eq "CALL lake.set_option, read by lake.options()" "option_name,value,scope,scope_entry
data_inlining_row_limit,7,TABLE,main.t
parquet_row_group_size,1000,GLOBAL," \
    "$(q "SELECT option_name, value, scope, scope_entry FROM l.options() WHERE option_name IN ('parquet_row_group_size', 'data_inlining_row_limit') ORDER BY ALL")"
q "USE l; CALL set_option('parquet_row_group_size', 2000, schema => 's')" >/dev/null
check_eq "CALL set_option after USE" "2000,SCHEMA,s" \
    "$(q "SELECT value, scope, scope_entry FROM l.options() WHERE option_name = 'parquet_row_group_size' AND scope = 'SCHEMA'" | tail -n 1)"
check_eq "snapshots() after USE" "$(q "SELECT count(*) FROM ducklake_snapshots('l')")" \
    "$(q "USE l; SELECT count(*) FROM snapshots()")"

check_eq "lake.table_changes(table, start, end) reads main" "i,change_type
1,delete
1,insert
2,insert" \
    "$(q "SELECT i, change_type FROM ducklake_table_changes('l', 'main', 't', 0, 6) ORDER BY ALL")"
check_eq "lake.table_changes is ducklake_table_changes" \
    "$(q "SELECT * FROM ducklake_table_changes('l', 'main', 't', 0, 6) ORDER BY ALL")" \
    "$(q "SELECT * FROM l.table_changes('t', 0, 6) ORDER BY ALL")"
check_eq "timestamps as feed bounds (the first snapshot at or after, the last at or before)" \
    "$(q "SELECT count(*) FROM l.table_changes('t', 0, 6)" | tail -n 1)" \
    "$(q "SELECT count(*) FROM l.table_changes('t', DATE '1970-01-01', now())" | tail -n 1)"
check_eq "a start timestamp after the first snapshots leaves them out" "1" \
    "$(q "SELECT count(*) FROM l.table_changes('t', (SELECT snapshot_time FROM ducklake_snapshots('l') WHERE snapshot_id = 6), now())" | tail -n 1)"
check_fails "a NULL bound is refused" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); SELECT * FROM l.table_changes('t', NULL, 6)\" </dev/null 2>/dev/null"
check_eq "lake.table_insertions and table_deletions" "2|1" \
    "$(q "SELECT (SELECT count(*) FROM l.table_insertions('t', 0, 6)), (SELECT count(*) FROM l.table_deletions('t', 0, 6))" | tail -n 1 | tr , '|')"
check_eq "lake.s.table_changes reads schema s" "a,insert" \
    "$(q "SELECT v, change_type FROM l.s.table_changes('u', 0, 6)" | tail -n 1)"
check_eq "s.table_changes after USE lake" "a,insert" \
    "$(q "USE l; SELECT v, change_type FROM s.table_changes('u', 0, 6)" | tail -n 1)"

q "INSERT INTO l.s.u SELECT 'x' || range FROM range(200); INSERT INTO l.s.u SELECT 'y' || range FROM range(200)" >/dev/null
files() { q "SELECT count(*) FROM __ducklake_metadata_l.ducklake_data_file WHERE end_snapshot IS NULL" | tail -n 1; }
before=$(files)
q "USE l; CALL merge_adjacent_files()" >/dev/null
check_eq "CALL merge_adjacent_files() after USE" "$((before - 1))" "$(files)"
check_eq "the merged table reads the same" "401" "$(q "SELECT count(*) FROM l.s.u" | tail -n 1)"

check_fails "a bare snapshots() without USE is DuckDB's (unknown)" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); SELECT * FROM snapshots()\" </dev/null 2>/dev/null"

finish

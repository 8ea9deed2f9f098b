#!/usr/bin/env bash
# tests/e2e/test_lake_list_files.sh — ducklake_list_files(catalog, table, schema =>,
# snapshot_version =>, snapshot_time =>) as DuckLake has it:
#   - the files of the table at the given snapshot (by id or by time), not the latest;
#   - a table that did not exist at that snapshot, an unknown table or schema fail
#     with DuckDB's "does not exist";
#   - snapshot_version and snapshot_time together are refused with DuckLake's error.
#
# Run: `bash tests/e2e/test_lake_list_files.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)

err() { lake_err "$d" "$1"; }
one() { lake_sql "$d" "$1" | sed -n 2p; }

# snapshot 1: the table; 2, 3: one Parquet file each (inlining off)
lake_sql "$d" "CREATE TABLE l.t (i INTEGER);
CALL ducklake_set_option('l', 'data_inlining_row_limit', 0);
INSERT INTO l.t VALUES (1); INSERT INTO l.t VALUES (2);" >/dev/null
v2=$(lake_catalog "$d" "SELECT min(begin_snapshot) FROM m.ducklake_data_file;" | sed -n 2p)
v3=$((v2 + 1))
t2=$(lake_catalog "$d" "SELECT snapshot_time FROM m.ducklake_snapshot WHERE snapshot_id = $v2;" | sed -n 2p)

check_eq "the latest snapshot: both files" "2" "$(one "SELECT count(*) FROM ducklake_list_files('l', 't');")"
check_eq "snapshot_version: the files then" "1" \
    "$(one "SELECT count(*) FROM ducklake_list_files('l', 't', snapshot_version => $v2);")"
check_eq "snapshot_time: the files of the last snapshot at or before it" "1" \
    "$(one "SELECT count(*) FROM ducklake_list_files('l', 't', snapshot_time => '$t2');")"
check_eq "snapshot_version of the last one" "2" \
    "$(one "SELECT count(*) FROM ducklake_list_files('l', 't', snapshot_version => $v3, schema => 'main');")"
check_eq "both bounds: DuckLake's error" \
    "Invalid Input Error: Either snapshot_version OR snapshot_time must be specified - not both" \
    "$(err "SELECT count(*) FROM ducklake_list_files('l', 't', snapshot_version => 2, snapshot_time => NOW());")"
check_eq "an unknown table" "Catalog Error: Table with name nope does not exist!" \
    "$(err "SELECT count(*) FROM ducklake_list_files('l', 'nope');")"
check_eq "an unknown schema" "Catalog Error: Table with name t does not exist!" \
    "$(err "SELECT count(*) FROM ducklake_list_files('l', 't', schema => 'nope');")"
lake_sql "$d" "CREATE TABLE l.late (i INTEGER);" >/dev/null
check_eq "a table made after the snapshot does not exist at it" \
    "Catalog Error: Table with name late does not exist!" \
    "$(err "SELECT count(*) FROM ducklake_list_files('l', 'late', snapshot_version => $v2);")"

finish

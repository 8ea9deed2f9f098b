#!/usr/bin/env bash
# test_lake_checkpoint.sh — CHECKPOINT of a lake (after USE, or named) runs
# DuckLake's maintenance in its order: inlined rows flushed to Parquet, small
# files merged, files no snapshot needs deleted (delete_older_than), orphan
# files removed; each step a snapshot of its own. Inside BEGIN … COMMIT it
# leaves the lake alone (DuckLake runs it outside the transaction) and the
# transaction commits as before.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
raw() { "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY); $1" 2>>"$d/err" | grep .; }
q() { lake_sql "$d" "$1" | grep .; }

lake_sql "$d" "CREATE TABLE l.t (a INTEGER);
INSERT INTO l.t VALUES (1), (2);
INSERT INTO l.t VALUES (3);
CALL ducklake_set_option('l', 'data_inlining_row_limit', 0);
INSERT INTO l.t VALUES (4);
INSERT INTO l.t VALUES (5);
CALL ducklake_set_option('l', 'delete_older_than', '1 millisecond');" >/dev/null
echo x >d/main/t/orphan.parquet
snap=$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;" | tail -n 1)
check "CHECKPOINT after USE" lake_sql "$d" "USE l; CHECKPOINT;"
check_eq "the inlined rows went to a file, then the files were merged" \
    "inline_flush:1
merge_adjacent:1" "$(raw "SELECT changes_made FROM raw.ducklake_snapshot_changes WHERE snapshot_id > $snap ORDER BY snapshot_id;" | tail -n +2)"
check_eq "one live data file holds every row" "1,5" \
    "$(raw "SELECT count(*), sum(record_count) FROM raw.ducklake_data_file WHERE end_snapshot IS NULL;" | tail -n 1)"
check_eq "the files it replaced and the orphan are deleted" "1" "$(find d/main/t -name '*.parquet' | wc -l)"
check_eq "the rows read as before" "1 2 3 4 5" "$(q "SELECT string_agg(a::VARCHAR, ' ' ORDER BY a) AS s FROM l.t;" | tail -n 1)"

snap=$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;" | tail -n 1)
check "CHECKPOINT l inside BEGIN … COMMIT" lake_sql "$d" "BEGIN; INSERT INTO l.t VALUES (6); CHECKPOINT l; COMMIT;"
check_eq "... leaves the lake alone: one snapshot, the insert's" "$((snap + 1)),inserted_into_table:1" \
    "$(raw "SELECT snapshot_id, changes_made FROM raw.ducklake_snapshot_changes WHERE snapshot_id > $snap;" | tail -n +2)"
check_eq "a CHECKPOINT of DuckDB's own database still works" "0" \
    "$(lake_sql "$d" "CHECKPOINT;" >/dev/null 2>&1; echo $?)"
finish

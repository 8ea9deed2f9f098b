#!/usr/bin/env bash
# test_lake_checkpoint.sh — CHECKPOINT of a lake (after USE, or named) runs
# DuckLake's maintenance in its order: inlined rows flushed to Parquet, small
# files merged, files no snapshot needs deleted (delete_older_than), orphan
# files removed; each step a snapshot of its own. Inside BEGIN … COMMIT the
# flush and the merges work on the committed rows as part of the
# transaction (DuckLake runs them beside it): committed inlined rows are
# flushed once however often it runs, the transaction's own rows stay its
# own, and a transaction that deleted inlined rows a CHECKPOINT flushed
# fails at COMMIT, as DuckLake's conflict check makes it.
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
check_eq "... with nothing committed to flush or merge: one snapshot, the insert's" "$((snap + 1)),inserted_into_table:1" \
    "$(raw "SELECT snapshot_id, changes_made FROM raw.ducklake_snapshot_changes WHERE snapshot_id > $snap;" | tail -n +2)"
check_eq "a CHECKPOINT of DuckDB's own database still works" "0" \
    "$(lake_sql "$d" "CHECKPOINT;" >/dev/null 2>&1; echo $?)"

# inside a transaction, with inlining: 10 rows in a file, 3 committed inline
e=$(mktempdir)
li() { (cd "$e" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 5); $1") </dev/null 2>>"$e/err"; }
liq() { li "$1" | grep .; }
li "CREATE TABLE l.t (i INTEGER); INSERT INTO l.t FROM range(10); INSERT INTO l.t FROM range(10, 13);" >/dev/null
check "BEGIN; CHECKPOINT; INSERT; CHECKPOINT; INSERT; COMMIT" \
    li "USE l; BEGIN; CHECKPOINT; INSERT INTO t FROM range(13, 16); CHECKPOINT; INSERT INTO t FROM range(17, 25); COMMIT;"
check_eq "... keeps every row once, the committed ones first, the new inlined ones last" \
    "0 1 2 3 4 5 6 7 8 9 10 11 12 17 18 19 20 21 22 23 24 13 14 15" \
    "$(liq "SELECT i FROM l.t;" | tail -n +2 | tr '\n' ' ' | sed 's/ $//')"
check_eq "... flushed the rows committed inline before it (three files, none inlined rows)" "3,0" \
    "$(cd "$e" && "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY); SELECT (SELECT count(*) FROM raw.ducklake_data_file WHERE end_snapshot IS NULL), (SELECT count(*) FROM raw.ducklake_inlined_data_1_1 WHERE i < 13);" 2>>"$e/err" | grep . | tail -n 1)"
li "INSERT INTO l.t FROM range(30, 33);" >/dev/null
check "a flush run twice in one transaction" \
    li "BEGIN; CALL ducklake_flush_inlined_data('l'); CALL ducklake_flush_inlined_data('l'); COMMIT;"
check_eq "... writes the inlined rows once" "27,27" \
    "$(liq "SELECT count(*), count(DISTINCT i) FROM l.t;" | tail -n 1)"
li "INSERT INTO l.t FROM range(40, 43);" >/dev/null
check_fails "DELETE of inlined rows, then CHECKPOINT: COMMIT fails on the conflict" \
    li "BEGIN; DELETE FROM l.t WHERE i >= 40 OR i < 3; CHECKPOINT l; INSERT INTO l.t VALUES (1); COMMIT;"
check_eq "... and commits nothing" "30,3" \
    "$(liq "SELECT count(*), count(*) FILTER (WHERE i >= 40) FROM l.t;" | tail -n 1)"
check_eq "... saying why" "1" "$(grep -c 'Transaction conflict.*CHECKPOINT flushed' "$e/err")"
finish

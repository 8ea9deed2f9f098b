#!/usr/bin/env bash
# test_lake_txn_maintain.sh — maintenance functions inside BEGIN … COMMIT:
# ducklake_flush_inlined_data and ducklake_merge_adjacent_files become part
# of the transaction's snapshot (one ducklake_snapshot row, their change
# tokens beside the transaction's others), the transaction reads the files
# they wrote (a flush with the sort order set earlier in it), its own new
# rows stay its own, ROLLBACK or a failed statement leaves nothing of them
# (catalog rows or files); they refuse to run on a table whose rows the
# transaction deleted, deleting rows they rewrote is refused until COMMIT,
# and dry_run is refused there.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
raw() { "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY); $1" 2>>"$d/err" | grep .; }
q() { lake_sql "$d" "$1" | grep .; }
files() { find d -name '*.parquet' | sort; }

lake_sql "$d" "CREATE TABLE l.t (i INTEGER);
INSERT INTO l.t VALUES (3), (1);
INSERT INTO l.t VALUES (2);
DELETE FROM l.t WHERE i = 1;" >/dev/null
snap=$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;" | tail -n 1)

before=$(files)
lake_sql "$d" "BEGIN; CALL ducklake_flush_inlined_data('l'); ROLLBACK;" >/dev/null
check_eq "a flush rolled back leaves no snapshot" "$snap" "$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;" | tail -n 1)"
check_eq "... no file" "$before" "$(files)"
check_eq "... and the inlined rows" "3" "$(raw "SELECT count(*) FROM raw.ducklake_inlined_data_1_1;" | tail -n 1)"

check_eq "the transaction reads the flushed file, written in the order set earlier in it" "2,true
3,true
3" "$(q "BEGIN; ALTER TABLE l.t SET SORTED BY (i);
CALL ducklake_flush_inlined_data('l');
SELECT i, filename LIKE '%.parquet' AS f FROM l.t ORDER BY i;
INSERT INTO l.t VALUES (0);
SELECT count(*) AS rows FROM l.t;
COMMIT;" | grep -A2 '^i,f$' | tail -n 2; q "SELECT count(*) FROM l.t;" | tail -n 1)"
check_eq "the file's rows in the sort order (the deleted one first)" "1 2 3" \
    "$("$TARN" sql --format csv -c "SELECT string_agg(i::VARCHAR, ' ') AS s FROM read_parquet('d/main/t/*.parquet', filename = true) WHERE filename NOT LIKE '%delete%';" | grep . | tail -n 1)"
check_eq "one snapshot: the sort order, the transaction's insert and the flush" \
    "altered_table:1,inlined_insert:1,inline_flush:1" \
    "$(raw "SELECT changes_made FROM raw.ducklake_snapshot_changes WHERE snapshot_id = $((snap + 1));" | tail -n 1 | tr -d '"')"
check_eq "the flushed file begins at its oldest row's snapshot, with its deleted row in a delete file" \
    "2,3,1" "$(raw "SELECT d.begin_snapshot, d.record_count, x.delete_count FROM raw.ducklake_data_file d JOIN raw.ducklake_delete_file x USING (data_file_id) WHERE d.end_snapshot IS NULL;" | tail -n 1)"
check_eq "the rows flushed leave the inlined table, the transaction's new row stays inlined" \
    "3,$((snap + 1)),0" "$(raw "SELECT row_id, begin_snapshot, i FROM raw.ducklake_inlined_data_1_1;" | tail -n 1)"
check_eq "all rows read after COMMIT" "0 2 3" "$(q "SELECT string_agg(i::VARCHAR, ' ' ORDER BY i) AS s FROM l.t;" | tail -n 1)"

lake_sql "$d" "BEGIN; DELETE FROM l.t WHERE i = 0; CALL ducklake_flush_inlined_data('l'); ROLLBACK;" >out 2>&1
grep -q "already deleted or updated its rows" "$d/err" && ok "a flush after a delete of the table's rows is refused" ||
    fail "a flush after a delete of the table's rows is refused" "$(cat "$d/err")"
: >"$d/err"
lake_sql "$d" "BEGIN; CALL ducklake_flush_inlined_data('l'); DELETE FROM l.t WHERE i = 0; ROLLBACK;" >out 2>&1
grep -q "rewritten by a maintenance function earlier in this transaction" "$d/err" &&
    ok "deleting rows a flush rewrote in the transaction is refused" ||
    fail "deleting rows a flush rewrote in the transaction is refused" "$(cat "$d/err")"
: >"$d/err"
lake_sql "$d" "BEGIN; CALL ducklake_flush_inlined_data('l', dry_run => true); ROLLBACK;" >out 2>&1
grep -q "dry_run => true cannot be used inside BEGIN" "$d/err" && ok "dry_run is refused inside BEGIN … COMMIT" ||
    fail "dry_run is refused inside BEGIN … COMMIT" "$(cat "$d/err")"

lake_sql "$d" "SET VARIABLE x = 1; CREATE TABLE l.m (i INTEGER);
CALL ducklake_set_option('l', 'data_inlining_row_limit', 0);
INSERT INTO l.m VALUES (1); INSERT INTO l.m VALUES (2); INSERT INTO l.m VALUES (3);" >/dev/null
snap=$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;" | tail -n 1)
check_eq "the transaction reads the merged file in place of the three" "3,6" \
    "$(q "BEGIN; CALL ducklake_merge_adjacent_files('l', 'm'); SELECT count(*) AS n, sum(i) AS s FROM l.m; COMMIT;" | tail -n 1)"
check_eq "... which is one live file after COMMIT" "1,3" \
    "$(raw "SELECT count(*), sum(record_count) FROM raw.ducklake_data_file WHERE table_id = (SELECT table_id FROM raw.ducklake_table WHERE table_name = 'm') AND end_snapshot IS NULL;" | tail -n 1)"
check_eq "... committed in one snapshot" "$((snap + 1)),merge_adjacent:3" \
    "$(raw "SELECT snapshot_id, changes_made FROM raw.ducklake_snapshot_changes ORDER BY snapshot_id DESC LIMIT 1;" | tail -n 1)"

lake_sql "$d" "INSERT INTO l.m VALUES (4);" >/dev/null
snap=$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;" | tail -n 1)
before=$(files)
lake_sql "$d" "BEGIN; CALL ducklake_merge_adjacent_files('l', 'm'); SELECT 1/0::INTEGER + 'x'; COMMIT;" >/dev/null 2>&1
check_eq "a failed statement after a merge inside BEGIN … COMMIT commits nothing" "$snap" \
    "$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;" | tail -n 1)"
check_eq "... and leaves no merged file" "$before" "$(files)"
check_eq "... the table reads as before" "4,10" "$(q "SELECT count(*) AS n, sum(i) AS s FROM l.m;" | tail -n 1)"
finish

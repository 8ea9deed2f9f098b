#!/usr/bin/env bash
# test_lake_merge.sh — MERGE INTO a lake table: WHEN MATCHED UPDATE / DELETE,
# WHEN NOT MATCHED INSERT, NOT MATCHED BY SOURCE, several actions in one
# statement, RETURNING, the count it reports; the catalog rows DuckLake
# writes for it (updated rows deleted and written again with their row ids,
# the new images inlined, the inserted rows in a Parquet file, one
# snapshot); a target row updated by two source rows fails as DuckLake fails
# it and changes nothing; and inside BEGIN … COMMIT a later failing
# statement leaves nothing of the MERGE committed.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
raw() { "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY); $1" 2>>"$d/err"; }
q() { lake_sql "$d" "$1" | tail -n +2 | grep .; }

lake_sql "$d" "CREATE TABLE l.stock (item INTEGER, balance INTEGER);
INSERT INTO l.stock VALUES (10, 2200), (20, 1900);" >/dev/null
check_eq "MERGE reports the rows it changed" "Count
2" "$(lake_sql "$d" "MERGE INTO l.stock AS s USING (VALUES (10, 1000), (30, 300)) AS b(item, volume) ON s.item = b.item
WHEN MATCHED THEN UPDATE SET balance = balance + b.volume
WHEN NOT MATCHED THEN INSERT VALUES (b.item, b.volume);")"
check_eq "updated rows keep their row ids, inserted rows take new ones" "0,10,3200
1,20,1900
2,30,300" "$(q "SELECT rowid, * FROM l.stock ORDER BY rowid;")"
check_eq "one snapshot: the new image inlined, the inserted row in a file, the old row ended" \
"3,inserted_into_table:1,inlined_insert:1,inlined_delete:1" \
    "$(raw "SELECT snapshot_id, changes_made FROM raw.ducklake_snapshot_changes WHERE snapshot_id = 3;" | tail -n +2 |
        sed 's/"//g')"
check_eq "the inserted row is a Parquet data file of one row" "1,1" \
    "$(raw "SELECT count(*), sum(record_count) FROM raw.ducklake_data_file WHERE table_id = 1 AND begin_snapshot = 3;" | tail -n +2)"
check_eq "the inlined rows: the old image ended at the MERGE, the new one begun" "0,10,2200,2,3
1,20,1900,2,
0,10,3200,3," "$(raw "SELECT row_id, item, balance, begin_snapshot, end_snapshot FROM raw.ducklake_inlined_data_1_1 ORDER BY begin_snapshot, row_id;" | tail -n +2)"

check_eq "DELETE, INSERT and NOT MATCHED BY SOURCE in one MERGE" "10,3200
20,0
40,4" "$(q "MERGE INTO l.stock USING (VALUES (30, 0), (40, 4)) AS b(item, v) ON stock.item = b.item
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED THEN INSERT (item, balance) VALUES (b.item, b.v)
WHEN NOT MATCHED BY SOURCE AND stock.item = 20 THEN UPDATE SET balance = 0;
SELECT * FROM l.stock ORDER BY item;" | tail -n 3)"

check_eq "RETURNING gives the rows with their action" "merge_action,item,balance
UPDATE,40,5" "$(lake_sql "$d" "MERGE INTO l.stock USING (SELECT 40 AS item) b USING (item) WHEN MATCHED THEN UPDATE SET balance = balance + 1 RETURNING merge_action, *;")"

before=$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;")
lake_sql "$d" "MERGE INTO l.stock USING (VALUES (10), (10)) AS b(item) ON stock.item = b.item WHEN MATCHED THEN UPDATE SET balance = 1;" >out 2>&1
grep -q "The same row was updated multiple times" "$d/err" && ok "a row updated by two source rows fails as in DuckLake" ||
    fail "a row updated by two source rows fails as in DuckLake" "$(cat "$d/err")"
check_eq "... and commits nothing" "$before" "$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;")"
check_eq "a row two source rows match may be deleted" "20,0
40,5" "$(q "MERGE INTO l.stock USING (VALUES (10), (10)) AS b(item) ON stock.item = b.item WHEN MATCHED THEN DELETE;
SELECT * FROM l.stock ORDER BY item;" | tail -n 2)"

check_eq "an UPDATE to the same values still rewrites the row (as DuckLake)" "1,20,0
3,40,5" "$(q "MERGE INTO l.stock USING (SELECT 20 AS item, 0 AS balance) b USING (item) WHEN MATCHED THEN UPDATE;
SELECT rowid, * FROM l.stock ORDER BY item;" | tail -n 2)"
check_eq "... in a snapshot of its own" "inlined_insert:1,inlined_delete:1" \
    "$(raw "SELECT changes_made FROM raw.ducklake_snapshot_changes ORDER BY snapshot_id DESC LIMIT 1;" | grep . | tail -n 1 | tr -d '"')"

check_eq "a source that reads the target itself" "20,0
40,5
41,5" "$(q "MERGE INTO l.stock USING (SELECT item + 1 AS item, balance FROM l.stock WHERE item = 40) b USING (item) WHEN NOT MATCHED THEN INSERT *;
SELECT * FROM l.stock ORDER BY item;" | tail -n 3)"

before=$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;")
lake_sql "$d" "BEGIN;
MERGE INTO l.stock USING (SELECT 50 AS item, 5 AS balance) b USING (item) WHEN NOT MATCHED THEN INSERT *;
SELECT 1/0::INTEGER + 'x';
COMMIT;" >/dev/null 2>&1
check_eq "a failed statement after a MERGE inside BEGIN … COMMIT commits nothing" "$before|20,0
40,5
41,5" "$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;")|$(q "SELECT * FROM l.stock ORDER BY item;")"
check_eq "no data file of the rolled-back MERGE is left" "" \
    "$(comm -13 <(raw "SELECT path FROM raw.ducklake_data_file;" | tail -n +2 | sort) <(cd d/main/stock && ls *.parquet | sort))"
finish

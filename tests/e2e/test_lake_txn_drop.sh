#!/usr/bin/env bash
# test_lake_txn_drop.sh — DROP TABLE of a table created or renamed earlier
# in the same transaction, as DuckLake commits it: a table created and
# dropped leaves no catalog rows, no change tokens and no files (they go at
# the DROP), and the other tables of the transaction stay; a table renamed
# and dropped keeps only its committed row, ended by the transaction, and
# the snapshot says dropped_table only. Renaming MY_TABLE to my_table (a
# change of case) is a rename, not a clash.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
raw() { "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY); $1" 2>>"$d/err" | grep .; }
q() { lake_sql "$d" "$1" | grep .; }

check_eq "a table created, filled and dropped in one transaction: its file goes at the DROP" "before,after
1,0" "$(lake_sql "$d" "CALL ducklake_set_option('l', 'data_inlining_row_limit', 0);
BEGIN;
CREATE TABLE l.t1 (x INTEGER);
CREATE TABLE l.t2 (y INTEGER);
INSERT INTO l.t1 VALUES (1);
INSERT INTO l.t2 VALUES (2);
CREATE TEMP TABLE n AS SELECT count(*) AS c FROM glob('d/main/t1/*.parquet');
DROP TABLE l.t1;
SELECT (SELECT c FROM n) AS before, count(*) AS after FROM glob('d/main/t1/*.parquet');
COMMIT;" | grep -A1 '^before')"
check_eq "... the other table of the transaction stays" "2" "$(q "SELECT * FROM l.t2;" | tail -n 1)"
check_eq "... reading the dropped one fails" "1" \
    "$(lake_sql "$d" "SELECT * FROM l.t1;" >/dev/null 2>&1; echo $?)"
check_eq "... no catalog row names it" "0" \
    "$(raw "SELECT (SELECT count(*) FROM raw.ducklake_table WHERE table_name = 't1') + (SELECT count(*) FROM raw.ducklake_column WHERE column_name = 'x') + (SELECT count(*) FROM raw.ducklake_data_file WHERE table_id NOT IN (SELECT table_id FROM raw.ducklake_table));" | tail -n 1)"
check_eq "... and the snapshot speaks only of the other" \
    'created_table:"main"."t2",inserted_into_table:1' \
    "$(raw "SELECT changes_made FROM raw.ducklake_snapshot_changes ORDER BY snapshot_id DESC LIMIT 1;" | tail -n 1 | sed 's/""/"/g; s/^"//; s/"$//')"
check_eq "... which takes the first id, as DuckLake numbers it" "1,1,2" \
    "$(raw "SELECT (SELECT table_id FROM raw.ducklake_table WHERE table_name = 't2'), (SELECT DISTINCT table_id FROM raw.ducklake_column WHERE column_name = 'y'), (SELECT next_catalog_id FROM raw.ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1);" | tail -n 1)"

lake_sql "$d" "CREATE TABLE l.r (i INTEGER); INSERT INTO l.r VALUES (1);" >/dev/null
id=$(raw "SELECT table_id FROM raw.ducklake_table WHERE table_name = 'r';" | tail -n 1)
lake_sql "$d" "BEGIN; ALTER TABLE l.r RENAME TO r2; DROP TABLE l.r2; COMMIT;" >/dev/null
snap=$(raw "SELECT max(snapshot_id) FROM raw.ducklake_snapshot;" | tail -n 1)
check_eq "a table renamed and dropped: only its committed row, ended by the transaction" "r,$snap" \
    "$(raw "SELECT table_name, end_snapshot FROM raw.ducklake_table WHERE table_id = $id;" | tail -n +2)"
check_eq "... the snapshot says it was dropped" "dropped_table:$id" \
    "$(raw "SELECT changes_made FROM raw.ducklake_snapshot_changes WHERE snapshot_id = $snap;" | tail -n 1)"
check_eq "... neither name reads" "1 1" \
    "$(lake_sql "$d" "SELECT * FROM l.r;" >/dev/null 2>&1; a=$?; lake_sql "$d" "SELECT * FROM l.r2;" >/dev/null 2>&1; echo "$a $?")"

check_eq "renaming MY_TABLE to my_table changes its case" "42" \
    "$(q "CREATE TABLE l.MY_TABLE (i INTEGER); INSERT INTO l.MY_TABLE VALUES (42);
ALTER TABLE l.MY_TABLE RENAME TO my_table; SELECT * FROM l.MY_TABLE;" | tail -n 1)"
check_eq "... the catalog keeps the new spelling" "my_table" \
    "$(raw "SELECT table_name FROM raw.ducklake_table WHERE lower(table_name) = 'my_table' AND end_snapshot IS NULL;" | tail -n 1)"
finish

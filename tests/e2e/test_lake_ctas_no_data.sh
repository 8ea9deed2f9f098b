#!/usr/bin/env bash
# test_lake_ctas_no_data.sh — `CREATE TABLE lake.t AS query WITH NO DATA`
# creates the table with the query's columns and no rows (no data file, no
# inlined row, no insert in the snapshot's changes); `WITH DATA` is the
# plain CTAS.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
RAW="ATTACH 'm.ducklake' AS raw (READ_ONLY);"
# last — the last non-empty line of its input
last() { sed '/^$/d' | tail -n 1; }
lake_sql "$d" "CREATE TABLE l.src (a INTEGER, b VARCHAR, c DECIMAL(9,2));
    INSERT INTO l.src VALUES (1, 'x', 1.5), (2, 'y', 2.5);" >/dev/null
check "CTAS … WITH NO DATA runs" lake_sql "$d" \
    "CREATE TABLE l.empty AS SELECT * FROM l.src WITH NO DATA"
check_eq "the table has the query's columns" "a,INTEGER
b,VARCHAR
c,\"DECIMAL(9,2)\"" "$(lake_sql "$d" "SELECT column_name, data_type FROM information_schema.columns
    WHERE table_name = 'empty' ORDER BY ordinal_position" | sed '/^$/d' | tail -n +2)"
check_eq "and no rows" "0" "$(lake_sql "$d" "SELECT count(*) FROM l.empty" | last)"
check_eq "its snapshot only creates it" '"created_table:""main"".""empty"""' \
    "$(cd "$d" && tarn sql --format csv "$RAW SELECT changes_made FROM raw.ducklake_snapshot_changes
        ORDER BY snapshot_id DESC LIMIT 1" | last)"
check "CTAS … WITH DATA runs" lake_sql "$d" \
    "CREATE TABLE l.full AS SELECT a, b FROM l.src WITH DATA"
check_eq "and copies the rows" "1,x
2,y" "$(lake_sql "$d" "SELECT * FROM l.full ORDER BY a" | sed '/^$/d' | tail -n +2)"
check "a table named data still works" lake_sql "$d" "CREATE TABLE l.t2 AS SELECT 1 AS data"
check_eq "(its row is there)" "1" "$(lake_sql "$d" "SELECT data FROM l.t2" | last)"
finish

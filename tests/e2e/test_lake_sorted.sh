#!/usr/bin/env bash
# test_lake_sorted.sh — sorted tables (ALTER TABLE … SET / RESET SORTED BY):
# the ducklake_sort_info / ducklake_sort_expression rows DuckLake writes
# (keys rendered as DuckDB renders them, ASC|DESC, NULLS_FIRST|NULLS_LAST,
# a transaction's last order only, a rename rewriting the keys under a new
# sort id, no schema-version row), and the order rows are written in: inlined
# inserts and Parquet inserts, the sort_on_insert option, flushes of inlined
# rows and compactions (with the latest order, over an older layout's names),
# RESET, and the refusals (unknown column, dropping a sort column).
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
raw() { "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY); $1" 2>>"$d/err"; }
# the values of column $2 of table $1's live Parquet files, in file order
file_order() {
    local files
    files=$(raw "SELECT '''d/main/$1/' || path || '''' AS f FROM raw.ducklake_data_file WHERE end_snapshot IS NULL AND table_id = (SELECT table_id FROM raw.ducklake_table WHERE table_name = '$1' AND end_snapshot IS NULL) ORDER BY data_file_id;" | tail -n +2 | grep . | paste -sd,)
    raw "SELECT string_agg($2::VARCHAR, ' ' ORDER BY list_position([$files], filename), file_row_number) AS v FROM read_parquet([$files], filename = true, file_row_number = true);" | sed -n 2p
}

lake_sql "$d" "CREATE TABLE l.t (i INTEGER, s VARCHAR);
ALTER TABLE l.t SET SORTED BY (i DESC);
ALTER TABLE l.t SET SORTED BY (concat(s,'x') ASC NULLS FIRST, (i+0));" >/dev/null
check_eq "the keys as DuckDB renders them, direction and null order" \
"sort_id,table_id,sort_key_index,expression,dialect,sort_direction,null_order
3,1,0,\"concat(s, 'x')\",duckdb,ASC,NULLS_FIRST
3,1,1,(i + 0),duckdb,ASC,NULLS_LAST" "$(raw "SELECT * FROM raw.ducklake_sort_expression WHERE sort_id = 3 ORDER BY ALL;")"
check_eq "each SET ends the last order and begins one" "sort_id,begin_snapshot,end_snapshot
2,2,3
3,3," "$(raw "SELECT sort_id, begin_snapshot, end_snapshot FROM raw.ducklake_sort_info ORDER BY ALL;")"
check_eq "an order is a table change without a schema version" "changes_made,n
altered_table:1,1" "$(raw "SELECT changes_made, (SELECT count(*) FROM raw.ducklake_schema_versions WHERE table_id = 1) AS n FROM raw.ducklake_snapshot_changes WHERE snapshot_id = 3;")"

lake_sql "$d" "BEGIN; ALTER TABLE l.t SET SORTED BY (s); ALTER TABLE l.t SET SORTED BY (i DESC NULLS LAST); COMMIT;" >/dev/null
check_eq "a transaction writes its last order only (each SET took an id)" "sort_id,expression,sort_direction,next_catalog_id
5,i,DESC,6" "$(raw "SELECT i.sort_id, expression, sort_direction, (SELECT max(next_catalog_id) FROM raw.ducklake_snapshot) AS next_catalog_id FROM raw.ducklake_sort_info i JOIN raw.ducklake_sort_expression USING (sort_id) WHERE i.end_snapshot IS NULL;")"
lake_sql "$d" "ALTER TABLE l.t SET SORTED BY (i DESC NULLS LAST);" >/dev/null
check_eq "setting the stored order again writes no rows" "n
3" "$(raw "SELECT count(*) AS n FROM raw.ducklake_sort_info;")"

lake_sql "$d" "INSERT INTO l.t VALUES (3, 'c'), (1, 'a'), (5, 'e'), (2, 'b');" >/dev/null
check_eq "inlined rows take row ids in sort order" "rowid,i
0,5
1,3
2,2
3,1" "$(lake_sql "$d" "SELECT rowid, i FROM l.t ORDER BY rowid;")"
lake_sql "$d" "INSERT INTO l.t SELECT (i * 7) % 20, 'x' FROM range(20) r(i);" >/dev/null
check_eq "a Parquet insert is written in sort order" \
"19 18 17 16 15 14 13 12 11 10 9 8 7 6 5 4 3 2 1 0" "$(file_order t i)"

lake_sql "$d" "CALL ducklake_flush_inlined_data('l', table_name => 't');" >/dev/null
check_eq "a flush writes the inlined rows in sort order, keeping their row ids" "rowid,i
0,5
1,3
2,2
3,1" "$(lake_sql "$d" "SELECT rowid, i FROM l.t WHERE rowid < 4 ORDER BY rowid;")"

lake_sql "$d" "ALTER TABLE l.t SET SORTED BY (s ASC, i ASC);
ALTER TABLE l.t RENAME COLUMN s TO label;" >/dev/null
check_eq "a rename rewrites the keys under a new sort id" "sort_id,expression
8,\"\"\"label\"\"\"
8,i" "$(raw "SELECT e.sort_id, expression FROM raw.ducklake_sort_info i JOIN raw.ducklake_sort_expression e USING (sort_id) WHERE i.end_snapshot IS NULL ORDER BY sort_key_index;")"
check_fails "a sort column cannot be dropped" lake_sql "$d" "ALTER TABLE l.t DROP COLUMN label;"
check "… and says why" grep -q 'Cannot drop column "label" - the table is sorted by this column' "$d/err"
check_fails "a key naming no column is refused" lake_sql "$d" "ALTER TABLE l.t SET SORTED BY (nope + 1, i, zip);"
check "… naming the columns" grep -q 'Unmatched columns were: nope, zip' "$d/err"

lake_sql "$d" "CALL ducklake_merge_adjacent_files('l', 't');" >/dev/null
check_eq "a compaction sorts by the latest order (label, then i: a b c e, then the x rows)" \
"1 2 3 5 $(seq -s ' ' 0 19)" "$(file_order t i)"
check_eq "… its files read with the names of their layout" "n
24" "$(lake_sql "$d" "SELECT count(*) AS n FROM l.t WHERE label IS NOT NULL;")"

lake_sql "$d" "ALTER TABLE l.t RESET SORTED BY; INSERT INTO l.t VALUES (9, 'q'), (8, 'p');" >/dev/null
check_eq "RESET ends the order, and inserts keep their order" "i
9
8" "$(lake_sql "$d" "SELECT i FROM l.t WHERE label IN ('p', 'q') ORDER BY rowid;")"
check_eq "… no live sort row" "n
0" "$(raw "SELECT count(*) AS n FROM raw.ducklake_sort_info WHERE end_snapshot IS NULL;")"

# sort_on_insert = false: inlined rows keep their order, Parquet rows are
# sorted while inlining is on, and nothing is sorted with inlining off
lake_sql "$d" "CALL ducklake_set_option('l', 'sort_on_insert', 'false');
CREATE TABLE l.o (i INTEGER); ALTER TABLE l.o SET SORTED BY (i);
INSERT INTO l.o VALUES (3), (1), (2);
INSERT INTO l.o SELECT 30 - i FROM range(12) r(i);
CREATE TABLE l.n (i INTEGER); ALTER TABLE l.n SET SORTED BY (i);
CALL ducklake_set_option('l', 'data_inlining_row_limit', '0', table_name => 'n');
INSERT INTO l.n VALUES (3), (1), (2);" >/dev/null
check_eq "sort_on_insert false: inlined rows as inserted" "i
3
1
2" "$(lake_sql "$d" "SELECT i FROM l.o WHERE i < 10 ORDER BY rowid;")"
check_eq "… rows that go to Parquet sorted" "19 20 21 22 23 24 25 26 27 28 29 30" "$(file_order o i)"
check_eq "… and with inlining off, unsorted" "3 1 2" "$(file_order n i)"

v=$(mktempdir)
check_eq "SET SORTED BY inside a transaction under enable_verification" "i
1
2" "$(cd "$v" && "$TARN" sql --format csv "PRAGMA enable_verification; ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); BEGIN; CREATE TABLE l.v (i INTEGER); ALTER TABLE l.v SET SORTED BY (i); INSERT INTO l.v VALUES (2), (1); COMMIT; SELECT i FROM l.v ORDER BY rowid;" 2>>"$d/err" | tail -4 | grep -v "^$")"

finish

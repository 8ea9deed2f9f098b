#!/usr/bin/env bash
# test_lake_virtual_columns.sh — DuckLake's virtual columns of a lake table:
# snapshot_id (the snapshot that inserted the row; NULL for rows of the open
# transaction), filename / file_row_number / file_index (the row's source:
# data file, inlined table or the transaction's inlined rows), rowid with
# DuckLake's transaction-local ids (10^18 + n) for rows not committed yet;
# none of them in `*`; a real column of the same name wins; the deletions
# and insertions feeds carry rowid and snapshot_id; table_changes' `*` still
# shows its own snapshot_id and rowid columns, and so do other sources'
# columns of those names.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
rows() { sed '/^$/d' | tail -n +2; }
q() { lake_sql "$d" "$1" | rows; }
# ql SQL — the rows of the last result only
ql() { lake_sql "$d" "$1" | awk 'BEGIN { RS = "" } { last = $0 } END { print last }' | tail -n +2; }

lake_sql "$d" "CREATE TABLE l.t (i INTEGER); INSERT INTO l.t VALUES (1); INSERT INTO l.t VALUES (2);
    INSERT INTO l.t SELECT 10 + x FROM range(20) r(x);" >/dev/null
check_eq "snapshot_id is the inserting snapshot" "2,1
3,2
4,10
4,29" "$(q "SELECT snapshot_id, i FROM l.t WHERE i IN (1, 2, 10, 29) ORDER BY i")"
check_eq "a filter on it" "2" "$(q "SELECT i FROM l.t WHERE snapshot_id = 3")"
check_eq "* shows the table's columns only" "snapshot_id,i
2,1" "$(lake_sql "$d" "SELECT snapshot_id, * FROM l.t WHERE i = 1" | sed '/^$/d')"
check_eq "filename, file_row_number and file_index of a data file row" "1,5,0" \
    "$(q "SELECT count(DISTINCT filename) FILTER (WHERE filename LIKE '%/d/main/t/ducklake-%.parquet'),
        max(file_row_number) FILTER (WHERE i = 15), max(file_index) FILTER (WHERE i > 9) FROM l.t")"
check_eq "and of an inlined row (its inlined table, listed after the files)" "ducklake_inlined_data_1_1,1,1" \
    "$(q "SELECT filename, file_row_number, file_index FROM l.t WHERE i = 2")"
check_eq "inside a transaction: new rows have no snapshot yet and local row ids" \
    "1000000000000000000,,100,__ducklake_inlined_transaction_local_data,0
1000000000000000001,,101,__ducklake_inlined_transaction_local_data,1" \
    "$(ql "BEGIN; INSERT INTO l.t VALUES (100), (101);
        SELECT rowid, snapshot_id, i, filename, file_row_number FROM l.t WHERE i >= 100 ORDER BY i; ROLLBACK")"
check_eq "committed, they get the table's row ids" "22,100
23,101" "$(ql "INSERT INTO l.t VALUES (100), (101); SELECT rowid, i FROM l.t WHERE i >= 100 ORDER BY i")"
check_eq "a real column named snapshot_id wins" "7,1" \
    "$(ql "CREATE TABLE l.r (snapshot_id INTEGER, i INTEGER); INSERT INTO l.r VALUES (7, 1);
        SELECT snapshot_id, i FROM l.r")"
lake_sql "$d" "DELETE FROM l.t WHERE i = 2" >/dev/null
check_eq "the deletions feed carries rowid and snapshot_id" "1,8,2" \
    "$(q "SELECT rowid, snapshot_id, * FROM ducklake_table_deletions('l', 'main', 't', 8, 8)")"
check_eq "table_changes' * keeps its own snapshot_id and rowid" "snapshot_id,rowid,change_type,i
8,1,delete,2" "$(lake_sql "$d" "SELECT * FROM ducklake_table_changes('l', 'main', 't', 8, 8) WHERE rowid >= 0" | sed '/^$/d')"
lake_sql "$d" "COPY (SELECT 1 AS a) TO 'x.parquet'" >/dev/null
check_eq "a filename column of read_parquet stays in its *" "filename,a,filename_1
x.parquet,1,x.parquet" "$(lake_sql "$d" "SELECT filename, * FROM read_parquet('x.parquet', filename = true)" |
    sed '/^$/d')"
check_eq "and ducklake_snapshots' snapshot_id in its *" "snapshot_id,snapshot_id_1" \
    "$(lake_sql "$d" "SELECT snapshot_id, * FROM ducklake_snapshots('l') LIMIT 1" | sed '/^$/d' | head -n 1 | cut -d, -f1-2)"
finish

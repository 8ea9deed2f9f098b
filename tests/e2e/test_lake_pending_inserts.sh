#!/usr/bin/env bash
# test_lake_pending_inserts.sh — where a statement's inlined rows wait for
# their commit. An autocommit INSERT's rows go from the insert stage
# straight to the catalog; inside BEGIN … COMMIT they wait in a pending
# table per lake table until COMMIT. Every way out of the stage must keep
# them: a second table's insert (a new stage), a read of the table, an
# ALTER, a DELETE or UPDATE of the new rows, a failed statement after them,
# ROLLBACK, and the DuckDB-file catalog must hold exactly the rows and row
# ids DuckLake writes.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
# an INSERT's or UPDATE's "Count" and its number are left out
q() { lake_sql "$d" "$1" | grep . | awk '$0 == "Count" { skip = 1; next } skip { skip = 0; next } 1'; }
raw() { "$TARN" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY); $1" 2>>"$d/err" | grep .; }

q "CREATE TABLE l.a (i INTEGER, s VARCHAR); CREATE TABLE l.b (j INTEGER);" >/dev/null

check_eq "autocommit INSERTs: rows, row ids and one snapshot each" "i,s,rowid
1,x,0
2,y,1
3,z,2" "$(q "INSERT INTO l.a VALUES (1, 'x'); INSERT INTO l.a VALUES (2, 'y');
INSERT INTO l.a VALUES (3, 'z'); SELECT i, s, rowid FROM l.a ORDER BY i;")"
check_eq "... written to the inlined-data table with their snapshots" "0,3,1
1,4,2
2,5,3" "$(raw "SELECT row_id, begin_snapshot, i FROM raw.ducklake_inlined_data_1_1 ORDER BY row_id;" | tail -n +2)"
check_eq "... and no scratch table is left in the session" "0" \
    "$(q "INSERT INTO l.a VALUES (4, 'w'); SELECT count(*) AS n FROM duckdb_tables() WHERE database_name = 'temp';" | tail -n 1)"

check_eq "two tables in one transaction keep their own rows" "a,b
5,50" "$(q "BEGIN; INSERT INTO l.a VALUES (5, 'v'); INSERT INTO l.b VALUES (50);
SELECT (SELECT max(i) FROM l.a) AS a, (SELECT max(j) FROM l.b) AS b; COMMIT;")"
check_eq "... committed as one snapshot, a's and b's rows in their tables" "5,50,1" \
    "$(q "SELECT (SELECT count(*) FROM l.a), (SELECT sum(j) FROM l.b), (SELECT count(*) FROM l.b);" | tail -n 1)"

check_eq "rows inserted then updated and deleted in the transaction" "i,s
1,x
2,y
3,z
4,w
5,v
60,t" "$(q "BEGIN; INSERT INTO l.a VALUES (6, 't'); INSERT INTO l.a VALUES (7, 'u');
UPDATE l.a SET i = 60 WHERE i = 6; DELETE FROM l.a WHERE i = 7; COMMIT;
SELECT i, s FROM l.a ORDER BY i;")"

check_eq "an INSERT then ALTER ADD COLUMN in one transaction" "i,s,k
5,v,
60,t,
8,r,1" "$(q "BEGIN; INSERT INTO l.a VALUES (8, 'r'); ALTER TABLE l.a ADD COLUMN k INTEGER;
UPDATE l.a SET k = 1 WHERE i = 8; COMMIT; SELECT i, s, k FROM l.a WHERE i >= 5 ORDER BY rowid;")"

check_eq "a failed statement after an INSERT: COMMIT keeps nothing" "7" \
    "$(q "BEGIN; INSERT INTO l.a VALUES (9, 'q', 2); INSERT INTO l.a VALUES ('not a number', 'p', 3);
COMMIT;" >/dev/null 2>&1; q "SELECT count(*) FROM l.a;" | tail -n 1)"
check_eq "ROLLBACK drops the pending rows" "7,0" \
    "$(q "BEGIN; INSERT INTO l.a VALUES (10, 'o', 4); ROLLBACK;
SELECT (SELECT count(*) FROM l.a), (SELECT count(*) FROM duckdb_tables() WHERE database_name = 'temp');" | tail -n 1)"
check_eq "a failing autocommit INSERT commits nothing and leaves no table" "7,0" \
    "$(q "INSERT INTO l.a VALUES (11, 'n', 'bad');" >/dev/null 2>&1
       q "SELECT (SELECT count(*) FROM l.a), (SELECT count(*) FROM duckdb_tables() WHERE database_name = 'temp');" | tail -n 1)"
check_eq "row ids stay dense and the table's next_row_id follows them" "0,6,7,7" \
    "$(q "SELECT min(rowid), max(rowid), count(*) FROM l.a;" | tail -n 1),$(raw "SELECT next_row_id FROM raw.ducklake_table_stats WHERE table_id = 1;" | tail -n 1)"
finish

#!/usr/bin/env bash
# tests/e2e/test_lake_txn_ids.sh — catalog ids and row ids a transaction
# commits, as DuckLake numbers them (at commit, not statement time):
#   - a transaction creating four tables and views gets the ids DuckLake's
#     transaction-local maps give (view v_orders, items, customers, orders),
#     in every catalog table and in the inlined-data table names; the lake
#     reads the same in this process, in a new one, and at every snapshot;
#   - rows a transaction inserts and then deletes or updates leave no gap in
#     the row ids (DuckLake numbers surviving rows in append order);
#   - a later write to a renumbered table lands in the right inlined table.
#
# Run: `bash tests/e2e/test_lake_txn_ids.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');"
META="ATTACH 'meta.ducklake' AS m (READ_ONLY);"

# q SQL — tarn sql --format csv in the lake folder; prints stdout, fails the
# test run on a non-zero exit.
q() {
    (cd "$d" && "$TARN" sql --format csv "$1") </dev/null 2>"$d/err"
}

# qn SQL — the same without the header line (one result).
qn() {
    q "$1" | tail -n +2 | sed '/^$/d'
}

q "$ATTACH CREATE TABLE lake.seed (x INTEGER);" >/dev/null
q "$ATTACH BEGIN;
CREATE TABLE lake.orders (id INTEGER, customer INTEGER);
INSERT INTO lake.orders VALUES (1, 10), (2, 20);
CREATE TABLE lake.customers (id INTEGER, name VARCHAR);
INSERT INTO lake.customers VALUES (10, 'ann'), (20, 'bob');
ALTER TABLE lake.customers ADD COLUMN tier VARCHAR DEFAULT 'basic';
CREATE TABLE lake.items AS SELECT range::INTEGER AS id FROM range(50);
CREATE VIEW lake.v_orders AS SELECT o.id, c.name FROM lake.orders o JOIN lake.customers c ON c.id = o.customer;
COMMIT;" >/dev/null
check_eq "the transaction committed" "" "$(cat "$d/err")"

check_eq "tables numbered in DuckLake's commit order" "$(printf 'items,3\ncustomers,4\norders,5')" \
    "$(qn "$META SELECT table_name, table_id FROM m.ducklake_table WHERE begin_snapshot = 2 ORDER BY table_id;")"
check_eq "the view took the first id" "v_orders,2" \
    "$(qn "$META SELECT view_name, view_id FROM m.ducklake_view;")"
check_eq "columns follow their tables" "$(printf '3,1\n4,3\n5,2')" \
    "$(qn "$META SELECT table_id, count(*) FROM m.ducklake_column WHERE begin_snapshot = 2 GROUP BY ALL ORDER BY 1;")"
check_eq "inlined-data tables renamed with the ids" \
    "$(printf '3,ducklake_inlined_data_3_2\n4,ducklake_inlined_data_4_2\n5,ducklake_inlined_data_5_2')" \
    "$(qn "$META SELECT table_id, table_name FROM m.ducklake_inlined_data_tables WHERE table_id > 1 ORDER BY ALL;")"
check_eq "the data file belongs to items" "3,50" \
    "$(qn "$META SELECT table_id, record_count FROM m.ducklake_data_file;")"
check_eq "stats rows follow their tables" "$(printf '3,50,50\n4,2,2\n5,2,2')" \
    "$(qn "$META SELECT table_id, record_count, next_row_id FROM m.ducklake_table_stats WHERE table_id > 1 ORDER BY 1;")"
check_eq "changes_made names the final ids" \
    "tables_created=[main.orders, main.customers, main.items], views_created=[main.v_orders], tables_altered=[4], tables_inserted_into=[3], inlined_insert=[4, 5]" \
    "$(qn "$ATTACH SELECT replace(replace(changes::VARCHAR, '{', ''), '}', '') FROM ducklake_snapshots('lake') WHERE snapshot_id = 2;" | tr -d '"')"

READ="SELECT * FROM lake.v_orders ORDER BY id; SELECT * FROM lake.customers ORDER BY id; SELECT count(*), sum(id) FROM lake.items;"
want=$(printf 'id,name\n1,ann\n2,bob\n\nid,name,tier\n10,ann,basic\n20,bob,basic\n\ncount_star(),sum(id)\n50,1225')
check_eq "a new process reads the renumbered tables" "$want" "$(q "$ATTACH $READ")"
check_eq "and at that snapshot" "$(printf 'id,name\n1,ann\n2,bob')" \
    "$(q "$ATTACH SELECT o.id, c.name FROM lake.orders AT (VERSION => 2) o JOIN lake.customers AT (VERSION => 2) c ON c.id = o.customer ORDER BY 1;")"
q "$ATTACH SELECT * FROM lake.orders AT (VERSION => 1);" >/dev/null
check_eq "before it the tables do not exist" "1" "$(grep -c 'does not exist' "$d/err")"

# the same process: the session's catalog after a renumbering commit
want2=$(printf 'id,name\n1,ann\n2,bob\n3,bob')
check_eq "the committing process reads on and writes on" "$want2" \
    "$(q "$ATTACH BEGIN; CREATE TABLE lake.a (i INTEGER); CREATE TABLE lake.b (i INTEGER); COMMIT;
INSERT INTO lake.orders VALUES (3, 20); SELECT * FROM lake.v_orders ORDER BY id;" | tail -n +4)"
check_eq "the later insert went to the renumbered inlined table" "3,20" \
    "$(qn "$META SELECT id, customer FROM m.ducklake_inlined_data_5_2 WHERE begin_snapshot = 4;")"

# row ids: insert 1,2,3; delete 2; update 1 -> 10 (delete + append)
q "$ATTACH BEGIN; INSERT INTO lake.seed VALUES (1), (2), (3); DELETE FROM lake.seed WHERE x = 2;
UPDATE lake.seed SET x = 10 WHERE x = 1; COMMIT;" >/dev/null
check_eq "surviving rows numbered densely in append order" "$(printf 'rowid,x\n0,3\n1,10')" \
    "$(q "$ATTACH SELECT rowid, x FROM lake.seed ORDER BY rowid;")"
check_eq "next_row_id counts only them" "2,2" \
    "$(qn "$META SELECT record_count, next_row_id FROM m.ducklake_table_stats WHERE table_id = 1;")"
q "$ATTACH INSERT INTO lake.seed VALUES (4);" >/dev/null
check_eq "the next insert continues from there" "$(printf 'rowid,x\n0,3\n1,10\n2,4')" \
    "$(q "$ATTACH SELECT rowid, x FROM lake.seed ORDER BY rowid;")"

# reads inside BEGIN … COMMIT see each statement's changes (only the views a
# statement changed are rebuilt after it) and, after COMMIT, the committed state
q "$ATTACH CREATE TABLE lake.big AS SELECT range::INTEGER AS i FROM range(100);" >/dev/null
got=$(q "$ATTACH BEGIN;
DELETE FROM lake.big WHERE i < 10;
SELECT count(*) AS n FROM lake.big;
CREATE OR REPLACE TABLE lake.customers AS SELECT 1 AS only;
SELECT * FROM lake.customers;
DROP TABLE lake.items;
SELECT count(*) AS seeds FROM lake.seed;
COMMIT;
SELECT count(*) AS n FROM lake.big;
SELECT * FROM lake.customers;")
want=$(printf 'Count\n10\n\nn\n90\n\nCount\n1\n\nonly\n1\n\nseeds\n3\n\nn\n90\n\nonly\n1')
check_eq "reads inside a transaction follow its statements" "$want" "$got"
q "$ATTACH SELECT * FROM lake.items;" >/dev/null
check_eq "a table dropped in the transaction is gone after it" "1" "$(grep -c 'does not exist' "$d/err")"

# three schemas and a table in each, in one transaction: ids and the
# changes_made order follow DuckLake's hash maps (expected orders taken from
# libstdc++'s unordered_map with DuckDB's case-insensitive hash)
q "$ATTACH BEGIN; CREATE SCHEMA lake.sales; CREATE SCHEMA lake.hr; CREATE SCHEMA lake.ops;
CREATE TABLE lake.ops.t (i INTEGER); CREATE TABLE lake.sales.t (i INTEGER);
CREATE TABLE lake.hr.t (i INTEGER); COMMIT;" >/dev/null
snap=$(qn "$META SELECT max(snapshot_id) FROM m.ducklake_snapshot;")
check_eq "new schemas numbered in DuckLake's order" "ops hr sales" \
    "$(qn "$META SELECT schema_name FROM m.ducklake_schema WHERE begin_snapshot = $snap ORDER BY schema_id;" | paste -sd' ')"
check_eq "their tables too" "hr sales ops" \
    "$(qn "$META SELECT s.schema_name FROM m.ducklake_table t JOIN m.ducklake_schema s USING (schema_id) WHERE t.begin_snapshot = $snap ORDER BY t.table_id;" | paste -sd' ')"
check_eq "changes_made lists them in DuckLake's order" \
    'created_schema:"sales",created_schema:"hr",created_schema:"ops",created_table:"ops"."t",created_table:"sales"."t",created_table:"hr"."t"' \
    "$(qn "$META SELECT changes_made FROM m.ducklake_snapshot_changes WHERE snapshot_id = $snap;" | sed 's/^"//; s/"$//; s/""/"/g')"

# files: DuckLake numbers them at commit, table by table in table order (a
# table with only new inlined rows takes a number too), and gives a table's
# new files row ids before its new inlined rows
q "$ATTACH CREATE TABLE lake.f1 (i INTEGER); CREATE TABLE lake.f2 (i INTEGER);" >/dev/null
q "$ATTACH BEGIN; INSERT INTO lake.f1 VALUES (1), (2), (3); INSERT INTO lake.f1 SELECT range FROM range(100, 150); COMMIT;
BEGIN; INSERT INTO lake.f2 SELECT range FROM range(20); INSERT INTO lake.f1 SELECT range FROM range(200, 220); COMMIT;
BEGIN; INSERT INTO lake.f1 VALUES (7); INSERT INTO lake.f2 SELECT range FROM range(30); COMMIT;" >/dev/null
F1=$(qn "$META SELECT table_id FROM m.ducklake_table WHERE table_name = 'f1' AND end_snapshot IS NULL;")
F2=$(qn "$META SELECT table_id FROM m.ducklake_table WHERE table_name = 'f2' AND end_snapshot IS NULL;")
B=$(qn "$META SELECT min(data_file_id) FROM m.ducklake_data_file WHERE table_id IN ($F1, $F2);")
check_eq "file ids and row ranges as DuckLake gives them" \
    "$(printf 'f1,0,0,50\nf1,1,53,20\nf2,2,0,20\nf2,4,20,30')" \
    "$(qn "$META SELECT CASE table_id WHEN $F1 THEN 'f1' ELSE 'f2' END, data_file_id - $B, row_id_start, record_count FROM m.ducklake_data_file WHERE table_id IN ($F1, $F2) ORDER BY data_file_id;")"
check_eq "inlined rows after the files' rows" "$(printf '50,1\n51,2\n52,3\n73,7')" \
    "$(qn "$ATTACH SELECT rowid, i FROM lake.f1 WHERE i < 10 ORDER BY rowid;")"
check_eq "next_file_id counts the inlined-only table's number" "5" \
    "$(qn "$META SELECT next_file_id - $B FROM m.ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1;")"

# ROLLBACK brings back exactly the views the transaction changed
got=$(q "$ATTACH BEGIN;
DROP TABLE lake.big;
CREATE TABLE lake.fresh (i INTEGER);
INSERT INTO lake.seed VALUES (99);
ALTER TABLE lake.orders RENAME TO orders2;
ROLLBACK;
SELECT count(*) AS n FROM lake.big;
SELECT count(*) AS seeds FROM lake.seed;
SELECT count(*) AS orders FROM lake.orders;")
check_eq "after ROLLBACK the committed tables read as before" \
    "$(printf 'n\n90\n\nseeds\n3\n\norders\n3')" "$(printf '%s' "$got" | sed -n '/^n$/,$p')"
q "$ATTACH BEGIN; CREATE TABLE lake.fresh (i INTEGER); ROLLBACK; SELECT * FROM lake.fresh;" >/dev/null
check_eq "and a table it created is gone" "1" "$(grep -c 'does not exist' "$d/err")"

finish

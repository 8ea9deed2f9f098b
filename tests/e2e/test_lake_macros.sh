#!/usr/bin/env bash
# tests/e2e/test_lake_macros.sh — CREATE MACRO / DROP MACRO in a lake, kept
# in the catalog as DuckLake keeps them:
#   - scalar and table macros, typed parameters, defaults and several
#     implementations give DuckLake's ducklake_macro, ducklake_macro_impl and
#     ducklake_macro_parameters rows, and work in queries;
#   - they survive a new process (re-attach), and SNAPSHOT_VERSION sees a
#     macro dropped later; DROP ends the ducklake_macro row;
#   - a transaction numbers its macros after its tables (at commit), and a
#     macro created and dropped in one transaction leaves nothing;
#   - DROP SCHEMA refuses a schema with macros unless CASCADE; duplicate
#     names fail with DuckDB's message;
#   - ducklake_snapshots() names them (and tables) quoted where DuckLake does.
#
# Run: `bash tests/e2e/test_lake_macros.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/'); USE lake;"
META="ATTACH 'meta.ducklake' AS m (READ_ONLY);"

q() {
    (cd "$d" && "$TARN" sql --format csv "$1") </dev/null 2>"$d/err"
}

qn() {
    q "$1" | tail -n +2 | sed '/^$/d'
}

q "$ATTACH CREATE MACRO add_def(a, b := 5) AS a + b;
CREATE MACRO typed(x INTEGER, y BIGINT := 1) AS x + y;
CREATE MACRO greet(who := 'it''s me') AS 'hi ' || who;
CREATE MACRO multi () AS 0, (a) AS a, (a, b) AS a + b;
CREATE TABLE t (id INTEGER, name VARCHAR);
INSERT INTO t VALUES (1, 'ann'), (5, 'bob'), (7, 'cy');
CREATE MACRO pick(lo, nm) AS TABLE SELECT * FROM t WHERE id >= lo OR name = nm;" >/dev/null
check_eq "the macros were created" "" "$(cat "$d/err")"

check_eq "ducklake_macro rows" "$(printf '0,1,add_def,1,\n0,2,typed,2,\n0,3,greet,3,\n0,4,multi,4,\n0,6,pick,7,')" \
    "$(qn "$META FROM m.ducklake_macro ORDER BY macro_id;")"
check_eq "ducklake_macro_impl rows" \
    "$(printf "1,0,duckdb,(a + b),scalar\n2,0,duckdb,(x + y),scalar\n3,0,duckdb,('hi ' || who),scalar\n4,0,duckdb,0,scalar\n4,1,duckdb,a,scalar\n4,2,duckdb,(a + b),scalar\n6,0,duckdb,\"SELECT * FROM t WHERE ((id >= lo) OR (\"\"name\"\" = nm))\",table")" \
    "$(qn "$META FROM m.ducklake_macro_impl ORDER BY macro_id, impl_id;")"
check_eq "ducklake_macro_parameters rows" \
    "$(printf "1,0,0,a,unknown,NULL,unknown\n1,0,1,b,unknown,5,int32\n2,0,0,x,int32,NULL,unknown\n2,0,1,y,int64,1,int32\n3,0,0,who,unknown,it's me,varchar\n4,1,0,a,unknown,NULL,unknown\n4,2,0,a,unknown,NULL,unknown\n4,2,1,b,unknown,NULL,unknown\n6,0,0,lo,unknown,NULL,unknown\n6,0,1,nm,unknown,NULL,unknown")" \
    "$(qn "$META FROM m.ducklake_macro_parameters ORDER BY ALL;")"
check_eq "changes_made names the macros" \
    "$(printf 'created_scalar_macro:"main"."add_def"\ncreated_table_macro:"main"."pick"')" \
    "$(qn "$META SELECT changes_made FROM m.ducklake_snapshot_changes WHERE snapshot_id IN (1, 7) ORDER BY snapshot_id;" | tr -d "'" | sed 's/""/"/g; s/^"//; s/"$//')"

CALLS="SELECT add_def(1), add_def(1, 2), typed(2), greet(), multi(), multi(4), multi(4, 5);
SELECT id FROM pick(6, 'ann') ORDER BY id;"
want="$(printf 'add_def(1),\"add_def(1, 2)\",typed(2),greet(),multi(),multi(4),\"multi(4, 5)\"\n6,3,3,hi it'"'"'s me,0,4,9\n\nid\n1\n7')"
check_eq "the macros work where they were made" "$want" "$(q "$ATTACH $CALLS")"
check_eq "and in a new process, read back from the catalog" "$want" "$(q "$ATTACH $CALLS")"

q "$ATTACH CREATE MACRO add_def(a) AS a;" >/dev/null
check_eq "a duplicate name fails with DuckDB's message" \
    'Catalog Error: Macro Function with name "add_def" already exists!' \
    "$(sed 's/^tarn: statement [0-9]* (line [0-9]*): //' "$d/err")"

q "$ATTACH DROP MACRO add_def; DROP MACRO TABLE pick;" >/dev/null
check_eq "DROP ends the ducklake_macro rows" "$(printf '1,8\n6,9')" \
    "$(qn "$META SELECT macro_id, end_snapshot FROM m.ducklake_macro WHERE end_snapshot IS NOT NULL ORDER BY 1;")"
check_eq "a drop is a change" "$(printf 'dropped_scalar_macro:1\ndropped_table_macro:6')" \
    "$(qn "$META SELECT changes_made FROM m.ducklake_snapshot_changes WHERE snapshot_id IN (8, 9) ORDER BY snapshot_id;")"
q "$ATTACH SELECT add_def(1);" >/dev/null
check_eq "a dropped macro is gone" "1" "$(grep -c 'does not exist' "$d/err")"
check_eq "SNAPSHOT_VERSION sees it as it was" "$(printf 'add_def(1)\n6')" \
    "$(q "ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/', SNAPSHOT_VERSION 7); USE lake; SELECT add_def(1);")"

q "$ATTACH BEGIN; CREATE MACRO gone(a) AS a; SELECT gone(3); DROP MACRO gone; COMMIT;" >/dev/null
check_eq "created and dropped in one transaction: no snapshot" "9" \
    "$(qn "$META SELECT max(snapshot_id) FROM m.ducklake_snapshot;")"

q "$ATTACH BEGIN; CREATE SCHEMA s; CREATE MACRO s.mm(a) AS a * 2; CREATE TABLE s.st (i INTEGER); COMMIT;" >/dev/null
check_eq "the macro is numbered after the transaction's schema and table" "$(printf 's,7\nst,8\nmm,9,7')" \
    "$(qn "$META SELECT schema_name, schema_id FROM m.ducklake_schema WHERE schema_name = 's';
SELECT table_name, table_id FROM m.ducklake_table WHERE table_name = 'st';
SELECT macro_name, macro_id, schema_id FROM m.ducklake_macro WHERE macro_name = 'mm';" | grep -v _)"
check_eq "a macro in a schema works" "$(printf 's.mm(4)\n8')" "$(q "$ATTACH SELECT s.mm(4);")"

q "$ATTACH DROP SCHEMA s;" >/dev/null
check_eq "DROP SCHEMA refuses a schema with a macro" "1" \
    "$(grep -c 'macro function "mm" depends on schema "s"' "$d/err")"
q "$ATTACH DROP SCHEMA s CASCADE;" >/dev/null
check_eq "CASCADE drops the macro too" "11" \
    "$(qn "$META SELECT end_snapshot FROM m.ducklake_macro WHERE macro_name = 'mm';")"

q "$ATTACH CREATE MACRO simple(a) AS a; CREATE SCHEMA \"My S\"; CREATE TABLE \"My S\".\"select\" (i INTEGER);" >/dev/null
check_eq "ducklake_snapshots() quotes keywords and odd names as DuckLake does, not schemas" \
    "$(printf '%s\n' "{scalar_macros_created=['main.\"simple\"']}" "{schemas_created=[My S]}" "{tables_created=['\"My S\".\"select\"']}")" \
    "$(q "$ATTACH SELECT changes::VARCHAR AS c FROM ducklake_snapshots('lake') WHERE snapshot_id > 11 ORDER BY snapshot_id;" | tail -n +2 | sed '/^$/d; s/^"//; s/"$//; s/""/"/g')"

finish

#!/usr/bin/env bash
# tests/e2e/test_lake_struct_evolution.sh — ALTER TABLE … ALTER COLUMN … SET DATA TYPE from one
# STRUCT (or list of structs, or map with struct values) to another, as DuckLake evolves it: fields
# are matched by name; a new field gets a new column id and a nullable ducklake_column row; a field
# left out has its rows ended (its children's too); a field whose type widens keeps its id and gets
# a new row; a field that comes back after a drop is a new column (its old values stay hidden).
# Rows written before a change read with NULL for the fields added after them, at every snapshot;
# a narrowing change of a field and a change of kind (struct to list) are refused and change
# nothing. Files and inlined rows both.
#
# Run: `bash tests/e2e/test_lake_struct_evolution.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1"; }
catalog() { lake_catalog "$d" "$1"; }
table_id() { lake_table_id "$d" "$1"; }
# the live column rows: id, name, type, parent, nulls_allowed
live() { catalog "SELECT column_id, column_name, column_type, parent_column, nulls_allowed
                  FROM m.ducklake_column WHERE table_id = $1 AND end_snapshot IS NULL
                  ORDER BY column_id;" | sed "/^$/d"; }
snap() { catalog "SELECT max(snapshot_id) FROM m.ducklake_snapshot;" | sed -n 2p; }

check "a struct table, one row in a file and one inlined" q "CREATE TABLE l.t (s STRUCT(i INTEGER,
    j TINYINT)); CALL l.set_option('data_inlining_row_limit', 0);
    INSERT INTO l.t VALUES ({'i': 1, 'j': 2});
    CALL l.set_option('data_inlining_row_limit', 10);
    INSERT INTO l.t VALUES ({'i': 3, 'j': 4});"
T=$(table_id t)
S0=$(snap)
check "add a field" q "ALTER TABLE l.t ALTER COLUMN s SET DATA TYPE STRUCT(i INTEGER, j TINYINT,
                                                                           k VARCHAR);"
check_eq "the new field's row" "column_id,column_name,column_type,parent_column,nulls_allowed
1,s,struct,,true
2,i,int32,1,true
3,j,int8,1,true
4,k,varchar,1,true" "$(live "$T")"
check "insert with the new field" q "INSERT INTO l.t VALUES ({'i': 5, 'j': 6, 'k': 'x'});"
check_eq "older rows read with NULL for it" "s
\"{'i': 1, 'j': 2, 'k': NULL}\"
\"{'i': 3, 'j': 4, 'k': NULL}\"
\"{'i': 5, 'j': 6, 'k': x}\"" "$(q "SELECT s FROM l.t ORDER BY s.i;")"
check_eq "before the change, the old type" "s
\"{'i': 1, 'j': 2}\"
\"{'i': 3, 'j': 4}\"" "$(q "SELECT s FROM l.t AT (VERSION => $S0) ORDER BY s.i;")"

check "widen a field" q "ALTER TABLE l.t ALTER COLUMN s SET DATA TYPE STRUCT(i INTEGER, j INTEGER,
                                                                              k VARCHAR);"
check_eq "the widened field keeps its id in a new row" "3,int32,1,false" "$(catalog "SELECT
    column_id, column_type, parent_column, nulls_allowed FROM m.ducklake_column
    WHERE table_id = $T AND column_name = 'j' AND end_snapshot IS NULL;" | sed -n 2p)"
check_eq "its old row ended" "int8" "$(catalog "SELECT string_agg(column_type, ',') FROM
    m.ducklake_column WHERE table_id = $T AND column_id = 3 AND end_snapshot IS NOT NULL;" |
    sed -n 2p)"
check "a value the old type could not hold" q "INSERT INTO l.t VALUES ({'i': 7, 'j': 1000,
                                                                         'k': NULL});"

check "drop a field" q "ALTER TABLE l.t ALTER COLUMN s SET DATA TYPE STRUCT(j INTEGER, k VARCHAR);"
check_eq "the dropped field's row ended" "column_id,column_name,column_type,parent_column,nulls_allowed
1,s,struct,,true
3,j,int32,1,false
4,k,varchar,1,true" "$(live "$T")"
check "and bring it back" q "ALTER TABLE l.t ALTER COLUMN s SET DATA TYPE STRUCT(j INTEGER,
                                                                               k VARCHAR, i BIGINT);"
check_eq "it comes back as a new column" "5,i,int64,1,true" "$(live "$T" | tail -n 1)"
check_eq "the old values stay hidden" "s
\"{'j': 2, 'k': NULL, 'i': NULL}\"
\"{'j': 4, 'k': NULL, 'i': NULL}\"
\"{'j': 6, 'k': x, 'i': NULL}\"
\"{'j': 1000, 'k': NULL, 'i': NULL}\"" "$(q "SELECT s FROM l.t ORDER BY s.j;")"

check_fails "a narrowing field change" q "ALTER TABLE l.t ALTER COLUMN s SET DATA TYPE
                                           STRUCT(j TINYINT, k VARCHAR, i BIGINT);"
grep -q 'Cannot change type of column j from INTEGER to TINYINT - only widening' "$d/err" &&
    ok "its message" || fail "its message" "$(cat "$d/err")"
check_fails "a change of kind" q "ALTER TABLE l.t ALTER COLUMN s SET DATA TYPE INTEGER[];"
: >"$d/err"
check_eq "the refused changes changed nothing" "4" "$(live "$T" | tail -n +2 | wc -l)"

# structs inside lists and maps
check "a list of structs and a map of structs" q "CREATE TABLE l.n (
    ls STRUCT(a INTEGER)[], mp MAP(INTEGER, STRUCT(a INTEGER)));
    INSERT INTO l.n VALUES ([{'a': 1}], MAP {1: {'a': 2}});
    ALTER TABLE l.n ALTER COLUMN ls SET DATA TYPE STRUCT(a INTEGER, b VARCHAR)[];
    ALTER TABLE l.n ALTER COLUMN mp SET DATA TYPE MAP(INTEGER, STRUCT(a BIGINT, c INTEGER));
    INSERT INTO l.n VALUES ([{'a': 3, 'b': 'y'}], MAP {2: {'a': 4, 'c': 5}});"
N=$(table_id n)
check_eq "their rows" "column_id,column_name,column_type,parent_column,nulls_allowed
1,ls,list,,true
2,element,struct,1,true
3,a,int32,2,true
4,mp,map,,true
5,key,int32,4,true
6,value,struct,4,true
7,a,int64,6,false
8,b,varchar,2,true
9,c,int32,6,true" "$(live "$N")"
check_eq "their values" "ls,mp
\"[{'a': 1, 'b': NULL}]\",\"{1={'a': 2, 'c': NULL}}\"
\"[{'a': 3, 'b': y}]\",\"{2={'a': 4, 'c': 5}}\"" "$(q "SELECT ls, mp FROM l.n ORDER BY ls[1].a;")"

check_eq "no errors on stderr" "" "$(cat "$d/err")"
finish

#!/usr/bin/env bash
# tests/e2e/test_lake_delete_inlining.sh — whether deletions from a committed data file are inlined
# is decided per DELETE statement, as in DuckLake: a statement removing up to the inlining limit of
# a file's rows adds them to the file's inlined deletions, even when several such statements of one
# transaction remove more than the limit together; a statement removing more writes a delete file.
# A rolled-back transaction leaves neither. Reads see the rows gone in both cases.
#
# Run: `bash tests/e2e/test_lake_delete_inlining.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1" | sed 1d; }
catalog() { lake_catalog "$d" "$1" | sed 1d; }
delete_files() { catalog "SELECT count(*) FROM m.ducklake_delete_file WHERE table_id = $1;"; }
inlined() { catalog "SELECT count(*) FROM m.ducklake_inlined_delete_$1;"; }

check "two tables of 50 rows in a file" q "CREATE TABLE l.a AS SELECT range x FROM range(50);
    CREATE TABLE l.b AS SELECT range x FROM range(50);"
A=$(lake_table_id "$d" a)
B=$(lake_table_id "$d" b)
check "a rolled-back delete" q "BEGIN; DELETE FROM l.a WHERE x < 5; ROLLBACK;"
check_eq "leaves nothing" "50 0" "$(q "SELECT count(*) FROM l.a;") $(delete_files "$A")"
check "three deletes of five rows in one transaction" q "BEGIN; DELETE FROM l.a WHERE x < 5;
    DELETE FROM l.a WHERE x < 10; DELETE FROM l.a WHERE x < 15; COMMIT;"
check_eq "all fifteen inlined, no delete file" "15 0" "$(inlined "$A") $(delete_files "$A")"
check_eq "a reads 35 rows" "35 15" "$(q "SELECT count(*) || ' ' || min(x) FROM l.a;")"
check "one delete of fifteen rows" q "BEGIN; DELETE FROM l.b WHERE x < 15; COMMIT;"
check_eq "a delete file" "1" "$(delete_files "$B")"
check_eq "b reads 35 rows" "35 15" "$(q "SELECT count(*) || ' ' || min(x) FROM l.b;")"

finish

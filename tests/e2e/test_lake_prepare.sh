#!/usr/bin/env bash
# tests/e2e/test_lake_prepare.sh — PREPARE / EXECUTE / DEALLOCATE with a lake attached:
#   - a prepared query whose ducklake_table_insertions() call takes parameters ($1, $2)
#     runs with each EXECUTE's values, also values that are expressions (getvariable());
#   - a prepared query reads the lake as it is when EXECUTEd, not when PREPAREd;
#   - a prepared INSERT into a lake table writes through tarn (one snapshot per EXECUTE);
#   - ? and $name parameters; EXECUTE prints rows for a query, a count for an INSERT;
#   - too few values fail with DuckDB's error; DEALLOCATE forgets the statement;
#   - without a lake, DuckDB prepares the statement and EXECUTE prints its rows.
#
# Run: `bash tests/e2e/test_lake_prepare.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)

err() { lake_err "$d" "$1"; }
body() { lake_sql "$d" "$1" | sed '/^$/d'; }

lake_sql "$d" "CREATE TABLE l.t (i INTEGER); INSERT INTO l.t VALUES (1); INSERT INTO l.t VALUES (2);
INSERT INTO l.t VALUES (3);" >/dev/null
s1=$(lake_catalog "$d" "SELECT min(snapshot_id) FROM m.ducklake_snapshot_changes WHERE changes_made LIKE '%insert%';" | sed -n 2p)
PREP="PREPARE ti AS SELECT rowid, i FROM ducklake_table_insertions('l', 'main', 't', \$1, \$2) ORDER BY ALL;"

check_eq "EXECUTE puts its values in place of \$1, \$2" "$(printf 'rowid,i\n0,1\n1,2')" \
    "$(body "$PREP EXECUTE ti(0, $((s1 + 1)));")"
check_eq "... each EXECUTE its own" "$(printf 'rowid,i\n1,2\n2,3\nrowid,i\n2,3')" \
    "$(body "$PREP EXECUTE ti($((s1 + 1)), $((s1 + 2))); EXECUTE ti($((s1 + 2)), $((s1 + 2)));")"
check_eq "values may be expressions" "$(printf 'rowid,i\n0,1')" \
    "$(body "SET VARIABLE a = $s1; $PREP EXECUTE ti(0, getvariable('a'));")"
check_eq "too few values: DuckDB's error" "Invalid Input Error: Expected 2 parameters, but none were supplied" \
    "$(err "$PREP EXECUTE ti;")"

check_eq "a prepared query reads the lake as it is when executed" "$(printf 'n\n3\nCount\n1\nn\n4')" \
    "$(body "PREPARE c AS SELECT count(*) AS n FROM l.t; EXECUTE c; INSERT INTO l.t VALUES (4); EXECUTE c;")"

n0=$(lake_catalog "$d" "SELECT count(*) FROM m.ducklake_snapshot;" | sed -n 2p)
out=$(body "PREPARE ins AS INSERT INTO l.t VALUES (?), (?); EXECUTE ins(10, 11);
PREPARE ins2 AS INSERT INTO l.t VALUES (\$v); EXECUTE ins2(v := 12);")
check_eq "a prepared INSERT writes the lake table and prints its count" "$(printf 'Count\n2\nCount\n1')" "$out"
check_eq "... one snapshot per EXECUTE" "$((n0 + 2))" \
    "$(lake_catalog "$d" "SELECT count(*) FROM m.ducklake_snapshot;" | sed -n 2p)"
check_eq "... the rows are in the table" "$(printf 'i\n10\n11\n12')" \
    "$(body "SELECT i FROM l.t WHERE i >= 10 ORDER BY i;")"

check_eq "DEALLOCATE forgets it" "1" \
    "$(: >"$d/err"; lake_sql "$d" "PREPARE c AS SELECT 1; DEALLOCATE c; EXECUTE c;" >/dev/null; grep -c 'Prepared statement "c" does not exist\|not found\|does not exist' "$d/err")"

plain=$(cd "$d" && "$TARN" sql --format csv "PREPARE p AS SELECT 40 + \$1 AS x; EXECUTE p(2);" </dev/null 2>&1 | sed '/^$/d')
check_eq "without a lake DuckDB prepares it, and EXECUTE prints its rows" "$(printf 'x\n42')" "$plain"

finish

#!/usr/bin/env bash
# tests/e2e/test_lake_at_clause.sh — AT (VERSION => n) where the table follows FROM, JOIN or ','.
#
# An AT clause belongs to the table before it: `SELECT count(*) FROM t AT (VERSION => 1)` after
# USE reads t at snapshot 1 (the keyword FROM before t is not a table), also inside UNION branches,
# joins and with an alias; a bad version is still an error naming it.
#
# Run: `bash tests/e2e/test_lake_at_clause.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
last() { lake_sql "$d" "$1" | grep . | tail -n 1; }

lake_sql "$d" "CREATE TABLE l.t (i INTEGER); INSERT INTO l.t VALUES (1); INSERT INTO l.t VALUES (2), (3)" >/dev/null
check_eq "count(*) FROM t AT (VERSION => 2) after USE" "1" \
    "$(last "USE l; SELECT count(*) FROM t AT (VERSION => 2)")"
check_eq "in UNION branches" "a,1|b,3" \
    "$(lake_sql "$d" "USE l; SELECT * FROM (SELECT 'a' AS v, count(*) FROM t AT (VERSION => 2) UNION SELECT 'b', count(*) FROM t AT (VERSION => 3)) ORDER BY v" | grep -E '^[ab],' | paste -sd'|')"
check_eq "in a join, with an alias" "1" \
    "$(last "USE l; SELECT count(*) FROM t AS now JOIN t old AT (VERSION => 2) ON now.i = old.i")"
check_eq "after ',' and qualified" "3" \
    "$(last "SELECT count(*) FROM l.t x AT (VERSION => 2), l.t y AT (VERSION => 3)")"
check_fails "a version that does not exist is an error" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); USE l; SELECT count(*) FROM t AT (VERSION => 99)\" </dev/null 2>/dev/null"

finish

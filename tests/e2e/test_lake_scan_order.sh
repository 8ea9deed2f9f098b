#!/usr/bin/env bash
# tests/e2e/test_lake_scan_order.sh — the order in which an inlined table's rows reach
# DuckDB, which shows in results that have no ORDER BY:
#   - SELECT * gives the rows in row id order, also after an UPDATE ended some;
#   - a window function with PARTITION BY (also inside a table macro) returns its rows
#     in the order DuckDB returns them over a plain table holding the same rows.
#
# Run: `bash tests/e2e/test_lake_scan_order.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
body() { lake_sql "$d" "SET threads = 1; $1" | tail -n +2 | sed '/^$/d'; }

ROWS="(1, 1.0), (2, 2.0), (3, 3.0), (4, 10.0)"
lake_sql "$d" "CREATE TABLE l.tbl (id INTEGER, val REAL); INSERT INTO l.tbl VALUES $ROWS;
USE l; CREATE MACRO mp() AS TABLE (SELECT avg(val) OVER (PARTITION BY id) AS a FROM tbl);" >/dev/null
plain=$(cd "$d" && "$TARN" sql --format csv "SET threads = 1; CREATE TABLE m (id INTEGER, val REAL);
INSERT INTO m VALUES $ROWS; SELECT avg(val) OVER (PARTITION BY id) AS a FROM m;" </dev/null | tail -n +5 | sed '/^$/d')
check_eq "DuckDB's order over a plain table (the reference)" "4" "$(printf '%s\n' "$plain" | wc -l | tr -d ' ')"
check_eq "a window over the lake table returns that order" "$plain" \
    "$(body "SELECT avg(val) OVER (PARTITION BY id) AS a FROM l.tbl;")"
check_eq "... also inside a table macro" "$plain" "$(body "USE l; FROM mp();")"
check_eq "SELECT * reads the rows in row id order" "$(printf '1\n2\n3\n4')" "$(body "SELECT id FROM l.tbl;")"
lake_sql "$d" "UPDATE l.tbl SET val = val + 1 WHERE id = 2;" >/dev/null
check_eq "... also after an UPDATE ended a row" "$(printf '1\n2\n3\n4')" "$(body "SELECT id FROM l.tbl;")"

finish

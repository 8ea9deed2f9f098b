#!/usr/bin/env bash
# tests/e2e/test_lake_use_names.sh — two-part names after `USE lake`, as DuckDB reads them:
#   - `s.t` is table t of the lake's schema s;
#   - `memory.t` (another attached database, not a schema of the lake) is that database's table:
#     created, written and read there, and the lake gets no schema or table from it;
#   - once the lake has a schema of that name too, DuckDB's ambiguity error names both.
#
# Run: `bash tests/e2e/test_lake_use_names.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
run() { (cd "$d" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); USE l; $1") </dev/null 2>"$d/err" | grep .; }
run "CREATE SCHEMA s; CREATE TABLE s.t (a INT); INSERT INTO s.t VALUES (1)" >/dev/null
check_eq "s.t after USE l is the lake's schema s" "a
1" "$(run "SELECT * FROM s.t")"
check_eq "memory.m after USE l is a table of the in-memory database" "x
5" "$(run "CREATE TABLE memory.m (x INT); INSERT INTO memory.m VALUES (5); SELECT * FROM memory.m" | tail -n 2)"
check_eq "... and nothing of the lake" "s,t" \
    "$(run "SELECT table_schema, table_name FROM information_schema.tables WHERE table_catalog = 'l'" | tail -n +2)"
run "CREATE SCHEMA memory; CREATE TABLE memory.m (x INT); SELECT * FROM memory.m" >/dev/null
contains_text() { case $3 in *"$2"*) ok "$1" ;; *) fail "$1" "missing: $2" "in: $3" ;; esac; }
contains_text "with a lake schema of the same name, DuckDB's ambiguity error" \
    'Ambiguous reference to catalog or schema "memory"' "$(cat "$d/err")"

finish

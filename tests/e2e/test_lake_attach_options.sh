#!/usr/bin/env bash
# tests/e2e/test_lake_attach_options.sh — DuckLake's ATTACH options beyond the basic ones.
#
#   - a DATA_PATH other than the stored one is refused ("does not match existing data path"),
#     unless OVERRIDE_DATA_PATH true: then this session reads and writes files there, and the
#     stored data path stays;
#   - CREATE_IF_NOT_EXISTS false refuses to create a missing lake (and creates nothing), true or
#     absent creates it, false attaches an existing one;
#   - META_TYPE 'duckdb' is accepted, another kind is refused by name;
#   - ATTACH OR REPLACE replaces an attached lake of the same name (the old tables are gone);
#     without OR REPLACE the name is taken;
#   - a table whose data file is missing does not stop ATTACH: the other tables read, reading it
#     fails naming the file, and DROP TABLE works.
#
# Run: `bash tests/e2e/test_lake_attach_options.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
run() { (cd "$d" && "$TARN" sql --format csv "$1") </dev/null 2>"$d/err" | grep .; }
last() { run "$1" | tail -n 1; }

run "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); CREATE TABLE l.t (i INTEGER); INSERT INTO l.t SELECT range FROM range(100); CALL ducklake_flush_inlined_data('l')" >/dev/null
check_fails "another DATA_PATH is refused" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'e/')\" </dev/null 2>'$d/err2'"
grep -q 'does not match existing data path' "$d/err2" && ok "  saying it does not match" || fail "  saying it does not match" "$(cat "$d/err2")"
mkdir -p "$d/e"
cp -r "$d/d/main" "$d/e/"
check_eq "OVERRIDE_DATA_PATH true reads the files there" "100" \
    "$(last "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'e/', OVERRIDE_DATA_PATH true); SELECT count(*) FROM l.t")"
run "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'e/', OVERRIDE_DATA_PATH true); INSERT INTO l.t SELECT range FROM range(50)" >/dev/null
check_eq "and writes new files there (not under d/)" "2,1" \
    "$(find "$d/e" -name '*.parquet' | wc -l | tr -d ' '),$(find "$d/d" -name '*.parquet' | wc -l | tr -d ' ')"
check_eq "the stored data path stays" "d/" \
    "$(last "ATTACH 'm.ducklake' AS m (READ_ONLY); SELECT value FROM m.ducklake_metadata WHERE \"key\" = 'data_path'")"

check_fails "CREATE_IF_NOT_EXISTS false refuses a missing lake" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:new.ducklake' AS n (CREATE_IF_NOT_EXISTS false)\" </dev/null 2>/dev/null"
[ ! -e "$d/new.ducklake" ] && ok "  and creates nothing" || fail "  and creates nothing" "new.ducklake exists"
check_eq "CREATE_IF_NOT_EXISTS true creates it" "0" \
    "$(last "ATTACH 'ducklake:new.ducklake' AS n (CREATE_IF_NOT_EXISTS true); SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'n'")"
check "CREATE_IF_NOT_EXISTS false attaches an existing lake" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:new.ducklake' AS n (CREATE_IF_NOT_EXISTS false)\" </dev/null >/dev/null 2>&1"

check "META_TYPE 'duckdb'" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:new.ducklake' AS n (META_TYPE 'DUCKDB')\" </dev/null >/dev/null 2>&1"
check_fails "META_TYPE 'sqlitex' is refused" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:other.ducklake' AS n (META_TYPE 'SQLITEX')\" </dev/null 2>'$d/err3'"
grep -q "sqlitex" "$d/err3" && ok "  naming it" || fail "  naming it" "$(cat "$d/err3")"

check_fails "the same name twice without OR REPLACE" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); ATTACH 'ducklake:new.ducklake' AS l\" </dev/null 2>/dev/null"
check_eq "ATTACH OR REPLACE replaces the lake" "0|1" \
    "$(run "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); USE l; ATTACH OR REPLACE 'ducklake:new.ducklake' AS l; SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'l'; CREATE TABLE l.x (i INTEGER); SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'l'" | grep -E '^[0-9]+$' | paste -sd'|')"

# ---- a missing file breaks its table only ------------------------------------------------------
b=$(mktempdir)
(cd "$b" && "$TARN" sql "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); CREATE TABLE l.a (i INTEGER); CREATE TABLE l.b (s VARCHAR); INSERT INTO l.a SELECT range FROM range(100); INSERT INTO l.b VALUES ('x'); CALL ducklake_flush_inlined_data('l')") >/dev/null 2>&1
f=$(find "$b/d/main/a" -name '*.parquet' | head -n 1)
rm -f "$f"
check_eq "with a file of a missing, b reads" "x" \
    "$( (cd "$b" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); SELECT s FROM l.b") </dev/null 2>/dev/null | grep . | tail -n 1)"
check_fails "reading a fails" \
    bash -c "cd '$b' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); SELECT * FROM l.a\" </dev/null 2>'$b/err'"
grep -qF "$(basename "$f")" "$b/err" && ok "  naming the file" || fail "  naming the file" "$(cat "$b/err")"
check "DESCRIBE of the broken table works" \
    bash -c "cd '$b' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); DESCRIBE l.a\" </dev/null >/dev/null 2>&1"
check_eq "DROP TABLE of the broken table works" "b" \
    "$( (cd "$b" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); DROP TABLE l.a; SELECT table_name FROM information_schema.tables WHERE table_catalog = 'l'") </dev/null 2>/dev/null | grep . | tail -n 1)"

finish

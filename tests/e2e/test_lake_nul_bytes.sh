#!/usr/bin/env bash
# tests/e2e/test_lake_nul_bytes.sh — VARCHAR values holding NUL bytes (chr(0)):
#   - they survive a write and a read, inlined and in Parquet (the whole value: its
#     length, its bytes after the NUL, comparisons);
#   - they print as DuckDB's shell prints them: each NUL as \0, in every output format.
#
# Run: `bash tests/e2e/test_lake_nul_bytes.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
body() { lake_sql "$d" "$1" | tail -n +2 | sed '/^$/d'; }

lake_sql "$d" "CREATE TABLE l.inl (s VARCHAR); INSERT INTO l.inl VALUES ('goo' || chr(0) || 'se'), ('hello');
CREATE TABLE l.pq (s VARCHAR); CALL ducklake_set_option('l', 'data_inlining_row_limit', 0, table_name => 'pq');
INSERT INTO l.pq VALUES ('goo' || chr(0) || 'se'), ('hello');" >/dev/null
check_eq "the Parquet table has a file" "1" \
    "$(lake_catalog "$d" "SELECT count(*) FROM m.ducklake_data_file;" | sed -n 2p)"
for t in inl pq; do
    check_eq "$t: a NUL prints as \\0" "$(printf 'goo\\0se\nhello')" "$(body "SELECT s FROM l.$t ORDER BY s;")"
    check_eq "$t: the whole value survives" "6,se,true" \
        "$(body "SELECT length(s), split_part(s, chr(0), 2), s = 'goo' || chr(0) || 'se' FROM l.$t WHERE s < 'hello';")"
done
json=$(cd "$d" && "$TARN" sql --format json "ATTACH 'ducklake:m.ducklake' AS l; SELECT s FROM l.pq WHERE s < 'hello';" </dev/null 2>>"$d/err" | tail -n 1)
case $json in
*'goo\\0se'*) ok "json output shows the NUL as \\0" ;;
*) fail "json output shows the NUL as \\0" "got: $json" ;;
esac
table=$(cd "$d" && "$TARN" sql "ATTACH 'ducklake:m.ducklake' AS l; SELECT s FROM l.inl WHERE s < 'hello';" </dev/null 2>>"$d/err")
case $table in
*'goo\0se'*) ok "table output too" ;;
*) fail "table output too" "got: $table" ;;
esac
check_eq "no errors" "" "$(cat "$d/err")"

finish

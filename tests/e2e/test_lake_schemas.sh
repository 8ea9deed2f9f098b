#!/usr/bin/env bash
# tests/e2e/test_lake_schemas.sh — lake schemas as DuckLake has them:
#   - a table, view or CTAS in a schema that does not exist fails with
#     DuckLake's "Schema … not found in DuckLakeCatalog" and writes nothing;
#   - a schema dropped (CASCADE) and made again inside one BEGIN … COMMIT
#     takes tables again, which read inside the transaction and after it.
#
# Run: `bash tests/e2e/test_lake_schemas.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)

# err SQL — the first error line of SQL run after the attach, without tarn's prefix.
err() { lake_err "$d" "$1"; }

lake_sql "$d" "CREATE SCHEMA l.s1; CREATE TABLE l.s1.t (i INTEGER); INSERT INTO l.s1.t VALUES (42);" >/dev/null
snap() { lake_catalog "$d" "SELECT max(snapshot_id) FROM m.ducklake_snapshot;" | sed -n 2p; }
before=$(snap)
check_eq "CREATE TABLE in a missing schema: DuckLake's error" \
    'Binder Error: Schema "nope" not found in DuckLakeCatalog "l"' \
    "$(err "CREATE TABLE l.nope.t (i INTEGER);")"
check_eq "CREATE VIEW in a missing schema: DuckLake's error" \
    'Binder Error: Schema "nope" not found in DuckLakeCatalog "l"' \
    "$(err "CREATE VIEW l.nope.v AS SELECT 1;")"
check_eq "CREATE TABLE AS in a missing schema: DuckLake's error" \
    'Binder Error: Schema "nope" not found in DuckLakeCatalog "l"' \
    "$(err "CREATE TABLE l.nope.t AS SELECT 1 AS i;")"
check_eq "the refused statements wrote no snapshot" "$before" "$(snap)"

out=$(lake_sql "$d" "BEGIN; DROP SCHEMA l.s1 CASCADE; CREATE SCHEMA l.s1;
CREATE TABLE l.s1.t (a DATE); INSERT INTO l.s1.t VALUES (DATE '1992-01-01');
SELECT * FROM l.s1.t; COMMIT;")
check_eq "a schema dropped and made again in one transaction takes a table" \
    "$(printf 'Count\n1\na\n1992-01-01')" "$(printf '%s\n' "$out" | sed '/^$/d')"
check_eq "which reads after the commit" "$(printf 'a\n1992-01-01')" \
    "$(lake_sql "$d" "SELECT * FROM l.s1.t;")"
check_eq "the new schema is a new catalog row, the old one ended" "2" \
    "$(lake_catalog "$d" "SELECT count(*) FROM m.ducklake_schema WHERE schema_name = 's1';" | sed -n 2p)"
check_eq "no error was printed" "" "$(grep -v '^$' "$d/err" | grep -v 'Schema "nope"')"

finish

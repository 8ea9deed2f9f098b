#!/usr/bin/env bash
# tests/e2e/test_lake_view_binding.sh — lake views that no longer bind, as DuckLake has them:
#   - a view whose view was dropped stays listed by duckdb_views(), but has no columns in
#     information_schema.columns or duckdb_columns() (also as system.information_schema);
#   - reading it fails with DuckDB's binding error (the missing table, or later a missing
#     column when the view is back with other columns), never tarn's internals;
#   - it reads again once what it reads is back.
#
# Run: `bash tests/e2e/test_lake_view_binding.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
body() { lake_sql "$d" "USE l; $1" | tail -n +2 | sed '/^$/d'; }
err() { lake_err "$d" "USE l; $1"; }
COLS="SELECT table_name, column_name FROM information_schema.columns WHERE table_catalog = 'l' ORDER BY table_name, ordinal_position;"
DCOLS="SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = 'l' ORDER BY table_name, column_index;"
SCOLS="SELECT table_name, column_name FROM system.information_schema.columns WHERE table_catalog = 'l' ORDER BY table_name, ordinal_position;"

lake_sql "$d" "USE l; CREATE TABLE t1 (id INTEGER); CREATE VIEW v1 AS SELECT 1 AS id, 'x' AS label;
CREATE VIEW v2 AS SELECT id, label FROM v1; CREATE VIEW v3 AS SELECT 100 AS score; DROP VIEW v1;" >/dev/null
check_eq "a view whose view was dropped is still listed" "$(printf 'v2\nv3')" \
    "$(body "SELECT view_name FROM duckdb_views() WHERE database_name = 'l' ORDER BY 1;")"
want=$(printf 't1,id\nv3,score')
check_eq "... without columns in information_schema.columns" "$want" "$(body "$COLS")"
check_eq "... nor in duckdb_columns()" "$want" "$(body "$DCOLS")"
check_eq "... nor as system.information_schema.columns" "$want" "$(body "$SCOLS")"
check_eq "reading it fails with DuckDB's error about the missing view" \
    "Catalog Error: Table with name v1 does not exist!" "$(err "SELECT * FROM v2;")"

lake_sql "$d" "USE l; CREATE VIEW v1 AS SELECT 42 AS id, 'y' AS label;" >/dev/null
check_eq "it reads again once the view is back" "42,y" "$(body "SELECT * FROM v2;")"
check_eq "... with its columns" "$(printf 't1,id\nv1,id\nv1,label\nv2,id\nv2,label\nv3,score')" "$(body "$COLS")"

lake_sql "$d" "USE l; DROP VIEW v1; CREATE VIEW v1 AS SELECT 1 AS a;" >/dev/null
check_eq "back with other columns: DuckDB's error about the column" \
    'Binder Error: Referenced column "id" not found in FROM clause!' "$(err "SELECT * FROM v2;")"
check_eq "... which a DuckDB message names, without tarn's internals" "0" "$(grep -c '__tarn\|unbound' "$d/err")"

lake_sql "$d" "USE l; DROP TABLE t1; CREATE VIEW vt AS SELECT 1 AS k;" >/dev/null
check_eq "the UI's catalog query over system.information_schema runs" "4" \
    "$(body "SELECT count(*) FROM system.information_schema.schemata s LEFT JOIN system.information_schema.tables t ON t.table_catalog = s.catalog_name AND t.table_schema = s.schema_name LEFT JOIN duckdb_tables() m ON m.table_name = t.table_name AND m.schema_name = t.table_schema AND m.database_name = t.table_catalog LEFT JOIN system.information_schema.columns c ON c.table_catalog = t.table_catalog AND c.table_schema = t.table_schema AND c.table_name = t.table_name WHERE s.catalog_name = 'l' AND s.schema_name NOT IN ('information_schema', 'pg_catalog');")"

finish

#!/usr/bin/env bash
# tests/e2e/test_lake_schema_version.sh — which statements move a lake's schema_version, as
# DuckLake does: a table or view comment, CREATE VIEW, ADD/RENAME COLUMN each move the snapshot's
# schema_version; only the column changes write a ducklake_schema_versions row for the table, so a
# comment leaves the table's latest schema version where it was. An INSERT moves nothing.
#
# Run: `bash tests/e2e/test_lake_schema_version.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1"; }
catalog() { lake_catalog "$d" "$1"; }
# the latest snapshot's schema_version and the table's latest ducklake_schema_versions row
versions() {
    catalog "SELECT (SELECT schema_version FROM m.ducklake_snapshot ORDER BY snapshot_id DESC
                     LIMIT 1) || '/' || (SELECT max(schema_version) FROM m.ducklake_schema_versions
                     WHERE table_id = $T);" | sed -n 2p
}

check "a table" q "CREATE TABLE l.t (a INTEGER, b VARCHAR);"
T=$(lake_table_id "$d" t)
check_eq "created: version 1, the table's row 1" "1/1" "$(versions)"
check "comment the table" q "COMMENT ON TABLE l.t IS 'x';"
check_eq "a table comment moves the global version only" "2/1" "$(versions)"
check "comment a column, clear it" q "COMMENT ON COLUMN l.t.a IS 'y'; COMMENT ON COLUMN l.t.a IS NULL;"
check_eq "column comments move the global version only" "4/1" "$(versions)"
check "insert" q "INSERT INTO l.t VALUES (1, 'a');"
check_eq "an insert moves nothing" "4/1" "$(versions)"
check "a view" q "CREATE VIEW l.v AS SELECT * FROM l.t;"
check_eq "CREATE VIEW moves the global version" "5/1" "$(versions)"
check "comment the view, clear it" q "COMMENT ON VIEW l.v IS 'z'; COMMENT ON VIEW l.v IS NULL;"
check_eq "view comments move the global version" "7/1" "$(versions)"
check "add a column" q "ALTER TABLE l.t ADD COLUMN c BIGINT;"
check_eq "ADD COLUMN writes the table's row" "8/8" "$(versions)"
check "comment and rename in one transaction" q "BEGIN; COMMENT ON VIEW l.v IS 'w';
    ALTER TABLE l.t RENAME COLUMN b TO b2; COMMIT;"
check_eq "one commit moves the version once" "9/9" "$(versions)"
check_eq "the view's comment" "w" "$(q "SELECT comment FROM duckdb_views() WHERE view_name = 'v';" | sed -n 2p)"

finish

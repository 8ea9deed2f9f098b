#!/usr/bin/env bash
# tests/e2e/test_lake_views.sh — lake views as DuckLake has them:
#   - ALTER VIEW … RENAME TO: the view keeps its id and comment; a committed
#     view's row ends and one under the new name begins; a view created in
#     the same transaction is written once, under its final name;
#   - COMMENT ON VIEW (a ducklake_tag row), shown by duckdb_views();
#   - duckdb_views() lists the lake's views, not its tables;
#   - table statements on a view and view statements on a table fail with
#     DuckDB's messages;
#   - DROP VIEW leaves the views that read it (they fail until it is back);
#   - AT (VERSION => n) on a view reads its definition and its tables at n;
#   - a view whose query says AT (VERSION => n) reads its table at n.
#
# Run: `bash tests/e2e/test_lake_views.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/'); USE lake;"
META="ATTACH 'meta.ducklake' AS m (READ_ONLY);"

q() {
    (cd "$d" && "$TARN" sql --format csv "$1") </dev/null 2>"$d/err"
}

qn() {
    q "$1" | tail -n +2 | sed '/^$/d'
}

# err SQL — the error of the statement that fails, without its prefix.
err() {
    q "$ATTACH $1" >/dev/null
    head -n 1 "$d/err" | sed 's/^tarn: statement [0-9]* (line [0-9]*): //'
}

# changes N — changes_made of snapshot N, unquoted from CSV.
changes() {
    qn "$META SELECT changes_made FROM m.ducklake_snapshot_changes WHERE snapshot_id = $1;" |
        sed 's/""/"/g; s/^"//; s/"$//'
}

q "$ATTACH CREATE TABLE t (i INTEGER); INSERT INTO t VALUES (1), (2);
CREATE VIEW v AS SELECT i * 10 AS x FROM t;
COMMENT ON VIEW v IS 'tens';" >/dev/null
check_eq "COMMENT ON VIEW is a tag of the view" "2,comment,tens" \
    "$(qn "$META SELECT object_id, key, value FROM m.ducklake_tag;")"
check_eq "duckdb_views() lists the lake's views only, with comments" "v,tens" \
    "$(qn "$ATTACH SELECT view_name, comment FROM duckdb_views() WHERE database_name = 'lake';")"

q "$ATTACH ALTER VIEW v RENAME TO v2;" >/dev/null
check_eq "a rename ends the row and begins one with the same id" "$(printf 'v,2,3,5\nv2,2,5,')" \
    "$(qn "$META SELECT view_name, view_id, begin_snapshot, end_snapshot FROM m.ducklake_view ORDER BY begin_snapshot;")"
check_eq "the renamed view reads and keeps its comment" "$(printf 'v2,tens\n\nx\n10\n20')" \
    "$(q "$ATTACH SELECT view_name, comment FROM duckdb_views() WHERE database_name = 'lake'; SELECT x FROM v2 ORDER BY x;" | tail -n +2)"
check_eq "the rename is a created_view change" 'created_view:"main"."v2"' "$(changes 5)"

q "$ATTACH BEGIN; CREATE VIEW lv AS SELECT 100 AS h; ALTER VIEW lv RENAME TO lv2; ALTER VIEW lv2 RENAME TO lv3; COMMIT;" >/dev/null
check_eq "a view created and renamed in one transaction is written once" "lv3,3,6," \
    "$(qn "$META SELECT view_name, view_id, begin_snapshot, end_snapshot FROM m.ducklake_view WHERE view_id = 3;")"
check_eq "under its final name" 'created_view:"main"."lv3"' "$(changes 6)"

check_eq "DROP TABLE on a view" "Catalog Error: Existing object v2 is of type View, trying to drop type Table" \
    "$(err "DROP TABLE IF EXISTS v2;")"
check_eq "CREATE OR REPLACE TABLE on a view" \
    "Catalog Error: Existing object v2 is of type View, trying to replace with type Table" \
    "$(err "CREATE OR REPLACE TABLE v2 (i INTEGER);")"
check_eq "DROP VIEW on a table" "Catalog Error: Existing object t is of type Table, trying to drop type View" \
    "$(err "DROP VIEW t;")"
check_eq "ALTER TABLE on a view" "Binder Error: Cannot use ALTER TABLE on entry v2 - it is not a table" \
    "$(err "ALTER TABLE v2 RENAME TO v9;")"
check_eq "ALTER VIEW on a table" "Binder Error: Cannot use ALTER VIEW on entry t - it is not a view" \
    "$(err "ALTER VIEW t RENAME TO t9;")"
check_eq "COMMENT ON VIEW on a table" "Binder Error: Cannot use ALTER VIEW on entry t - it is not a view" \
    "$(err "COMMENT ON VIEW t IS 'x';")"
check_eq "a rename onto a taken name" \
    'Catalog Error: Could not rename view "v2" to "t": another entry with this name already exists!' \
    "$(err "ALTER VIEW v2 RENAME TO t;")"

q "$ATTACH CREATE VIEW base AS SELECT 1 AS a; CREATE VIEW top AS SELECT a FROM base;" >/dev/null
out=$(q "$ATTACH DROP VIEW base; SELECT view_name FROM duckdb_views() WHERE database_name = 'lake' AND view_name = 'top';
SELECT * FROM top; CREATE VIEW base AS SELECT 7 AS a; SELECT * FROM top;" | sed '/^$/d')
check_eq "DROP VIEW leaves the views that read it: listed, failing, then reading the new one" \
    "$(printf 'view_name\ntop\n#error\na\n7')" "$out"
check_eq "reading it while its view is gone fails" "1" "$(grep -c 'Table with name base does not exist' "$d/err")"

# time travel: view sv counts the rows of s, which gets one row per snapshot
q "$ATTACH CREATE TABLE s (i INTEGER); CREATE VIEW sv AS SELECT count(*) AS n FROM s;
INSERT INTO s VALUES (1); INSERT INTO s VALUES (2);" >/dev/null
sv=$(qn "$META SELECT begin_snapshot FROM m.ducklake_view WHERE view_name = 'sv';")
check_eq "AT on a view reads its tables at that version" "$(printf 'n\n0\n\nn\n1\n\nn\n2')" \
    "$(q "$ATTACH SELECT * FROM sv AT (VERSION => $sv); SELECT * FROM lake.sv AT (VERSION => $((sv + 1))); SELECT * FROM sv;" | sed '$d')"
check_eq "AT on a view before it existed" 'Catalog Error: Table with name sv does not exist at version 1 of lake "lake"' \
    "$(err "SELECT * FROM sv AT (VERSION => 1);")"

# a view whose query reads a table AT a version reads that version, even
# after the table changed, and even when the view itself is read AT a later one
q "$ATTACH CREATE VIEW pinned AS SELECT count(*) AS n FROM s AT (VERSION => $((sv + 1)));
INSERT INTO s VALUES (3);" >/dev/null
last=$(qn "$META SELECT max(snapshot_id) FROM m.ducklake_snapshot;")
check_eq "a view's own AT (VERSION => n) fixes what it reads" "1" "$(qn "$ATTACH SELECT * FROM pinned;")"
check_eq "... also when the view is read AT a later version" "1" \
    "$(qn "$ATTACH SELECT * FROM pinned AT (VERSION => $last);")"
check_eq "... and when another view reads it" "1" \
    "$(qn "$ATTACH CREATE VIEW over_pinned AS SELECT n FROM pinned; SELECT * FROM over_pinned;")"
check_eq "the view's query is stored as written" "1" \
    "$(qn "$META SELECT count(*) FROM m.ducklake_view WHERE view_name = 'pinned' AND sql LIKE '%AT (VERSION => $((sv + 1)))%';")"

# one namespace for tables and views, as in DuckDB
q "$ATTACH CREATE VIEW clash AS SELECT 1 AS a;" >/dev/null
check_eq "CREATE TABLE over a view fails" 'Catalog Error: View with name "clash" already exists' \
    "$(err "CREATE TABLE clash (i INTEGER);")"
check_eq "... with IF NOT EXISTS it does nothing" "1" "$(qn "$ATTACH CREATE TABLE IF NOT EXISTS clash (i INTEGER); SELECT * FROM clash;")"

finish

#!/usr/bin/env bash
# tests/e2e/test_lake_inlining_options.sh — data inlining as the lake's options turn it on and off,
# as DuckLake does: a table created while inlining is off (attach option, schema option) gets no
# inlined-data table, and an ALTER does not make one; when inlining is turned on later, the first
# insert that inlines makes it with the commit, under a schema version of its own (the snapshot's
# schema_version moves, no ducklake_schema_versions row), and its rows read back (also after
# columns were added before it, and after a flush). Column names an inlined-data table uses itself
# (row_id, begin_snapshot, end_snapshot) are refused while inlining is on for the table (CREATE,
# ADD COLUMN, RENAME COLUMN), allowed while it is off, and turning inlining on for such a table
# (table, schema or global option) is refused unless a narrower option keeps it off.
#
# Run: `bash tests/e2e/test_lake_inlining_options.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { (cd "$d" && "$TARN" sql --format csv \
    "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 0); $1") \
    </dev/null 2>>"$d/err"; }
catalog() { lake_catalog "$d" "$1" | sed 1d; }
inlined_tables() { catalog "SELECT count(*) FROM m.ducklake_inlined_data_tables;"; }
files() { catalog "SELECT count(*) FROM m.ducklake_data_file WHERE end_snapshot IS NULL;"; }
sv() { catalog "SELECT schema_version FROM m.ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1;"; }

check "a table made with inlining off" q "CREATE TABLE l.t (i INTEGER);"
check_eq "no inlined-data table" "0" "$(inlined_tables)"
check "inlining turned on" q "CALL l.set_option('data_inlining_row_limit', 10);"
SV=$(sv)
check "an insert" q "INSERT INTO l.t VALUES (42);"
check_eq "its rows are inlined" "0" "$(files)"
check_eq "the commit made the inlined-data table" "1" "$(inlined_tables)"
T=$(lake_table_id "$d" t)
check_eq "under a schema version of its own" "$((SV + 1)) ducklake_inlined_data_${T}_$((SV + 1))" \
    "$(catalog "SELECT schema_version || ' ' || table_name FROM m.ducklake_inlined_data_tables;")"
check_eq "the snapshot's schema_version moved" "$((SV + 1))" "$(sv)"
check_eq "no ducklake_schema_versions row for it" "0" \
    "$(catalog "SELECT count(*) FROM m.ducklake_schema_versions WHERE schema_version > $SV;")"
check "a second insert" q "INSERT INTO l.t VALUES (1), (2);"
check_eq "into the same inlined table" "1 0 $((SV + 1))" "$(inlined_tables) $(files) $(sv)"
check_eq "the rows" "i
1
2
42" "$(q "SELECT i FROM l.t ORDER BY i;")"

check "a table altered before inlining is on" q "CALL l.set_option('data_inlining_row_limit', 0);
    CREATE TABLE l.u (a INTEGER); ALTER TABLE l.u ADD COLUMN b VARCHAR DEFAULT 'x';"
check_eq "the ALTER made no inlined table" "1" "$(inlined_tables)"
check "inlining on, an insert" q "CALL l.set_option('data_inlining_row_limit', 10);
    INSERT INTO l.u VALUES (1, 'y');"
check_eq "its rows read with the columns of the time" "a,b
1,y" "$(q "SELECT * FROM l.u;")"
check "flushed" q "CALL ducklake_flush_inlined_data('l', table_name => 'u');"
check_eq "read from the file" "a,b
1,y" "$(q "SELECT * FROM l.u;")"

check "a schema with inlining off" q "CREATE SCHEMA l.s;
    CALL l.set_option('data_inlining_row_limit', 0, schema => 's');
    CREATE TABLE l.s.v (i INTEGER); ALTER TABLE l.s.v ADD COLUMN k INTEGER DEFAULT 7;
    INSERT INTO l.s.v VALUES (1, 2);"
check_eq "its table has no inlined table and writes a file" "2 2" "$(inlined_tables) $(files)"

check_fails "row_id refused while inlining is on" q "CREATE TABLE l.r (row_id INTEGER);"
grep -q 'Column name "row_id" is reserved by DuckLake' "$d/err" && ok "the refusal says why" ||
    fail "the refusal says why" "$(tail -n 3 "$d/err")"
check "allowed in the schema with inlining off" q "CREATE TABLE l.s.r (row_id INTEGER, v INTEGER);
    INSERT INTO l.s.r VALUES (1, 10); ALTER TABLE l.s.r ADD COLUMN begin_snapshot INTEGER;
    ALTER TABLE l.s.r RENAME COLUMN v TO end_snapshot;"
check_eq "its rows" "row_id,end_snapshot,begin_snapshot
1,10," "$(q "SELECT * FROM l.s.r;")"
check_fails "inlining on for that table is refused" q \
    "CALL l.set_option('data_inlining_row_limit', 5, schema => 's', table_name => 'r');"
grep -q 'Cannot enable data inlining for table "r"' "$d/err" && ok "that refusal names the table" ||
    fail "that refusal names the table" "$(tail -n 3 "$d/err")"
check_fails "so is the schema's" q "CALL l.set_option('data_inlining_row_limit', 5, schema => 's');"
check "the table's own 0 keeps it off" q "CALL l.set_option('data_inlining_row_limit', 0,
    schema => 's', table_name => 'r'); CALL l.set_option('data_inlining_row_limit', 5, schema => 's');"
check_fails "ADD COLUMN row_id to an inlining table" q "ALTER TABLE l.t ADD COLUMN row_id INTEGER;"
check_fails "RENAME COLUMN to begin_snapshot in one" q "ALTER TABLE l.t RENAME COLUMN i TO begin_snapshot;"
check_eq "t unchanged" "column_name
i" "$(q "SELECT column_name FROM duckdb_columns() WHERE table_name = 't';")"

finish

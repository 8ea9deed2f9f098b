#!/usr/bin/env bash
# test_build_trust_config.sh — config, variables and manual models cannot reach what they should
# not (issue 11), end to end on copies of tests/fixtures/projects/basic and ops:
#   - ${VAR} is a value: inside '…' a quote in it is doubled (a path with a quote works, and a
#     value that tries to end the string and add a DROP TABLE stays one string: the run fails
#     and the lake is as it was); outside quotes only a number or a name is taken;
#   - a statement in config/ that writes the lake is an error at load, and nothing runs;
#   - a model whose target config/ defines, or whose file holds a NUL byte, is an error at load;
#     a UTF-8 byte-order mark is accepted;
#   - a manual model writes only its own table unless it declares the others (writes=): an
#     undeclared write fails the build and rolls the whole script back.
# (The load errors' messages are in tests/fixtures/bad-projects/: config_*, env_*, model_nul_byte,
# target_defined_by_config.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

# ---- ${VAR} ------------------------------------------------------------------
d=$(project basic)
mkdir -p "$d/it's data"
cp "$d/data/items.csv" "$d/it's data/items.csv"
sed -i "s|read_csv('data/items.csv'|read_csv('\${ITEMS_DIR}/items.csv'|" "$d/config/sources.sql"
printf "ITEMS_DIR=it's data\n" >"$d/.env"
run_ok "a value with a quote, inside a string" "$d" run
check_eq "it read the file whose path holds the quote" "4" \
    "$(lakeq "$d" "SELECT count(*) FROM lake.staging.items")"
snaps=$(snapshots "$d")
ITEMS_DIR="data/items.csv', header = true); DROP TABLE lake.staging.items; SELECT ('" \
    "$TARN" run -C "$d" >"$d/out" 2>&1
check_eq "exit status 2" "2" "$?"
contains "the value stayed one string" "data/items.csv', header = true); DROP TABLE lake.staging.items; SELECT ('/items.csv" "$(cat "$d/out")"
check_eq "no snapshot" "$snaps" "$(snapshots "$d")"
check_eq "the table is still there" "4" "$(lakeq "$d" "SELECT count(*) FROM lake.staging.items")"
echo "SET threads = \${THREADS:-2};" >"$d/config/settings.sql"
THREADS=1 run_ok "a number outside quotes" "$d" run
THREADS="1; DROP TABLE lake.staging.items" "$TARN" run -C "$d" >"$d/out" 2>&1
check_eq "a statement outside quotes is refused (exit 2)" "2" "$?"
contains "it says why" "config/settings.sql:1: \${THREADS} is outside quotes and its value is not a number or a name" "$(cat "$d/out")"
check_eq "the table is still there after it" "4" "$(lakeq "$d" "SELECT count(*) FROM lake.staging.items")"

# ---- config/ does not write the lake ------------------------------------------
d=$(project basic)
run_ok "base run" "$d" run
snaps=$(snapshots "$d")
for stmt in "DROP TABLE lake.staging.items" "CREATE SCHEMA IF NOT EXISTS lake.scratch" \
    "INSERT INTO lake.staging.items VALUES (9, 'x', 1)" "ALTER TABLE lake.staging.items ADD COLUMN c INT" \
    "UPDATE lake.staging.items SET price = 0" "COMMENT ON TABLE lake.staging.items IS 'x'" \
    "CALL ducklake_flush_inlined_data('lake')" "SELECT * FROM ducklake_expire_snapshots('lake', versions => [1])"; do
    echo "$stmt;" >"$d/config/zz.sql"
    run_rc "config/ refuses: $stmt" 2 "$d" run
    contains "  with file:line" "config/zz.sql:1: config/ must not write the lake" "$ERR"
done
printf 'USE lake;\nCREATE TABLE t AS SELECT 1 AS x;\n' >"$d/config/zz.sql"
run_rc "config/ refuses an unqualified write after USE lake" 2 "$d" run
contains "  at its line" "config/zz.sql:2: config/ must not write the lake" "$ERR"
check_eq "no snapshot from any of them" "$snaps" "$(snapshots "$d")"
printf "CREATE TEMP TABLE t AS SELECT 1 AS x;\nCREATE OR REPLACE VIEW raw.v AS SELECT * FROM lake.staging.items;\nCOPY (SELECT 1) TO 'out.csv';\n" >"$d/config/zz.sql"
run_ok "config/ may read the lake, and write elsewhere" "$d" run
rm "$d/config/zz.sql"

# ---- model files -------------------------------------------------------------
mkdir -p "$d/models/raw"
echo "SELECT 1 AS id" >"$d/models/raw/items.sql"
run_rc "a model whose target config/ defines" 2 "$d" plan
contains "  names both" "models/raw/items.sql:1: raw.items is also defined by config/sources.sql:2" "$ERR"
rm -r "$d/models/raw"
printf '\xef\xbb\xbf-- materialize append\nSELECT id, name FROM staging.items\n' >"$d/models/marts/bom.sql"
run_ok "a UTF-8 byte-order mark is accepted" "$d" run
check_eq "  and the annotation on its first line is read" "append" \
    "$(lakeq "$d" "SELECT j->>'strategy' FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake')) WHERE j->>'model' = 'marts.bom'")"
printf 'SELECT id\x00, name FROM staging.items\n' >"$d/models/marts/bom.sql"
run_rc "a NUL byte is an error" 2 "$d" run
contains "  with its line" "models/marts/bom.sql:1: the file holds a NUL byte" "$ERR"

# ---- manual models write their own table --------------------------------------
d=$(project ops)
run_ok "ops: first run" "$d" run
snaps=$(snapshots "$d")
audit=$(lakeq "$d" "SELECT count(*) FROM lake.ops.audit")
cat >>"$d/models/ops/audit.sql" <<'SQL'
DELETE FROM lake.staging.numbers WHERE n > 2;
SQL
run_rc "a manual model writing another model's table fails" 1 "$d" run
contains "  naming it" "models/ops/audit.sql: the script writes table staging.numbers, but a manual model writes only its own table (ops.audit)" "$ERR"
contains "  and the fix" "-- materialize manual writes=schema.table" "$ERR"
check_eq "  rolled back: no snapshot" "$snaps" "$(snapshots "$d")"
check_eq "  the other table is untouched" "5" "$(lakeq "$d" "SELECT count(*) FROM lake.staging.numbers")"
check_eq "  its own rows too" "$audit" "$(lakeq "$d" "SELECT count(*) FROM lake.ops.audit")"
check_eq "  recorded as failed" "failed" \
    "$(lakeq "$d" "SELECT status FROM __ducklake_metadata_lake.tarn_model_run WHERE model = 'ops.audit' ORDER BY run_id DESC LIMIT 1")"
sed -i 's/^DELETE FROM lake.staging.numbers.*$/USE lake.staging; DELETE FROM numbers WHERE n > 2;/' "$d/models/ops/audit.sql"
run_rc "USE in a manual model is refused at load" 2 "$d" run
contains "  with the remedy" "models/ops/audit.sql:8: USE in a manual model" "$ERR"
contains "  name tables in full" "name tables in full (lake.schema.table)" "$ERR"
check_eq "  the other table is untouched" "5" "$(lakeq "$d" "SELECT count(*) FROM lake.staging.numbers")"
check_eq "  no snapshot" "$snaps" "$(snapshots "$d")"
sed -i 's/^USE lake.staging; DELETE FROM numbers.*$/DELETE FROM staging.numbers WHERE n > 2;/' "$d/models/ops/audit.sql"
run_rc "an unqualified name in a manual model is not the lake's table" 1 "$d" run
contains "  the error names the line" "models/ops/audit.sql:8: Catalog Error: Table with name \"staging.numbers\" does not exist" "$ERR"
check_eq "  the other table is untouched" "5" "$(lakeq "$d" "SELECT count(*) FROM lake.staging.numbers")"
check_eq "  rolled back: no snapshot" "$snaps" "$(snapshots "$d")"
sed -i 's/^DELETE FROM staging.numbers.*$/DELETE FROM lake.staging.numbers WHERE n > 2;/' "$d/models/ops/audit.sql"
sed -i 's/^-- materialize manual$/-- materialize manual writes=staging.numbers/' "$d/models/ops/audit.sql"
run_ok "declared with writes=, it runs" "$d" run ops.audit
check_eq "  and wrote the other table" "3" "$(lakeq "$d" "SELECT count(*) FROM lake.staging.numbers")"
sed -i 's/^DELETE FROM lake.staging.numbers.*$/DROP SCHEMA IF EXISTS lake.other CASCADE; CREATE SCHEMA lake.other; CREATE TABLE lake.other.t AS SELECT 1 AS x;/' "$d/models/ops/audit.sql"
run_rc "a manual model creating an undeclared table fails" 1 "$d" run ops.audit
contains "  naming the schema" "the script creates schema other" "$ERR"
echo "-- materialize writes=a.b" >"$d/models/ops/bad.sql"
echo "SELECT 1 AS x" >>"$d/models/ops/bad.sql"
run_rc "writes= on a managed model" 2 "$d" plan
contains "  is refused" "models/ops/bad.sql:1: writes= is for manual models" "$ERR"

finish

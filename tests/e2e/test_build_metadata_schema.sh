#!/usr/bin/env bash
# test_build_metadata_schema.sh — `tarn run` on a lake attached with METADATA_SCHEMA, on a
# DuckDB-file catalog and on a PostgreSQL one (pg_lib.sh; that half is skipped without
# PostgreSQL): tarn's own tables (tarn_run, tarn_model_run, tarn_test_result, tarn_partition) go
# into that schema beside the ducklake_* ones, not into the database's default schema, and
# tarn history / runs / test / a second (unchanged) run find them there.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"
. "$(dirname "$0")/pg_lib.sh"

# build_checks WHERE DIR TABLES — the run and the commands that read its records, on project DIR
# (the fixture `tested`: three models with data tests); TABLES prints the tarn_* tables as
# `schema.table` lines, one per table.
build_checks() {
    local where=$1 dir=$2 tables=$3
    run_ok "$where: tarn run" "$dir" run
    check_eq "$where: tarn's tables are in the metadata schema" "dl.tarn_model_run
dl.tarn_partition
dl.tarn_run
dl.tarn_test_result" "$($tables)"
    run_ok "$where: a second run" "$dir" run
    contains "$where: the second run finds the first's records (unchanged)" "3 unchanged" "$ERR"
    run_ok "$where: tarn history" "$dir" history
    contains "$where: tarn history lists the builds" "core.order_totals" "$OUT"
    contains "$where: tarn history says why the first build ran" "first run" "$OUT"
    run_ok "$where: tarn runs" "$dir" runs
    check_eq "$where: tarn runs lists both runs" "2" "$(grep -cE '^ +[12] \| manual' <<<"$OUT")"
    run_ok "$where: tarn test" "$dir" test
    check_eq "$where: the test results of both tested models are in the schema" "2" \
        "$(cd "$dir" && "$TARN" sql --format csv "$(cat config/catalog.sql)
            SELECT count(DISTINCT model) FROM $4.tarn_test_result" 2>&1 | grep -v "^$" | tail -n 1)"
}

f=$(project tested)
echo "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/', METADATA_SCHEMA 'dl');" \
    >"$f/config/catalog.sql"
file_tables() {
    (cd "$f" && "$TARN" sql --format csv "ATTACH 'lake.ducklake' AS m (READ_ONLY);
        SELECT schema_name || '.' || table_name FROM duckdb_tables() WHERE database_name = 'm'
        AND table_name LIKE 'tarn\\_%' ESCAPE '\\' ORDER BY 1" 2>&1 | tail -n +2)
}
build_checks "duckdb file" "$f" file_tables "__ducklake_metadata_lake.dl"

if pg_start; then
    p=$(project tested)
    echo "ATTACH 'ducklake:postgres:$PG_CONNINFO' AS lake (DATA_PATH 'lake/',
        METADATA_SCHEMA 'dl');" >"$p/config/catalog.sql"
    pg_tables() {
        pg_psql "SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE
                 table_name LIKE 'tarn\\_%' ORDER BY 1"
    }
    build_checks "postgres" "$p" pg_tables "__ducklake_metadata_lake.dl"
    check_eq "postgres: the models' rows equal the DuckDB-file build's" \
        "$(cd "$f" && "$TARN" sql --format csv "$(cat config/catalog.sql)
            SELECT * FROM lake.core.order_totals ORDER BY ALL" 2>&1)" \
        "$(cd "$p" && "$TARN" sql --format csv "$(cat config/catalog.sql)
            SELECT * FROM lake.core.order_totals ORDER BY ALL" 2>&1)"
elif [ -n "$PG_SKIP" ]; then
    skip "postgres: tarn run with METADATA_SCHEMA" "$PG_SKIP"
fi
finish

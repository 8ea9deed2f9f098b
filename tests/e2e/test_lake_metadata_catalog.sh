#!/usr/bin/env bash
# tests/e2e/test_lake_metadata_catalog.sh — the catalog database under DuckLake's name.
#
# DuckLake attaches a lake's catalog database as `__ducklake_metadata_<alias>` (or the name given
# with METADATA_CATALOG), and its users read (and sometimes write) the ducklake_* tables there.
#   - after ATTACH … AS l, __ducklake_metadata_l.ducklake_data_file and friends read the lake's rows;
#   - a catalog table there takes an INSERT with a column list (db.ducklake_x (…) is no call);
#   - METADATA_CATALOG 'mc' puts it under mc instead (and __ducklake_metadata_l does not exist);
#   - DETACH l detaches the catalog database too.
#
# Run: `bash tests/e2e/test_lake_metadata_catalog.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
SETUP="CREATE TABLE l.t (i INTEGER); INSERT INTO l.t SELECT range FROM range(100);
CALL ducklake_flush_inlined_data('l');"

check_eq "data files under __ducklake_metadata_l" "1,100" \
    "$(lake_sql "$d" "$SETUP SELECT count(*), sum(record_count) FROM __ducklake_metadata_l.ducklake_data_file WHERE end_snapshot IS NULL" | grep . | tail -n 1)"
check_eq "tables under __ducklake_metadata_l" "t" \
    "$(lake_sql "$d" "SELECT table_name FROM __ducklake_metadata_l.main.ducklake_table WHERE end_snapshot IS NULL" | grep . | tail -n 1)"
check_eq "an INSERT with a column list into a catalog table there" "v" \
    "$(lake_sql "$d" "INSERT INTO __ducklake_metadata_l.ducklake_metadata (key, value) VALUES ('k', 'v'); SELECT value FROM ducklake_options('l') WHERE option_name = 'k'" | grep . | tail -n 1)"
check_fails "DETACH detaches the catalog too" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); DETACH l; SELECT count(*) FROM __ducklake_metadata_l.ducklake_table\" </dev/null 2>/dev/null"

e=$(mktempdir)
check_eq "METADATA_CATALOG names it" "1" \
    "$(cd "$e" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', METADATA_CATALOG 'mc');
CREATE TABLE l.t (i INTEGER); SELECT count(*) FROM mc.ducklake_table WHERE end_snapshot IS NULL" </dev/null 2>>"$e/err" | grep . | tail -n 1)"
check_fails "METADATA_CATALOG: no __ducklake_metadata_l" \
    bash -c "cd '$e' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', METADATA_CATALOG 'mc'); SELECT * FROM __ducklake_metadata_l.ducklake_table\" </dev/null 2>/dev/null"

finish

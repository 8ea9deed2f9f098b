#!/usr/bin/env bash
# tests/e2e/test_lake_settings.sh — DuckLake's DuckDB settings and ducklake_settings().
#
#   - the ducklake_* settings exist with DuckLake's defaults (current_setting), and SET / RESET
#     change them;
#   - SET ducklake_target_file_size refuses what is not a size with a unit, and 0;
#   - ducklake_default_data_inlining_row_limit decides inlining when the lake sets no
#     data_inlining_row_limit option (also when set after ATTACH), and the option comes first;
#   - ducklake_target_file_size comes before the lake's target_file_size option in
#     ducklake_merge_adjacent_files;
#   - ducklake_settings('l') (and settings() after USE l) says duckdb, a version and the data path.
#
# Run: `bash tests/e2e/test_lake_settings.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1" | grep .; }
last() { q "$1" | tail -n 1; }
files() { last "SELECT count(*) FROM __ducklake_metadata_l.ducklake_data_file WHERE end_snapshot IS NULL AND table_id = (SELECT table_id FROM __ducklake_metadata_l.ducklake_table WHERE table_name = '$1' AND end_snapshot IS NULL)"; }

check_eq "defaults" "10,100,1.5,10,false" \
    "$(last "SELECT current_setting('ducklake_max_retry_count'), current_setting('ducklake_retry_wait_ms'), current_setting('ducklake_retry_backoff'), current_setting('ducklake_default_data_inlining_row_limit'), current_setting('ducklake_write_deletion_vectors')")"
check_eq "SET and RESET" "3|10" \
    "$(q "SET ducklake_max_retry_count = 3; SELECT current_setting('ducklake_max_retry_count'); RESET ducklake_max_retry_count; SELECT current_setting('ducklake_max_retry_count')" | grep -v current_setting | paste -sd'|')"
for v in "'not-a-size'" "'0'" "'12 parsecs'"; do
    check_fails "SET ducklake_target_file_size = $v is refused" \
        bash -c "cd '$d' && '$TARN' sql \"SET ducklake_target_file_size = $v\" </dev/null 2>/dev/null"
done
check_eq "SET ducklake_target_file_size = '10KB'" "10KB" \
    "$(last "SET ducklake_target_file_size = '10KB'; SELECT current_setting('ducklake_target_file_size')")"

q "CREATE TABLE l.t (i INTEGER); CREATE TABLE l.u (i INTEGER)" >/dev/null
q "SET ducklake_default_data_inlining_row_limit = 0; INSERT INTO l.t VALUES (1)" >/dev/null
check_eq "limit 0 set after ATTACH: the insert writes a file" "1" "$(files t)"
q "SET ducklake_default_data_inlining_row_limit = 0; RESET ducklake_default_data_inlining_row_limit; INSERT INTO l.t VALUES (2)" >/dev/null
check_eq "after RESET the insert is inlined" "1" "$(files t)"
q "CALL ducklake_set_option('l', 'data_inlining_row_limit', 10, table_name => 'u'); SET ducklake_default_data_inlining_row_limit = 0; INSERT INTO l.u VALUES (1)" >/dev/null
check_eq "the lake's option comes before the setting" "0" "$(files u)"

for i in 1 2 3 4; do q "INSERT INTO l.t SELECT range FROM range(100)" >/dev/null; done
q "CALL ducklake_set_option('l', 'target_file_size', '1B')" >/dev/null
n=$(files t)
q "CALL ducklake_merge_adjacent_files('l', 't')" >/dev/null
check_eq "a 1B target_file_size option merges nothing" "$n" "$(files t)"
q "SET ducklake_target_file_size = '512MB'; CALL ducklake_merge_adjacent_files('l', 't')" >/dev/null
check_eq "SET ducklake_target_file_size comes before the option" "1" "$(files t)"
check_eq "the merged table reads the same" "402" "$(last "SELECT count(*) FROM l.t")"

check_eq "ducklake_settings()" "duckdb,true,d/" \
    "$(last "SELECT catalog_type, extension_version IS NOT NULL, data_path FROM ducklake_settings('l')")"
check_eq "settings() after USE" "duckdb" "$(last "USE l; SELECT catalog_type FROM settings()")"

finish

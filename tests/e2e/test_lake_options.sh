#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# tests/e2e/test_lake_options.sh — set_option and ducklake_options as DuckLake has them.
#
#   - set_option stores DuckLake's form of a value: codecs in lower case, parquet_version as V1/V2,
#     sizes with a unit in bytes, booleans as true/false, rewrite_delete_threshold with six
#     decimals; the option name in lower case;
#   - values DuckLake refuses are refused, and nothing is stored: unknown options, codecs,
#     non-integers, a row group size of 0, a threshold outside 0..1, a non-interval age, a non-boolean,
#     a NULL auto_compact, options DuckLake writes itself (version);
#   - ducklake_options() describes the options it knows (description NULL for another key);
#   - inside BEGIN … COMMIT, set_option applies to the transaction's own inserts (inlining limit)
#     and is written by the COMMIT; a ROLLBACK leaves the option as it was; a table or schema the
#     transaction created cannot take an option.
#
# Run: `bash tests/e2e/test_lake_options.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1" | grep .; }
opt() { q "SELECT value FROM __ducklake_metadata_l.ducklake_metadata WHERE \"key\" = '$1' AND scope IS NULL" | tail -n 1; }

q "CREATE TABLE l.t (i INTEGER)" >/dev/null
for c in "parquet_compression|'ZSTD'|zstd" "parquet_version|2|V2" "target_file_size|'1KB'|1000" \
    "target_file_size|'2 MiB'|2097152" "parquet_row_group_size_bytes|'1k'|1000" \
    "rewrite_delete_threshold|0.5|0.500000" "hive_file_pattern|'false'|false" \
    "require_commit_message|0|false" "auto_compact|true|true" "expire_older_than|'1 week'|1 week" \
    "PARQUET_ROW_GROUP_SIZE|'500'|500" "data_inlining_row_limit|25|25"; do
    IFS='|' read -r name value want <<<"$c"
    q "CALL ducklake_set_option('l', '$name', $value)" >/dev/null
    key=$(echo "$name" | tr 'A-Z' 'a-z')
    check_eq "set_option $name $value stores $want" "$want" "$(opt "$key")"
done

for c in "parquet_bla|'42'" "parquet_compression|'zstdx'" "parquet_compression_level|'z'" \
    "parquet_row_group_size|'z'" "parquet_row_group_size|0" "parquet_version|3" \
    "rewrite_delete_threshold|-1" "rewrite_delete_threshold|1.5" "delete_older_than|'pedro'" \
    "sort_on_insert|'not_a_bool'" "auto_compact|NULL" "target_file_size|'10 parsecs'" \
    "target_file_size|'0'" "version|'0.1'"; do
    IFS='|' read -r name value <<<"$c"
    before=$(q "SELECT count(*) || '/' || string_agg(\"key\" || '=' || value, ',' ORDER BY ALL) FROM __ducklake_metadata_l.ducklake_metadata" | tail -n 1)
    check_fails "set_option $name $value is refused" \
        bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); CALL ducklake_set_option('l', '$name', $value)\" </dev/null 2>/dev/null"
    check_eq "set_option $name $value stores nothing" "$before" \
        "$(q "SELECT count(*) || '/' || string_agg(\"key\" || '=' || value, ',' ORDER BY ALL) FROM __ducklake_metadata_l.ducklake_metadata" | tail -n 1)"
done

check_eq "ducklake_options() describes the options it knows" "parquet_version,true,V2,GLOBAL" \
    "$(q "SELECT option_name, description IS NOT NULL, value, scope FROM ducklake_options('l') WHERE option_name = 'parquet_version'" | tail -n 1)"
check_eq "and not another key" "my_key,true" \
    "$(q "INSERT INTO __ducklake_metadata_l.ducklake_metadata VALUES ('my_key', 'x', NULL, NULL); SELECT option_name, description IS NULL FROM ducklake_options('l') WHERE option_name = 'my_key'" | tail -n 1)"

# ---- inside a transaction ----------------------------------------------------------------------
inlined() { q "SELECT count(*) FROM __ducklake_metadata_l.ducklake_data_file WHERE end_snapshot IS NULL" | tail -n 1; }
q "CALL ducklake_set_option('l', 'data_inlining_row_limit', 0)" >/dev/null
files0=$(inlined)
q "BEGIN; CALL ducklake_set_option('l', 'data_inlining_row_limit', 10); INSERT INTO l.t VALUES (1), (2); COMMIT" >/dev/null
check_eq "set_option inside BEGIN applies to the transaction's inserts (inlined)" "$files0" "$(inlined)"
check_eq "and COMMIT writes it" "10" "$(opt data_inlining_row_limit)"
q "BEGIN; CALL ducklake_set_option('l', 'data_inlining_row_limit', 0); INSERT INTO l.t VALUES (3); ROLLBACK" >/dev/null
check_eq "ROLLBACK leaves the option as it was" "10" "$(opt data_inlining_row_limit)"
q "BEGIN; CALL ducklake_set_option('l', 'data_inlining_row_limit', 0); COMMIT" >/dev/null
check_eq "a transaction with only set_option commits it" "0" "$(opt data_inlining_row_limit)"
check_eq "and makes no snapshot" "$(q "SELECT max(snapshot_id) FROM ducklake_snapshots('l')" | tail -n 1)" \
    "$(q "BEGIN; CALL ducklake_set_option('l', 'parquet_version', 1); COMMIT; SELECT max(snapshot_id) FROM ducklake_snapshots('l')" | tail -n 1)"
check_eq "the rows read after the transactions" "1|2" "$(q "SELECT string_agg(i::VARCHAR, '|' ORDER BY i) FROM l.t" | tail -n 1)"
check_fails "a table the transaction created takes no option" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); BEGIN; CREATE TABLE l.n (i INTEGER); CALL ducklake_set_option('l', 'parquet_version', 1, table_name => 'n'); COMMIT\" </dev/null 2>/dev/null"
check_fails "a schema the transaction created takes no option" \
    bash -c "cd '$d' && '$TARN' sql \"ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); BEGIN; CREATE SCHEMA l.ns; CALL ducklake_set_option('l', 'parquet_version', 1, schema => 'ns'); COMMIT\" </dev/null 2>/dev/null"

finish

#!/usr/bin/env bash
# tests/e2e/test_lake_txn_delete_files.sh — a DELETE from a data file the same transaction wrote
# writes its delete file at the DELETE, as DuckLake does: it is on disk before COMMIT, a second
# DELETE of the same file replaces it (one file holds both), COMMIT registers that file, and a
# transaction that never commits or a DROP of the table in it removes it with the data file.
#
# Run: `bash tests/e2e/test_lake_txn_delete_files.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
catalog() { lake_catalog "$d" "$1" | sed 1d; }
# last: the last line SQL prints (its last statement's one value)
last() { lake_sql "$d" "$1" | sed '/^$/d' | tail -n 1; }
files() { find "$d/d/main/t" -name "$1" 2>/dev/null | wc -l; }
MAKE="BEGIN; CREATE TABLE l.t AS SELECT range AS id FROM range(100); DELETE FROM l.t WHERE id % 2 = 0;"
DELS="SELECT count(*) FROM glob('d/main/t/*-delete.parquet')"

check "inlining off" lake_sql "$d" "CALL l.set_option('data_inlining_row_limit', 0);"
check_eq "the delete file is on disk before COMMIT" "1" "$(last "$MAKE $DELS;")"
check_eq "a transaction never committed leaves no file" "0" "$(files '*.parquet')"
check_eq "a second DELETE replaces it" "1" "$(last "$MAKE DELETE FROM l.t WHERE id < 10; $DELS;")"
check_eq "DROP TABLE removes both files" "0" "$(last "$MAKE DROP TABLE l.t;
    SELECT count(*) FROM glob('d/main/t/*.parquet');")"
check "committed after two DELETEs" lake_sql "$d" "$MAKE DELETE FROM l.t WHERE id < 11; COMMIT;"
check_eq "one delete file, registered with both DELETEs' rows" "1 55 $(basename \
    "$(find "$d/d/main/t" -name '*-delete.parquet')")" "$(catalog "SELECT count(*) || ' ' ||
    sum(delete_count) || ' ' || min(path) FROM m.ducklake_delete_file;")"
check_eq "the rows" "45 11" "$(last "SELECT count(*) || ' ' || min(id) FROM l.t;")"

finish

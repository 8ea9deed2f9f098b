#!/usr/bin/env bash
# tests/e2e/test_lake_hive_pattern.sh — the hive_file_pattern option: with it false, a partitioned
# table's files (from an INSERT, and from flushing inlined rows) go straight into the table's
# directory instead of key=value folders, still with their partition values in the catalog, so
# reads filter and return the same rows. Files written before the option changed stay where they
# are. Also a table made while inlining was off that inlines once its own option turns it on.
#
# Run: `bash tests/e2e/test_lake_hive_pattern.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { (cd "$d" && "$TARN" sql --format csv \
    "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 0); $1") \
    </dev/null 2>>"$d/err" | sed 1d; }
catalog() { lake_catalog "$d" "$1" | sed 1d; }
# the table's files on disk, relative to its directory
files_of() { (cd "$d/d/main/$1" && find . -name '*.parquet' | sed 's|^\./||' | sed 's|ducklake-.*|F|' | sort); }

check "a hive and a flat partitioned table" q "CREATE TABLE l.h (k INTEGER, v VARCHAR);
    CREATE TABLE l.f (k INTEGER, v VARCHAR);
    CALL l.set_option('hive_file_pattern', false, table_name => 'f');
    ALTER TABLE l.h SET PARTITIONED BY (k); ALTER TABLE l.f SET PARTITIONED BY (k);
    INSERT INTO l.h SELECT i % 2, 's' || i FROM range(5) t(i);
    INSERT INTO l.f SELECT i % 2, 's' || i FROM range(5) t(i);"
check_eq "hive folders for h" "k=0/F
k=1/F" "$(files_of h)"
check_eq "flat files for f" "F
F" "$(files_of f)"
F=$(lake_table_id "$d" f)
check_eq "f's files keep their partition values" "0 1
1 1" "$(catalog "SELECT partition_value || ' ' || count(*) FROM m.ducklake_file_partition_value
    WHERE table_id = $F GROUP BY partition_value ORDER BY partition_value;")"
check_eq "a filtered read of f" "s0 s2 s4" "$(q "SELECT string_agg(v, ' ' ORDER BY v) FROM l.f WHERE k = 0;")"
check "h turns flat" q "CALL l.set_option('hive_file_pattern', false, table_name => 'h');
    INSERT INTO l.h SELECT i % 2, 't' || i FROM range(2) t(i);"
check_eq "old files stay in folders, new ones are flat" "F
F
k=0/F
k=1/F" "$(files_of h)"
check_eq "h reads all its rows" "7" "$(q "SELECT count(*) FROM l.h;")"

check "a flat table that inlines, then flushes" q "CREATE TABLE l.i (k INTEGER, v VARCHAR);
    CALL l.set_option('hive_file_pattern', false, table_name => 'i');
    CALL l.set_option('data_inlining_row_limit', 10, table_name => 'i');
    ALTER TABLE l.i SET PARTITIONED BY (k);
    INSERT INTO l.i SELECT i % 2, 's' || i FROM range(5) t(i);"
check_eq "its rows were inlined" "0" "$(catalog "SELECT count(*) FROM m.ducklake_data_file
    WHERE table_id = $(lake_table_id "$d" i);")"
check "flushed" q "CALL ducklake_flush_inlined_data('l');"
check_eq "the flush writes flat files" "F
F" "$(files_of i)"
check_eq "the rows" "s1 s3" "$(q "SELECT string_agg(v, ' ' ORDER BY v) FROM l.i WHERE k = 1;")"

finish

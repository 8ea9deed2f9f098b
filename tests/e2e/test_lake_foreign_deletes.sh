#!/usr/bin/env bash
# tests/e2e/test_lake_foreign_deletes.sh — delete files that another writer (an older DuckLake,
# Iceberg tooling) put in the catalog: Parquet files whose columns carry no field ids, known by
# name only (file_path, pos), maybe with extra columns. Their positions are deleted as in files
# tarn writes, so reads skip those rows.
#
# Run: `bash tests/e2e/test_lake_foreign_deletes.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1"; }
catalog() { lake_catalog "$d" "$1" | sed 1d; }

check "a table with 100 rows in one file" q "CREATE TABLE l.t (i INTEGER);
    INSERT INTO l.t SELECT * FROM range(100);"
F=$(catalog "SELECT data_file_id FROM m.ducklake_data_file;")
T=$(lake_table_id "$d" t)
S=$(catalog "SELECT max(snapshot_id) FROM m.ducklake_snapshot;")
P=$(catalog "SELECT path FROM m.ducklake_data_file;")
DIR=$(cd "$d" && ls -d d/main/t*/)
check "a delete file without field ids, with an extra column" \
    tarn sql "COPY (SELECT '$P' AS file_path, (90 + range)::BIGINT AS pos, 'x' AS new_col
               FROM range(5)) TO '$d/${DIR}foreign-delete.parquet' (FORMAT parquet);"
check "registered in the catalog" bash -c "cd '$d' && '$TARN' sql \"ATTACH 'm.ducklake' AS m;
    INSERT INTO m.ducklake_delete_file (delete_file_id, table_id, begin_snapshot, data_file_id,
    path, path_is_relative, format, delete_count, file_size_bytes, footer_size)
    VALUES (1000, $T, $S, $F, 'foreign-delete.parquet', true, 'parquet', 5, 100, 50);\""
check_eq "its rows are deleted" "95" "$(q "SELECT count(*) FROM l.t;" | sed 1d)"
check_eq "the others remain" "0 89 95 96 97 98 99" "$(q "SELECT string_agg(i::VARCHAR, ' ' ORDER BY i)
    FROM l.t WHERE i IN (0, 89) OR i >= 90;" | sed 1d)"

finish

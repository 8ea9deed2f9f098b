#!/usr/bin/env bash
# tests/e2e/test_lake_metadata_schema.sh — ATTACH … (METADATA_SCHEMA 'name'): the catalog's tables in
# that schema of the catalog database, as DuckLake keeps them.
#
#   - a new lake creates the schema and its ducklake_* tables there (none in main);
#   - every read and write of the lake goes there: DDL, inlined and Parquet inserts, deletes,
#     updates, snapshots(), table_info(), maintenance (flush, merge, expire, cleanup), a reattach;
#   - two lakes share one catalog file in two schemas, each with its own tables, rows, data path;
#   - names with quotes (catalog, schema, path, table, column) work.
#
# Run: `bash tests/e2e/test_lake_metadata_schema.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
# in DIR: SQL with lake `a` (schema s_a) and/or `b` (schema s_b) of catalog m.ducklake attached
a_sql() {
    (cd "$d" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS a (DATA_PATH 'da/',
        METADATA_SCHEMA 's_a'); $1") </dev/null 2>>"$d/err" | grep .
}
b_sql() {
    (cd "$d" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS b (DATA_PATH 'db/',
        METADATA_SCHEMA 's_b'); $1") </dev/null 2>>"$d/err" | grep .
}
cat_sql() {
    (cd "$d" && "$TARN" sql --format csv "ATTACH 'm.ducklake' AS m (READ_ONLY); $1") \
        </dev/null 2>>"$d/err" | grep . | tail -n +2
}

a_sql "CREATE TABLE a.t (i INTEGER, s VARCHAR); INSERT INTO a.t VALUES (1, 'one'), (2, 'two');
    INSERT INTO a.t SELECT i, 'n' || i FROM range(100, 200) r(i);" >/dev/null
check_eq "the catalog tables are in the schema, none in main" "s_a,true" \
    "$(cat_sql "SELECT schema_name, count(*) > 20 FROM duckdb_tables() WHERE database_name = 'm'
        GROUP BY ALL ORDER BY ALL")"
check_eq "the lake's rows are in that schema's tables" "t,2,1" \
    "$(cat_sql "SELECT (SELECT table_name FROM m.s_a.ducklake_table),
        (SELECT count(*) FROM m.s_a.ducklake_snapshot WHERE snapshot_id > 1),
        (SELECT count(*) FROM m.s_a.ducklake_data_file)")"
check_eq "the inlined rows went to an inlined-data table of the schema" "2" \
    "$(cat_sql "SELECT count(*) FROM m.s_a.ducklake_inlined_data_1_1")"

b_sql "CREATE TABLE b.t (s VARCHAR); INSERT INTO b.t VALUES ('hello world');" >/dev/null
check_eq "a second lake in another schema of the same file" '"t:i,s t:s"'  \
    "$(cat_sql "SELECT (SELECT table_name || ':' || string_agg(column_name, ',' ORDER BY column_id)
        FROM m.s_a.ducklake_table JOIN m.s_a.ducklake_column USING (table_id) GROUP BY table_name) || ' ' ||
        (SELECT table_name || ':' || string_agg(column_name, ',' ORDER BY column_id)
        FROM m.s_b.ducklake_table JOIN m.s_b.ducklake_column USING (table_id) GROUP BY table_name)")"
check_eq "each lake reads its own rows" "102,1" \
    "$(a_sql "SELECT count(*) FROM a.t" | tail -n 1),$(b_sql "SELECT count(*) FROM b.t" | tail -n 1)"

# every kind of write after a reattach
a_sql "DELETE FROM a.t WHERE i = 1; UPDATE a.t SET s = 'TWO' WHERE i = 2;
    ALTER TABLE a.t ADD COLUMN k INTEGER DEFAULT 7; CREATE SCHEMA a.x; CREATE TABLE a.x.u AS SELECT 1 AS z;
    INSERT INTO a.t SELECT i, 'm' || i, i FROM range(300, 400) r(i);
    CALL ducklake_flush_inlined_data('a'); CALL ducklake_merge_adjacent_files('a');" >/dev/null
check_eq "deletes, updates, DDL and maintenance read back" "201,TWO,7,1" \
    "$(a_sql "SELECT count(*), max(s) FILTER (WHERE i = 2), min(k), (SELECT count(*) FROM a.x.u) FROM a.t" |
        tail -n 1)"
check_eq "snapshots() and table_info() read the schema's catalog" "1,t" \
    "$(a_sql "SELECT (SELECT count(*) > 5 FROM a.snapshots())::INT, (SELECT string_agg(table_name, ',')
        FROM ducklake_table_info('a') WHERE schema_id = 0)" | tail -n 1)"
a_sql "CALL ducklake_expire_snapshots('a', older_than => now() + INTERVAL 1 DAY);
    CALL ducklake_cleanup_old_files('a', cleanup_all => true);" >/dev/null
check_eq "expire and cleanup work on the schema's tables, the lake still reads" "201" \
    "$(a_sql "SELECT count(*) FROM a.t" | tail -n 1)"
check_eq "the other lake is untouched" "hello world,1" \
    "$(b_sql "SELECT s, (SELECT count(*) FROM b.t) FROM b.t" | tail -n 1)"
check_eq "no catalog table appeared in main" "0" \
    "$(cat_sql "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'm' AND schema_name = 'main'")"
check_eq "no errors along the way" "" "$(cat "$d/err")"

# quoted names everywhere
q=$(mktempdir)
out=$( (cd "$q" && "$TARN" sql --format csv "ATTACH 'ducklake:m''q'' \"x\".ducklake' AS l
    (DATA_PATH 'd ''q'' \"p\"/', METADATA_CATALOG '''c'' \"n\"', METADATA_SCHEMA '''s'' \"n\"');
    CREATE TABLE l.\"t 'q' \"\"n\"\"\" (\"c 'q' \"\"n\"\"\" INTEGER);
    INSERT INTO l.\"t 'q' \"\"n\"\"\" SELECT i FROM range(50) r(i);
    SELECT sum(\"c 'q' \"\"n\"\"\") AS total FROM l.\"t 'q' \"\"n\"\"\";
    SELECT schema_name FROM duckdb_tables() WHERE database_name = '''c'' \"n\"' AND table_name = 'ducklake_table';
    DROP TABLE l.\"t 'q' \"\"n\"\"\";") </dev/null 2>&1 | grep . | tr '\n' '|')
check_eq "quoted catalog, schema, path, table and column names" "Count|50|total|1225|schema_name|\"'s' \"\"n\"\"\"|" \
    "$out"

finish

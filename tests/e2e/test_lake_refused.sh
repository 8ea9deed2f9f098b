#!/usr/bin/env bash
# tests/e2e/test_lake_refused.sh — statements DuckDB accepts on its own
# tables that DuckLake refuses, refused with DuckLake's messages and
# nothing written: constraints other than NOT NULL, generated columns,
# collations, dropping a partition column, SET NOT NULL twice, DROP NOT
# NULL of a nullable column.
#
# Run: `bash tests/e2e/test_lake_refused.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/'); USE lake;"

err() {
    (cd "$d" && "$TARN" sql "$ATTACH $1") </dev/null >/dev/null 2>"$d/err"
    head -n 1 "$d/err" | sed 's/^tarn: statement [0-9]* (line [0-9]*): //'
}

snapshots() {
    (cd "$d" && "$TARN" sql --format csv "$ATTACH SELECT count(*) FROM ducklake_snapshots('lake');") \
        </dev/null 2>/dev/null | tail -n 2 | head -n 1
}

check_eq "PRIMARY KEY" "Not implemented Error: PRIMARY KEY/UNIQUE constraints are not supported in DuckLake" \
    "$(err "CREATE TABLE t (i INTEGER PRIMARY KEY, j INTEGER);")"
check_eq "UNIQUE" "Not implemented Error: PRIMARY KEY/UNIQUE constraints are not supported in DuckLake" \
    "$(err "CREATE TABLE t (i INTEGER UNIQUE);")"
check_eq "CHECK" "Not implemented Error: CHECK constraints are not supported in DuckLake" \
    "$(err "CREATE TABLE t (i INTEGER, j INTEGER, CHECK (i > j));")"
check_eq "a generated column" "Not implemented Error: DuckLake does not support generated columns" \
    "$(err "CREATE TABLE t (c0 INTEGER AS (1), c1 INTEGER);")"
check_eq "a collation" "Invalid Input Error: Collations are not supported in DuckLake storage" \
    "$(err "CREATE TABLE t (s VARCHAR COLLATE NOACCENT);")"
check_eq "nothing was created" "1" "$(snapshots)"

(cd "$d" && "$TARN" sql "$ATTACH CREATE TABLE p (k INTEGER NOT NULL, v VARCHAR); ALTER TABLE p SET PARTITIONED BY (k);") \
    </dev/null >/dev/null 2>&1
check_eq "dropping a partition column" \
    'Catalog Error: Cannot drop column "k" - the table is partitioned by this column. Reset or change the partitioning on this table in order to drop this column' \
    "$(err "ALTER TABLE p DROP COLUMN k;")"
check_eq "SET NOT NULL on a NOT NULL column" \
    "Catalog Error: Cannot SET NOT NULL on column k - it already has a NOT NULL constraint" \
    "$(err "ALTER TABLE p ALTER k SET NOT NULL;")"
check_eq "DROP NOT NULL on a nullable column" \
    "Catalog Error: Cannot DROP NULL on column v - it has no NOT NULL constraint defined" \
    "$(err "ALTER TABLE p ALTER v DROP NOT NULL;")"
check_eq "after RESET PARTITIONED BY the column drops" "" \
    "$(err "ALTER TABLE p RESET PARTITIONED BY; ALTER TABLE p DROP COLUMN k;")"
check_eq "ATTACH with SNAPSHOT_VERSION and SNAPSHOT_TIME" \
    "Invalid Input Error: Cannot specify both VERSION and TIMESTAMP" \
    "$( (cd "$d" && "$TARN" sql "ATTACH 'ducklake:meta.ducklake' AS lake (SNAPSHOT_VERSION 1, SNAPSHOT_TIME '2020-01-01');") \
        </dev/null 2>&1 >/dev/null | head -n 1 | sed 's/^tarn: statement [0-9]* (line [0-9]*): //')"

# type changes: DuckLake allows what DuckDB would combine the two types into
(cd "$d" && "$TARN" sql "$ATTACH CREATE TABLE w (a TINYINT, b TIMESTAMP, c INTEGER, d DOUBLE);
INSERT INTO w VALUES (1, TIMESTAMP '2025-01-15 12:30:45', 3, 4.5);") </dev/null >/dev/null 2>&1
check_eq "TINYINT to HUGEINT, TIMESTAMP to TIMESTAMPTZ, INTEGER to DOUBLE" "" \
    "$(err "SET TimeZone = 'UTC'; ALTER TABLE w ALTER a SET DATA TYPE HUGEINT; ALTER TABLE w ALTER b TYPE TIMESTAMPTZ; ALTER TABLE w ALTER c TYPE DOUBLE;")"
check_eq "the old rows read in the new types" "$(printf 'HUGEINT,TIMESTAMP WITH TIME ZONE,DOUBLE\n1,2025-01-15 12:30:45+00,3.0')" \
    "$( (cd "$d" && "$TARN" sql --format csv "SET TimeZone = 'UTC'; $ATTACH SELECT typeof(a), typeof(b), typeof(c) FROM w; SELECT a, b, c FROM w;") </dev/null 2>&1 |
        sed '/^$/d' | grep -v '^typeof\|^a,b' | paste -sd '\n')"
check_eq "DOUBLE to VARCHAR is refused" \
    "Catalog Error: Cannot change type of column c from DOUBLE to VARCHAR - only widening type promotions are allowed" \
    "$(err "ALTER TABLE w ALTER c TYPE VARCHAR;")"
check_eq "DOUBLE to FLOAT is refused" \
    "Catalog Error: Cannot change type of column d from DOUBLE to FLOAT - only widening type promotions are allowed" \
    "$(err "ALTER TABLE w ALTER d TYPE FLOAT;")"

finish

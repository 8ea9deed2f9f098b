#!/usr/bin/env bash
# tests/e2e/test_lake_column_stats.sh — a table's column statistics (ducklake_table_column_stats)
# stay the min, max and "contains NULL" of every row the table holds, across inserts that inline
# their rows and inserts that write files, on a wide table (the stats of all its columns are
# gathered in one pass and merged in one UPDATE; src/lake/colstats.c). The expected values are
# computed by DuckDB from the table's own rows, so the check holds for any data; values like 9 and
# 10 make a text comparison of the stored bounds give the wrong answer. Nested leaves (a struct
# field, list elements, map keys and values) keep their own figures. One-row inserts (whose
# figures are read from the row without aggregates) give what one insert of those rows gives.
#
# Run: `bash tests/e2e/test_lake_column_stats.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1"; }
catalog() {
    (cd "$d" && "$TARN" sql --format csv "ATTACH 'm.ducklake' AS m (READ_ONLY); $1") \
        </dev/null 2>>"$d/err"
}

N=30
cols="" vals=""
for ((i = 0; i < N; i++)); do
    cols+="${cols:+, }c$i INTEGER"
done
# row k: column i holds (k * 7 + i * 3) % 23 - 11, NULL when (k + i) % 5 = 0 and k > 2
row() {
    local k=$1 i v s=""
    for ((i = 0; i < N; i++)); do
        if (((k + i) % 5 == 0 && k > 2)); then v=NULL; else v=$(((k * 7 + i * 3) % 23 - 11)); fi
        s+="${s:+, }$v"
    done
    printf '(%s, %s)' "$s" "'s$((k * 13 % 17))'"
}
rows() {
    local from=$1 to=$2 k s=""
    for ((k = from; k < to; k++)); do s+="${s:+, }$(row "$k")"; done
    printf '%s' "$s"
}

expected() {
    local s="" i
    for ((i = 0; i < N; i++)); do
        s+="${s:+ UNION ALL }SELECT $((i + 1)) AS column_id, bool_or(c$i IS NULL) AS contains_null, "
        s+="min(c$i)::VARCHAR AS min_value, max(c$i)::VARCHAR AS max_value FROM l.w"
    done
    s+=" UNION ALL SELECT $((N + 1)), bool_or(s IS NULL), min(s), max(s) FROM l.w"
    q "SELECT * FROM ($s) ORDER BY column_id;"
}
actual() {
    catalog "SELECT column_id, contains_null, min_value, max_value FROM m.ducklake_table_column_stats
             WHERE table_id = (SELECT table_id FROM m.ducklake_table WHERE table_name = 'w'
                               AND end_snapshot IS NULL) ORDER BY column_id;"
}

check "the wide table is created" q "CREATE TABLE l.w ($cols, s VARCHAR);"
check "a first insert (inlined)" q "INSERT INTO l.w VALUES $(rows 0 2);"
check_eq "stats after the first insert" "$(expected)" "$(actual)"
check "a second insert (inlined, with NULLs)" q "INSERT INTO l.w VALUES $(rows 2 5);"
check_eq "stats merged after an inlined insert" "$(expected)" "$(actual)"
check "inlining off" q "CALL l.set_option('data_inlining_row_limit', 0);"
check "a third insert (a file)" q "INSERT INTO l.w VALUES $(rows 5 12);"
check_eq "stats merged after a file insert" "$(expected)" "$(actual)"
check "an insert of one row" q "INSERT INTO l.w VALUES $(rows 40 41);"
check_eq "stats merged after a one-row insert" "$(expected)" "$(actual)"
lo=$(catalog "SELECT min_value FROM m.ducklake_table_column_stats s JOIN m.ducklake_table t
              USING (table_id) WHERE t.table_name = 'w' AND t.end_snapshot IS NULL
              AND column_id = 1;" | sed -n 2p)
check_eq "bounds compare as numbers, not text" "-11" "$lo"

check "a nested table" q "CREATE TABLE l.n (st STRUCT(x INTEGER, y VARCHAR), li INTEGER[],
                                            m MAP(VARCHAR, INTEGER));
    INSERT INTO l.n VALUES ({'x': 9, 'y': 'q'}, [10, 2], MAP {'k': 4});
    INSERT INTO l.n VALUES ({'x': NULL, 'y': 'a'}, [5, 7], MAP {'a': 90, 'b': NULL});"
check_eq "nested leaves keep their own stats" "column_id,contains_null,min_value,max_value
2,true,9,9
3,false,a,q
5,false,2,10
7,false,a,k
8,true,4,90" "$(catalog "SELECT column_id, contains_null, min_value, max_value
                         FROM m.ducklake_table_column_stats WHERE table_id = (SELECT table_id
                         FROM m.ducklake_table WHERE table_name = 'n') ORDER BY column_id;")"

# a column added with a DEFAULT after every pending (inlined) row was deleted: the default is in no
# row, so the column's bounds are those of the rows inserted after it
check "ADD COLUMN … DEFAULT over deleted pending rows" q "CREATE TABLE l.dd (a INTEGER);
    CALL l.set_option('data_inlining_row_limit', 10, table_name => 'dd'); BEGIN;
    INSERT INTO l.dd VALUES (1), (2); DELETE FROM l.dd; ALTER TABLE l.dd ADD COLUMN b INTEGER
    DEFAULT 999; INSERT INTO l.dd VALUES (10, 5); COMMIT;"
check_eq "b's bounds are the inserted value's" "min_value,max_value
5,5" "$(catalog "SELECT min_value, max_value FROM m.ducklake_table_column_stats s JOIN
    m.ducklake_column c USING (table_id, column_id) JOIN m.ducklake_table t USING (table_id)
    WHERE t.table_name = 'dd' AND c.column_name = 'b' AND c.end_snapshot IS NULL;")"

# one-row inserts (each its own commit, stats taken from the row itself) leave the statistics a
# multi-row insert of the same rows leaves, for every kind of value: NULLs, NaN, -0.0, quotes,
# time zones, intervals, blobs, nested leaves
types="i INTEGER, h HUGEINT, x DOUBLE, f FLOAT, s VARCHAR, d DATE, ts TIMESTAMP, tz TIMESTAMPTZ,
       k DECIMAL(9,2), b BOOLEAN, bl BLOB, u UUID, iv INTERVAL, st STRUCT(a INTEGER, b VARCHAR),
       li INTEGER[]"
one=(
    "(5, 170141183460469231731687303715884105727, 'NaN', -0.0, 'it''s', DATE '2020-02-29',
      TIMESTAMP '2020-01-01 10:00:00', TIMESTAMPTZ '2020-01-01 10:00:00+05', 1.25, true, '\x00\xFF'::BLOB,
      '00000000-0000-0000-0000-000000000001', INTERVAL 3 DAY, {'a': 1, 'b': 'z'}, [3, 1])"
    "(NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)"
    "(-7, -1, -0.0, 2.5, '', DATE '1999-12-31', TIMESTAMP '2030-06-01', TIMESTAMPTZ '2019-12-31 23:00:00+00',
      -3.50, false, ''::BLOB, 'ffffffff-ffff-ffff-ffff-ffffffffffff', INTERVAL 25 HOUR, {'a': NULL, 'b': 'a'}, [])"
)
all=$(printf '%s, ' "${one[@]}")
single="CREATE TABLE l.one ($types);"
for r in "${one[@]}"; do single+=" INSERT INTO l.one VALUES $r;"; done
q "$single CREATE TABLE l.many ($types); INSERT INTO l.many VALUES ${all%, };" >/dev/null
stats_of() {
    catalog "SELECT c.column_name, s.contains_null, s.contains_nan, s.min_value, s.max_value,
        s.extra_stats FROM m.ducklake_table_column_stats s JOIN m.ducklake_column c
        USING (table_id, column_id) JOIN m.ducklake_table t USING (table_id)
        WHERE t.table_name = '$1' AND c.end_snapshot IS NULL ORDER BY c.column_id;"
}
check_eq "one-row inserts: the statistics of one multi-row insert" "$(stats_of many)" "$(stats_of one)"
check_eq "… for each column and nested leaf" "i h x f s d ts tz k b bl u iv a b element" "$(stats_of one | tail -n +2 | grep . | cut -d, -f1 | paste -sd" ")"

check_eq "no errors on stderr" "" "$(cat "$d/err")"
finish

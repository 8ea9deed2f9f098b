#!/usr/bin/env bash
# test_lake_write_once.sh — `INSERT INTO lake.t <query>` and `CREATE TABLE
# lake.t AS <query>` evaluate the query exactly once, whether its rows end up
# inlined in the catalog (at most the inlining limit) or in a Parquet file,
# and whatever the table (partitioned, a type Parquet does not keep exactly,
# inlining off). Each query's WHERE calls nextval() once per input row — a
# volatile filter DuckDB cannot prune — so the sequence counts evaluations:
# 1,000 input rows must leave it at 1,000. Also: the inlined/file decision
# at the limit, no file or directory left behind by inlined rows, file ids as
# DuckLake gives them, and the values (every kind of type) read back as
# written. Then partitioned writes (one COPY … PARTITION_BY): 201 identity
# values with NULL, strings needing URL-encoding, two keys, year/month and
# bucket keys; each file's rows against its catalog partition values and
# hive directory, and every snapshot read back.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
ATTACH="ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'data/');"
RAW="ATTACH 'm.ducklake' AS raw (READ_ONLY);"

# last_result — the rows (no header) of the last result in `tarn sql --format csv` output
last_result() { awk 'BEGIN { RS = "" } { last = $0 } END { print last }' | tail -n +2; }
q() { tarn sql --format csv -c "$1" 2>&1 | last_result; }

# evals NAME STATEMENT — runs STATEMENT (using nextval('s') in its filter)
# after creating sequence s, prints how often the filter ran.
evals() {
    q "$ATTACH CREATE SEQUENCE s; $1; SELECT currval('s') AS n;"
}

tarn sql -c "$ATTACH CREATE TABLE lake.seed (x INTEGER);" >/dev/null
G="FROM range(1000) t(i) WHERE nextval('s') > 0 GROUP BY ALL"
check_eq "CTAS, GROUP BY of 100 groups (a Parquet file): one evaluation" 1000 \
    "$(evals "CREATE TABLE lake.big AS SELECT i % 100 AS k, count(*) AS c $G")"
check_eq "CTAS, GROUP BY of 3 groups (inlined): one evaluation" 1000 \
    "$(evals "CREATE TABLE lake.small AS SELECT i % 3 AS k, count(*) AS c $G")"
check_eq "CTAS, ORDER BY of 1000 rows: one evaluation" 1000 \
    "$(evals "CREATE TABLE lake.ord AS SELECT i FROM range(1000) t(i) WHERE nextval('s') > 0 ORDER BY i DESC")"
check_eq "CTAS, streaming 1000 rows: one evaluation" 1000 \
    "$(evals "CREATE TABLE lake.stream AS SELECT i FROM range(1000) t(i) WHERE nextval('s') > 0")"
check_eq "INSERT, 10 groups (the limit, inlined): one evaluation" 1000 \
    "$(evals "INSERT INTO lake.small SELECT i % 10, count(*) $G")"
check_eq "INSERT, 11 groups (over the limit, a file): one evaluation" 1000 \
    "$(evals "INSERT INTO lake.small SELECT i % 11, count(*) $G")"
check_eq "the small table: 24 rows" "24" "$(q "$ATTACH SELECT count(*) FROM lake.small")"
check_eq "11 of them in its one file (3 + 10 inlined)" "1,11" \
    "$(q "$RAW SELECT count(*), sum(record_count) FROM raw.ducklake_data_file
        JOIN raw.ducklake_table USING (table_id) WHERE table_name = 'small'")"
check_eq "no directory for the table of inlined rows only (stream and big have files)" \
    "big ord small stream" "$(ls data/main | sort | tr '\n' ' ' | sed 's/ $//')"
# DuckLake's ids: a commit of inlined rows only takes a file id too (renumber.h)
check_eq "the data file ids, as DuckLake gives them (a discarded file takes none)" "0 2 3 5" \
    "$(q "$RAW SELECT string_agg(data_file_id::VARCHAR, ' ' ORDER BY data_file_id)
        FROM raw.ducklake_data_file")"
check_eq "the small table reads back, row ids in order" "0,0,3
3,0,10
13,0,11" "$(q "$ATTACH SELECT min(rowid), min(k), count(*) FROM lake.small
        GROUP BY rowid < 3, rowid < 13 ORDER BY 1")"

# partitioned, a HUGEINT table (both staged), and inlining off
check_eq "partitioned table, 100 groups: one evaluation" 1000 \
    "$(evals "CREATE TABLE lake.p (k INTEGER, c BIGINT); ALTER TABLE lake.p SET PARTITIONED BY (k);
        INSERT INTO lake.p SELECT i % 100, count(*) $G")"
check_eq "partitioned table, 3 groups (inlined): one evaluation" 1000 \
    "$(evals "INSERT INTO lake.p SELECT i % 3, count(*) $G")"
check_eq "HUGEINT table, 3 groups (inlined exactly): one evaluation" 1000 \
    "$(evals "CREATE TABLE lake.h AS SELECT (i % 3)::HUGEINT * 170141183460469231731687303715884105 AS k, count(*) AS c $G")"
check_eq "the HUGEINT values are exact" "0 170141183460469231731687303715884105 340282366920938463463374607431768210" \
    "$(q "$ATTACH SELECT string_agg(k::VARCHAR, ' ' ORDER BY k) FROM lake.h")"
check_eq "TIMETZ inlined keeps its offset" "12:00:00+05:30" \
    "$(q "$ATTACH CREATE TABLE lake.tz AS SELECT TIMETZ '12:00:00+05:30' AS t; SELECT t FROM lake.tz")"

e=$(mktempdir)
cd "$e" || exit 1
check_eq "inlining off (DATA_INLINING_ROW_LIMIT 0), 3 groups: one evaluation, a file" "1000" \
    "$(tarn sql --format csv -c "ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'data/', DATA_INLINING_ROW_LIMIT 0);
        CREATE SEQUENCE s; CREATE TABLE lake.t AS SELECT i % 3 AS k, count(*) AS c $G; SELECT currval('s') AS n;" | last_result)"
check_eq "inlining off: the three rows are in one file" "1,3" \
    "$(q "$RAW SELECT count(*), sum(record_count) FROM raw.ducklake_data_file")"

# values of every kind through the inlined path (written to Parquet, read back)
cd "$d" || exit 1
V="SELECT 1::TINYINT a, 2::UBIGINT b, 1.5::FLOAT c, 'nan'::DOUBLE d, 12345678901234567.89::DECIMAL(38,2) e,
  'x y'::VARCHAR f, '\\x00\\xFF'::BLOB g, true h, DATE '2024-02-29' i, TIME '12:34:56.789' j,
  TIMESTAMP '2024-01-01 01:02:03.456789' k, TIMESTAMP_NS '2024-01-01 01:02:03.123456789' l,
  TIMESTAMP_S '2024-01-01 01:02:03' m, TIMESTAMP_MS '2024-01-01 01:02:03.123' n,
  TIMESTAMPTZ '2024-01-01 01:02:03+02' o, INTERVAL '1 month 2 days 3 seconds' p,
  UUID '00000000-0000-0000-0000-00000000002a' q, {'x': 1, 'y': [1, NULL]} r, [[1], NULL, []] s,
  MAP {'k': 2} u, NULL::INTEGER v, '-infinity'::DATE w"
check_eq "every type inlined reads back equal" "1,0" \
    "$(q "$ATTACH CREATE TABLE lake.types AS $V;
        SELECT count(*), (SELECT count(*) FROM (FROM lake.types EXCEPT $V)) FROM lake.types")"
check_eq "the typed row is inlined, no file" "0" \
    "$(q "$RAW SELECT count(*) FROM raw.ducklake_data_file f JOIN raw.ducklake_table t USING (table_id)
        WHERE t.table_name = 'types'")"
check_fails "a NOT NULL violation of a small insert fails" \
    tarn sql -c "$ATTACH CREATE TABLE lake.nn (x INTEGER NOT NULL); INSERT INTO lake.nn SELECT NULL"
check_eq "and leaves no file or directory" "" "$(ls data/main | grep -x nn)"

# ---- partitioned writes: one COPY … PARTITION_BY; every file's rows, values and directory agree,
# at every snapshot. Identity keys (200 values, NULL, strings needing URL-encoding), two keys, and
# computed keys (year/month, bucket), inlining off so every INSERT writes files.
p=$(mktempdir)
cd "$p" || exit 1
PA="ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'data/', DATA_INLINING_ROW_LIMIT 0);"
S="'a b/c', 'k=v', 'é%', '', NULL, '..'"
tarn sql -c "$PA
CREATE TABLE lake.pi (id BIGINT, s VARCHAR, n INTEGER, ts TIMESTAMP);
ALTER TABLE lake.pi SET PARTITIONED BY (n);
INSERT INTO lake.pi SELECT i, NULL, CASE WHEN i % 201 = 200 THEN NULL ELSE i % 201 END,
  TIMESTAMP '2020-01-01' + INTERVAL (i) HOUR FROM range(5000) t(i);
ALTER TABLE lake.pi SET PARTITIONED BY (s, n);
INSERT INTO lake.pi SELECT i, [$S][i % 6 + 1], i % 3, TIMESTAMP '2021-06-01' + INTERVAL (i) DAY FROM range(5000, 5600) t(i);
ALTER TABLE lake.pi SET PARTITIONED BY (year(ts), month(ts));
INSERT INTO lake.pi SELECT i, 'x', i % 7, TIMESTAMP '2022-01-01' + INTERVAL (i * 5) DAY FROM range(5600, 5800) t(i);
INSERT INTO lake.pi VALUES (5800, 'nullts', 1, NULL);
ALTER TABLE lake.pi SET PARTITIONED BY (bucket(5, s));
INSERT INTO lake.pi SELECT i, 's' || i, 0, NULL FROM range(5801, 6000) t(i);" >/dev/null 2>"$p/err" ||
    fail "partitioned writes ran" "$(cat "$p/err")"
check_eq "files per write: 201 values, 6 (s, n) pairs, one per month, 1 (NULL), 5 buckets" "201
6
$(q "SELECT count(DISTINCT date_trunc('month', TIMESTAMP '2022-01-01' + INTERVAL (i * 5) DAY))
    FROM range(5600, 5800) t(i)")
1
5" "$(q "ATTACH 'm.ducklake' AS raw (READ_ONLY); SELECT count(*) FROM raw.ducklake_data_file
    GROUP BY begin_snapshot ORDER BY begin_snapshot")"
# every file holds only rows of its recorded partition values, in its hive directory
check_eq "each file's rows match its catalog partition values and directory" "0" \
    "$(q "ATTACH 'm.ducklake' AS raw (READ_ONLY);
SELECT count(*) FROM (
  SELECT f.data_file_id, f.path, p.partition_key_index AS k, p.partition_value AS v,
    dense_rank() OVER (ORDER BY f.partition_id) AS partition_id
  FROM raw.ducklake_data_file f JOIN raw.ducklake_file_partition_value p USING (data_file_id)) fp
JOIN (SELECT filename, s, n::VARCHAR AS n, year(ts)::VARCHAR AS y, month(ts)::VARCHAR AS m,
        ((murmur3_32(s) & 2147483647) % 5)::VARCHAR AS b
      FROM read_parquet('data/main/pi/**/*.parquet', filename = true, hive_partitioning = false)) r
  ON r.filename LIKE '%' || fp.path
WHERE fp.v IS DISTINCT FROM CASE
  WHEN fp.partition_id = 1 THEN r.n
  WHEN fp.partition_id = 2 THEN CASE fp.k WHEN 0 THEN r.s ELSE r.n END
  WHEN fp.partition_id = 3 THEN CASE fp.k WHEN 0 THEN r.y ELSE r.m END
  ELSE r.b END
  OR fp.path NOT LIKE '%=' || CASE WHEN fp.v IS NULL THEN '__HIVE_DEFAULT_PARTITION__'
                                  ELSE url_encode(fp.v) END || '/%'")"
check "the hive directories are DuckDB's encoding" test -d "data/main/pi/s=a%20b%2Fc/n=0"
check "a NULL value is __HIVE_DEFAULT_PARTITION__" test -d "data/main/pi/n=__HIVE_DEFAULT_PARTITION__"
ym=$(find data/main/pi -path '*year=*/month=*/*.parquet' | head -1)
check_eq "identity columns are in the files, computed keys are not" "id n s ts" \
    "$(q "SELECT string_agg(name, ' ' ORDER BY name) FROM parquet_schema('$ym')
        WHERE name IN ('id', 'n', 's', 'ts', 'year', 'month')")"
for vr in 3:5000 5:5600 7:5800 8:5801 10:6000; do
    check_eq "read back at snapshot ${vr%:*}: rows and sums as written" \
        "$(q "SELECT count(*), sum(i), count(DISTINCT i % 201) FROM range(${vr#*:}) t(i)")" \
        "$(q "$PA SELECT count(*), sum(id), count(DISTINCT id % 201) FROM lake.pi AT (VERSION => ${vr%:*})")"
done
check_eq "row ids: each row keeps one id, ids 0..5999 all used" "6000,0,5999" \
    "$(q "$PA SELECT count(DISTINCT rowid), min(rowid), max(rowid) FROM lake.pi")"
check_eq "a filter on the partition column reads its rows" "25" \
    "$(q "$PA SELECT count(*) FROM lake.pi AT (VERSION => 3) WHERE n = 7")"

finish

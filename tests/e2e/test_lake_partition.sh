#!/usr/bin/env bash
# test_lake_partition.sh — partitioned tables end to end: files laid out in
# hive directories with their partition values, partition pruning visible
# in EXPLAIN (a filter on an identity partition column leaves one Parquet
# scan and turns the others into empty results), specs that change keep
# old files readable, and RESET PARTITIONED BY. Writes here have more rows
# than the inlining limit, so they go to Parquet.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
T=${TARN:-build/tarn}
ATTACH="ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'data/');"

sql() { "$T" sql --format csv -c "$ATTACH $1" 2>"$d/err"; }

sql "CREATE TABLE lake.p (id INTEGER, region VARCHAR, ts TIMESTAMP);
ALTER TABLE lake.p SET PARTITIONED BY (region);
INSERT INTO lake.p SELECT i, CASE i % 3 WHEN 0 THEN 'eu' WHEN 1 THEN 'us' ELSE 'a b/c' END,
  TIMESTAMP '2024-01-01' + INTERVAL (i) DAY FROM range(30) t(i);" >/dev/null
check_eq "one directory per partition value, escaped" \
"region=a%20b%2Fc
region=eu
region=us" "$(cd data/main/p && ls -d region=* | sort)"

plan=$(sql "EXPLAIN SELECT count(*) FROM lake.p WHERE region = 'eu';")
full=$(sql "EXPLAIN SELECT count(*) FROM lake.p;")
check_eq "a filter on the partition column scans one partition of three" \
    "$(printf '%s\n' "$full" | grep -o READ_PARQUET | wc -l)" \
    "$(($(printf '%s\n' "$plan" | grep -o READ_PARQUET | wc -l) * 3))"
check_eq "the other partitions are pruned" "2" "$(printf '%s\n' "$plan" | grep -o EMPTY_RESULT | wc -l)"
check_eq "the filtered count is right" "n
10" "$(sql "SELECT count(*) AS n FROM lake.p WHERE region = 'eu';" | head -2)"
check_eq "the odd value round-trips" "n
10" "$(sql "SELECT count(*) AS n FROM lake.p WHERE region = 'a b/c';" | head -2)"

sql "ALTER TABLE lake.p SET PARTITIONED BY (year(ts), month(ts));
INSERT INTO lake.p SELECT 100 + i, 'eu', TIMESTAMP '2025-03-04 05:06:07' FROM range(11) t(i);
ALTER TABLE lake.p RESET PARTITIONED BY;
INSERT INTO lake.p VALUES (101, 'us', NULL);" >/dev/null
check "temporal partition directory" test -d data/main/p/year=2025/month=3
check_eq "every file, under every spec, still reads (inlined rows too)" "n,eu
42,21" "$(sql "SELECT count(*) AS n, count(*) FILTER (region = 'eu') AS eu FROM lake.p;" | head -2)"
check_eq "the temporal partition values in the catalog" 'v
"2025,3"' "$("$T" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY);
SELECT min(partition_value) FILTER (partition_key_index = 0) || ',' || min(partition_value) FILTER (partition_key_index = 1) AS v FROM raw.ducklake_file_partition_value GROUP BY data_file_id HAVING count(*) = 2 ORDER BY v;")"
finish

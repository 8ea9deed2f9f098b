#!/usr/bin/env bash
# test_lake_partition.sh — partitioned tables end to end: files laid out in
# hive directories with their partition values, partition pruning visible
# in EXPLAIN (a filter on an identity partition column leaves one Parquet
# scan and turns the others into empty results), specs that change keep
# old files readable, and RESET PARTITIONED BY. Writes here have more rows
# than the inlining limit, so they go to Parquet. Then bucket(N, col):
# DuckLake's catalog rows ('bucket(N)', each file's bucket number), hive
# directories bucket=k (bucket_<col>=k on a second bucket key), every row in
# the file of its hash's bucket (the murmur3_32 function DuckLake has too),
# inlined rows flushed into buckets, text-form types (UUID), NULL keys, the
# syntax errors DuckLake gives, and reading back, now and at a snapshot.
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
full=$(sql "EXPLAIN SELECT count(id) FROM lake.p;")
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

# ---- bucket(N, col)
b=$(mktempdir)
cd "$b" || exit 1
sql "CREATE TABLE lake.b (user_id VARCHAR, value INTEGER);
ALTER TABLE lake.b SET PARTITIONED BY (bucket(4, user_id));
INSERT INTO lake.b VALUES ('alice', 1), ('bob', 2), ('charlie', 3);
INSERT INTO lake.b VALUES ('alice', 4), ('bob', 5);
CALL ducklake_flush_inlined_data('lake');" >/dev/null
raw() { "$T" sql --format csv -c "ATTACH 'm.ducklake' AS raw (READ_ONLY); $1" 2>"$d/err"; }
check_eq "the partition column row is DuckLake's" "partition_key_index,column_id,transform
0,1,bucket(4)" "$(raw "SELECT partition_key_index, column_id, \"transform\" FROM raw.ducklake_partition_column;")"
check_eq "flushed inlined rows land in their buckets (alice 1, bob 2, charlie 3, as in DuckLake's tests)" "b
bucket=1
bucket=2
bucket=3" "$(echo b; cd data/main/b && ls -d bucket=* | sort)"
check_eq "each file's catalog partition value is its directory's" "v
1 2 3
1 2 3" "$(raw "SELECT string_agg(partition_value, ' ' ORDER BY partition_value) AS v FROM raw.ducklake_file_partition_value;")
$(cd data/main/b && ls -d bucket=* | sed 's/bucket=//' | paste -sd' ')"
check_eq "reads back" "user_id,s
alice,5
bob,7
charlie,3" "$(sql "SELECT user_id, sum(value) AS s FROM lake.b GROUP BY ALL ORDER BY ALL;")"

sql "CREATE TABLE lake.m (id BIGINT, name VARCHAR, u UUID, ts TIMESTAMP);
ALTER TABLE lake.m SET PARTITIONED BY (bucket(8, id), bucket(3, name));
INSERT INTO lake.m SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE 'n' || (i % 13) END, uuid(),
  TIMESTAMP '2024-01-01' + INTERVAL (i) HOUR FROM range(1000) t(i);
ALTER TABLE lake.m SET PARTITIONED BY (bucket(5, u), day(ts));
INSERT INTO lake.m SELECT 1000 + i, 'x', uuid(), TIMESTAMP '2024-03-01' + INTERVAL (i) HOUR FROM range(100) t(i);" >/dev/null
check_eq "a second bucket key is named bucket_<column>; NULL keys go to the default partition" \
    "$(sql "SELECT count(DISTINCT (murmur3_32(i) & 2147483647) % 8) AS n FROM range(0, 1000, 10) t(i);" | sed -n 2p)" \
    "$(cd data/main/m && ls -d bucket=*/bucket_name=__HIVE_DEFAULT_PARTITION__ | wc -l)"
check_eq "every row is in the file of its bucket (BIGINT and VARCHAR keys)" "files,rows,ok
$(find data/main/m -path '*bucket_name=*' -name '*.parquet' | wc -l),1000,true" "$(sql "SELECT count(DISTINCT filename) AS files, count(*) AS rows, bool_and(((murmur3_32(id) & 2147483647) % 8)::VARCHAR = regexp_extract(filename, 'bucket=([^/]+)/', 1) AND coalesce(((murmur3_32(name) & 2147483647) % 3)::VARCHAR, '__HIVE_DEFAULT_PARTITION__') = regexp_extract(filename, 'bucket_name=([^/]+)/', 1)) AS ok FROM read_parquet('data/main/m/bucket=*/bucket_name=*/*.parquet', filename = true, hive_partitioning = false);")"
check_eq "a UUID key hashes its text form, as DuckLake does" "rows,ok
100,true" "$(sql "SELECT count(*) AS rows, bool_and(((murmur3_32(CAST(u AS VARCHAR)) & 2147483647) % 5)::VARCHAR = regexp_extract(filename, '/bucket=([^/]+)/', 1) AND day(ts)::VARCHAR = regexp_extract(filename, '/day=([^/]+)/', 1)) AS ok FROM read_parquet('data/main/m/bucket=*/day=*/*.parquet', filename = true, hive_partitioning = false);")"
check_eq "the NULL key's catalog partition value is SQL NULL, one per directory of it" "n
$(find data/main/m -type d -name 'bucket_name=__HIVE_DEFAULT_PARTITION__' | wc -l)" "$(raw "SELECT count(*) AS n FROM raw.ducklake_file_partition_value WHERE partition_key_index = 1 AND partition_value IS NULL;")"
check_eq "the whole table reads back, and at the snapshot before the second spec" "n,at
1100,1000" "$(sql "SELECT (SELECT count(*) FROM lake.m) AS n, (SELECT count(*) FROM lake.m AT (VERSION => $(sql "SELECT max(snapshot_id) - 2 AS s FROM ducklake_snapshots('lake');" | sed -n 2p))) AS at;")"

for bad in "bucket(0, id)|Bucket count must be positive" "bucket(-1, id)|Bucket count must be positive" \
    "bucket(id, name)|Bucket count must be a constant integer" "bucket('abc', id)|Bucket count must be an integer" \
    "bucket(4)|Expected bucket(bucket_count, column)" "bucket(4, id, name)|Expected bucket(bucket_count, column)" \
    "bucket(4, 'literal')|Expected bucket(bucket_count, column)" "bucket(2147483648, id)|Bucket count cannot exceed"; do
    sql "ALTER TABLE lake.m SET PARTITIONED BY (${bad%%|*});" >/dev/null
    check "SET PARTITIONED BY (${bad%%|*}) fails with DuckLake's message" grep -qF "${bad#*|}" "$d/err"
done
finish

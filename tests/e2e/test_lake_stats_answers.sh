#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# test_lake_stats_answers.sh — what a lake table's statistics answer
# without reading every file:
#   - COUNT(*), MIN(col), MAX(col) of a whole table come from the catalog
#     (no scan in EXPLAIN ANALYZE), under DuckDB's names and types, with
#     the values a scan gives; MIN/MAX read the files again once a row was
#     deleted (the statistics only widen), COUNT(*) does not, until
#     ducklake_rewrite_data_files leaves the table without deletions (its
#     statistics are then recomputed: exact, with inlined rows, nested
#     leaves; a partial rewrite keeps the bounds); time travel,
#     a transaction's pending rows and strings read the files;
#   - an equality on a bucket(N) or identity partition key's column reads
#     only the files of the value's partition, with the rows of a full read;
#   - ORDER BY col … LIMIT reads the file its statistics put first first,
#     so DuckDB's top-N skips the other files by their statistics.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATT="ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 0)"
sql() { (cd "$d" && "$TARN" sql --format csv "$ATT; $1") </dev/null 2>>"$d/err"; }
q() { sql "$1" | tail -n +2 | grep .; }
# scans QUERY — 1 when its plan reads a table or file, else 0
scans() { sql "EXPLAIN ANALYZE $1" | grep -q -E 'TABLE_SCAN|READ_PARQUET' && echo 1 || echo 0; }
files_read() { sql "EXPLAIN ANALYZE $1" | grep -o 'Total Files Read: [0-9]*' | awk '{n += $4} END {print n + 0}'; }

# ---- COUNT(*), MIN, MAX from the catalog
sql "CREATE TABLE l.t (i INTEGER, k DECIMAL(9,2), d DATE, s VARCHAR);
     INSERT INTO l.t SELECT r, r / 4, DATE '2020-01-01' + r::INTEGER, 'v' || r FROM range(1, 1001) x(r);
     INSERT INTO l.t SELECT r, r / 4, DATE '2020-01-01' + r::INTEGER, 'v' || r FROM range(-50, 0) x(r);" >/dev/null
check_eq "MIN, MAX and COUNT(*) answered" "min(i),max(i),count_star(),m
-50,1000,1050,2022-09-27" \
    "$(sql "SELECT MIN(i), MAX(i), COUNT(*), max(d) AS m FROM l.t;")"
check_eq "… without a scan" "0" "$(scans "SELECT MIN(i), MAX(i), COUNT(*) FROM l.t;")"
check_eq "… the values a scan gives" \
    "$(q "SELECT min(i), max(i), count(*), min(k), max(d) FROM (FROM l.t) x;")" \
    "$(q "SELECT min(i), max(i), count(*), min(k), max(d) FROM l.t;")"
check_eq "… under DuckDB's names" "$(sql "SELECT MIN(i), max(\"k\"), Count(*) FROM (FROM l.t) t;" | head -n 1)" \
    "$(sql "SELECT MIN(i), max(\"k\"), Count(*) FROM l.t;" | head -n 1)"
check_eq "an alias names the column" "lo" "$(sql "SELECT min(i) AS lo FROM l.t;" | head -n 1)"
check_eq "a string column reads the files (its statistics may be cut)" "1" \
    "$(scans "SELECT max(s) FROM l.t;")"
check_eq "… and is right" "v999" "$(q "SELECT max(s) FROM l.t;")"
check_eq "a filter reads the files" "1" "$(scans "SELECT min(i) FROM l.t WHERE i > 50;")"
check_eq "… and is right" "51" "$(q "SELECT min(i) FROM l.t WHERE i > 50;")"

sql "DELETE FROM l.t WHERE i = 1000 OR i = -50;" >/dev/null
check_eq "after a delete the values are the live rows'" "-49,999,1048" \
    "$(q "SELECT min(i), max(i), count(*) FROM l.t;")"
check_eq "… MIN/MAX read the files" "1" "$(scans "SELECT min(i), max(i) FROM l.t;")"
check_eq "… COUNT(*) still does not" "0" "$(scans "SELECT count(*) FROM l.t;")"
check_eq "… and counts the live rows" "1048" "$(q "SELECT count(*) FROM l.t;")"
check_eq "time travel reads the files" "1" "$(scans "SELECT max(i) FROM l.t AT (VERSION => 3);")"
check_eq "… and gives the values then" "-50,1000,1050" \
    "$(q "SELECT min(i), max(i), count(*) FROM l.t AT (VERSION => 3);")"
check_eq "pending rows are counted" "1049,-49,5000" \
    "$(q "BEGIN; INSERT INTO l.t VALUES (5000, 1, NULL, NULL); SELECT count(*), min(i), max(i) FROM l.t; ROLLBACK;" | tail -n 1)"
check_eq "an empty table counts 0" "0" "$(q "CREATE TABLE l.e (i INTEGER); SELECT count(*) FROM l.e;")"
check_eq "… and its MIN is NULL" "NULL" "$(q "SELECT coalesce(min(i)::VARCHAR, 'NULL') FROM l.e;")"

# a rewrite that removes every deletion makes the statistics exact again
sql "CALL ducklake_rewrite_data_files('l', 't', delete_threshold => 0.02);" >/dev/null
check_eq "a partial rewrite (one file of two): MIN/MAX still read the files" "1" "$(scans "SELECT min(i), max(i) FROM l.t;")"
sql "CALL ducklake_rewrite_data_files('l', 't', delete_threshold => 0);" >/dev/null
check_eq "after the rewrite: the live rows' values" "-49,999,1048,2022-09-26" \
    "$(q "SELECT min(i), max(i), count(*), max(d) FROM l.t;")"
check_eq "… without a scan" "0" "$(scans "SELECT min(i), max(i), max(d) FROM l.t;")"
check_eq "… the recomputed catalog rows" "1048|-49|999|false" "$(
    sql "SELECT s.record_count || '|' || c.min_value || '|' || c.max_value || '|' || c.contains_null
         FROM __ducklake_metadata_l.ducklake_table_stats s
         JOIN __ducklake_metadata_l.ducklake_table_column_stats c USING (table_id)
         JOIN __ducklake_metadata_l.ducklake_column k ON k.column_id = c.column_id AND k.table_id = c.table_id
         JOIN __ducklake_metadata_l.ducklake_table t ON t.table_id = s.table_id
         WHERE t.table_name = 't' AND k.column_name = 'i' AND k.end_snapshot IS NULL AND t.end_snapshot IS NULL" |
        tail -n +2)"
(cd "$d" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 100);
    CREATE TABLE l.mix (i INTEGER, st STRUCT(a INTEGER));
    INSERT INTO l.mix SELECT r, {'a': r * 10} FROM range(1, 201) x(r);
    INSERT INTO l.mix SELECT r, {'a': r * 10} FROM range(201, 251) x(r);
    DELETE FROM l.mix WHERE i = 1 OR i = 250;
    CALL ducklake_rewrite_data_files('l', 'mix', delete_threshold => 0);" >/dev/null 2>>"$d/err")
check_eq "with inlined rows: their deleted row leaves the bounds" "2,249,248" \
    "$(q "SELECT min(i), max(i), count(*) FROM l.mix;")"
check_eq "… without a scan" "0" "$(scans "SELECT min(i), max(i) FROM l.mix;")"
check_eq "… a nested leaf's bounds too" "20|2490" "$(
    sql "SELECT c.min_value || '|' || c.max_value FROM __ducklake_metadata_l.ducklake_table_column_stats c
         JOIN __ducklake_metadata_l.ducklake_column k ON k.column_id = c.column_id AND k.table_id = c.table_id
         JOIN __ducklake_metadata_l.ducklake_table t ON t.table_id = c.table_id
         WHERE t.table_name = 'mix' AND k.column_name = 'a' AND k.end_snapshot IS NULL" | tail -n +2)"
check_eq "in the transaction that created the table the rewrite has nothing to do" "1,199,199" \
    "$(q "BEGIN; CREATE TABLE l.tx (i INTEGER); INSERT INTO l.tx SELECT range FROM range(1, 201);
          DELETE FROM l.tx WHERE i = 200; CALL ducklake_rewrite_data_files('l', delete_threshold => 0);
          COMMIT; SELECT min(i), max(i), count(*) FROM l.tx;" | tail -n 1)"
check_eq "… and its MIN/MAX read the files" "1" "$(scans "SELECT min(i) FROM l.tx;")"

sql "CREATE TABLE l.u AS SELECT range AS i FROM range(100, 200); UPDATE l.u SET i = 1 WHERE i = 100;" >/dev/null
check_eq "after an update: the live rows' values" "1,199,100" "$(q "SELECT min(i), max(i), count(*) FROM l.u;")"
sql "ALTER TABLE l.u ADD COLUMN j INTEGER DEFAULT -7; INSERT INTO l.u VALUES (500, 3);" >/dev/null
check_eq "a column added with a default: older rows hold it" "-7,3" "$(q "SELECT min(j), max(j) FROM l.u;")"

# inlined rows count too
sql "CREATE TABLE l.small (i INTEGER);" >/dev/null
(cd "$d" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 100);
    INSERT INTO l.small SELECT range FROM range(10, 60); INSERT INTO l.small VALUES (5), (100);" >/dev/null)
check_eq "inlined rows: answered" "5,100,52" "$(q "SELECT min(i), max(i), count(*) FROM l.small;")"
check_eq "… without a scan" "0" "$(scans "SELECT min(i), max(i), count(*) FROM l.small;")"

# ---- bucket and identity partitions
sql "CREATE TABLE l.b (s VARCHAR, n INTEGER); ALTER TABLE l.b SET PARTITIONED BY (bucket(4, s));
     INSERT INTO l.b SELECT 'value_' || r, r FROM range(200) x(r);
     CREATE TABLE l.g (g INTEGER, n INTEGER); ALTER TABLE l.g SET PARTITIONED BY (bucket(8, g));
     INSERT INTO l.g SELECT r % 50, r FROM range(-500, 500) x(r);" >/dev/null
check_eq "four bucket files" "4" "$(q "SELECT count(*) FROM ducklake_list_files('l', 'b');")"
check_eq "an equality reads its bucket's file" "1" "$(files_read "SELECT * FROM l.b WHERE s = 'value_0';")"
check_eq "… and finds the row" "value_0,0" "$(q "SELECT * FROM l.b WHERE s = 'value_0';")"
for v in 0 7 42 -13 49; do
    check_eq "bucket(8) of $v: the rows of a full read" \
        "$(q "SELECT count(*), sum(n) FROM (SELECT * FROM l.g) x WHERE g = $v;")" \
        "$(q "SELECT count(*), sum(n) FROM l.g WHERE g = $v;")"
done
check_eq "IN reads at most its values' buckets" "1" \
    "$(files_read "SELECT * FROM l.g WHERE g IN (0, 1);" | awk '{print ($1 <= 2 && $1 >= 1)}')"
check_eq "… with every row" "$(q "SELECT count(*) FROM (SELECT * FROM l.g) x WHERE g IN (0, 1);")" \
    "$(q "SELECT count(*) FROM l.g WHERE g IN (0, 1);")"
check_eq "a range reads every bucket" "40" "$(q "SELECT count(*) FROM l.g WHERE g > 45;")"
check_eq "a value that is no INTEGER prunes nothing" "0" "$(q "SELECT count(*) FROM l.g WHERE g = 1.5;")"
sql "CREATE TABLE l.p (g INTEGER, n INTEGER); ALTER TABLE l.p SET PARTITIONED BY (g);
     INSERT INTO l.p SELECT r % 10, r FROM range(1000) x(r);" >/dev/null
check_eq "an identity key: one file" "1" "$(files_read "SELECT * FROM l.p WHERE g = 3;")"
check_eq "… its rows" "100" "$(q "SELECT count(*) FROM l.p WHERE g = 3;")"

# ---- top-N reads the best file first
sql "CREATE TABLE l.ev (ts TIMESTAMP, u VARCHAR);" >/dev/null
for n in 1000:1 500:2 200:3 100:4; do
    sql "INSERT INTO l.ev SELECT TIMESTAMP '2026-01-0${n#*:}' + interval (r) second, '${n#*:}' FROM range(${n%:*}) x(r);" >/dev/null
done
topn_rows() { sql "PRAGMA threads=1; EXPLAIN ANALYZE SELECT * FROM l.ev ORDER BY ts $1 LIMIT 1;" | tr -d '│' |
    awk '/TABLE_SCAN|READ_PARQUET/ {s = 1} s && /rows/ {print $1; exit}'; }
check_eq "DESC LIMIT: the newest file is read, the others skipped" "100" "$(topn_rows DESC)"
check_eq "ASC LIMIT: the oldest" "1,000" "$(topn_rows ASC)"
check_eq "… the top rows" "2026-01-04 00:01:39,4
2026-01-04 00:01:38,4" "$(q "SELECT * FROM l.ev ORDER BY ts DESC, u LIMIT 2;")"
check_eq "… with a filter" "2026-01-02 00:08:19,2" \
    "$(q "SELECT * FROM l.ev WHERE ts < TIMESTAMP '2026-01-03' ORDER BY ts DESC LIMIT 1;")"
check_eq "… NULLS FIRST reads them all" "1,800" "$(
    sql "PRAGMA threads=1; EXPLAIN ANALYZE SELECT * FROM l.ev ORDER BY ts DESC NULLS FIRST LIMIT 1;" |
        tr -d '│' | awk '/TABLE_SCAN|READ_PARQUET/ {s = 1} s && /rows/ {print $1; exit}')"

check_eq "nothing failed" "" "$(cat "$d/err")"
finish

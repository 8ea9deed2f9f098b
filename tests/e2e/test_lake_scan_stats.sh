#!/usr/bin/env bash
# tests/e2e/test_lake_scan_stats.sh — a lake table's scan gives DuckDB's optimizer the
# column statistics (min/max/null) of its data files, as DuckLake's scan hands over the
# catalog's, also when the table has several files:
#   - a GROUP BY on a small key range takes the perfect-hash aggregate (EXPLAIN), so its
#     groups come out in key order, not in the order the files were read;
#   - the read is still right after the files' layout changed (a renamed column).
#
# Run: `bash tests/e2e/test_lake_scan_stats.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "SET threads = 1; $1" | tail -n +2 | sed '/^$/d'; }

# the later year first: a hash aggregate in one thread would list 2021 first
lake_sql "$d" "CREATE TABLE l.ev (id INTEGER, ts TIMESTAMP);
INSERT INTO l.ev SELECT i, TIMESTAMP '2021-01-01' + INTERVAL (i) HOUR FROM range(100) t(i);
INSERT INTO l.ev SELECT i, TIMESTAMP '2020-01-01' + INTERVAL (i) HOUR FROM range(100, 300) t(i);
INSERT INTO l.ev SELECT i, TIMESTAMP '2021-06-01' + INTERVAL (i) HOUR FROM range(300, 350) t(i);" >/dev/null
check_eq "the table has three data files" "3" \
    "$(q "SELECT count(*) FROM __ducklake_metadata_l.ducklake_data_file WHERE end_snapshot IS NULL;")"
plan=$(q "EXPLAIN SELECT year(ts), count(*) FROM l.ev GROUP BY year(ts);")
case $plan in
*PERFECT_HASH_GROUP_BY*) ok "GROUP BY year(ts) uses the perfect-hash aggregate" ;;
*) fail "GROUP BY year(ts) uses the perfect-hash aggregate" "$plan" ;;
esac
check_eq "... and lists its groups in key order" "$(printf '2020,200\n2021,150')" \
    "$(q "SELECT year(ts), count(*) FROM l.ev GROUP BY year(ts);")"

lake_sql "$d" "ALTER TABLE l.ev RENAME COLUMN id TO ident;
INSERT INTO l.ev VALUES (1000, TIMESTAMP '2019-01-01');" >/dev/null
check_eq "after a rename, the old and new files read by field id" "$(printf '2019,1,1000\n2020,200,299\n2021,150,349')" \
    "$(q "SELECT year(ts), count(*), max(ident) FROM l.ev GROUP BY year(ts) ORDER BY 1;")"

finish

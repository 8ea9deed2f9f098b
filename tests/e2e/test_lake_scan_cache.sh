#!/usr/bin/env bash
# tests/e2e/test_lake_scan_cache.sh — the session's cache of what scans read from the catalog
# (each table's committed files, inlined tables' column names and ended rows; src/lake/scan.c)
# never shows stale data: in ONE session that keeps writing (files, deletes, inlined inserts,
# inlined deletes, a column rename, CREATE OR REPLACE, a rolled-back transaction), every read —
# now and AT (VERSION => n) for each n — gives what a fresh session (empty cache) gives for the
# same read, and the expected rows. The fresh session attaches a lake of 5 tables, whose views
# come from the bulk reads of lk_scan_prefill (files, partition values, inlined tables).
#
# Run: `bash tests/e2e/test_lake_scan_cache.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1"; }

# The reads: t and w now and at every snapshot 1..N (a snapshot where a table does not exist
# reads as an error row, the same in both sessions).
reads() {
    local n=$1 s=""
    for ((v = 1; v <= n; v++)); do
        s+="SELECT $v AS v, count(*) AS n, sum(id) AS s FROM l.t AT (VERSION => $v);"
    done
    s+="SELECT count(*) AS n, sum(id) AS s FROM l.t;"
    s+="SELECT sum(rowid) AS r, sum(id) AS i FROM l.t;"
    s+="SELECT rowid, * FROM l.u ORDER BY rowid DESC LIMIT 3;"
    s+="SELECT k, count(*) AS n, sum(v) AS s FROM l.p GROUP BY k ORDER BY k;"
    s+="SELECT count(*) AS n FROM l.p WHERE k = 1;"
    s+="SELECT * FROM l.w ORDER BY ALL;"
    for ((v = 9; v <= n; v++)); do
        s+="SELECT $v AS v, * FROM l.w AT (VERSION => $v) ORDER BY ALL;"
    done
    printf '%s' "$s"
}

# snapshots: 1 t (50 rows, a file), 2 u, 3 t +30 rows, 4 delete from t, 5 inlined insert into u,
# 6 inlined insert into t, 7 delete from t's inlined rows, 8 (rolled back: none), 8 t replaced,
# 9 w, 10 w inlined rows, 11 rename w.a, 12 w inlined rows, 13 delete from w's inlined rows,
# 14 p, 15 p partitioned by k, 16 p rows (a file per partition).
# Between the writes, pinned reads of what was just written and of what came before (the
# cache holds a table's files from the snapshot that last changed it).
steps=(
    "CREATE TABLE l.t AS SELECT range AS id FROM range(50);"
    "CREATE TABLE l.u AS SELECT range AS id FROM range(50);"
    "INSERT INTO l.t SELECT range FROM range(50, 80);"
    "DELETE FROM l.t WHERE id < 5;"
    "INSERT INTO l.u VALUES (1);"
    "INSERT INTO l.t VALUES (1000), (1001);"
    "DELETE FROM l.t WHERE id = 1000;"
    "BEGIN; INSERT INTO l.t SELECT range FROM range(100); SELECT count(*) FROM l.t; ROLLBACK;"
    "CREATE OR REPLACE TABLE l.t AS SELECT range * 2 AS id FROM range(40);"
    "CREATE TABLE l.w (a INTEGER, b INTEGER);"
    "INSERT INTO l.w VALUES (1, 10), (2, 20);"
    "ALTER TABLE l.w RENAME COLUMN a TO c;"
    "INSERT INTO l.w VALUES (3, 30);"
    "DELETE FROM l.w WHERE c = 1;"
    "CREATE TABLE l.p (k INTEGER, v INTEGER);"
    "ALTER TABLE l.p SET PARTITIONED BY (k);"
    "INSERT INTO l.p SELECT range % 3, range FROM range(30);"
)
pinned() { # the reads after step $1 (snapshot $2, 0 when the step made none)
    local v=$2 r=""
    for ((k = 1; k <= v; k++)); do
        r+="SELECT $v AS after, $k AS v, count(*) AS n, sum(id) AS s, sum(rowid) AS r FROM l.t AT (VERSION => $k);"
        [ "$k" -ge 2 ] && r+="SELECT $v AS after, $k AS v, count(*) AS n, sum(id) AS s FROM l.u AT (VERSION => $k);"
        [ "$k" -ge 10 ] && r+="SELECT $v AS after, $k AS v, * FROM l.w AT (VERSION => $k) ORDER BY ALL;"
    done
    printf '%s' "$r"
}
snaps=(1 2 3 4 5 6 7 7 8 9 10 11 12 13 14 15 16)
writes="" interleaved=""
for i in "${!steps[@]}"; do
    writes+="${steps[$i]} $(pinned "$i" "${snaps[$i]}")"
    interleaved+="$(pinned "$i" "${snaps[$i]}")"
done

check "the writes run" q "$writes"
n=$(q "SELECT max(snapshot_id) FROM ducklake_snapshots('l');" | sed -n 2p)
check_eq "16 snapshots" "16" "$n"
results() { awk '/^after,/ { p = 1 } p { print } /^$/ { p = 0 }'; }
check_eq "pinned reads while writing = the same reads in a fresh session" \
    "$(q "$interleaved" | results)" \
    "$(rm -rf "${d:?}/m.ducklake"* "${d:?}/d" && q "$writes" | results)"

# the same session: the writes again on a fresh lake, then the reads
rm -rf "${d:?}/m.ducklake"* "${d:?}/d"
same=$(q "$writes $(reads "$n")" | sed -n '/^v,n,s$/,$p')
fresh=$(q "$(reads "$n")" | sed -n '/^v,n,s$/,$p')
check_eq "reads in the writing session = reads in a fresh one" "$fresh" "$same"

check_eq "t at 1, 3, 4, 6, 7" "$(printf '1,50,1225\n3,80,3160\n4,75,3150\n6,77,5151\n7,76,4151')" \
    "$(printf '%s\n' "$fresh" | grep -E '^(1|3|4|6|7),' | head -n 5)"
check_eq "t now (replaced)" "40,1560" "$(printf '%s\n' "$fresh" | grep -A1 '^n,s$' | tail -n 1)"
check_eq "w now" "$(printf 'c,b\n2,20\n3,30')" \
    "$(printf '%s\n' "$fresh" | grep -A2 '^c,b$' | head -n 3)"
check_eq "w at 10 (before the rename)" "$(printf '10,1,10\n10,2,20')" \
    "$(printf '%s\n' "$fresh" | grep -A2 '^v,a,b$' | tail -n 2)"
check_eq "p by partition" "$(printf 'k,n,s\n0,10,135\n1,10,145\n2,10,155')" \
    "$(printf '%s\n' "$fresh" | grep -A3 '^k,n,s$')"
check_eq "w at 13" "$(printf '13,2,20\n13,3,30')" "$(printf '%s\n' "$fresh" | grep -E '^13,[0-9]+,[0-9]+$' | tail -n 2)"

# A CREATE TABLE … AS writes its Parquet file at once; a result of at most the inlining limit
# (10 rows) is inlined instead and its file removed, one of 11 rows keeps its file.
q "CREATE TABLE l.small AS SELECT range AS id FROM range(10);
CREATE TABLE l.big AS SELECT range AS id FROM range(11);" >/dev/null
check_eq "10 rows inlined, 11 rows in a file" "$(printf 'small,big,files\n10,11,1')" \
    "$(q "SELECT (SELECT count(*) FROM l.small) AS small, (SELECT count(*) FROM l.big) AS big,
(SELECT count(*) FROM ducklake_list_files('l', 'big')) AS files;" | head -n 2)"
check_eq "no Parquet file left for the inlined result" "0 1" \
    "$(find "$d/d/main/small" -name '*.parquet' 2>/dev/null | wc -l) $(find "$d/d/main/big" -name '*.parquet' | wc -l)"

finish

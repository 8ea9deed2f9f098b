#!/usr/bin/env bash
# tests/e2e/test_lake_crash.sh — a crash at any point of a lake commit leaves
# the lake readable at its last committed snapshot, and writable.
#
# src/lake/txn.c has a test hook: TARN_CRASH_AT=<point> makes tarn _exit(99)
# at that point of the commit:
#   after-parquet-write  data/delete files written, catalog not touched yet
#   in-catalog-txn       inside the catalog's DuckDB transaction, after the
#                        snapshot row was inserted, before COMMIT
#   after-commit         right after the catalog COMMIT (before tarn's
#                        in-memory bookkeeping)
#
# For every point and every kind of write (inlined insert, Parquet insert,
# DELETE, UPDATE, a BEGIN…COMMIT transaction of several statements, and a
# CREATE TABLE … AS), on a copy of a baseline lake:
#   - the crashing run exits 99;
#   - the catalog file, opened read-only by plain DuckDB (no lake), has no
#     half-written snapshot: snapshot ids 0..max without gaps, one
#     ducklake_snapshot_changes row per snapshot, no catalog row that begins
#     or ends after the last snapshot, ids below the snapshot's counters;
#   - a fresh `tarn sql` attaches the lake and sees exactly the baseline
#     rows (before the commit point) or exactly the written rows (after it),
#     compared with the same statements run on plain DuckDB tables, and the
#     last snapshot id is unchanged (before) or one more (after);
#   - before the commit point, the same write run again succeeds as the
#     next snapshot; then one more insert works and gets the next snapshot
#     id, the crashed write's rows never come back, and time travel to the
#     baseline snapshot still shows the baseline.
#
# Run: `bash tests/e2e/test_lake_crash.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');"

# run DIR [ENV=VAL...] -- SQL — `tarn sql --format csv SQL` in DIR; stdout to
# $d/out, stderr to $d/err, exit status in $rc.
run() {
    local dir=$1
    shift
    local envs=()
    while [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    (cd "$dir" && env "${envs[@]}" "$TARN" sql --format csv "$@") </dev/null >"$d/out" 2>"$d/err"
    rc=$?
}

# check_run NAME WANT_RC — the last run exited WANT_RC without a sanitizer report.
check_run() {
    local name=$1 want=$2
    if grep -qE 'Sanitizer|runtime error:' "$d/err"; then
        fail "$name" "sanitizer report:" "$(head -n 30 "$d/err")"
    elif [ "$rc" -ne "$want" ]; then
        fail "$name" "exit status $rc, expected $want" "$(tail -n 10 "$d/err")" \
            "stdout:" "$(tail -n 10 "$d/out")"
    else
        ok "$name"
    fi
}

# The content of the lake, as one CSV block: rows, sum of ids, an md5 of
# every row in order, and the tables of the lake.
STATE="SELECT count(*) AS n, sum(id) AS sum_id,
  md5(string_agg(id || ':' || coalesce(s, 'NULL'), ',' ORDER BY id, s)) AS rows,
  (SELECT string_agg(table_name, '|' ORDER BY table_name) FROM information_schema.tables
     WHERE table_catalog = 'lake') AS tables
  FROM lake.t"
LAST="SELECT max(snapshot_id) AS last FROM ducklake_snapshots('lake')"

# The baseline: snapshot 1 creates lake.t, 2 inserts 3 inlined rows, 3 inserts
# 1000 rows as a Parquet file.
BASE_SQL="CREATE TABLE lake.t (id INTEGER, s VARCHAR);
INSERT INTO lake.t VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO lake.t SELECT i, 'p' || i FROM range(100, 1100) r(i);"
BASE_SNAP=3

ops=(inlined-insert parquet-insert delete update transaction ctas)
declare -A WRITE=(
    [inlined-insert]="INSERT INTO lake.t VALUES (5001, 'n1'), (5002, NULL), (5003, 'n3');"
    [parquet-insert]="INSERT INTO lake.t SELECT i, 'n' || i FROM range(5000, 6000) r(i);"
    # touches an inlined row and 200 rows of the Parquet file
    [delete]="DELETE FROM lake.t WHERE id = 2 OR id BETWEEN 200 AND 399;"
    [update]="UPDATE lake.t SET s = 'upd' WHERE id IN (3, 600, 601);"
    [transaction]="BEGIN;
INSERT INTO lake.t VALUES (5001, 'n1'), (5002, 'n2');
INSERT INTO lake.t SELECT i, 'n' || i FROM range(6000, 7000) r(i);
DELETE FROM lake.t WHERE id IN (1, 150);
UPDATE lake.t SET s = 'upd' WHERE id IN (3, 700);
COMMIT;"
    [ctas]="CREATE TABLE lake.t2 AS SELECT i AS x, 'r' || i AS y FROM range(20) r(i);"
)
points=(after-parquet-write in-catalog-txn after-commit)

# ---- expected states, from plain DuckDB tables ------------------------------

ORACLE_BASE="ATTACH ':memory:' AS lake;
CREATE TABLE lake.t (id INTEGER, s VARCHAR);
INSERT INTO lake.t VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO lake.t SELECT i, 'p' || i FROM range(100, 1100) r(i);"
run "$d" -- "$ORACLE_BASE $STATE"
base_state=$(tail -n 3 "$d/out")
declare -A WANT
for op in "${ops[@]}"; do
    run "$d" -- "$ORACLE_BASE ${WRITE[$op]} $STATE"
    WANT[$op]=$(tail -n 3 "$d/out")
done
declare -A WANT_AFTER
for op in "${ops[@]}"; do
    run "$d" -- "$ORACLE_BASE ${WRITE[$op]} INSERT INTO lake.t VALUES (7777, 'after'); $STATE"
    WANT_AFTER[$op]=$(tail -n 3 "$d/out")
done
# The baseline's rows as an md5, computed here without DuckDB.
base_md5=$({
    printf '%s:%s\n' 1 a 2 b 3 c
    for i in $(seq 100 1099); do printf '%s:p%s\n' "$i" "$i"; done
} | paste -sd, | tr -d '\n' | md5sum | cut -d' ' -f1)
check_eq "oracle: baseline state" "n,sum_id,rows,tables
1003,599506,$base_md5,t" "$base_state"

# The baseline rows by time travel, after any later write.
TT_BASE="SELECT count(*) AS n, sum(id) AS sum_id,
  md5(string_agg(id || ':' || coalesce(s, 'NULL'), ',' ORDER BY id, s)) AS rows
  FROM lake.t AT (VERSION => $BASE_SNAP)"
base_tt="n,sum_id,rows
1003,599506,$base_md5"

# ---- the baseline lake ----------------------------------------------------

base=$d/base
mkdir "$base"
run "$base" -- "$ATTACH $BASE_SQL $LAST"
check_run "baseline lake written" 0
check_eq "baseline lake is at snapshot $BASE_SNAP" "$BASE_SNAP" "$(tail -n 2 "$d/out" | head -n 1)"
run "$base" -- "$ATTACH $STATE"
check_eq "baseline lake content" "$base_state" "$(cat "$d/out")"

# catalog_check NAME DIR WANT_LAST — open DIR/meta.ducklake read-only with plain
# DuckDB (no lake) and check it holds snapshots 0..WANT_LAST and nothing else.
catalog_check() {
    local name=$1 dir=$2 want=$3 cat="ATTACH 'meta.ducklake' AS m (READ_ONLY);"
    # Every catalog table with snapshot columns, inlined data tables included.
    run "$dir" -- "$cat SELECT table_name || '.' || column_name FROM duckdb_columns()
        WHERE database_name = 'm' AND column_name IN ('begin_snapshot', 'end_snapshot')
        ORDER BY ALL"
    if [ "$rc" -ne 0 ]; then
        check_run "$name: catalog opens read-only in plain DuckDB" 0
        return
    fi
    local q="" tc
    while IFS= read -r tc; do
        case $tc in *.begin_snapshot | *.end_snapshot) ;; *) continue ;; esac
        q+="${q:+ UNION ALL }SELECT '${tc}' AS col, ${tc#*.} AS snap FROM m.${tc%%.*}"
    done <"$d/out"
    run "$dir" -- "$cat
SELECT max(snapshot_id) AS last, count(*) = max(snapshot_id) + 1 AS contiguous FROM m.ducklake_snapshot;
SELECT count(*) AS unmatched FROM m.ducklake_snapshot s
  FULL JOIN m.ducklake_snapshot_changes c USING (snapshot_id)
  WHERE s.snapshot_id IS NULL OR c.snapshot_id IS NULL;
SELECT coalesce(string_agg(DISTINCT col, ' '), 'none') AS rows_after_last FROM ($q)
  WHERE snap > (SELECT max(snapshot_id) FROM m.ducklake_snapshot);
SELECT (SELECT coalesce(max(data_file_id), -1) FROM m.ducklake_data_file) < s.next_file_id
   AND (SELECT coalesce(max(delete_file_id), -1) FROM m.ducklake_delete_file) < s.next_file_id
   AND (SELECT max(table_id) FROM m.ducklake_table) < s.next_catalog_id
   AND (SELECT max(schema_id) FROM m.ducklake_schema) < s.next_catalog_id AS ids_below_counters
  FROM m.ducklake_snapshot s ORDER BY snapshot_id DESC LIMIT 1;"
    check_run "$name: catalog opens read-only in plain DuckDB" 0
    check_eq "$name: catalog holds snapshots 0..$want, each with its changes row, nothing beyond" \
        "last,contiguous
$want,true

unmatched
0

rows_after_last
none

ids_below_counters
true" "$(cat "$d/out")"
}

# ---- every crash point × every write ----------------------------------------

for op in "${ops[@]}"; do
    for point in "${points[@]}"; do
        name="$op@$point"
        lake=$d/$op-$point
        cp -a "$base" "$lake"

        run "$lake" TARN_CRASH_AT="$point" -- "$ATTACH ${WRITE[$op]}"
        check_run "$name: the write exits 99 at the crash point" 99

        if [ "$point" = after-commit ]; then
            want_last=$((BASE_SNAP + 1))
            want_state=${WANT[$op]}
        else
            want_last=$BASE_SNAP
            want_state=$base_state
        fi
        catalog_check "$name" "$lake" "$want_last"

        run "$lake" -- "$ATTACH $STATE; $LAST"
        check_run "$name: a fresh tarn attaches the lake and reads it" 0
        if [ "$point" = after-commit ]; then
            check_eq "$name: the committed write is there" "$want_state

last
$want_last" "$(cat "$d/out")"
        else
            check_eq "$name: previous rows all there, the write is not, last snapshot unchanged" \
                "$want_state

last
$want_last" "$(cat "$d/out")"
            # The same write again, now without a crash.
            run "$lake" -- "$ATTACH ${WRITE[$op]} $LAST"
            check_run "$name: the same write succeeds after the crash" 0
            check_eq "$name: and commits snapshot $((BASE_SNAP + 1))" "$((BASE_SNAP + 1))" \
                "$(tail -n 2 "$d/out" | head -n 1)"
            run "$lake" -- "$ATTACH $STATE"
            check_eq "$name: the retried write's rows, once" "${WANT[$op]}" "$(tail -n 3 "$d/out")"
            want_last=$((BASE_SNAP + 1))
        fi

        run "$lake" -- "$ATTACH INSERT INTO lake.t VALUES (7777, 'after'); $LAST"
        check_run "$name: a following insert works" 0
        check_eq "$name: it gets snapshot id $((want_last + 1))" "$((want_last + 1))" \
            "$(tail -n 2 "$d/out" | head -n 1)"
        run "$lake" -- "$ATTACH $STATE; $TT_BASE"
        check_run "$name: reads after the following insert" 0
        check_eq "$name: exactly the write's and the new row, baseline still there by time travel" \
            "${WANT_AFTER[$op]}

$base_tt" "$(cat "$d/out")"
        catalog_check "$name (after the following insert)" "$lake" "$((want_last + 1))"
    done
done

# A crash must not leave the lake's catalog in use (no stale lock): a read-only
# attach of a crashed lake works too.
run "$d/parquet-insert-in-catalog-txn" -- \
    "ATTACH 'ducklake:meta.ducklake' AS lake (READ_ONLY); SELECT count(*) AS n FROM lake.t"
check_run "read-only attach after a crash" 0

finish

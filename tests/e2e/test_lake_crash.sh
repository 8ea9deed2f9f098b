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
# DELETE, UPDATE, a BEGIN…COMMIT transaction of several statements, a
# CREATE TABLE … AS and an ALTER TABLE … ADD COLUMN), on a copy of a baseline
# lake:
#   - the crashing run exits 99;
#   - the catalog file, opened read-only by plain DuckDB (no lake), has no
#     half-written snapshot: snapshot ids 0..max without gaps, one
#     ducklake_snapshot_changes row per snapshot, no catalog row that begins
#     or ends after the last snapshot, no inlined-data table that is not
#     registered, file and catalog ids below the last snapshot's counters;
#   - a fresh `tarn sql` attaches the lake and sees exactly the baseline
#     rows (before the commit point) or exactly the written rows (after it),
#     compared with the same statements run on plain DuckDB tables, and the
#     last snapshot id is unchanged (before) or one more (after);
#   - before the commit point, the same write run again succeeds as the
#     next snapshot; then one more insert works and gets the next snapshot
#     id, the crashed write's rows never come back, and time travel to the
#     baseline snapshot still shows the baseline; the catalog is checked
#     again.
# The 21 cases run two at a time (each on its own lake); their reports are
# printed in order.
#
# Run: `bash tests/e2e/test_lake_crash.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
OUT=$d/out
ERR=$d/err
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');"

# run DIR [ENV=VAL...] -- SQL — `tarn sql --format csv SQL` in DIR; stdout to
# $OUT (default $d/out), stderr to $ERR ($d/err), exit status in $rc.
run() {
    local dir=$1
    shift
    local envs=()
    while [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    (cd "$dir" && env "${envs[@]}" "$TARN" sql --format csv "$@") </dev/null >"$OUT" 2>"$ERR"
    rc=$?
}

# check_run NAME WANT_RC — the last run exited WANT_RC without a sanitizer report.
check_run() {
    local name=$1 want=$2
    if grep -qE 'Sanitizer|runtime error:' "$ERR"; then
        fail "$name" "sanitizer report:" "$(head -n 30 "$ERR")"
    elif [ "$rc" -ne "$want" ]; then
        fail "$name" "exit status $rc, expected $want" "$(tail -n 10 "$ERR")" \
            "stdout:" "$(tail -n 10 "$OUT")"
    else
        ok "$name"
    fi
}

# The content of the lake, as one CSV block: rows, sum of ids, an md5 of
# every row in order, and the tables of the lake with their columns.
STATE="SELECT count(*) AS n, sum(id) AS sum_id,
  md5(string_agg(id || ':' || coalesce(s, 'NULL'), ',' ORDER BY id, s)) AS rows,
  (SELECT string_agg(table_name || '(' || cols || ')', ' ' ORDER BY table_name) FROM (
     SELECT table_name, string_agg(column_name || ' ' || data_type, '; ' ORDER BY ordinal_position) AS cols
     FROM information_schema.columns WHERE table_catalog = 'lake' GROUP BY table_name)) AS tables
  FROM lake.t"
LAST="SELECT max(snapshot_id) AS last FROM ducklake_snapshots('lake')"

# The baseline: snapshot 1 creates lake.t, 2 inserts 4 inlined rows, 3 inserts
# 1001 rows as a Parquet file, 4 deletes an inlined row and a Parquet row.
# Left: ids 1..3 and 100..1099.
BASE_SQL="CREATE TABLE lake.t (id INTEGER, s VARCHAR);
INSERT INTO lake.t VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd');
INSERT INTO lake.t SELECT i, 'p' || i FROM range(100, 1101) r(i);
DELETE FROM lake.t WHERE id IN (4, 1100);"
BASE_SNAP=4

ops=(inlined-insert parquet-insert delete update transaction ctas alter)
declare -A WRITE=(
    [inlined-insert]="INSERT INTO lake.t VALUES (5001, 'n1'), (5002, NULL), (5003, 'n3');"
    [parquet-insert]="INSERT INTO lake.t SELECT i, 'n' || i FROM range(5000, 6000) r(i);"
    # an inlined row and 200 rows of the Parquet file: a delete file
    [delete]="DELETE FROM lake.t WHERE id = 2 OR id BETWEEN 200 AND 399;"
    # an inlined row and 300 rows of the Parquet file: a delete file and a new data file
    [update]="UPDATE lake.t SET s = 'upd' WHERE id = 3 OR id BETWEEN 600 AND 899;"
    [transaction]="BEGIN;
INSERT INTO lake.t VALUES (5001, 'n1'), (5002, 'n2');
INSERT INTO lake.t SELECT i, 'n' || i FROM range(6000, 7000) r(i);
DELETE FROM lake.t WHERE id IN (1, 150);
UPDATE lake.t SET s = 'upd' WHERE id IN (3, 700);
COMMIT;"
    [ctas]="CREATE TABLE lake.t2 AS SELECT i AS x, 'r' || i AS y FROM range(20) r(i);"
    # a new schema version: a new inlined-data table for later inlined inserts
    [alter]="ALTER TABLE lake.t ADD COLUMN z INTEGER;"
)
points=(after-parquet-write in-catalog-txn after-commit)

# ---- expected states, from plain DuckDB tables ------------------------------

# One process runs every write on a fresh copy of the baseline in plain
# DuckDB (an in-memory database attached as "lake"), then the same write
# followed by the insert of row 7777; each STATE result is kept.
ORACLE_BASE="ATTACH ':memory:' AS lake; $BASE_SQL"
oracle="$ORACLE_BASE $STATE; DETACH lake;"
for op in "${ops[@]}"; do
    oracle+="$ORACLE_BASE ${WRITE[$op]} $STATE; DETACH lake;"
    oracle+="$ORACLE_BASE ${WRITE[$op]} INSERT INTO lake.t (id, s) VALUES (7777, 'after'); $STATE; DETACH lake;"
done
run "$d" -- "$oracle"
check_run "oracle: the writes run on plain DuckDB" 0
mapfile -t states < <(grep -A1 -x 'n,sum_id,rows,tables' "$OUT" | grep -v -x -e 'n,sum_id,rows,tables' -e --)
base_state="n,sum_id,rows,tables
${states[0]}"
declare -A WANT WANT_AFTER
i=1
for op in "${ops[@]}"; do
    WANT[$op]="n,sum_id,rows,tables
${states[i]}"
    WANT_AFTER[$op]="n,sum_id,rows,tables
${states[i + 1]}"
    i=$((i + 2))
done
# The baseline's rows as an md5, computed here without DuckDB.
base_md5=$({
    printf '%s:%s\n' 1 a 2 b 3 c
    for i in $(seq 100 1099); do printf '%s:p%s\n' "$i" "$i"; done
} | paste -sd, | tr -d '\n' | md5sum | cut -d' ' -f1)
check_eq "oracle: baseline state" "n,sum_id,rows,tables
1003,599506,$base_md5,t(id INTEGER; s VARCHAR)" "$base_state"
check_eq "oracle: a state for every write" "$((1 + 2 * ${#ops[@]}))" "${#states[@]}"

# The baseline rows by time travel, after any later write.
TT_BASE="SELECT count(*) AS n, sum(id) AS sum_id,
  md5(string_agg(id || ':' || coalesce(s, 'NULL'), ',' ORDER BY id, s)) AS rows
  FROM lake.t AT (VERSION => $BASE_SNAP)"
base_tt="n,sum_id,rows
1003,599506,$base_md5"

# ---- the baseline lake ----------------------------------------------------

base=$d/base
mkdir "$base"
run "$base" -- "$ATTACH $BASE_SQL $LAST; $STATE"
check_run "baseline lake written" 0
check_eq "baseline lake is at snapshot $BASE_SNAP, with the baseline rows" "last
$BASE_SNAP

$base_state" "$(tail -n 6 "$OUT")"

# ---- the catalog, read by plain DuckDB ----------------------------------------

PLAIN="ATTACH 'meta.ducklake' AS m (READ_ONLY);"

# snapcols NAME DIR — set SNAPCOLS_Q to a query of every (column, snapshot id)
# of the catalog tables of DIR/meta.ducklake with snapshot columns, inlined
# data and delete tables included. Checks that plain DuckDB opens the catalog.
snapcols() {
    local name=$1 dir=$2 tc
    run "$dir" -- "$PLAIN SELECT table_name || '.' || column_name FROM duckdb_columns()
        WHERE database_name = 'm' AND column_name IN ('begin_snapshot', 'end_snapshot')
        ORDER BY ALL"
    check_run "$name: catalog opens read-only in plain DuckDB" 0
    SNAPCOLS_Q=""
    while IFS= read -r tc; do
        case $tc in ducklake_*.begin_snapshot | ducklake_*.end_snapshot) ;; *) continue ;; esac
        SNAPCOLS_Q+="${SNAPCOLS_Q:+ UNION ALL }SELECT '${tc}' AS col, ${tc#*.} AS snap FROM m.${tc%%.*}"
    done <"$OUT"
    [ -n "$SNAPCOLS_Q" ] || SNAPCOLS_Q="SELECT 'none' AS col, NULL::BIGINT AS snap"
}

# catcheck_sql — the checks of the catalog attached as m (14 lines of output):
# snapshot ids 0..max without gaps, a changes row for each, no row of any
# catalog table of the baseline beginning or ending after the last snapshot,
# no inlined-data table that is not registered at or before the last
# snapshot's schema version, file and catalog ids below the last snapshot's
# counters.
catcheck_sql() {
    printf '%s' "
SELECT max(snapshot_id) AS last, count(*) = max(snapshot_id) + 1 AS contiguous FROM m.ducklake_snapshot;
SELECT count(*) AS unmatched FROM m.ducklake_snapshot s
  FULL JOIN m.ducklake_snapshot_changes c USING (snapshot_id)
  WHERE s.snapshot_id IS NULL OR c.snapshot_id IS NULL;
SELECT coalesce(string_agg(DISTINCT col, ' '), 'none') AS rows_after_last FROM ($SNAPCOLS_Q)
  WHERE snap > (SELECT max(snapshot_id) FROM m.ducklake_snapshot);
SELECT coalesce(string_agg(table_name, ' '), 'none') AS stray_inlined_tables FROM duckdb_tables()
  WHERE database_name = 'm' AND starts_with(table_name, 'ducklake_inlined_data_')
    AND table_name <> 'ducklake_inlined_data_tables'
    AND table_name NOT IN (SELECT table_name FROM m.ducklake_inlined_data_tables
      WHERE schema_version <= (SELECT schema_version FROM m.ducklake_snapshot
                               ORDER BY snapshot_id DESC LIMIT 1));
SELECT (SELECT coalesce(max(data_file_id), -1) FROM m.ducklake_data_file) < s.next_file_id
   AND (SELECT coalesce(max(delete_file_id), -1) FROM m.ducklake_delete_file) < s.next_file_id
   AND (SELECT max(table_id) FROM m.ducklake_table) < s.next_catalog_id
   AND (SELECT max(schema_id) FROM m.ducklake_schema) < s.next_catalog_id AS ids_below_counters
  FROM m.ducklake_snapshot s ORDER BY snapshot_id DESC LIMIT 1;"
}

# catcheck_want LAST — the output of catcheck_sql for a sound catalog.
catcheck_want() {
    printf '%s' "last,contiguous
$1,true

unmatched
0

rows_after_last
none

stray_inlined_tables
none

ids_below_counters
true"
}

# The catalog tables with snapshot columns, from the baseline lake (it has
# inlined data and inlined deletes).
snapcols "baseline" "$base"
run "$base" -- "$PLAIN $(catcheck_sql)"
check_eq "baseline: catalog holds snapshots 0..$BASE_SNAP, nothing beyond" \
    "$(catcheck_want "$BASE_SNAP")" "$(cat "$OUT")"
case $SNAPCOLS_Q in
*ducklake_inlined_data_1_1.begin_snapshot*ducklake_inlined_delete_1.begin_snapshot*) ok "baseline: catalog has inlined data and delete tables" ;;
*) fail "baseline: catalog has inlined data and delete tables" "$SNAPCOLS_Q" ;;
esac

# ---- every crash point × every write ----------------------------------------

# crash_case OP POINT — all the checks of one write crashing at one point, on
# a copy of the baseline lake.
crash_case() {
    local op=$1 point=$2 name="$1@$2" lake=$d/$1-$2 want_last want_state what retry=""
    cp -a "$base" "$lake"

    run "$lake" TARN_CRASH_AT="$point" -- "$ATTACH ${WRITE[$op]}"
    check_run "$name: the write exits 99 at the crash point" 99

    if [ "$point" = after-commit ]; then
        want_last=$((BASE_SNAP + 1))
        want_state=${WANT[$op]}
        what="the committed write is there, last snapshot $want_last"
    else
        want_last=$BASE_SNAP
        want_state=$base_state
        what="previous rows all there, the write's are not, last snapshot unchanged"
    fi

    # In one process: the catalog as the crash left it, read by plain DuckDB;
    # the lake, attached and read; before the commit point, the same write
    # again, now without a crash; one more insert; the catalog again.
    [ "$point" = after-commit ] || retry="${WRITE[$op]} $LAST; $STATE;"
    run "$lake" -- "$PLAIN $(catcheck_sql) DETACH m;
$ATTACH $STATE; $LAST; $retry
INSERT INTO lake.t (id, s) VALUES (7777, 'after'); $LAST; $STATE; $TT_BASE;
DETACH lake; $PLAIN $(catcheck_sql)"
    check_run "$name: plain DuckDB reads the catalog, then tarn attaches the lake, ${retry:+writes it again, }inserts" 0
    check_eq "$name: plain DuckDB: catalog holds snapshots 0..$want_last, each with its changes row, nothing beyond" \
        "$(catcheck_want "$want_last")" "$(sed -n 1,14p "$OUT")"
    check_eq "$name: $what" "$want_state

last
$want_last" "$(sed -n 16,20p "$OUT")"
    local tail_out
    tail_out=$(tail -n 27 "$OUT")
    if [ -n "$retry" ]; then
        check_eq "$name: the same write, retried, commits snapshot $((BASE_SNAP + 1)) with its rows once" \
            "last
$((BASE_SNAP + 1))

${WANT[$op]}" "$(tail -n 33 "$OUT" | head -n 5)"
        want_last=$((BASE_SNAP + 1))
    fi
    check_eq "$name: the insert gets snapshot id $((want_last + 1)); exactly the write's and the new row; baseline by time travel" \
        "Count
1

last
$((want_last + 1))

${WANT_AFTER[$op]}

$base_tt" "$(printf '%s\n' "$tail_out" | sed -n 1,11p)"
    check_eq "$name: then the catalog holds snapshots 0..$((want_last + 1)) and nothing beyond" \
        "$(catcheck_want $((want_last + 1)))" "$(printf '%s\n' "$tail_out" | sed -n '13,$p')"
}

# The cases run two at a time, each in a subshell with its own output files;
# their reports are replayed in order.
jobs_running=0
for op in "${ops[@]}"; do
    for point in "${points[@]}"; do
        (
            trap - EXIT
            OUT=$d/$op-$point.out
            ERR=$d/$op-$point.err
            crash_case "$op" "$point"
        ) >"$d/$op-$point.log" 2>&1 &
        jobs_running=$((jobs_running + 1))
        if [ "$jobs_running" -ge 2 ]; then
            wait -n
            jobs_running=$((jobs_running - 1))
        fi
    done
done
wait
for op in "${ops[@]}"; do
    for point in "${points[@]}"; do
        replay "$d/$op-$point.log"
    done
done

# A crash leaves no stale lock: a read-only attach of a crashed lake works.
mkdir "$d/ro"
cp -a "$base/." "$d/ro/"
run "$d/ro" TARN_CRASH_AT=in-catalog-txn -- "$ATTACH ${WRITE[parquet-insert]}"
run "$d/ro" -- "ATTACH 'ducklake:meta.ducklake' AS lake (READ_ONLY); SELECT count(*) AS n FROM lake.t"
check_run "read-only attach right after a crash" 0
check_eq "read-only attach after a crash sees the baseline rows" $'n\n1003' "$(cat "$OUT")"

finish

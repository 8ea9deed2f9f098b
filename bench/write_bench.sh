#!/usr/bin/env bash
# bench/write_bench.sh — the lake's write path, two binaries side by side: BASE (e.g. a build of
# an older commit) and TARN (default build/tarn), interleaved, RUNS times each, medians printed.
#
#   7a `CREATE TABLE lake.t AS SELECT i % 1000000 AS k, count(*), sum(i) FROM range(ROWS) GROUP BY k`
#      into a fresh lake: a blocking query whose 1M rows go to Parquet
#   7b the same GROUP BY with 5 groups: a blocking query whose rows are inlined
#   7c INSERTS × `INSERT INTO lake.small SELECT …` of one row, each its own snapshot (inlined)
#   7d `INSERT INTO lake.p SELECT …` of ROWS rows into a table partitioned by p (PARTS values)
#
# Times are taken inside the `tarn sql` process (BENCH_MARK lines, as in lake_bench.sh).
#   BASE=/path/to/old/tarn bench/write_bench.sh
#   ROWS=20000000 RUNS=3 INSERTS=200 PARTS=100
set -euo pipefail
BENCH=write_bench
REPO=$(cd "$(dirname "$0")/.." && pwd)
SRC_TARN=${TARN:-$REPO/build/tarn}
BASE=${BASE:?BASE=path of the tarn binary to compare with}
ROWS=${ROWS:-20000000}
RUNS=${RUNS:-3}
INSERTS=${INSERTS:-200}
PARTS=${PARTS:-100}
# shellcheck source=bench/lib.sh
. "$REPO/bench/lib.sh"
bench_setup tarn-write-bench
cp "$BASE" "$WORK/bin/base"
MARK="SELECT 'BENCH_MARK ' || epoch_us(get_current_timestamp()) AS m;"

# statement_time BIN SQL — seconds between the marks around SQL, in a fresh lake
statement_time() {
    rm -rf "$WORK/lake" && mkdir "$WORK/lake" && cd "$WORK/lake"
    "$1" sql -c "ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'data/'); $2" >"$WORK/out" 2>&1 ||
        die "failed: $(tail -3 "$WORK/out")"
    mapfile -t m < <(grep -o 'BENCH_MARK [0-9]*' "$WORK/out" | cut -d' ' -f2)
    calc "(${m[1]} - ${m[0]}) / 1000000"
}

# compare LABEL SQL — prints LABEL, base median, tarn median, ratio
compare() {
    local b=() t=()
    for _ in $(seq "$RUNS"); do
        b+=("$(statement_time "$WORK/bin/base" "$2")")
        t+=("$(statement_time "$TARN" "$2")")
    done
    local mb mt
    mb=$(median "${b[@]}")
    mt=$(median "${t[@]}")
    printf '%-58s base %8.3fs  tarn %8.3fs  ratio %.2f\n' "$1" "$mb" "$mt" "$(calc "$mt / $mb")"
}

log "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
G="FROM range($ROWS) t(i) GROUP BY k"
compare "7a CTAS GROUP BY, 1M groups of $ROWS rows (Parquet)" \
    "$MARK CREATE TABLE lake.t AS SELECT i % 1000000 AS k, count(*) AS c, sum(i) AS s $G; $MARK"
compare "7b CTAS GROUP BY, 5 groups of $ROWS rows (inlined)" \
    "$MARK CREATE TABLE lake.t AS SELECT i % 5 AS k, count(*) AS c, sum(i) AS s $G; $MARK"
ins=$(for i in $(seq "$INSERTS"); do printf "INSERT INTO lake.small SELECT %d, 'x';\n" "$i"; done)
compare "7c $INSERTS one-row INSERT … SELECT commits (inlined)" \
    "CREATE TABLE lake.small (i INTEGER, s VARCHAR); $MARK $ins $MARK"
compare "7d INSERT of $ROWS rows, partitioned, $PARTS values" \
    "CREATE TABLE lake.p (id BIGINT, p INTEGER, v DOUBLE); ALTER TABLE lake.p SET PARTITIONED BY (p);
     $MARK INSERT INTO lake.p SELECT i, i % $PARTS, i * 0.5 FROM range($ROWS) t(i); $MARK"
log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

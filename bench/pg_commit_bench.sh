#!/usr/bin/env bash
# bench/pg_commit_bench.sh — single-writer commits per second on a PostgreSQL catalog against a
# DuckDB-file catalog, measured in the same run, as a ratio.
#
#   bench/pg_commit_bench.sh                  # 500 commits per side, 3 runs
#   INSERTS=200 RUNS=1 bench/pg_commit_bench.sh
#
# One tarn process per run and side makes INSERTS single-row autocommit INSERTs into one table
# (each one snapshot: inlined rows by default, DATA_INLINING_ROW_LIMIT 0 for a Parquet file each
# when PARQUET=1); the time between a mark before the first INSERT and one after the last is the
# commit time (start-up, ATTACH and CREATE TABLE are outside it). The sides alternate
# (PG, file, PG, file, …) so that a drift of the machine's speed touches both; medians are
# reported. The PostgreSQL side runs on a throwaway cluster (initdb in a temporary folder, a unix
# socket only, fsync on as a server's default), removed at the end.
#
# Environment: INSERTS (default 500), RUNS (default 3), PARQUET (0/1, default 0), TARN (binary,
# default build/tarn), TARN_PG_BIN (folder of initdb/pg_ctl), KEEP_TMP=1 keeps the work folder.
# The last line is key=value pairs: pg_commits_per_s=… file_commits_per_s=… pg_file_ratio=…
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
INSERTS=${INSERTS:-500}
RUNS=${RUNS:-3}
PARQUET=${PARQUET:-0}
SRC_TARN=${TARN:-$REPO/build/tarn}

BENCH=pg_commit_bench
. "$REPO/bench/lib.sh"

[[ $INSERTS =~ ^[0-9]+$ && $INSERTS -ge 10 ]] || die "INSERTS must be an integer >= 10"
[[ $RUNS =~ ^[0-9]+$ && $RUNS -ge 1 ]] || die "RUNS must be a positive integer"
[ -x "$SRC_TARN" ] || die "$SRC_TARN not found; run make -j2 first"
PG_BIN=${TARN_PG_BIN:-}
if [ -z "$PG_BIN" ]; then
    for b in /usr/lib/postgresql/*/bin; do [ -x "$b/initdb" ] && PG_BIN=$b; done
fi
[ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] || die "PostgreSQL is not installed (scripts/deps.sh installs it)"

bench_setup tarn-pgbench

# the cluster: as root it belongs to the unprivileged user tarn_pg (PostgreSQL refuses root)
PG_DIR=$WORK/pg
mkdir -p "$PG_DIR"
AS=()
if [ "$(id -u)" = 0 ]; then
    id -u tarn_pg >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin tarn_pg
    chown tarn_pg "$PG_DIR"
    chmod 755 "$WORK"
    AS=(runuser -u tarn_pg --)
fi
pg_stop() {
    "${AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
    bench_cleanup
}
trap pg_stop EXIT
"${AS[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -U tarn -A trust -E UTF8 --no-instructions \
    >"$PG_DIR/initdb.log" 2>&1 || die "initdb failed: $(tail -n 5 "$PG_DIR/initdb.log")"
"${AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-c listen_addresses='' -k $PG_DIR" start >/dev/null || die "the server did not start"
log "PostgreSQL cluster in $PG_DIR ($("$PG_BIN/postgres" --version))"

MARK="SELECT 'BENCH_MARK ' || epoch_us(get_current_timestamp()) AS m;"
OPTS=""
[ "$PARQUET" = 1 ] && OPTS=", DATA_INLINING_ROW_LIMIT 0"

# one_run SIDE N — commits per second of run N on SIDE (pg or file)
one_run() {
    local side=$1 n=$2 dir=$WORK/$1.$2 attach
    mkdir -p "$dir"
    if [ "$side" = pg ]; then
        psql -X -q -h "$PG_DIR" -U tarn -d postgres -c "CREATE DATABASE run_$n" >/dev/null
        attach="ATTACH 'ducklake:postgres:dbname=run_$n host=$PG_DIR user=tarn' AS lake (DATA_PATH 'data/'$OPTS);"
    else
        attach="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/'$OPTS);"
    fi
    {
        echo "$attach"
        echo "CREATE TABLE lake.small (i INTEGER, s VARCHAR);"
        echo "$MARK"
        for ((i = 0; i < INSERTS; i++)); do echo "INSERT INTO lake.small VALUES ($i, 'x');"; done
        echo "$MARK"
        echo "SELECT count(*) AS n_rows FROM lake.small;"
    } >"$dir.sql"
    (cd "$dir" && "$TARN" sql --format csv -f "$dir.sql") >"$dir.out" 2>"$dir.err" ||
        die "$side run $n failed: $(head -n 3 "$dir.err")"
    local marks
    mapfile -t marks < <(grep -o 'BENCH_MARK [0-9]*' "$dir.out" | awk '{print $2}')
    [ "${#marks[@]}" = 2 ] || die "$side run $n: marks missing"
    grep -qx "$INSERTS" "$dir.out" || die "$side run $n: the table lacks rows"
    calc "$INSERTS / ((${marks[1]} - ${marks[0]}) / 1000000)" %.1f
}

pg=()
file=()
for ((r = 1; r <= RUNS; r++)); do
    pg+=("$(one_run pg "$r")")
    file+=("$(one_run file "$r")")
    log "run $r: PostgreSQL ${pg[-1]} commits/s, DuckDB file ${file[-1]} commits/s"
done
pg_med=$(median "${pg[@]}")
file_med=$(median "${file[@]}")
ratio=$(calc "$pg_med / $file_med" %.2f)
kind="inlined rows"
[ "$PARQUET" = 1 ] && kind="a Parquet file each"
printf '%-40s %12s %12s\n' "single-writer autocommit INSERTs" "commits/s" "runs"
printf '%-40s %12s %12s\n' "PostgreSQL catalog ($kind)" "$pg_med" "${pg[*]}"
printf '%-40s %12s %12s\n' "DuckDB-file catalog ($kind)" "$file_med" "${file[*]}"
printf '%-40s %12s\n' "ratio PostgreSQL / DuckDB file" "$ratio"
echo "pg_commits_per_s=$pg_med file_commits_per_s=$file_med pg_file_ratio=$ratio inserts=$INSERTS runs=$RUNS parquet=$PARQUET"

#!/usr/bin/env bash
# bench/workers_bench.sh — the 200-model project of tests/e2e/gen_models.sh (10 layers of 20; each
# model of a layer joins two of the layer before) built on a PostgreSQL catalog by 1, 2 and 4
# `tarn worker` processes (`tarn run --on-workers`), beside `tarn run -j 1` on a DuckDB-file catalog
# and on the PostgreSQL catalog: the wall time of each run, each on a fresh lake. A figure, not a
# test: nothing is asserted. Needs PostgreSQL (as tests/e2e/pg_lib.sh: a throwaway cluster).
#
#   bench/workers_bench.sh                   # TARN=build/tarn, WORKERS="1 2 4"
#   WORKERS="1 4" bench/workers_bench.sh
set -u
here=$(cd "$(dirname "$0")" && pwd)
export TARN=${TARN:-$here/../build/tarn}
TARN=$(cd "$(dirname "$TARN")" && pwd)/$(basename "$TARN")
WORKERS=${WORKERS:-"1 2 4"}
export TARN_QUEUE_POLL_MS=${TARN_QUEUE_POLL_MS:-50}
. "$here/../tests/e2e/lib.sh"
. "$here/../tests/e2e/pg_lib.sh"
. "$here/../tests/e2e/gen_models.sh"
pg_start || {
    echo "bench: $PG_SKIP" >&2
    exit 1
}

secs() { # secs CMD... — the wall time of CMD, seconds
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 </dev/null
    t1=$(date +%s.%N)
    echo "$t1 - $t0" | bc
}

d=$(mktempdir)
gen_models "$d/file" "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');"
printf '%-40s %8.1f s\n' "tarn run -j 1, DuckDB-file catalog" "$(secs "$TARN" run -C "$d/file" -j 1)"
pg_createdb j1
gen_models "$d/pg" "ATTACH 'ducklake:postgres:$(pg_conninfo j1)' AS lake (DATA_PATH 'data/');"
printf '%-40s %8.1f s\n' "tarn run -j 1, PostgreSQL catalog" "$(secs "$TARN" run -C "$d/pg" -j 1)"
for n in $WORKERS; do
    pg_createdb "w$n"
    gen_models "$d/w$n" "ATTACH 'ducklake:postgres:$(pg_conninfo "w$n")' AS lake (DATA_PATH 'data/');"
    "$TARN" worker -C "$d/w$n" --id bench --concurrency "$n" >"$d/w$n.log" 2>&1 </dev/null &
    wpid=$!
    # one worker keeps its name; N of them are NAME-1 … NAME-N
    last=bench
    [ "$n" -gt 1 ] && last="bench-$n"
    until grep -q "$last .*ready" "$d/w$n.log"; do sleep 0.2; done
    printf '%-40s %8.1f s\n' "tarn run --on-workers, $n worker(s)" \
        "$(secs "$TARN" run -C "$d/w$n" --on-workers)"
    kill -TERM "$wpid"
    wait "$wpid"
done
_E2E_FINISHED=1

#!/usr/bin/env bash
# tests/e2e/test_runs_pg_heartbeat.sh — a run on a PostgreSQL catalog renews its tarn_run row's
# heartbeat while it runs, so that another host (which cannot ask this host's process table)
# does not take a long run, one that records nothing for a while, for a dead one; and once its
# process is killed (-9) the heartbeat stops and the run is judged gone. The run here is one
# `tarn run --on-workers` waiting for a worker (it records nothing while it waits), its row
# made to name another host.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"
. "$(dirname "$0")/worker_lib.sh"

pg_start || {
    skip "run heartbeats on a PostgreSQL catalog" "$PG_SKIP"
    finish
}

d=$(mktempdir)
mkdir -p "$d/config" "$d/models/raw"
echo "ATTACH 'ducklake:postgres:$PG_CONNINFO' AS lake (DATA_PATH 'data/');" >"$d/config/catalog.sql"
echo "SELECT range AS id FROM range(10)" >"$d/models/raw/a.sql"

pgq() { pg_psql "$1"; }
# interrupted_in_history ID — how many `interrupted` rows tarn history shows for run ID, with a
# two-second limit for a run of another host to show life
interrupted_in_history() {
    TARN_RUN_STALE_SECONDS=2 "$TARN" history -C "$d" 2>&1 </dev/null |
        grep -cE "\| +$1 \| \(run\) +\| interrupted "
}

export TARN_RUN_HEARTBEAT_SECONDS=0.3
# a run waiting for a worker, recording nothing; its row as if another host's
submit() {
    "$TARN" run -C "$d" --on-workers --force >"$d/run$1.out" 2>"$d/run$1.err" </dev/null &
    BG+=($!)
    wait_for "$d/run$1.err" "waiting for a worker" 30 ||
        fail "run $1 waits for a worker" "$(cat "$d/run$1.err")"
    pgq "UPDATE public.tarn_run SET host = 'far-away.example' WHERE run_id = $1" >/dev/null
}

submit 1
sleep 3
check_eq "the waiting run's heartbeat is renewed (under two seconds old)" "t" \
    "$(pgq "SELECT now() - heartbeat_at < INTERVAL '2 seconds' FROM public.tarn_run
            WHERE run_id = 1")"
check_eq "three seconds without a build: not judged gone with a two-second limit" "0" \
    "$(interrupted_in_history 1)"
start_worker "$d/w.log" -C "$d" --id w
wait "${BG[0]}"
check_eq "a worker then builds it, and it ends as a success" "0 success" \
    "$? $(pgq "SELECT status FROM public.tarn_run WHERE run_id = 1")"
stop_workers

submit 2
kill -9 "${BG[0]}"
wait "${BG[0]}" 2>/dev/null
BG=()
sleep 3
check_eq "killed -9, its heartbeat stops and the run is judged gone" "1" \
    "$(interrupted_in_history 2)"
unset TARN_RUN_HEARTBEAT_SECONDS
"$TARN" run -C "$d" >/dev/null 2>"$d/err" </dev/null || fail "a run after it" "$(cat "$d/err")"
check_eq "the next run, by the default limit for a run that beats (5 minutes), leaves it running" \
    "running" "$(pgq "SELECT status FROM public.tarn_run WHERE run_id = 2")"

finish

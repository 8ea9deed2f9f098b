#!/usr/bin/env bash
# tests/e2e/test_pg_reconnect.sh — a PostgreSQL catalog connection that the server drops
# (pg_terminate_backend, as a restart or a network cut would) is opened again on its next use:
# a `tarn worker` keeps claiming and building, a build held just before its commit still commits
# once (duck/pgscan.c), and a build whose connection is dropped inside its catalog transaction is
# built again (worker.c; run_steps.c in a run in one process), committed once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"
. "$(dirname "$0")/worker_lib.sh"
pg_start || {
    [ -n "$PG_SKIP" ] && skip "reconnect" "$PG_SKIP"
    finish
}

# drop_backends DB — ends every server process on database DB but this query's.
drop_backends() {
    pg_psql "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '$1' AND pid <> pg_backend_pid()" "$1"
}

# ---- a worker outlives its connections ----------------------------------------------------------
pg_createdb w
s=$(mktempdir)
mkdir -p "$s/config" "$s/models/raw" "$s/models/mart"
echo "ATTACH 'ducklake:postgres:$(pg_conninfo w)' AS lake (DATA_PATH 'data/');" >"$s/config/catalog.sql"
echo "SELECT range AS id FROM range(10)" >"$s/models/raw/a.sql"
echo "SELECT count(*) AS n FROM raw.a" >"$s/models/mart/b.sql"
TARN_WORKER_TEST_HOLD="mart.b" TARN_WORKER_TEST_HOLD_S=2 start_worker "$s/w.log" -C "$s" --id w1 --lease 5
wp=${BG[0]}
wait_for "$s/w.log" "ready" 60 || fail "the worker starts" "$(cat "$s/w.log")"
check "a run on the worker" timeout 120 "$TARN" run -C "$s" --on-workers
dropped=$(drop_backends w)
[ "${dropped:-0}" -ge 1 ] && ok "the worker's connections are dropped" ||
    fail "the worker's connections are dropped" "terminated: $dropped"
check "the next run, on the same worker, succeeds" timeout 120 "$TARN" run -C "$s" --on-workers --force
kill -0 "$wp" 2>/dev/null && ok "the worker is still running" || fail "the worker is still running" "$(tail -5 "$s/w.log")"

# dropped while a build waits just before its commit: that commit still lands, once
timeout 120 "$TARN" run -C "$s" --on-workers --force >"$s/run3.out" 2>&1 </dev/null &
rp=$!
n=$(grep -c "test hold" "$s/w.log")
for i in $(seq 1 600); do
    [ "$(grep -c "test hold" "$s/w.log")" -gt "$n" ] && break
    sleep 0.1
done
drop_backends w >/dev/null
wait "$rp"
check_eq "a run whose build lost its connection before its commit succeeds" 0 $?
check_eq "mart.b was committed once in that run" "1" \
    "$(pg_psql "SELECT count(*) FROM public.tarn_job_commit WHERE run_id = 3 AND model = 'mart.b'" w)"
check_eq "its rows are there" "10" \
    "$(cd "$s" && tarn sql --format csv -c "ATTACH 'ducklake:postgres:$(pg_conninfo w)' AS lake; SELECT n FROM lake.mart.b" 2>&1 | grep -v '^$' | tail -n 1)"
kill -TERM "$wp" 2>/dev/null
wait "$wp"
check_eq "the worker stops on SIGTERM (exit 0)" 0 $?
BG=()

# dropped inside a build's catalog transaction (its statements sent, its COMMIT not): PostgreSQL
# rolls it back, the worker builds the model again, that build commits once, and the run succeeds
# with no failed record of the lost attempt
TARN_COMMIT_HOLD="$s/hold" start_worker "$s/w2.log" -C "$s" --id w2 --lease 5
wp=${BG[0]}
wait_for "$s/w2.log" "ready" 60 || fail "the second worker starts" "$(cat "$s/w2.log")"
touch "$s/hold"
timeout 120 "$TARN" run -C "$s" --on-workers --force raw.a >"$s/run4.out" 2>&1 </dev/null &
rp=$!
if wait_for "$s/w2.log" "holding inside the catalog transaction" 60; then
    drop_backends w >/dev/null
else
    fail "the build holds inside its catalog transaction" "$(cat "$s/w2.log")"
fi
wait "$rp"
rc=$?
[ "$rc" -eq 0 ] && ok "a run whose build lost its connection inside its commit succeeds" ||
    fail "a run whose build lost its connection inside its commit succeeds" "exit $rc" \
        "$(cat "$s/run4.out")" "$(tail -n 20 "$s/w2.log")"
grep -q "raw.a: its catalog connection was lost" "$s/w2.log" && ok "the worker built it again" ||
    fail "the worker built it again" "$(tail -n 20 "$s/w2.log")"
run4="(SELECT max(run_id) FROM public.tarn_run)"
check_eq "raw.a was committed once in that run" "1" \
    "$(pg_psql "SELECT count(*) FROM public.tarn_job_commit WHERE run_id = $run4 AND model = 'raw.a'" w)"
check_eq "its one record is the success (the lost attempt recorded no failure)" "success" \
    "$(pg_psql "SELECT string_agg(status, ',') FROM public.tarn_model_run WHERE run_id = $run4 AND model = 'raw.a'" w)"
check_eq "the run is recorded a success" "success" \
    "$(pg_psql "SELECT status FROM public.tarn_run WHERE run_id = $run4" w)"
stop_workers

# the same in a run in one process: built again, committed once, recorded once
touch "$s/hold"
TARN_COMMIT_HOLD="$s/hold" timeout 120 "$TARN" run -C "$s" --force raw.a >"$s/run5.out" \
    2>"$s/run5.err" </dev/null &
rp=$!
if wait_for "$s/run5.err" "holding inside the catalog transaction" 60; then
    drop_backends w >/dev/null
else
    fail "the run's build holds inside its catalog transaction" "$(cat "$s/run5.err")"
fi
snaps=$(pg_psql "SELECT count(*) FROM public.ducklake_snapshot" w)
wait "$rp"
rc=$?
[ "$rc" -eq 0 ] && ok "a run in one process whose build lost its connection in its commit succeeds" ||
    fail "a run in one process whose build lost its connection in its commit succeeds" "exit $rc" \
        "$(cat "$s/run5.err")"
check_eq "its one record is the success" "success" \
    "$(pg_psql "SELECT string_agg(status, ',') FROM public.tarn_model_run WHERE run_id = $run4 AND model = 'raw.a'" w)"
check_eq "the build made one snapshot" "$((snaps + 1))" \
    "$(pg_psql "SELECT count(*) FROM public.ducklake_snapshot" w)"

finish

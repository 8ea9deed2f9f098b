#!/usr/bin/env bash
# tests/e2e/test_workers_guard.sh — a model's build committed once per run, whoever else builds
# it: worker wa is stopped (SIGSTOP) just before its commit (TARN_WORKER_TEST_HOLD) until its
# lease expires, worker wb takes the model and commits it, then wa goes on and commits too. The
# guard row (tarn_job_commit's key) refuses wa's commit at once (no retries: another attempt
# could not succeed) with a message saying another process committed it first and naming the
# model's key, not a bare PostgreSQL error; the table has one build's rows, not two.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"
. "$(dirname "$0")/pg_lib.sh"

pg_start || {
    skip "the build guard on workers" "$PG_SKIP"
    finish
}

export TARN_QUEUE_POLL_MS=50 TARN_WORKER_SERIAL=0
pg_createdb guard
s=$(mktempdir)
mkdir -p "$s/config" "$s/models/raw"
echo "ATTACH 'ducklake:postgres:$(pg_conninfo guard)' AS lake (DATA_PATH 'data/');" >"$s/config/catalog.sql"
printf -- '-- materialize append\nSELECT range AS id FROM range(10)\n' >"$s/models/raw/a.sql"
"$TARN" run -C "$s" >/dev/null 2>"$s/first.err" </dev/null || fail "a first run" "$(cat "$s/first.err")"

timeout 120 "$TARN" run -C "$s" --on-workers --force >"$s/run.out" 2>"$s/run.err" </dev/null &
runpid=$!
TARN_WORKER_TEST_HOLD=raw.a TARN_WORKER_TEST_HOLD_S=4 "$TARN" worker -C "$s" --id wa --lease 1 \
    >"$s/wa.log" 2>&1 </dev/null &
wa=$!
for _ in $(seq 300); do
    grep -q "test hold" "$s/wa.log" && break
    sleep 0.1
done
kill -STOP "$wa"
sleep 2.5 # wa's lease (1 s) expires
"$TARN" worker -C "$s" --id wb --lease 5 >"$s/wb.log" 2>&1 </dev/null &
wb=$!
wait "$runpid"
check_eq "the run on workers succeeds (wb built the model)" "0" "$?"
kill -CONT "$wa"
for _ in $(seq 300); do
    grep -q "another process committed" "$s/wa.log" && break
    sleep 0.1
done
kill -TERM "$wa" "$wb" 2>/dev/null
wait "$wa" "$wb" 2>/dev/null

contains "wa's late commit is refused: another process committed the model's guard row first" \
    "another process committed a row this commit adds first, so nothing was committed" \
    "$(cat "$s/wa.log")"
contains "the refusal names the run and model" "Key (run_id, model, slice)=(2, raw.a, ) already exists" \
    "$(cat "$s/wa.log")"
check_eq "it is refused at once, not retried as a conflict of DuckLake's" "0" \
    "$(grep -c "maximum retry count" "$s/wa.log")"
check_eq "the model is committed once in the run, by wb" "1|wb" \
    "$(pg_psql "SELECT count(*), max(worker) FROM public.tarn_job_commit WHERE run_id = 2" guard)"
check_eq "the table holds one build's rows per run (first run and run 2)" "20" \
    "$(cd "$s" && "$TARN" sql --format csv -c "$(cat config/catalog.sql) SELECT count(*) AS n FROM lake.raw.a" 2>&1 | sed -n 2p)"

finish

#!/usr/bin/env bash
# tests/e2e/test_sched_pg.sh — the scheduler on a PostgreSQL catalog, where two scheduler
# processes can share a lake: a tick that finds a model due while another process's build of it
# is in flight coalesces (does not queue it a second time, records nothing), and the occurrence
# it left fires on a later tick once that build is done.
#
# The in-flight build reads a fifo with read_text (opened once, to read), so the test knows it
# is in flight (opening the fifo for writing returns once the build has opened it) and decides
# when it ends; the path is two literals so that change detection does not read the fifo.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"
. "$(dirname "$0")/pg_lib.sh"

pg_start || {
    skip "the scheduler on a PostgreSQL catalog" "$PG_SKIP"
    finish
}

d=$(project basic)
echo "ATTACH 'ducklake:postgres:$PG_CONNINFO' AS lake (DATA_PATH 'lake/');" >"$d/config/catalog.sql"
mkfifo "$d/feed.txt"
printf -- '-- schedule "* * * * *"\nSELECT length(content) AS n FROM read_text(%s || %s)\n' \
    "'$d'" "'/feed.txt'" >"$d/models/marts/summary.sql"

# tick TIME — one scheduler tick at TIME, in the foreground; status in $rc, stderr in $ERR.
tick() {
    ERR=$("$TARN" scheduler --once --now "$1" -C "$d" 2>&1 >/dev/null </dev/null)
    rc=$?
}

runs() {
    pg_psql "SELECT count(*) FROM public.tarn_run"
}

tick 2026-06-01T05:59:30Z
contains "the first tick arms" "marts.summary armed (next 2026-06-01T06:00:00Z)" "$ERR"

"$TARN" scheduler --once --now 2026-06-01T06:00:10Z -C "$d" >/dev/null 2>"$d/a.err" </dev/null &
a=$!
exec 3>"$d/feed.txt" # returns once the build of the 06:00 fire has opened the fifo
check_eq "the 06:00 occurrence fires: one run, running" "1|running" \
    "$(runs)|$(pg_psql "SELECT status FROM public.tarn_run")"

tick 2026-06-01T06:01:10Z
check_eq "a second scheduler's tick while that build is in flight succeeds" "0" "$rc"
contains "it says the model is due but in flight, not queued again" \
    "marts.summary due (occurrence 2026-06-01T06:01:00Z) but its build is in flight: not queued again" "$ERR"
check_eq "and records no run" "1" "$(runs)"

printf 'abc' >&3
exec 3>&-
wait "$a"
check_eq "the build in flight finishes (exit 0)" "0" "$?"
check_eq "its run is a success serving 06:00" "scheduler,success,marts.summary@2026-06-01T06:00:00Z" \
    "$(pg_psql "SELECT \"trigger\" || ',' || status || ',' || occurrence FROM public.tarn_run WHERE run_id = 1")"

# The coalesced occurrence was not served: the next tick fires it. (A writer waits on the fifo
# in case that build reads it.)
(printf 'abcd' >"$d/feed.txt") &
feeder=$!
tick 2026-06-01T06:01:20Z
kill "$feeder" 2>/dev/null
check_eq "after the build, the next tick fires the occurrence left (exit 0)" "0" "$rc"
check_eq "as a second run serving 06:01" "2|success|marts.summary@2026-06-01T06:01:00Z" \
    "$(runs)|$(pg_psql "SELECT status || '|' || occurrence FROM public.tarn_run WHERE run_id = 2")"
check_eq "that run took the model (unchanged: its SQL and the files tarn tracks are the same)" \
    "marts.summary,skipped,unchanged" \
    "$(pg_psql "SELECT model || ',' || status || ',' || note FROM public.tarn_model_run WHERE run_id = 2 AND model = 'marts.summary'")"

finish

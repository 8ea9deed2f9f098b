#!/usr/bin/env bash
# tests/e2e/test_runs_pg_hosts.sh — runs recorded 'running' by another host on a PostgreSQL
# catalog: tarn cannot ask that host's process table, so such a run is not judged by a pid on
# this machine; it is left alone while it shows a sign of life (its start, a build it recorded)
# newer than TARN_RUN_STALE_SECONDS (default a day), and marked interrupted by the next run once
# it has shown none for longer.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"
. "$(dirname "$0")/pg_lib.sh"

pg_start || {
    skip "runs of another host on a PostgreSQL catalog" "$PG_SKIP"
    finish
}

d=$(project basic)
echo "ATTACH 'ducklake:postgres:$PG_CONNINFO' AS lake (DATA_PATH 'lake/');" >"$d/config/catalog.sql"
"$TARN" run -C "$d" >/dev/null 2>"$d/err" </dev/null || fail "a first run" "$(cat "$d/err")"

# fake NAME ID STARTED — a run of host NAME recorded running since STARTED (an SQL timestamp);
# its pid is this test's own, alive here, which must not count for another host.
fake() {
    pg_psql "INSERT INTO public.tarn_run (run_id, started_at, status, host, pid, process_start)
             VALUES ($2, $3, 'running', '$1', $$, 'x')" >/dev/null
}
status_of() {
    pg_psql "SELECT status FROM public.tarn_run WHERE run_id = $1"
}
fake far-away.example 901 "now()"
fake far-away.example 902 "now() - INTERVAL '3 days'"
fake far-away.example 903 "now() - INTERVAL '3 days'"
# 903 started long ago but recorded a build a minute ago
pg_psql "INSERT INTO public.tarn_model_run (run_id, model, status, started_at, finished_at)
         VALUES (903, 'marts.elsewhere', 'failed', now() - INTERVAL '2 minutes',
         now() - INTERVAL '1 minute')" >/dev/null

"$TARN" run -C "$d" >/dev/null 2>"$d/err" </dev/null || fail "a second run" "$(cat "$d/err")"
check_eq "another host's run started just now is left running" "running" "$(status_of 901)"
check_eq "another host's run with no sign of life for 3 days is marked interrupted" \
    "interrupted" "$(status_of 902)"
check_eq "another host's old run that recorded a build a minute ago is left running" "running" \
    "$(status_of 903)"

out=$("$TARN" history -C "$d" 2>&1 </dev/null)
check_eq "tarn history does not call the live ones interrupted" "0" \
    "$(printf '%s\n' "$out" | grep -cE "\| +90[13] \| \(run\) +\| interrupted ")"

sleep 2
TARN_RUN_STALE_SECONDS=1 "$TARN" run -C "$d" >/dev/null 2>"$d/err" </dev/null ||
    fail "a run with TARN_RUN_STALE_SECONDS=1" "$(cat "$d/err")"
check_eq "with TARN_RUN_STALE_SECONDS=1 both are interrupted two seconds later" \
    "interrupted interrupted" "$(status_of 901) $(status_of 903)"

finish

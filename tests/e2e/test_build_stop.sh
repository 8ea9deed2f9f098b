#!/usr/bin/env bash
# test_build_stop.sh — runs end cleanly, whatever ends them (issue 11), with real signals and
# processes on a copy of tests/fixtures/projects/basic plus a model that takes long (marts.slow)
# and one downstream of it (marts.after_slow):
#   - Ctrl-C (SIGINT) during marts.slow: its build is rolled back and recorded `cancelled`, the
#     models left are recorded as not run, a message says so, exit 130; the lake is at the last
#     committed snapshot and marts.slow does not exist; the same with SIGTERM and -j 2 (exit 143);
#   - a second Ctrl-C exits at once (130), and the lake is still at a committed snapshot;
#   - kill -9: `tarn history` shows the run as interrupted, the next run marks it so in tarn_run;
#   - locks: beside a run, another `tarn run` fails naming the holder's pid and command and the
#     remedy, `tarn plan` exits 1 saying it could not read the lake; readers (plan, history,
#     show) run beside each other.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project basic)
cat >"$d/models/marts/slow.sql" <<'SQL'
-- Takes a long time (minutes): the run is stopped while it builds.
SELECT count(*) AS n FROM staging.items, range(20000000000) t(i) WHERE i % 7 = 8
SQL
cat >"$d/models/marts/after_slow.sql" <<'SQL'
SELECT n FROM marts.slow
SQL
run_ok "the fast models build" "$d" run staging.items marts.expensive marts.summary

# start DIR ARGS... — `tarn ARGS -C DIR --json` in the background (stdout in DIR/run.json,
# stderr in DIR/run.err); waits until marts.slow has started; sets PID.
start() {
    local dir=$1 i
    shift
    rm -f "$dir/run.json" "$dir/run.err" "$dir/run.rc"
    (
        "$TARN" "$@" -C "$dir" --json >"$dir/run.json" 2>"$dir/run.err" </dev/null
        echo $? >"$dir/run.rc"
    ) &
    for i in $(seq 1 300); do
        PID=$(pgrep -n -f -- "$TARN $* -C $dir --json")
        [ -n "$PID" ] && grep -q '"event":"model_start".*"marts.slow"' "$dir/run.json" 2>/dev/null && break
        sleep 0.1
    done
    sleep 0.5 # inside the query
}

# finished DIR — waits (at most 60 s) for the background run; prints its exit status.
finished() {
    local i
    for i in $(seq 1 600); do
        [ -s "$1/run.rc" ] && break
        sleep 0.1
    done
    [ -s "$1/run.rc" ] || { kill -9 "$PID" 2>/dev/null; echo timeout; return; }
    cat "$1/run.rc"
}

status_of() { # MODEL RUN_ID
    lakeq "$d" "SELECT status || coalesce(': ' || replace(error, ',', ';'), '') FROM __ducklake_metadata_lake.tarn_model_run WHERE model = '$1' AND run_id = $2"
}
last_run() {
    lakeq "$d" "SELECT max(run_id) FROM __ducklake_metadata_lake.tarn_run"
}

# ---- Ctrl-C ---------------------------------------------------------------------
snaps=$(snapshots "$d")
start "$d" run -j 1 marts.slow marts.after_slow
kill -INT "$PID"
check_eq "Ctrl-C: exit status 130" "130" "$(finished "$d")"
contains "Ctrl-C: a message says the run stops" "Ctrl-C: stopping the run" "$(cat "$d/run.err")"
contains "Ctrl-C: the summary says what happened" "stopped (Ctrl-C): 0 succeeded, 1 cancelled and rolled back, 1 not run" "$(cat "$d/run.err")"
run=$(last_run)
check_eq "Ctrl-C: the run is recorded cancelled" "cancelled" \
    "$(lakeq "$d" "SELECT status FROM __ducklake_metadata_lake.tarn_run WHERE run_id = $run")"
check_eq "Ctrl-C: the build in flight is recorded cancelled" \
    "cancelled: cancelled: the run was stopped; the build rolled back" "$(status_of marts.slow "$run")"
check_eq "Ctrl-C: the model left is recorded as not run" "skipped: not run: the run was stopped" \
    "$(status_of marts.after_slow "$run")"
check_eq "Ctrl-C: no snapshot" "$snaps" "$(snapshots "$d")"
check_eq "Ctrl-C: the table was never created" "0" \
    "$(lakeq "$d" "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'lake' AND table_name = 'slow'")"
check_eq "Ctrl-C: no orphan left open: the next run works" "0" \
    "$("$TARN" run -C "$d" staging.items >/dev/null 2>&1; echo $?)"

# ---- SIGTERM, with workers --------------------------------------------------------
snaps=$(snapshots "$d")
start "$d" run -j 2 marts.slow marts.after_slow
kill -TERM "$PID"
check_eq "SIGTERM: exit status 143" "143" "$(finished "$d")"
contains "SIGTERM: the summary says so" "stopped (SIGTERM)" "$(cat "$d/run.err")"
run=$(last_run)
check_eq "SIGTERM: the run is recorded cancelled" "cancelled" \
    "$(lakeq "$d" "SELECT status FROM __ducklake_metadata_lake.tarn_run WHERE run_id = $run")"
check_eq "SIGTERM: no snapshot" "$snaps" "$(snapshots "$d")"

# ---- a second Ctrl-C --------------------------------------------------------------
# The first Ctrl-C's rollback can be quick enough to end the run before a second signal lands;
# such an attempt says nothing about the second Ctrl-C, so it is tried again (at most 5 times).
for attempt in 1 2 3 4 5; do
    start "$d" run -j 1 marts.slow marts.after_slow
    kill -INT "$PID"
    sleep 0.02
    kill -INT "$PID" 2>/dev/null && break
    finished "$d" >/dev/null
done
check_eq "second Ctrl-C: exit status 130" "130" "$(finished "$d")"
contains "second Ctrl-C: says it stopped at once" "stopped at once; the lake is at its last committed snapshot" "$(cat "$d/run.err")"
check_eq "second Ctrl-C: the lake reads, at a committed snapshot" "$snaps" "$(snapshots "$d")"
check_eq "second Ctrl-C: its tables read" "4" "$(lakeq "$d" "SELECT count(*) FROM lake.staging.items")"

# ---- kill -9 ----------------------------------------------------------------------
start "$d" run -j 1 marts.slow marts.after_slow
kill -KILL "$PID"
finished "$d" >/dev/null
killed=$(last_run)
check_eq "kill -9: the record says running" "running" \
    "$(lakeq "$d" "SELECT status FROM __ducklake_metadata_lake.tarn_run WHERE run_id = $killed")"
run_ok "kill -9: tarn history" "$d" history
check_eq "kill -9: history shows it interrupted" "1" \
    "$(printf '%s\n' "$OUT" | grep -cE "\| +$killed \| \(run\) +\| interrupted ")"
contains "kill -9: with its process" "ended without finishing: killed, or the machine stopped" "$OUT"
run_ok "kill -9: the next run" "$d" run staging.items
contains "kill -9: the next run says what it found" "earlier run ended without finishing" "$ERR"
check_eq "kill -9: the next run marks it interrupted" "interrupted" \
    "$(lakeq "$d" "SELECT status FROM __ducklake_metadata_lake.tarn_run WHERE run_id = $killed")"
check_eq "kill -9: and every run stopped by the second Ctrl-C too" "0" \
    "$(lakeq "$d" "SELECT count(*) FROM __ducklake_metadata_lake.tarn_run WHERE status = 'running'")"

# ---- locks -------------------------------------------------------------------------
start "$d" run -j 1 marts.slow marts.after_slow
run_rc "locks: a second writer fails" 2 "$d" run staging.items
contains "locks: it names the holder" "is in use by another process: pid $PID ($TARN run -j 1 marts.slow marts.after_slow -C $d --json)" "$ERR"
contains "locks: and the remedy" "fix: wait for it to finish, or stop it if it is stuck (kill $PID)" "$ERR"
run_rc "locks: plan beside a run exits 1" 1 "$d" plan
contains "locks: plan says it could not read the lake" "plan: cannot read the lake" "$ERR"
run_ok "locks: lineage beside a run works (it reads the project, not the lake)" "$d" lineage
contains "locks: and shows the graph" "marts.after_slow" "$OUT"
kill -INT "$PID"
finished "$d" >/dev/null
pids=""
for i in 1 2 3; do
    "$TARN" history -C "$d" >"$d/h$i.out" 2>&1 </dev/null &
    pids="$pids $!"
    "$TARN" plan -C "$d" >"$d/p$i.out" 2>&1 </dev/null &
    pids="$pids $!"
    "$TARN" show staging.items -C "$d" >"$d/s$i.out" 2>&1 </dev/null &
    pids="$pids $!"
done
bad=0
for p in $pids; do wait "$p" || bad=$((bad + 1)); done
check_eq "locks: nine readers at once all succeed" "0" "$bad"
[ "$bad" = 0 ] || cat "$d"/[hps]?.out | grep tarn: | head -3

finish

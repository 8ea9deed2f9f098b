#!/usr/bin/env bash
# tests/e2e/test_sched.sh — the scheduler, end to end, on a copy of the basic project:
#
#   - successive `tarn scheduler --once --now T` processes behave as ticks of one scheduler:
#     a new schedule arms and does not fire on the tick that first sees it; it fires at its
#     occurrence (with the unscheduled model upstream of it, not the unrelated one), as one run
#     recorded with trigger 'scheduler' and the occurrence it serves; after three days down exactly
#     one run serves the newest missed occurrence; a changed rule re-arms;
#   - --max-fires-per-tick: the longest-waiting model fires, the other on the next tick;
#   - -- freshness: a model never built fires, a fresh one waits until it is stale;
#   - a failing model: exit 1, recorded, and the next tick still fires; a broken project edit: the
#     tick is skipped (exit 2) and, fixed, the occurrence missed meanwhile is served;
#   - `tarn schedule` lists rule, next occurrence, last fire and result; `tarn run` records
#     trigger 'manual'; `tarn runs` lists runs with their trigger, `tarn runs show ID` a run's models;
#   - a real `tarn scheduler` process fires a `* * * * *` model within two minutes and stops
#     cleanly on SIGTERM; SIGTERM during a build ends the scheduler after that build, recorded;
#     a second SIGTERM stops that build too (rolled back, recorded cancelled).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project basic)
summary="$d/models/marts/summary.sql"
expensive="$d/models/marts/expensive.sql"
printf -- '-- schedule "0 6 * * *"\nSELECT count(*) AS n FROM staging.items\n' >"$summary"

# tick TIME [ARGS...] — one scheduler tick at TIME; status in $rc, stderr in $ERR.
tick() {
    local t=$1
    shift
    ERR=$("$TARN" scheduler --once --now "$t" "$@" -C "$d" 2>&1 >/dev/null </dev/null)
    rc=$?
}

runs() {
    lakeq "$d" "SELECT count(*) FROM __ducklake_metadata_lake.tarn_run"
}

# The lake does not exist yet: the first tick creates it (config/ attaches it) and only arms.
tick 2026-06-01T06:00:00Z
check_eq "a new schedule arms (exit 0)" "0" "$rc"
contains "the tick says it armed, with the next occurrence" \
    "marts.summary armed (next 2026-06-02T06:00:00Z)" "$ERR"
check_eq "arming fires nothing (no run recorded)" "0" "$(runs)"
tick 2026-06-01T06:00:30Z
check_eq "the same occurrence does not fire on a later tick either" "0" "$(runs)"

tick 2026-06-02T06:00:00Z
check_eq "the occurrence fires (exit 0)" "0" "$rc"
contains "the tick says what it fired" "marts.summary fired (occurrence 2026-06-02T06:00:00Z)" "$ERR"
check_eq "one run, trigger scheduler, serving the occurrence" \
    "1,scheduler,marts.summary@2026-06-02T06:00:00Z,success" \
    "$(lakeq "$d" "SELECT run_id, \"trigger\", occurrence, status FROM __ducklake_metadata_lake.tarn_run")"
check_eq "the run built the model and its unscheduled upstream, not the unrelated model" \
    "marts.summary,success
staging.items,success" \
    "$(lakeq "$d" "SELECT model, status FROM __ducklake_metadata_lake.tarn_model_run ORDER BY model")"

tick 2026-06-02T06:30:00Z
check_eq "between occurrences nothing fires" "1" "$(runs)"

tick 2026-06-05T07:00:00Z
check_eq "after three days down, one run" "2" "$(runs)"
check_eq "it serves the newest missed occurrence" "marts.summary@2026-06-05T06:00:00Z" \
    "$(lakeq "$d" "SELECT occurrence FROM __ducklake_metadata_lake.tarn_run WHERE run_id = 2")"
check_eq "an unchanged model is skipped by change detection" "marts.summary,unchanged" \
    "$(lakeq "$d" "SELECT model, note FROM __ducklake_metadata_lake.tarn_model_run WHERE run_id = 2 AND model = 'marts.summary'")"
tick 2026-06-05T07:01:00Z
check_eq "the jumped occurrences do not fire later" "2" "$(runs)"

# A changed rule is a new schedule: it arms again.
printf -- '-- schedule "30 6 * * *"\nSELECT count(*) AS n FROM staging.items\n' >"$summary"
tick 2026-06-05T08:00:00Z
contains "a changed rule re-arms" "marts.summary armed (next 2026-06-06T06:30:00Z)" "$ERR"
check_eq "re-arming fires nothing" "2" "$(runs)"

# `tarn schedule` lists it.
run_ok "tarn schedule" "$d" schedule --now 2026-06-05T08:00:00Z
contains "tarn schedule shows the rule" "marts.summary                30 6 * * *" "$OUT"
contains "tarn schedule: the next occurrence; a re-armed rule has not fired yet" \
    "2026-06-06T06:30:00Z   never                  -" "$OUT"

# The cap: two models due at 06:30; one fires per tick, the one waiting longest (then by name).
printf -- '-- tags pricey\n-- schedule "30 6 * * *"\nSELECT id, name, price FROM staging.items WHERE price > 10 ORDER BY id\n' >"$expensive"
tick 2026-06-05T08:10:00Z
contains "the second schedule arms" "marts.expensive armed" "$ERR"
tick 2026-06-06T06:30:00Z --max-fires-per-tick 1
contains "with a cap of 1 the first by name fires" "marts.expensive fired" "$ERR"
contains "the other is capped" "marts.summary due (occurrence 2026-06-06T06:30:00Z): over --max-fires-per-tick" "$ERR"
tick 2026-06-06T06:31:00Z --max-fires-per-tick 1
contains "the capped model fires on the next tick" \
    "marts.summary fired (occurrence 2026-06-06T06:30:00Z)" "$ERR"
check_eq "two runs for the two fires" "4" "$(runs)"

# (expensive's schedule would fire at the jump to today below: it goes)
printf -- '-- tags pricey\nSELECT id, name, price FROM staging.items WHERE price > 10 ORDER BY id\n' >"$expensive"
# Freshness counts from the last good build, which happened on the real clock (the builds above ran
# now, whatever --now said): a rule of 1h waits half an hour from now, fires two hours from now.
printf -- '-- freshness 1h\nSELECT count(*) AS n FROM staging.items\n' >"$summary"
tick "$(date -u -d '+30 minutes' +%Y-%m-%dT%H:%M:%SZ)"
check_eq "a fresh model is not rebuilt" "4" "$(runs)"
tick "$(date -u -d '+2 hours' +%Y-%m-%dT%H:%M:%SZ)"
contains "a stale model fires" "marts.summary fired" "$ERR"
check_eq "its run" "5" "$(runs)"

# A model whose query fails when it runs: exit 1, recorded as failed.
printf -- '-- schedule "0 7 * * *"\nSELECT CAST(name AS INTEGER) AS n FROM staging.items\n' >"$summary"
tick 2026-06-06T08:00:00Z
tick 2026-06-07T07:00:00Z
check_eq "a failed build exits 1" "1" "$rc"
contains "the tick names the failed model" "marts.summary failed" "$ERR"
check_eq "the failure is recorded" "failed" \
    "$(lakeq "$d" "SELECT status FROM __ducklake_metadata_lake.tarn_run ORDER BY run_id DESC LIMIT 1")"
# A project error found before anything runs (a table nothing defines): the tick stops, exit 2.
printf -- '-- schedule "0 7 * * *"\nSELECT count(*) AS n FROM staging.no_such_table\n' >"$summary"
tick 2026-06-08T07:00:00Z
check_eq "a project error stops the tick: exit 2" "2" "$rc"
contains "it names the file and line" "tick failed: models/marts/summary.sql:2: table staging.no_such_table" "$ERR"

# A broken edit: the tick is skipped and says why; fixed, the missed occurrence is served.
printf -- '-- schedule "0 7 * * *"\n-- materialise key=n\nSELECT 1 AS n\n' >"$summary"
tick 2026-06-09T07:00:00Z
check_eq "a project that does not load: exit 2" "2" "$rc"
contains "the tick says the project does not load" "the project does not load" "$ERR"
contains "and why, with file and line" "models/marts/summary.sql:2" "$ERR"
printf -- '-- schedule "0 7 * * *"\nSELECT count(*) AS n FROM staging.items\n' >"$summary"
tick 2026-06-09T09:00:00Z
contains "fixed, the occurrence missed meanwhile is served" \
    "marts.summary fired (occurrence 2026-06-09T07:00:00Z)" "$ERR"

run_rc "--now without --once is a usage error" 2 "$d" scheduler --now 2026-06-01T00:00:00Z
run_ok "tarn run" "$d" run
check_eq "tarn run records trigger manual" "manual" \
    "$(lakeq "$d" "SELECT \"trigger\" FROM __ducklake_metadata_lake.tarn_run ORDER BY run_id DESC LIMIT 1")"

# tarn runs: one line per run with its trigger; runs show: its models.
run_ok "tarn runs" "$d" runs --format csv --limit 2
check_eq "tarn runs lists the newest runs with their trigger and counts" \
    "$(lakeq "$d" "SELECT max(run_id) FROM __ducklake_metadata_lake.tarn_run"),manual,success" \
    "$(sed -n 2p <<<"$OUT" | cut -d, -f1-3)"
contains "a scheduler run shows its occurrence" "scheduler,success" "$(sed -n 3p <<<"$OUT")"
run_ok "tarn runs show 1" "$d" runs show 1 --format csv
check_eq "tarn runs show lists the run's models" "marts.summary,success
staging.items,success" "$(tail -n +2 <<<"$OUT" | cut -d, -f1-2 | sort)"
run_rc "tarn runs show of a run that does not exist fails" 1 "$d" runs show 999
contains "and says so" "no run 999" "$ERR"

# SIGTERM while a fire's build is in flight: the scheduler finishes that build, records it, and
# only then exits 0. The build reads a fifo with read_text, which opens it once, to read it: so
# the test knows the build is in flight (opening the fifo for writing returns once the build
# has opened it) and decides when it ends. The path is split in two literals so that change
# detection does not fingerprint (read) the fifo itself.
# fire_on_fifo DIR — in a copy of the basic project at DIR, a 06:00 model reading DIR/feed.txt:
# arms it, starts the 06:00 tick in the background ($pid, stderr in DIR/err) and returns once
# its build has opened the fifo, held as fd 3.
fire_on_fifo() {
    mkfifo "$1/feed.txt"
    printf -- '-- schedule "0 6 * * *"\nSELECT length(content) AS n FROM read_text(%s || %s)\n' \
        "'$1'" "'/feed.txt'" >"$1/models/marts/summary.sql"
    "$TARN" scheduler --once --now 2026-06-01T05:00:00Z -C "$1" >/dev/null 2>&1 </dev/null
    "$TARN" scheduler --once --now 2026-06-01T06:00:00Z -C "$1" >/dev/null 2>"$1/err" </dev/null &
    pid=$!
    exec 3>"$1/feed.txt" # blocks until the build opens the fifo
}
f=$(project basic)
fire_on_fifo "$f"
kill -TERM "$pid"
sleep 1
kill -0 "$pid" 2>/dev/null && ok "after SIGTERM the scheduler waits for the build in flight" ||
    fail "after SIGTERM the scheduler waits for the build in flight" "$(cat "$f/err")"
printf 'abc' >&3
exec 3>&-
wait "$pid"
check_eq "then it exits 0" "0" "$?"
check_eq "the build in flight is committed and its run recorded as a success" "3|scheduler,success" \
    "$(lakeq "$f" "SELECT n FROM lake.marts.summary")|$(lakeq "$f" "SELECT \"trigger\", status FROM __ducklake_metadata_lake.tarn_run")"

# A second SIGTERM stops the build in flight too: rolled back, recorded as cancelled.
g=$(project basic)
fire_on_fifo "$g"
kill -TERM "$pid"
for _ in $(seq 1 50); do grep -q "stopping after the build" "$g/err" && break; sleep 0.1; done
kill -TERM "$pid"
for _ in $(seq 1 50); do grep -q "stopping the run" "$g/err" && break; sleep 0.1; done
exec 3>&-
wait "$pid"
check_eq "after a second SIGTERM the scheduler exits 0" "0" "$?"
check_eq "the build in flight is rolled back and the run recorded as cancelled" \
    "0|cancelled|marts.summary,cancelled" \
    "$(lakeq "$g" "SELECT count(*) FROM duckdb_tables() WHERE database_name = 'lake' AND table_name = 'summary'")|$(lakeq "$g" "SELECT status FROM __ducklake_metadata_lake.tarn_run")|$(lakeq "$g" "SELECT model, status FROM __ducklake_metadata_lake.tarn_model_run WHERE model = 'marts.summary'")"

# A real scheduler process: a `* * * * *` model arms on the first tick and fires at the next
# minute, within two minutes; SIGTERM ends the process.
r=$(project basic)
printf -- '-- schedule "* * * * *"\nSELECT count(*) AS n FROM staging.items\n' >"$r/models/marts/summary.sql"
"$TARN" scheduler --interval 5s -C "$r" >"$r/out" 2>"$r/err" </dev/null &
pid=$!
fired=0
for _ in $(seq 1 150); do
    if grep -q "marts.summary fired" "$r/err" && grep -q "run 1:" "$r/err"; then
        fired=1
        break
    fi
    sleep 1
done
check_eq "a real scheduler fires a * * * * * model within two minutes" "1" "$fired"
# Between fires the scheduler holds no lock on the catalog: tarn history and tarn sql work (a
# try may meet a tick holding it, longer under the sanitizers: tries for up to 30 s).
hist=""
for _ in $(seq 1 30); do
    hist=$("$TARN" history marts.summary -C "$r" 2>&1) && break
    sleep 1
done
contains "tarn history beside a running scheduler" "marts.summary" "$hist"
n=""
for _ in $(seq 1 30); do
    n=$(cd "$r" && "$TARN" sql -c "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/'); SELECT n FROM lake.marts.summary" --format csv 2>&1) && break
    sleep 1
done
check_eq "tarn sql beside a running scheduler" "n
$(($(wc -l <"$FIXTURES/projects/basic/data/items.csv") - 1))" "$n"
kill -0 "$pid" 2>/dev/null && ok "the scheduler is still running" || fail "the scheduler is still running" "$(cat "$r/err")"
kill -TERM "$pid"
wait "$pid"
check_eq "SIGTERM ends the scheduler with exit 0" "0" "$?"
contains "it says it stopped" "tarn scheduler: stopped (SIGTERM)" "$(cat "$r/err")"
check_eq "its run is recorded with trigger scheduler" "scheduler,success" \
    "$(lakeq "$r" "SELECT \"trigger\", status FROM __ducklake_metadata_lake.tarn_run WHERE run_id = 1")"

finish

#!/usr/bin/env bash
# tests/e2e/test_sched_workers.sh — `tarn scheduler --on-workers` on a PostgreSQL catalog (a
# throwaway cluster, pg_lib.sh): a real scheduler process ticking every second, whose model with
# a freshness (never built, so due at once) fires; the tick's run is enqueued as `tarn run
# --on-workers` enqueues it, waits for a worker and says so, is built by the `tarn worker`
# started then, and is recorded and logged as the same tick in one process records and logs it;
# SIGTERM then ends the scheduler. On a DuckDB-file catalog --on-workers is refused at the
# start, naming the lake and the remedy.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"
. "$(dirname "$0")/pg_lib.sh"
. "$(dirname "$0")/worker_lib.sh"

pg_start || {
    [ -n "$PG_SKIP" ] && skip "the scheduler on workers" "$PG_SKIP"
    finish
}



# pgq SQL DB — pg_psql's rows; a query that fails says so, naming DB (two failures never
# compare equal)
pgq() { pg_psql "$1" "$2" || echo "query failed on $2"; }

# proj DIR ATTACH — an upstream model with no rule and a model with a freshness reading it.
proj() {
    mkdir -p "$1/config" "$1/models/raw" "$1/models/mart"
    echo "$2" >"$1/config/catalog.sql"
    echo "SELECT range AS id, range % 3 AS g FROM range(100)" >"$1/models/raw/a.sql"
    printf -- '-- freshness 1h\nSELECT g, count(*) AS n FROM raw.a GROUP BY g\n' >"$1/models/mart/b.sql"
}

# normalize — scheduler log lines without their times and run ids
normalize() {
    sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z/TIME/g; s/run [0-9]+/run N/g' |
        grep -v "waiting for a worker\|^tarn scheduler: \|^tarn: SIGTERM\|^$"
}

pg_createdb onworkers
s=$(mktempdir)
proj "$s" "ATTACH 'ducklake:postgres:$(pg_conninfo onworkers)' AS lake (DATA_PATH 'data/');"

"$TARN" scheduler -C "$s" --on-workers --interval 1s >"$s/sched.out" 2>"$s/sched.log" </dev/null &
sched=$!
BG+=($sched)
if wait_for "$s/sched.log" "waiting for a worker" 30; then
    ok "the fired run waits for a worker, and the scheduler says so"
else
    fail "the fired run waits for a worker, and the scheduler says so" "$(cat "$s/sched.log")"
fi
"$TARN" worker -C "$s" --id w1 >"$s/w1.log" 2>&1 </dev/null &
BG+=($!)
if wait_for "$s/sched.log" "run 1: 2 built" 60; then
    ok "the worker builds the tick's run"
else
    fail "the worker builds the tick's run" "$(cat "$s/sched.log")" "$(cat "$s/w1.log")"
fi
sleep 2 # two more ticks: the model is fresh now, nothing fires
kill -TERM "$sched"
wait "$sched"
check_eq "SIGTERM ends the scheduler (exit 0)" "0" "$?"
contains "it says why it stopped" "tarn scheduler: stopped (SIGTERM)" "$(cat "$s/sched.log")"
contains "the worker built both models" "mart.b: built in run 1" "$(cat "$s/w1.log")"
check_eq "one run, enqueued as tarn run --on-workers enqueues it: a job per model, done" \
    "1|raw.a,done,1;mart.b,done,1" \
    "$(pg_psql "SELECT count(DISTINCT run_id), string_agg(model || ',' || state || ',' || attempts, ';'
                ORDER BY seq) FROM public.tarn_job" onworkers)"
check_eq "each model committed once, by the worker" "2|2|w1" \
    "$(pg_psql "SELECT count(*), count(DISTINCT model), max(worker) FROM public.tarn_job_commit" onworkers)"

# the same tick in one process, on a project of its own
pg_createdb local
l=$(mktempdir)
proj "$l" "ATTACH 'ducklake:postgres:$(pg_conninfo local)' AS lake (DATA_PATH 'data/');"
"$TARN" scheduler -C "$l" --once >/dev/null 2>"$l/sched.log" </dev/null
check_eq "a tick in one process succeeds" "0" "$?"
check_eq "the scheduler's log is the one-process tick's" "$(normalize <"$l/sched.log")" \
    "$(normalize <"$s/sched.log")"
runs="SELECT \"trigger\", status, selectors IS NOT NULL, occurrence IS NOT NULL, models_total,
      models_succeeded, models_failed FROM public.tarn_run ORDER BY run_id"
check_eq "the run's record is the one-process tick's" "$(pgq "$runs" local)" \
    "$(pgq "$runs" onworkers)"
builds="SELECT model, status, rows_written, run_reason FROM public.tarn_model_run ORDER BY model"
check_eq "the builds' records are the one-process tick's" "$(pgq "$builds" local)" \
    "$(pgq "$builds" onworkers)"
check_eq "the tables' rows are the one-process tick's" \
    "$(cd "$l" && "$TARN" sql --format csv -c "$(cat config/catalog.sql) SELECT * FROM lake.mart.b ORDER BY ALL" || echo failed in "$l")" \
    "$(cd "$s" && "$TARN" sql --format csv -c "$(cat config/catalog.sql) SELECT * FROM lake.mart.b ORDER BY ALL" || echo failed in "$s")"
stop_workers

# a DuckDB-file catalog: refused before any tick
f=$(mktempdir)
proj "$f" "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');"
run_rc "--on-workers on a DuckDB-file catalog is refused (exit 2)" 2 "$f" scheduler --on-workers --once
contains "the refusal names the lake and says what to do" \
    "--on-workers: lake \"lake\" has its catalog in a DuckDB file" "$ERR"
contains "… the remedy" "attach the lake with a PostgreSQL catalog" "$ERR"
check_eq "nothing fired" "0" "$(grep -c "fired" <<<"$ERR")"

finish

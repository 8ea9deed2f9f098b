#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# Builds over workers (`tarn worker`, `tarn run --on-workers`, `tarn workers`) on a PostgreSQL
# catalog (a throwaway cluster, pg_lib.sh): a small project reported as `tarn run` reports it
# (text, --json, exit codes, a failure skipping its downstream); two builds on two workers at the
# same time (each held on a fifo until both have started), their tables tarn run -j 1's; the
# refusals on a DuckDB-file catalog; SIGTERM ending a worker after its build; and a 200-model project built by 4 workers,
# one of them killed -9 in the middle of a build, giving the same tables and rows as `tarn run -j 1`
# on a DuckDB-file catalog, every model committed exactly once, the killed build's file an orphan.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"
. "$(dirname "$0")/pg_lib.sh"
. "$(dirname "$0")/worker_lib.sh"
. "$(dirname "$0")/gen_models.sh"

pg_start || {
    [ -n "$PG_SKIP" ] && skip "workers" "$PG_SKIP"
    finish
}



# pgq DB SQL — psql's unaligned rows on database DB.
pgq() { pg_psql "$2" "$1"; }

# normalize — a run's text output without what differs from run to run (times, snapshot ids).
normalize() {
    sed -E 's/[0-9.]+ (ms|s)\b/T/g; s/snapshot [0-9]+/snapshot N/g; s/run [0-9]+/run N/g'
}

# ---- a small project ---------------------------------------------------------------------------

# small DIR ATTACH — three layers and a model that fails (its downstream is skipped).
small() {
    mkdir -p "$1/config" "$1/models/raw" "$1/models/mart"
    echo "$2" >"$1/config/catalog.sql"
    echo "SELECT range AS id, range % 7 AS g FROM range(1000)" >"$1/models/raw/a.sql"
    echo "SELECT g, count(*) AS n FROM raw.a GROUP BY g" >"$1/models/mart/b.sql"
    echo "SELECT sum(n) AS total FROM mart.b" >"$1/models/mart/c.sql"
    echo "SELECT id, no_such_column FROM raw.a" >"$1/models/mart/bad.sql"
    echo "SELECT * FROM mart.bad" >"$1/models/mart/after_bad.sql"
}

pg_createdb small
s=$(mktempdir)
small "$s" "ATTACH 'ducklake:postgres:$(pg_conninfo small)' AS lake (DATA_PATH 'data/');"
f=$(mktempdir)
small "$f" "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');"

# the run waits for a worker, and says so; the worker started then builds it
timeout 120 "$TARN" run -C "$s" --on-workers >"$s/run.out" 2>"$s/run.err" </dev/null &
runpid=$!
if wait_for "$s/run.err" "waiting for a worker" 30; then
    ok "--on-workers with no worker alive says so"
else
    fail "--on-workers with no worker alive says so" "$(cat "$s/run.err")"
fi
start_worker "$s/w1.log" -C "$s" --id w1 --lease 3
wait $runpid
check_eq "a small run on one worker exits 1 (a model fails)" 1 $?
pg_text=$(grep -v "waiting for a worker" "$s/run.err" | normalize)
run_rc "the same run in one process exits 1" 1 "$f" run -j 1
file_text=$(printf '%s\n' "$ERR" | normalize)
check_eq "the run's text output is tarn run's" "$file_text" "$pg_text"
contains "the failed model's downstream is skipped" "upstream mart.bad failed" "$pg_text"

run_rc "--json run on workers" 1 "$s" run --on-workers --force --json
pg_json=$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    print(e["event"], e.get("model", ""), e.get("status", ""), e.get("rows_written", ""),
          e.get("error") or "", [u["table"] for u in e.get("upstream", [])])')
run_rc "--json run in one process" 1 "$f" run --force --json -j 1
file_json=$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    e = json.loads(l)
    print(e["event"], e.get("model", ""), e.get("status", ""), e.get("rows_written", ""),
          e.get("error") or "", [u["table"] for u in e.get("upstream", [])])')
check_eq "the --json events are tarn run's" "$file_json" "$pg_json"

run_ok "an unchanged model is skipped as in tarn run" "$s" run --on-workers raw.a mart.b
contains "unchanged" "unchanged" "$ERR"

run_ok "tarn workers lists the live worker" "$s" workers
contains "tarn workers names it" "w1" "$OUT"
run_ok "tarn workers --json" "$s" workers --json
check_eq "its JSON says idle, no model" "w1 idle None" \
    "$(printf '%s\n' "$OUT" | python3 -c 'import json,sys; w=json.load(sys.stdin)[0]; print(w["worker"], w["state"], w["model"])')"

# SIGTERM mid-build: the worker finishes the build, then exits 0
stop_workers
TARN_WORKER_TEST_HOLD=mart.c TARN_WORKER_TEST_HOLD_S=2 start_worker "$s/w2.log" -C "$s" --id w2 \
    --lease 3
wait_for "$s/w2.log" "ready" 30
timeout 120 "$TARN" run -C "$s" --on-workers --force mart.c >"$s/run.out" 2>&1 </dev/null &
runpid=$!
if wait_for "$s/w2.log" "test hold" 30; then
    kill -TERM "${BG[0]}"
    wait "${BG[0]}"
    check_eq "SIGTERM ends the worker after its build (exit 0)" 0 $?
    BG=()
    wait $runpid
    check_eq "the run it was building completes" 0 $?
    contains "the build in flight was committed" "mart.c: built" "$(cat "$s/w2.log")"
else
    fail "the worker reached the test hold" "$(cat "$s/w2.log")"
fi
run_ok "tarn workers --all shows the stopped worker" "$s" workers --all
contains "as stopped" "stopped" "$OUT"
run_ok "and without --all no live one" "$s" workers
contains "none" "no live workers" "$OUT"

# ---- two builds at once, on two workers ---------------------------------------------------------

# par DIR ATTACH — sa.a and sb.b read the files DIR/fa and DIR/fb (read_text opens a file once, to
# read it; the path is split in two literals so that change detection does not read it), mart.ab
# reads both models. (Two schemas: two first builds making one schema conflict, as in DuckLake, and
# the worker builds the second again, which would open its fifo again.)
par() {
    mkdir -p "$1/config" "$1/models/sa" "$1/models/sb" "$1/models/mart"
    echo "$2" >"$1/config/catalog.sql"
    for m in a b; do
        printf 'SELECT content AS v FROM read_text(%s || %s)\n' "'$1'" "'/f$m'" >"$1/models/s$m/$m.sql"
    done
    echo "SELECT a.v || b.v AS v, length(a.v) AS n FROM sa.a, sb.b" >"$1/models/mart/ab.sql"
}
pg_createdb par
P=$(mktempdir)
par "$P" "ATTACH 'ducklake:postgres:$(pg_conninfo par)' AS lake (DATA_PATH 'data/');"
mkfifo "$P/fa" "$P/fb"
start_worker "$P/w1.log" -C "$P" --id p1 --lease 5
wait_for "$P/w1.log" "ready" 60
start_worker "$P/w2.log" -C "$P" --id p2 --lease 5
wait_for "$P/w2.log" "ready" 60
timeout 180 "$TARN" run -C "$P" --on-workers >"$P/run.out" 2>&1 </dev/null &
runpid=$!
# opening a fifo for writing returns once a build has opened it to read: both opens return only
# while both builds are in flight, each waiting for its rows
if timeout 90 bash -c 'exec 3>"$1/fa" 4>"$1/fb"; echo "rows of a" >&3; echo "rows of b" >&4' _ "$P"; then
    ok "the builds of sa.a and sb.b on two workers run at the same time"
else
    fail "the builds of sa.a and sb.b on two workers run at the same time" "$(cat "$P"/w?.log)"
fi
wait $runpid
check_eq "the run of overlapping builds completes (exit 0)" 0 $?
contains "the two workers built one of them each" "p1 p2" \
    "$(pgq par "SELECT worker FROM public.tarn_job WHERE model IN ('sa.a', 'sb.b') ORDER BY 1" | tr '\n' ' ')"
stop_workers
Q=$(mktempdir)
par "$Q" "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');"
echo "rows of a" >"$Q/fa"
echo "rows of b" >"$Q/fb"
run_ok "the same project with tarn run -j 1 on a DuckDB-file catalog" "$Q" run -j 1 -q
dump_par() { (cd "$1" && "$TARN" sql --format csv -c "$(cat "$1/config/catalog.sql") SELECT 'a', v, NULL FROM lake.sa.a
    UNION ALL SELECT 'b', v, NULL FROM lake.sb.b UNION ALL SELECT 'ab', v, n FROM lake.mart.ab ORDER BY ALL"); }
check_eq "the overlapping builds' tables are tarn run -j 1's" "$(dump_par "$Q")" "$(dump_par "$P")"
check_eq "their commits made one snapshot each" "3" \
    "$(pgq par "SELECT count(*) FROM public.ducklake_snapshot WHERE snapshot_id > 0")"

# ---- refusals on a DuckDB-file catalog -------------------------------------------------------------

run_rc "--on-workers on a DuckDB-file catalog is refused" 2 "$f" run --on-workers
contains "naming the remedy" "PostgreSQL catalog" "$ERR"
before=$(lakeq "$f" "SELECT count(*) FROM ducklake_snapshots('lake')")
check_eq "the refusal wrote nothing" "$before" "$(lakeq "$f" "SELECT count(*) FROM ducklake_snapshots('lake')")"
run_rc "tarn worker on a DuckDB-file catalog is refused" 2 "$f" worker --id x
contains "it names the remedy" "PostgreSQL catalog" "$ERR"
run_rc "--lease must be a duration" 2 "$s" worker --lease abc

# ---- 200 models, 4 workers, one killed -9 mid-build -------------------------------------------------

# the 200-model project: gen_models (tests/e2e/gen_models.sh)
pg_createdb big
B=$(mktempdir)
gen_models "$B" "ATTACH 'ducklake:postgres:$(pg_conninfo big)' AS lake (DATA_PATH 'data/');"
F=$(mktempdir)
gen_models "$F" "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');"

TARN_WORKER_TEST_HOLD="l2.*" TARN_WORKER_TEST_HOLD_S=600 start_worker "$B/victim.log" -C "$B" \
    --id victim --lease 2
victim=${BG[0]}
# (the first process to attach a new lake creates its catalog: one at a time)
wait_for "$B/victim.log" "ready" 60
start_worker "$B/w.log" -C "$B" --id w --concurrency 3 --lease 2
wait_for "$B/w.log" "w-3 .*ready" 60
timeout 400 "$TARN" run -C "$B" --on-workers >"$B/run.out" 2>&1 </dev/null &
runpid=$!
held=""
if wait_for "$B/victim.log" "test hold" 120; then
    kill -9 "$victim"
    held=$(sed -n 's/.*test hold: \([^ ]*\) waits.*/\1/p' "$B/victim.log")
    ok "a worker is killed -9 while its build of $held waits to commit"
else
    fail "the victim reached a build of layer 2" "$(tail -5 "$B/victim.log")"
fi
wait $runpid
check_eq "the run completes (exit 0)" 0 $?
tail -n 3 "$B/run.out" | grep -q "200 succeeded, 0 failed" && ok "200 models succeeded" ||
    fail "200 models succeeded" "$(tail -n 5 "$B/run.out")"
contains "another worker built the killed worker's model" "$held: claimed in run 1 (attempt 2)" \
    "$(cat "$B/w.log")"
stop_workers

run_ok "the same project with tarn run -j 1 on a DuckDB-file catalog" "$F" run -j 1 -q
# one process reads every table (200 processes would cost a minute)
dump_all() { # dump_all DIR — every model table's rows, sorted, in one tarn process
    local q="" l i
    for l in 0 1 2 3 4 5 6 7 8 9; do
        for i in $(seq 0 19); do
            q="$q SELECT 'l$l.m$i' AS t, * FROM lake.l$l.m$i UNION ALL"
        done
    done
    q=${q% UNION ALL}
    (cd "$1" && "$TARN" sql --format csv -c "$(cat "$1/config/catalog.sql") SELECT * FROM ($q) ORDER BY ALL")
}
check_eq "4 workers (one killed) built the same tables and rows as tarn run -j 1" \
    "$(dump_all "$F" | md5sum)" "$(dump_all "$B" | md5sum)"
check_eq "200 models in each dump" "200" "$(dump_all "$B" | grep -o '^l[0-9]\.m[0-9]*' | sort -u | wc -l)"

check_eq "each model committed exactly once (one guard row each)" "200 200" \
    "$(pgq big "SELECT count(*), count(DISTINCT model) FROM public.tarn_job_commit WHERE run_id = 1" | tr '|' ' ')"
check_eq "one successful build record per model" "200 200" \
    "$(pgq big "SELECT count(*), count(DISTINCT model) FROM public.tarn_model_run WHERE run_id = 1 AND status = 'success'" | tr '|' ' ')"
# first builds of one schema's tables on several workers conflict (each makes the schema), and are
# built again: the attempt that conflicted records nothing
check_eq "no failed build record (builds made again after $(grep -c "conflicted" "$B/w.log") conflicts)" \
    "0" "$(pgq big "SELECT count(*) FROM public.tarn_model_run WHERE run_id = 1 AND status <> 'success'")"
check_eq "one snapshot per model build (and none for the killed build)" "200" \
    "$(pgq big "SELECT count(*) FROM public.ducklake_snapshot WHERE snapshot_id > 0")"
check_eq "every job done, $held on its second attempt" "done|200
2" "$(pgq big "SELECT state, count(*) FROM public.tarn_job WHERE run_id = 1 GROUP BY 1"
    pgq big "SELECT attempts FROM public.tarn_job WHERE run_id = 1 AND model = '$held'")"
files=$(find "$B/data" -name '*.parquet' | wc -l)
refs=$(pgq big "SELECT count(*) FROM public.ducklake_data_file")
check_eq "the killed build left one orphan file, no snapshot" "$((refs + 1))" "$files"

finish

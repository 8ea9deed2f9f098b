#!/usr/bin/env bash
# tests/e2e/test_web_serve_runs.sh — `tarn serve` as the one long-running process that also
# builds: with --schedule the scheduler runs beside the server (a model due by its freshness is
# built, the graph shows it, and stopping serve stops the scheduler); with --allow-runs the page's
# "Run now" button builds the project, in real headless Chromium (web_browser_runs.js). Also the
# refusals: a request whose Host is another name (DNS rebinding) and a POST from another site's
# page get 403, whatever the flags.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"
. "$(dirname "$0")/web_lib.sh"

d=$(project tested)
cat >"$d/models/core/tier_counts.sql" <<'SQL'
-- freshness 1h
SELECT tier, count(*) AS n FROM core.customers GROUP BY ALL
SQL

# serve LOG ARGS… — tarn serve on this test's project (serve_start, web_lib.sh)
serve() {
    serve_start "$d" "$@"
}

# status_of MODEL — the model's status in /api/graph
status_of() {
    get /api/graph
    [ "$CODE" = 200 ] && jq_py "[n['status'] for n in j['nodes'] if n['name']=='$1'][0]"
}

# ---- --schedule: the scheduler builds inside serve ----
log=$_E2E_TMP/serve-schedule.log
if ! serve "$log" --schedule; then
    fail "tarn serve --schedule starts" "$(cat "$log")"
    finish
fi
ok "tarn serve --schedule starts"
st=""
for _ in $(seq 1 300); do
    st=$(status_of core.tier_counts 2>/dev/null)
    [ "$st" = success ] && break
    sleep 0.2
done
check_eq "a model due by its freshness is built by the scheduler inside serve" success "$st"
get /api/runs
check_eq "… in a run the page lists with trigger scheduler" "scheduler success" \
    "$(jq_py "' '.join([j['runs'][-1]['trigger'], j['runs'][-1]['status']])")"
get /api/graph
check_eq "… which built the due model and what it needs, nothing else" \
    "core.customers success|core.order_totals None|core.orders None|core.tier_counts success" \
    "$(jq_py "'|'.join(sorted(f\"{n['name']} {n['status']}\" for n in j['nodes']))")"
sched=$(pgrep -P "$server" -f 'tarn scheduler' || true)
[ -n "$sched" ] && ok "the scheduler is a child of serve" || fail "the scheduler is a child of serve" "$(ps -ef | grep tarn)"
kill "$server"
wait "$server"
server=""
contains "stopping serve stops its scheduler" "tarn scheduler: stopped (SIGTERM)" "$(cat "$log")"
[ -n "$sched" ] && ! kill -0 "$sched" 2>/dev/null && ok "… which is gone" || fail "… which is gone"
check_eq "the lake records the scheduler's run" "scheduler|success" \
    "$(lakeq "$d" "SELECT trigger, status FROM __ducklake_metadata_lake.main.tarn_run ORDER BY run_id" | tr ',' '|')"

# ---- the Host and Origin checks ----
log=$_E2E_TMP/serve-runs.log
if ! serve "$log" --allow-runs; then
    fail "tarn serve --allow-runs starts" "$(cat "$log")"
    finish
fi
ok "tarn serve --allow-runs starts"
port=${base##*:}
get /api/graph -H "Host: evil.example:$port"
check_eq "a request for another host name is refused (DNS rebinding)" 403 "$CODE"
contains "… saying why and what to do" "--allow-host" "$BODY"
get / -H "Host: 127.0.0.1.nip.io:$port"
check_eq "… the page too" 403 "$CODE"
get /api/graph -H "Host: localhost:$port"
check_eq "localhost is answered" 200 "$CODE"
get /api/runs -X POST -H "Origin: http://evil.example"
check_eq "a POST from another site's page is refused" 403 "$CODE"
check_eq "… and started no run" 1 \
    "$(lakeq "$d" "SELECT count(*) FROM __ducklake_metadata_lake.main.tarn_run")"
get /api/config
check_eq "the page is told runs may be started" True "$(jq_py "j['allow_runs']")"
# a build in flight (a stand-in holding the catalog's lock as a DuckDB writer does): Run now is
# refused with 409 rather than starting a run that could only fail on the lock
python3 -c "import fcntl, sys, time
f = open(sys.argv[1], 'r+b'); fcntl.lockf(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(30)" \
    "$d/lake.ducklake" >"$_E2E_TMP/held" &
holder=$!
for _ in $(seq 1 50); do grep -q held "$_E2E_TMP/held" 2>/dev/null && break; sleep 0.1; done
get /api/runs -X POST
check_eq "Run now while a build holds the lake: 409" 409 "$CODE"
contains "… saying a build is running" "a build is running" "$BODY"
kill $holder
wait $holder 2>/dev/null
check_eq "… and started no run" 1 \
    "$(lakeq "$d" "SELECT count(*) FROM __ducklake_metadata_lake.main.tarn_run")"

# ---- --allow-runs: the button builds, in a real browser ----
if browser_ready "Run now in a browser"; then
    browser_report "the browser test ran" "$(browser_run web_browser_runs.js "$base/" "$chromium" "$shots")"
    check_eq "the lake records the run the button started" "scheduler success|manual success" \
        "$(lakeq "$d" "SELECT trigger || ' ' || status FROM __ducklake_metadata_lake.main.tarn_run ORDER BY run_id" | grep -v "^$" | paste -sd"|")"
    check_eq "… which built the models not built yet" "core.order_totals|core.orders" \
        "$(lakeq "$d" "SELECT model FROM __ducklake_metadata_lake.main.tarn_model_run WHERE run_id = 2 AND status = 'success' ORDER BY 1" | grep -v "^$" | paste -sd"|")"
fi
contains "the run's output goes to serve's terminal" "tarn serve: a run started from the page" "$(cat "$log")"
contains "… its summary too" "tarn: run 2 succeeded" "$(cat "$log")"
kill "$server"
wait "$server"
server=""
finish

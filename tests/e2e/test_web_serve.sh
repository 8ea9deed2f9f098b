#!/usr/bin/env bash
# tests/e2e/test_web_serve.sh — `tarn serve`, the web view: builds a real project three times
# (the third run fails a relationships data test), starts the server on a free loopback port,
# checks the JSON API with curl (the graph, the runs, a model's history, preview / schema /
# change feed at a version, escaping of user data, 404 and 4xx answers, read-only by default, a
# lake held by a build answered "busy"), then drives headless Chromium with puppeteer-core
# (web_browser.js) through the graph, a model's history tab and a failed run, saving screenshots
# under the test logs. The browser half is skipped (printed as a skip) where chromium or
# puppeteer-core is missing; scripts/deps.sh installs both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"
. "$(dirname "$0")/web_lib.sh"

d=$(project tested)
# an email that is HTML: the page must show it as text
printf 'id,email,tier\n1,"<b>bold</b>",gold\n2,b@x.org,silver\n3,c@x.org,gold\n' >"$d/data/customers.csv"
run_ok "run 1 builds the project" "$d" run
printf 'order_id,customer_id,amount\n10,1,5\n11,2,8\n13,1,4\n' >"$d/data/orders.csv"
run_ok "run 2 rebuilds orders" "$d" run
printf 'order_id,customer_id,amount\n10,1,5\n11,2,8\n13,1,4\n14,9,1\n' >"$d/data/orders.csv"
run_rc "run 3 fails a relationships test" 1 "$d" run

# a write from outside tarn into a model's table: a snapshot of the table that no build made
(cd "$d" && "$TARN" sql -c "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/'); INSERT INTO lake.core.order_totals VALUES (99, 1)" >/dev/null)

log=$_E2E_TMP/serve.log
if ! serve_start "$d" "$log"; then
    fail "tarn serve starts" "$(cat "$log")"
    finish
fi
ok "tarn serve starts on a free loopback port"

get /api/graph
check_eq "GET /api/graph answers 200" 200 "$CODE"
check_eq "the graph has each model's last status (rows in its table now: one written outside tarn)" \
    "core.customers success 3|core.order_totals skipped 4|core.orders failed 4" \
    "$(jq_py "'|'.join(sorted(f\"{n['name']} {n['status']} {n['rows']}\" for n in j['nodes']))")"
check_eq "the graph's edges, the data test's drawn apart" \
    "core.customers>core.orders data|core.customers>core.orders test|core.orders>core.order_totals data" \
    "$(jq_py "'|'.join(sorted(f\"{e['from']}>{e['to']} {e['kind']}\" for e in j['edges']))")"

get /api/runs
check_eq "the runs, newest first" "3 failed|2 success|1 success" \
    "$(jq_py "'|'.join(f\"{r['id']} {r['status']}\" for r in j['runs'])")"
get /api/runs/3
check_eq "a run's failed data test with its violations and examples" "1 9" \
    "$(jq_py "' '.join(str(x) for t in [m for m in j['models'] if m['model']=='core.orders'][0]['tests'] if t['violations'] for x in (t['violations'], t['examples']))")"
get /api/runs/2
check_eq "a run's upstream snapshots read" "core.orders 4" \
    "$(jq_py "' '.join(f\"{u['table']} {u['snapshot_id']}\" for m in j['models'] if m['model']=='core.order_totals' for u in m['upstream'])")"

get /api/models/core.orders
check_eq "a model's snapshots: version, rows, reason" "4 2 source file changed: data/orders.csv|2 3 first run" \
    "$(jq_py "'|'.join(f\"{s['version']} {s['rows']} {s['reason']}\" for s in j['snapshots'])")"
contains "a snapshot has its commit message" "tarn: build core.orders" "$BODY"
get /api/models/core.order_totals
check_eq "the history lists only the model's builds, not a write from outside tarn" "5 upstream changed: core.orders|3 first run" \
    "$(jq_py "'|'.join(f\"{s['version']} {s['reason']}\" for s in j['snapshots'])")"
get "/api/models/core.order_totals/changes?from=5&to=6"
check_eq "… whose rows the change feed from the last build shows" "1 inserted" \
    "$(jq_py "f\"{j['counts']['inserted']} inserted\"")"
get "/api/models/core.orders/preview?version=2"
check_eq "the preview at an older version" "AT (VERSION => 2)|10,1,5;11,2,7;12,3,9" \
    "$(jq_py "j['clause'] + '|' + ';'.join(','.join(r) for r in j['rows'])")"
get "/api/models/core.orders/schema?version=2"
check_eq "the schema at a version" "order_id INTEGER,customer_id INTEGER,amount INTEGER" \
    "$(jq_py "','.join(c['name'] + ' ' + c['type'] for c in j['columns'])")"
get "/api/models/core.orders/changes?from=2&to=4"
check_eq "what changed between two versions" "2 inserted 1 deleted" \
    "$(jq_py "f\"{j['counts']['inserted']} inserted {j['counts']['deleted']} deleted\"")"

get "/api/models/core.customers/preview?version=1"
check_eq "user data round-trips through the JSON escaped" "<b>bold</b>" "$(jq_py "j['rows'][0][1]")"
contains "the JSON escapes nothing into markup" '"<b>bold</b>"' "$BODY"

get "/api/models/core.orders/preview?version=99"
check_eq "a version the lake does not have: 404" 404 "$CODE"
contains "… saying which versions there are" "no version 99 (its versions are 0 to 6)" "$BODY"
get "/api/models/core.orders/preview?version=0"
check_eq "a version before the table existed: 404" 404 "$CODE"
contains "… saying so" "core.orders did not exist at version 0" "$BODY"
get "/api/models/core.orders/preview?version=two"
check_eq "a version that is no number: 400" 400 "$CODE"
get "/api/models/core.orders/preview"
check_eq "no version: 400" 400 "$CODE"
get "/api/models/core.orders/changes?from=4&to=2"
check_eq "changes from a later version: 400" 400 "$CODE"
get /api/models/core.nope
check_eq "an unknown model: 404" 404 "$CODE"
get /api/runs/77
check_eq "an unknown run: 404" 404 "$CODE"
get /api/nothing
check_eq "an unknown API path: 404" 404 "$CODE"
get /etc/passwd
check_eq "a path outside the API and the page: 404" 404 "$CODE"
get /../../etc/passwd --path-as-is
check_eq "a path climbing out: 404" 404 "$CODE"
get /api/graph -X DELETE
check_eq "the API is read with GET: 405" 405 "$CODE"
get /api/runs -X POST
check_eq "no runs from the page without --allow-runs: 403" 403 "$CODE"
contains "… saying how to allow them" "--allow-runs" "$BODY"
get /api/graph -H "Host: evil.example:$port"
check_eq "a request for another host name is refused (DNS rebinding)" 403 "$CODE"
get /
check_eq "the page is served" 200 "$CODE"
contains "the page loads its scripts from the server" 'src="/dagre.min.js"' "$BODY"
get /dagre.min.js
check_eq "the layout library is served from the binary" 200 "$CODE"

# tarn run works beside the server (it opens the lake per request, read-only)
run_ok "tarn run works while tarn serve runs" "$d" run core.customers

# while a writer holds the catalog the API says busy (503, Retry-After), not an error. The writer
# is a stand-in holding the catalog file's lock as a DuckDB writer does (fcntl, exclusive), for as
# long as the test needs: a real build is over too soon to be caught reliably.
hold() { # hold MODE SECONDS — lock $d/lake.ducklake (ex or sh) in the background; $holder
    # the last holder's "held" must not be read as this one's: the background shell truncates
    # the file only when it starts, after the wait below may have looked
    rm -f "$_E2E_TMP/held"
    python3 -c "import fcntl, sys, time
f = open(sys.argv[1], 'r+b')
fcntl.lockf(f, fcntl.LOCK_EX if sys.argv[2] == 'ex' else fcntl.LOCK_SH)
print('held', flush=True)
time.sleep(float(sys.argv[3]))" "$d/lake.ducklake" "$1" "$2" >"$_E2E_TMP/held" &
    holder=$!
    for _ in $(seq 1 50); do
        grep -q held "$_E2E_TMP/held" 2>/dev/null && return
        sleep 0.1
    done
}
hold ex 30
get /api/graph
check_eq "a lake held by a writer answers 503" 503 "$CODE"
contains "… marked busy" '"busy":true' "$BODY"
contains "… with Retry-After" "Retry-After: 2" "$(curl -s -D - -o /dev/null "$base/api/graph")"
kill $holder
wait $holder 2>/dev/null
get /api/graph
check_eq "once the writer is gone the lake is read again" 200 "$CODE"

# a writer that meets a reader's short hold waits for it (lake/catdb.c), one that meets a
# writer fails at once with the lock message
hold sh 2
t0=$(date +%s%N)
run_ok "tarn run waits for a reader holding the catalog" "$d" run core.customers
t1=$(date +%s%N)
[ $(((t1 - t0) / 1000000)) -ge 1000 ] && ok "… until the read ended" ||
    fail "… until the read ended" "it took $(((t1 - t0) / 1000000)) ms"
wait $holder 2>/dev/null
hold ex 30
t0=$(date +%s%N)
run_rc "tarn run beside a writer fails" 2 "$d" run core.customers
t1=$(date +%s%N)
contains "… naming the catalog in use" "is in use by another process" "$ERR"
[ $(((t1 - t0) / 1000000)) -lt 5000 ] && ok "… without waiting for it" ||
    fail "… without waiting for it" "it took $(((t1 - t0) / 1000000)) ms"
kill $holder
wait $holder 2>/dev/null

# the browser
if browser_ready "the pages in a browser"; then
    browser_report "the browser test ran" "$(browser_run web_browser.js "$base/" "$chromium" "$shots")"
    for f in graph history runs run; do
        [ -s "$shots/$f.png" ] && ok "screenshot $f.png saved" || fail "screenshot $f.png saved" "none in $shots"
    done
    # the page while a writer holds the catalog: busy, then drawn once it is gone
    hold ex 60
    rm -f "$_E2E_TMP/busy-seen"
    (cd "$_E2E_TMP" && HOME=$_E2E_TMP timeout 120 node "$REPO/tests/e2e/web_browser_busy.js" "$base/" "$chromium" "$_E2E_TMP/busy-seen" >"$_E2E_TMP/busy.out" 2>&1) &
    browser=$!
    for _ in $(seq 1 300); do
        [ -e "$_E2E_TMP/busy-seen" ] && break
        sleep 0.1
    done
    kill $holder
    wait $holder 2>/dev/null
    wait $browser
    browser_report "the busy-page browser test ran" "$(cat "$_E2E_TMP/busy.out")"
fi

kill $server
wait $server
contains "Ctrl-C / SIGTERM stops it" "stopped serving" "$(cat "$log")"
finish

# tests/e2e/web_lib.sh — what the `tarn serve` tests (test_web_serve*.sh) share: starting the
# server on a free loopback port, reading its JSON API with curl, and running a puppeteer-core
# script in headless Chromium with its `ok -` / `not ok -` lines reported as this test's checks.
# Sourced after lib.sh. The server started is stopped when the script exits.

server=""
at_exit web_stop_server

# web_stop_server — stops the server serve_start started, if it still runs
web_stop_server() {
    if [ -n "$server" ]; then
        kill "$server" 2>/dev/null
        wait "$server" 2>/dev/null
    fi
    server=""
}

# serve_start DIR LOG ARGS… — starts `tarn serve -C DIR --port 0 ARGS…` in the background
# ($server) and waits for its address ($base, $port); fails when it prints none
serve_start() {
    local dir=$1 log=$2
    shift 2
    "$TARN" serve -C "$dir" --port 0 "$@" >"$log" 2>&1 &
    server=$!
    port=""
    for _ in $(seq 1 100); do
        port=$(sed -n 's|.*http://127\.0\.0\.1:\([0-9]*\)/.*|\1|p' "$log")
        [ -n "$port" ] && break
        sleep 0.1
    done
    base=http://127.0.0.1:$port
    [ -n "$port" ]
}

# get PATH [CURL ARGS…] — the body in $BODY, the status in $CODE
get() {
    local out
    out=$(curl -s -w '\n%{http_code}' "${@:2}" "$base$1")
    CODE=${out##*$'\n'}
    BODY=${out%$'\n'*}
}

# jq_py EXPR — EXPR evaluated by python on the JSON in $BODY as `j`
jq_py() {
    python3 -c "import json,sys; j=json.loads(sys.stdin.read()); print($1)" <<<"$BODY"
}

# browser_ready WHAT — 0 when chromium and puppeteer-core are here ($chromium set, $shots the
# screenshot folder made); else prints WHAT as a skip with the reason and returns 1
browser_ready() {
    chromium=$(command -v chromium || command -v chromium-browser || true)
    local pptr=$REPO/deps/web-test/node_modules/puppeteer-core/package.json
    if [ -z "$chromium" ]; then
        skip "$1" "chromium is not installed: scripts/deps.sh installs it"
        return 1
    elif ! command -v node >/dev/null || [ ! -f "$pptr" ]; then
        skip "$1" "puppeteer-core is not in deps/web-test: run scripts/deps.sh"
        return 1
    fi
    shots=${TARN_E2E_LOGS:-$REPO/build/test-logs}/web-screenshots
    mkdir -p "$shots"
}

# browser_report WHAT OUTPUT — a browser script's `ok -` / `not ok -` lines as checks of this
# test, its `#` lines printed; a failure named WHAT when it printed no check at all
browser_report() {
    local line
    while IFS= read -r line; do
        case $line in
        "ok - "*) ok "browser: ${line#ok - }" ;;
        "not ok - "*) fail "browser: ${line#not ok - }" ;;
        "#"*) echo "$line" ;;
        esac
    done <<<"$2"
    grep -q -E "^(not )?ok - " <<<"$2" || fail "$1" "$2"
}

# browser_run SCRIPT ARGS… — runs tests/e2e/SCRIPT in node (at most 240 s) with ARGS, in the
# test's temp folder; its output on stdout
browser_run() {
    local script=$1
    shift
    (cd "$_E2E_TMP" && HOME=$_E2E_TMP timeout 240 node "$REPO/tests/e2e/$script" "$@" 2>&1)
}

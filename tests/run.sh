#!/usr/bin/env bash
# tests/run.sh — tarn's whole test suite: the README's test command, and what CI runs.
#
#   ./tests/run.sh
#
# 1. scripts/deps.sh (installs what is missing; cheap when everything is there);
# 2. `make -k -j2` into build/ and `make -k -j2 SAN=1` (ASan + UBSan) into build-san/;
# 3. for each build, normal then sanitized:
#    - unit:   every tests/unit/test_*.c binary (cmocka, run with CMOCKA_MESSAGE_OUTPUT=TAP; each
#              TAP `ok`/`not ok` line is one test; planned tests that never reported count as failed,
#              and so does a non-zero exit with no failed test, e.g. a sanitizer report at exit);
#    - e2e:    every tests/e2e/test_*.sh with TARN=<abs path of that build's tarn>; each
#              `ok - NAME` / `not ok - NAME` line is one test; a non-zero exit without a `not ok`
#              line counts as one failure;
#    - golden: the DuckLake golden suite, ../shared/ducklake-golden/check.py (override the shared
#              folder with TARN_SHARED). One test per case and per fixture. A failing test listed in
#              tests/golden-expected-failures.txt is an expected failure (xfail), not a failure —
#              unless tarn crashed on it (signal or sanitizer abort); a listed test that passes is
#              reported as XPASS (counted as passed: remove it from the list).
# A build that fails, a binary it could not bring up to date, a missing tarn or golden folder, a
# timeout: each counts as a failure; the suite always ends with its totals.
#
# The LAST line of output is `N passed, N failed` (totals over everything); exit 0 iff none failed.
# Logs of every test are kept in build/test-logs/ and build-san/test-logs/.
#
# Environment knobs: TARN_SHARED (folder holding ducklake-golden/), JOBS (make -j, default 2),
# TARN_GOLDEN_TIMEOUT (seconds per tarn run in the golden suite, default 60; doubled under SAN),
# TARN_GOLDEN_SUITE_TIMEOUT (seconds for one whole golden run, default 900),
# TARN_UNIT_TIMEOUT / TARN_E2E_TIMEOUT (seconds per unit binary / e2e script, default 300),
# TARN_E2E_JOBS (e2e scripts run side by side, default 2; the logs' e2e-times has each one's seconds;
#   a script with a `# e2e: long` line among its first 40 starts before the others),
# TARN_SKIP_SAN=1 (only the normal build: quicker local runs; CI never sets it).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1

SHARED=${TARN_SHARED:-$(cd "$ROOT/.." && pwd)/shared}
GOLDEN_DIR=$SHARED/ducklake-golden
XFAIL_LIST=$ROOT/tests/golden-expected-failures.txt
LIBDUCKDB=$ROOT/deps/lib/libduckdb.so
JOBS=${JOBS:-2}
GOLDEN_TIMEOUT=${TARN_GOLDEN_TIMEOUT:-60}
GOLDEN_SUITE_TIMEOUT=${TARN_GOLDEN_SUITE_TIMEOUT:-900}
UNIT_TIMEOUT=${TARN_UNIT_TIMEOUT:-300}
E2E_TIMEOUT=${TARN_E2E_TIMEOUT:-300}
E2E_JOBS=${TARN_E2E_JOBS:-2}

PASSED=0
FAILED=0
XFAILED=0
SKIPPED=0
FAILURES=()
START=$SECONDS

section() {
    printf '\n== %s\n' "$*"
}

# failure LABEL — one failed test.
failure() {
    FAILED=$((FAILED + 1))
    FAILURES+=("$1")
}

# show FILE [N] — the last N (default 80) lines of FILE, indented.
show() {
    tail -n "${2:-80}" "$1" | sed 's/^/    /'
}

# up_to_date MAKEVARS... TARGET — the target exists and make would not rebuild it (so it is not a
# stale leftover of an earlier build that failed this time).
up_to_date() {
    local target=${*: -1}
    [ -x "$target" ] && make -q "$@" >/dev/null 2>&1
}

printf 'tarn test suite: %s, commit %s, %s\n' "$ROOT" \
    "$(git rev-parse --short HEAD 2>/dev/null || echo '?')" "$(date -u '+%Y-%m-%d %H:%M:%S UTC')"

# ---------------------------------------------------------------------------------------------
section "dependencies (scripts/deps.sh)"
if ./scripts/deps.sh </dev/null; then
    echo "deps ok"
else
    echo "FAIL scripts/deps.sh (exit status $?)"
    failure "scripts/deps.sh"
fi

# ---------------------------------------------------------------------------------------------
VARIANTS=(normal san)
[ "${TARN_SKIP_SAN:-0}" = 1 ] && VARIANTS=(normal)

# variant normal|san — sets V, B (build dir), MAKEVARS, RUN_ENV (environment of every test run)
# and GT (seconds per tarn run in the golden suite).
variant() {
    V=$1
    B=build
    MAKEVARS=()
    RUN_ENV=()
    GT=$GOLDEN_TIMEOUT
    if [ "$V" = san ]; then
        B=build-san
        MAKEVARS=(SAN=1)
        GT=$((GOLDEN_TIMEOUT * 2))
        # Every sanitizer report aborts the process (SIGABRT), so the test that triggered it
        # fails. libduckdb.so is not instrumented; tests/lsan.supp lists what LSan may ignore
        # there. The caller's own *SAN_OPTIONS come last and win.
        RUN_ENV=(
            "ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=1:print_stacktrace=1:check_initialization_order=1:strict_init_order=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
            "UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
            "LSAN_OPTIONS=suppressions=$ROOT/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
        )
    fi
    mkdir -p "$B/test-logs"
}

for v in "${VARIANTS[@]}"; do
    variant "$v"
    section "build ($V): make -k -j$JOBS ${MAKEVARS[*]}"
    t0=$SECONDS
    if make -k -j"$JOBS" "${MAKEVARS[@]}" >"$B/test-logs/build.log" 2>&1 </dev/null; then
        echo "build ($V) ok in $((SECONDS - t0))s"
    else
        echo "FAIL build ($V) (exit status $?); its errors (full log: $B/test-logs/build.log):"
        grep -E '(error|warning):|undefined reference|\*\*\*' "$B/test-logs/build.log" |
            awk '!seen[$0]++' | head -n 40 | sed 's/^/    /'
        failure "build ($V)"
    fi
done

# ---------------------------------------------------------------------------------------------
# unit B LOGDIR MAKEVARS... — every tests/unit/test_*.c binary of build dir B.
run_unit() {
    local B=$1 logs=$2 src name bin log rc plan nok nskip npass missing nfail why
    shift 2
    local found=0
    for src in tests/unit/test_*.c; do
        [ -e "$src" ] || continue
        found=1
        name=$(basename "$src" .c)
        bin=$B/tests/$name
        log=$logs/unit-$name.log
        if ! up_to_date "$@" "$bin"; then
            echo "FAIL unit $name: $bin was not built (see the build errors above)"
            failure "unit ($V) $name: not built"
            continue
        fi
        # (in a subshell, so that bash's note on a killed process lands in the log)
        (
            env "${RUN_ENV[@]}" CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 10 "$UNIT_TIMEOUT" "$bin"
            exit $?
        ) </dev/null >"$log" 2>&1
        rc=$?
        read -r plan npass nok nskip < <(awk '
            /^1\.\.[0-9]+/ { plan += substr($0, 4) + 0; next }
            /^(not )?ok [0-9]+/ && /# (SKIP|skip)/ { skip++; next }
            /^ok [0-9]+/ { pass++; next }
            /^not ok [0-9]+/ { fail++; next }
            END { printf "%d %d %d %d\n", plan, pass, fail, skip }' "$log")
        missing=$((plan - npass - nok - nskip))
        [ "$missing" -lt 0 ] && missing=0
        nfail=$((nok + missing))
        why=""
        [ "$missing" -gt 0 ] && why="$missing planned test(s) never reported"
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            why="timed out after ${UNIT_TIMEOUT}s${why:+; $why}"
        elif [ "$rc" -ne 0 ]; then
            why="exit status $rc${why:+; $why}"
        fi
        if [ "$nfail" -eq 0 ] && [ "$rc" -ne 0 ]; then
            nfail=1
        fi
        if [ "$plan" -eq 0 ] && [ $((npass + nok + nskip)) -eq 0 ] && [ "$nfail" -eq 0 ]; then
            nfail=1
            why="no TAP output (a cmocka test prints it with CMOCKA_MESSAGE_OUTPUT=TAP)"
        fi
        PASSED=$((PASSED + npass))
        SKIPPED=$((SKIPPED + nskip))
        if [ "$nfail" -eq 0 ]; then
            if [ "$nskip" -gt 0 ]; then
                echo "ok   unit $name: $npass passed, $nskip skipped"
            else
                echo "ok   unit $name: $npass passed"
            fi
        else
            echo "FAIL unit $name: $npass passed, $nfail failed${why:+ ($why)}; output ($log):"
            show "$log" 100
            local t
            while read -r t; do
                failure "unit ($V) $name: ${t#not ok }"
            done < <(grep -E '^not ok [0-9]+' "$log" | grep -v -E '# (SKIP|skip)')
            for ((t = nok; t < nfail; t++)); do
                failure "unit ($V) $name: ${why:-failed}"
            done
        fi
    done
    [ "$found" = 1 ] || echo "(no unit tests in tests/unit/)"
}

# e2e_one SCRIPT TARN LOG — run one e2e script, its output in LOG and its exit status in LOG.rc.
e2e_one() {
    (
        env "${RUN_ENV[@]}" TARN="$2" TARN_LIBDUCKDB="$LIBDUCKDB" TARN_E2E_LOGS="$(dirname "$3")" \
            timeout -k 10 "$E2E_TIMEOUT" bash "$1"
        exit $?
    ) </dev/null >"$3" 2>&1
    echo $? >"$3.rc"
}

# run_e2e TARN LOGDIR — every tests/e2e/test_*.sh against binary TARN, E2E_JOBS scripts at a time
# (each script works in its own temporary folders, so they can run side by side; the results are
# reported in name order once all have ended). LOGDIR/e2e-times gets each script's seconds.
run_e2e() {
    local tarn=$1 logs=$2 script name log rc npass nfail nskip found=0 times=$2/e2e-times
    local -a scripts=() long=() rest=()
    for script in tests/e2e/test_*.sh; do
        [ -e "$script" ] && scripts+=("$script")
    done
    # Scripts marked `# e2e: long` (the few that take minutes) start first, so that none of them
    # starts last and runs alone on one core while the other idles.
    for script in "${scripts[@]}"; do
        if head -n 40 "$script" | grep -q '^# e2e: long'; then long+=("$script"); else rest+=("$script"); fi
    done
    : >"$times.new"
    for script in "${long[@]}" "${rest[@]}"; do
        while [ "$(jobs -rp | wc -l)" -ge "$E2E_JOBS" ]; do
            wait -n
        done
        name=$(basename "$script")
        log=$logs/e2e-${name%.sh}.log
        rm -f "$log.rc"
        (
            local t0=$SECONDS
            e2e_one "$script" "$tarn" "$log"
            echo "$((SECONDS - t0)) $name" >>"$times.new"
        ) &
    done
    wait
    mv -f "$times.new" "$times"
    for script in "${scripts[@]}"; do
        found=1
        name=$(basename "$script")
        log=$logs/e2e-${name%.sh}.log
        rc=$(cat "$log.rc" 2>/dev/null || echo 1)
        npass=$(grep -c -E '^ok - ' "$log")
        nfail=$(grep -c -E '^not ok - ' "$log")
        nskip=$(grep -c -E '^skip - ' "$log")
        PASSED=$((PASSED + npass))
        SKIPPED=$((SKIPPED + nskip))
        if [ "$nfail" -eq 0 ] && [ "$rc" -eq 0 ]; then
            if [ "$nskip" -gt 0 ]; then
                echo "ok   e2e $name: $npass passed, $nskip skipped: $(grep -E '^skip - ' "$log" | head -n 3 | sed 's/^skip - //' | paste -sd ';')"
            else
                echo "ok   e2e $name: $npass passed"
            fi
            continue
        fi
        local why="exit status $rc"
        [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="timed out after ${E2E_TIMEOUT}s"
        echo "FAIL e2e $name: $npass passed, $((nfail > 0 ? nfail : 1)) failed ($why); output ($log):"
        show "$log" 100
        local t
        while read -r t; do
            failure "e2e ($V) $name: ${t#not ok - }"
        done < <(grep -E '^not ok - ' "$log")
        [ "$nfail" -eq 0 ] && failure "e2e ($V) $name: $why without a 'not ok' line"
    done
    [ "$found" = 1 ] || echo "(no e2e scripts in tests/e2e/)"
}

# run_golden TARN LOGDIR TIMEOUT — check.py, with the expected-failures list applied.
run_golden() {
    local tarn=$1 logs=$2 per_run=$3 log=$2/golden.log err=$2/golden.stderr counts=$2/golden.counts rc
    rm -f "$counts" "$counts.failed"
    env "${RUN_ENV[@]}" timeout -k 10 "$GOLDEN_SUITE_TIMEOUT" python3 "$GOLDEN_DIR/check.py" \
        --tarn "$tarn" --libduckdb "$LIBDUCKDB" --timeout "$per_run" </dev/null >"$log" 2>"$err"
    rc=$?
    # One block per test: `ok   <label>` or `FAIL <label>` followed by its problems (indented or diff
    # lines). Labels are `case NNN-name` / `fixture NNN-name`, as in the expected-failures list.
    awk -v counts="$counts" -v listfile="$XFAIL_LIST" '
        BEGIN {
            while ((getline line < listfile) > 0) {
                sub(/#.*/, "", line); gsub(/^[ \t]+|[ \t\r]+$/, "", line)
                if (line != "") listed[line] = 1
            }
        }
        function flush() {
            if (cur == "") return
            seen[cur] = 1
            if (status == "ok") {
                passed++
                if (cur in listed) { xpass++; print "XPASS " cur " (passes now: remove it from tests/golden-expected-failures.txt)" }
                else print "ok   " cur
            } else if ((cur in listed) && !crashed) {
                xfail++
            } else {
                failed++
                print "FAIL " cur ((cur in listed) ? " (listed as an expected failure, but tarn crashed)" : "")
                printf "%s", block
                print cur > (counts ".failed")
            }
            cur = ""; block = ""; nblock = 0; crashed = 0
        }
        /^ok   (case|fixture) / { flush(); cur = substr($0, 6); status = "ok"; next }
        /^FAIL (case|fixture) / { flush(); cur = substr($0, 6); status = "fail"; next }
        /^[0-9]+ passed, [0-9]+ failed$/ { flush(); final = $0; next }
        cur != "" {
            if (nblock < 50) block = block "    " $0 "\n"
            nblock++
            if ($0 ~ /tarn exited abnormally/) crashed = 1
            next
        }
        END {
            flush()
            if (final != "") for (l in listed) if (!(l in seen)) print "note: " l " is listed in tests/golden-expected-failures.txt but check.py ran no such test"
            split(final, f, /[ ,]+/)
            printf "%d %d %d %d %d %d %d\n", passed, failed, xfail, xpass, (final != ""), f[1] + 0, f[3] + 0 > counts
        }' "$log"
    local p=0 f=0 xf=0 xp=0 finished=0 cp=0 cf=0
    [ -s "$counts" ] && read -r p f xf xp finished cp cf <"$counts"
    PASSED=$((PASSED + p))
    XFAILED=$((XFAILED + xf))
    if [ -f "$counts.failed" ]; then
        local t
        while read -r t; do failure "golden ($V) $t"; done <"$counts.failed"
    fi
    echo "golden ($V): $p passed ($xp xpass), $f failed, $xf expected failures; output: $log"
    if [ "$finished" != 1 ]; then
        local why="exit status $rc"
        [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="timed out after ${GOLDEN_SUITE_TIMEOUT}s"
        echo "FAIL golden ($V): check.py did not finish ($why); its stderr ($err):"
        show "$err" 30
        failure "golden ($V): check.py did not finish ($why)"
    elif [ "$cp" -ne "$p" ] || [ "$cf" -ne $((f + xf)) ]; then
        echo "FAIL golden ($V): check.py counted $cp passed, $cf failed; this runner parsed $p + $((f + xf))"
        failure "golden ($V): output not understood"
    fi
}

for v in "${VARIANTS[@]}"; do
    variant "$v"
    LOGS=$ROOT/$B/test-logs
    TARN_BIN=$ROOT/$B/tarn
    tarn_ok=1
    up_to_date "${MAKEVARS[@]}" "$B/tarn" || tarn_ok=0

    section "unit tests ($V)"
    t0=$SECONDS
    run_unit "$B" "$LOGS" "${MAKEVARS[@]}"
    echo "($((SECONDS - t0))s)"

    section "e2e tests ($V): TARN=$TARN_BIN"
    t0=$SECONDS
    if [ "$tarn_ok" = 1 ]; then
        run_e2e "$TARN_BIN" "$LOGS"
    elif compgen -G 'tests/e2e/test_*.sh' >/dev/null; then
        echo "FAIL e2e ($V): $B/tarn was not built; no e2e script run"
        failure "e2e ($V): $B/tarn not built"
    else
        echo "(no e2e scripts in tests/e2e/; $B/tarn was not built)"
    fi
    echo "($((SECONDS - t0))s)"

    section "DuckLake golden suite ($V): $GOLDEN_DIR"
    t0=$SECONDS
    if [ ! -f "$GOLDEN_DIR/check.py" ]; then
        echo "FAIL golden ($V): no $GOLDEN_DIR/check.py (the shared folder is ../shared beside the repo; set TARN_SHARED)"
        failure "golden ($V): check.py not found"
    elif [ "$tarn_ok" != 1 ]; then
        echo "FAIL golden ($V): $B/tarn was not built"
        failure "golden ($V): $B/tarn not built"
    elif [ ! -f "$LIBDUCKDB" ]; then
        echo "FAIL golden ($V): no $LIBDUCKDB (scripts/deps.sh installs it)"
        failure "golden ($V): libduckdb.so missing"
    else
        run_golden "$TARN_BIN" "$LOGS" "$GT"
    fi
    echo "($((SECONDS - t0))s)"
done

# ---------------------------------------------------------------------------------------------
section "summary"
if [ "${#FAILURES[@]}" -gt 0 ]; then
    echo "failed:"
    printf '  %s\n' "${FAILURES[@]:0:60}"
    [ "${#FAILURES[@]}" -gt 60 ] && echo "  ... and $((${#FAILURES[@]} - 60)) more"
fi
echo "summary: $PASSED passed, $FAILED failed, $XFAILED expected failures (golden), $SKIPPED skipped; $((SECONDS - START))s"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]

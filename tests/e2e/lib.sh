# tests/e2e/lib.sh — helpers for tarn's end-to-end test scripts (bash).
#
# A script tests/e2e/test_NAME.sh drives the tarn binary and reports one line per check:
#
#   #!/usr/bin/env bash
#   . "$(dirname "$0")/lib.sh"
#   d=$(mktempdir)                                  # removed when the script exits
#   check    "sql runs"       tarn sql -c 'SELECT 1'   # ok if the command exits 0
#   check_fails "bad flag"    tarn --no-such-flag      # ok if it exits 1..125 (an error, not a crash)
#   check_eq "select 42"      "42" "$(tarn sql --format csv -c 'SELECT 42 AS x' | tail -n 1)"
#   [ -f "$d/x" ] && ok "file made" || fail "file made" "no $d/x"
#   skip "in a browser" "chromium is not installed" # a check this machine cannot run
#   finish                                          # prints `N passed, N failed`, exits 0 iff none failed
#
# Output: `ok - NAME` / `not ok - NAME` (details follow as `#   ...` lines), then `N passed, N failed`.
# tests/run.sh counts those lines; a script that exits non-zero without a `not ok` line counts as one
# failure, and so does one that ends without calling finish.
#
# Environment: TARN is the absolute path of the binary under test (tests/run.sh sets it to build/tarn
# or build-san/tarn; default build/tarn). TARN_LIBDUCKDB is libduckdb.so (deps/lib). REPO is the repo
# root, FIXTURES is tests/fixtures. `tarn ARGS...` runs "$TARN" ARGS. KEEP_TMP=1 keeps the temp dirs.
# Run one script by hand: `bash tests/e2e/test_NAME.sh` (or TARN=build-san/tarn bash ...).

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# shellcheck disable=SC2034 # for the scripts that source this file
FIXTURES=$REPO/tests/fixtures
TARN=${TARN:-$REPO/build/tarn}
case $TARN in /*) ;; *) TARN=$PWD/$TARN ;; esac
TARN_LIBDUCKDB=${TARN_LIBDUCKDB:-$REPO/deps/lib/libduckdb.so}
export TARN TARN_LIBDUCKDB

# E2E_SAN is 1 when TARN is the sanitized build (build-san/), which runs several times slower: heavy
# scripts take a smaller size there, through by_build.
case $TARN in */build-san/*) E2E_SAN=1 ;; *) E2E_SAN=0 ;; esac
# by_build NORMAL SANITIZED — prints the size for this build (e.g. N=${N:-$(by_build 300 100)}).
by_build() {
    if [ "$E2E_SAN" = 1 ]; then echo "$2"; else echo "$1"; fi
}

_E2E_PASSED=0
_E2E_FAILED=0
_E2E_FINISHED=0
_E2E_TMP=$(mktemp -d "${TMPDIR:-/tmp}/tarn-e2e.XXXXXX") || {
    echo "not ok - mktemp"
    exit 1
}

_E2E_AT_EXIT=()
# at_exit CMD — run CMD (one word: a function) when the script exits, before the temp dirs go
# (pg_lib.sh stops its cluster this way).
at_exit() {
    _E2E_AT_EXIT+=("$1")
}

_e2e_exit() {
    local rc=$? h
    for h in "${_E2E_AT_EXIT[@]}"; do
        "$h"
    done
    if [ "${KEEP_TMP:-0}" = 1 ]; then
        echo "# temp dirs kept in $_E2E_TMP" >&2
    else
        rm -rf "$_E2E_TMP"
    fi
    if [ "$_E2E_FINISHED" = 0 ]; then
        fail "$(basename "$0") reached finish" "the script ended early (exit status $rc)"
        echo "$_E2E_PASSED passed, $_E2E_FAILED failed"
        exit 1
    fi
}
trap _e2e_exit EXIT

# lake_sql DIR SQL — run SQL in DIR (CSV output) after attaching the lake `l` (catalog
# m.ducklake, data under d/), appending stderr to DIR/err.
lake_sql() {
    (cd "$1" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/'); $2") \
        </dev/null 2>>"$1/err"
}

# lake_err DIR SQL — the first error line of SQL run as lake_sql runs it, without tarn's
# "statement N (line N): " prefix (empty when it succeeded).
lake_err() {
    : >"$1/err"
    lake_sql "$1" "$2" >/dev/null
    head -n 1 "$1/err" | sed 's/^tarn: statement [0-9]* (line [0-9]*): //'
}

# lake_catalog DIR SQL — run SQL in DIR (CSV output) with lake_sql's catalog database attached
# read-only as `m`, to read its ducklake_* rows; stderr appended to DIR/err.
lake_catalog() {
    (cd "$1" && "$TARN" sql --format csv "ATTACH 'm.ducklake' AS m (READ_ONLY); $2") \
        </dev/null 2>>"$1/err"
}

# lake_table_id DIR NAME — the table_id of lake_sql's live table NAME.
lake_table_id() {
    lake_catalog "$1" "SELECT table_id FROM m.ducklake_table WHERE table_name = '$2'
                       AND end_snapshot IS NULL;" | sed -n 2p
}

# tarn ARGS... — run the binary under test.
tarn() {
    "$TARN" "$@"
}

# mktempdir — print the path of a new empty directory (removed when the script exits).
mktempdir() {
    mktemp -d "$_E2E_TMP/d.XXXXXX"
}

# ok NAME
ok() {
    _E2E_PASSED=$((_E2E_PASSED + 1))
    echo "ok - $1"
}

# fail NAME [DETAIL...] — each DETAIL (may be multi-line) is printed as `#   ` lines.
fail() {
    local name=$1
    shift
    _E2E_FAILED=$((_E2E_FAILED + 1))
    echo "not ok - $name"
    local d
    for d in "$@"; do
        [ -n "$d" ] || continue
        printf '%s\n' "$d" | sed 's/^/#   /'
    done
}

# _e2e_run OUTFILE CMD... — run CMD with stdout+stderr to OUTFILE; returns its exit status.
_e2e_run() {
    local out=$1
    shift
    "$@" >"$out" 2>&1 </dev/null
}

_e2e_tail() {
    tail -n 20 "$1"
}

# check NAME CMD... — ok if CMD exits 0; otherwise fail with its status and the tail of its output.
check() {
    local name=$1 rc out
    shift
    out=$(mktemp "$_E2E_TMP/out.XXXXXX")
    _e2e_run "$out" "$@"
    rc=$?
    if [ "$rc" -eq 0 ]; then
        ok "$name"
    else
        fail "$name" "exit status $rc: $*" "$(_e2e_tail "$out")"
    fi
}

# check_fails NAME CMD... — ok if CMD fails cleanly (exit status 1..125). Exit 0 fails the check, and
# so does a crash (a signal, a sanitizer abort: status >= 126).
check_fails() {
    local name=$1 rc out
    shift
    out=$(mktemp "$_E2E_TMP/out.XXXXXX")
    _e2e_run "$out" "$@"
    rc=$?
    if [ "$rc" -ge 1 ] && [ "$rc" -le 125 ]; then
        ok "$name"
    elif [ "$rc" -eq 0 ]; then
        fail "$name" "expected an error, got exit status 0: $*" "$(_e2e_tail "$out")"
    else
        fail "$name" "crashed (exit status $rc): $*" "$(_e2e_tail "$out")"
    fi
}

# check_eq NAME EXPECTED ACTUAL — ok if the two strings are equal; otherwise fail with a unified diff.
check_eq() {
    local name=$1 expected=$2 actual=$3
    if [ "$expected" = "$actual" ]; then
        ok "$name"
    else
        fail "$name" "$(diff -u --label expected --label actual \
            <(printf '%s\n' "$expected") <(printf '%s\n' "$actual"))"
    fi
}

# skip NAME WHY — a check that could not run here (a tool the machine lacks): printed as
# `skip - NAME (WHY)`, counted as skipped by tests/run.sh, neither passed nor failed.
skip() {
    echo "skip - $1 ($2)"
}

# replay LOG — the ok / not ok lines (and a failure's `#` details) of a script's case that ran in
# the background, with its output in LOG, reported as this script's own checks, in order.
replay() {
    local line name="" details="" pending=0
    while IFS= read -r line; do
        case $line in
        "ok - "* | "not ok - "*)
            if [ "$pending" = 1 ]; then fail "$name" "$details"; fi
            pending=0
            details=""
            if [ "${line#ok - }" != "$line" ]; then
                ok "${line#ok - }"
            else
                name=${line#not ok - }
                pending=1
            fi
            ;;
        "#   "*) details+="${details:+$'\n'}${line#\#   }" ;;
        "#"*) details+="${details:+$'\n'}${line#\#}" ;;
        esac
    done <"$1"
    if [ "$pending" = 1 ]; then fail "$name" "$details"; fi
}

# finish — print `N passed, N failed` and exit: 0 iff nothing failed and something was checked.
finish() {
    _E2E_FINISHED=1
    if [ $((_E2E_PASSED + _E2E_FAILED)) -eq 0 ]; then
        fail "$(basename "$0") checked something" "finish was called before any check"
    fi
    echo "$_E2E_PASSED passed, $_E2E_FAILED failed"
    [ "$_E2E_FAILED" -eq 0 ]
    exit
}

#!/usr/bin/env bash
# tests/e2e/test_lake_concurrency.sh — a lake whose catalog is a DuckDB file
# has one writer at a time: a second process that tries to use it while
# another holds it gets a clear error (exit status 1, a message about the
# lock on stderr) and changes nothing; when the first is done (or killed),
# the lake is intact and writable.
#
# The first process ("holder") is a `tarn sql` whose script attaches the
# lake, optionally writes, writes a marker file, then reads a CSV from a FIFO
# — which blocks until the test writes to it — and then runs the rest of its
# script. So the holder keeps the lake open exactly as long as the test needs.
#
# Run: `bash tests/e2e/test_lake_concurrency.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
lake=$d/lake
mkdir "$lake"
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');"
ATTACH_RO="ATTACH 'ducklake:meta.ducklake' AS lake (READ_ONLY);"
LAST="SELECT max(snapshot_id) AS last FROM ducklake_snapshots('lake')"
STATE="SELECT count(*) AS n, sum(id) AS sum_id, count(DISTINCT s) AS distinct_s FROM lake.t"

# run [ENV=VAL...] -- SQL — `tarn sql --format csv SQL` in the lake's folder;
# stdout to $d/out, stderr to $d/err, exit status in $rc.
run() {
    (cd "$lake" && "$TARN" sql --format csv "$@") </dev/null >"$d/out" 2>"$d/err"
    rc=$?
}

# check_run NAME WANT_RC — the last run exited WANT_RC without a sanitizer report.
check_run() {
    local name=$1 want=$2
    if grep -qE 'Sanitizer|runtime error:' "$d/err"; then
        fail "$name" "sanitizer report:" "$(head -n 30 "$d/err")"
    elif [ "$rc" -ne "$want" ]; then
        fail "$name" "exit status $rc, expected $want" "stderr:" "$(tail -n 10 "$d/err")" \
            "stdout:" "$(tail -n 10 "$d/out")"
    else
        ok "$name"
    fi
}

# check_lock_error NAME — the last run's stderr says the catalog is locked.
check_lock_error() {
    if grep -qiE 'lock|in use|already attached' "$d/err"; then
        ok "$1"
    else
        fail "$1" "no mention of a lock on stderr:" "$(head -n 10 "$d/err")"
    fi
}

# listing — every file of the lake's folder (not the test's own files) with its size.
listing() {
    (cd "$lake" && find . -path ./hold.fifo -prune -o -path ./started.csv -prune -o \
        -type f -printf '%p %s\n' | sort)
}

# hold_start HOLDER_SQL_BEFORE HOLDER_SQL_AFTER — start the holder in the
# background: ATTACH-style SQL before, then the marker and the blocking FIFO
# read, then the SQL after. Waits (up to 20 s) until the marker exists.
hold_start() {
    rm -f "$lake/hold.fifo" "$lake/started.csv"
    mkfifo "$lake/hold.fifo"
    (cd "$lake" && exec "$TARN" sql --format csv "$1
COPY (SELECT 1 AS started) TO 'started.csv' (HEADER);
SELECT v AS released FROM read_csv('hold.fifo', header = true, columns = {'v': 'INTEGER'});
$2") </dev/null >"$d/hold.out" 2>"$d/hold.err" &
    HOLDER=$!
    local _
    for _ in $(seq 200); do
        [ -s "$lake/started.csv" ] && return 0
        kill -0 "$HOLDER" 2>/dev/null || break
        sleep 0.1
    done
    fail "holder started" "the holder did not reach its FIFO read" "$(tail -n 10 "$d/hold.err")"
    hold_kill
    return 1
}

# hold_release — let the holder go on; its exit status in $hold_rc.
hold_release() {
    # shellcheck disable=SC2016 # $1 is the inner shell's
    if ! timeout 20 sh -c 'printf "v\n42\n" >"$1"' sh "$lake/hold.fifo"; then
        fail "holder released" "could not write to the FIFO"
        hold_kill
        return
    fi
    wait "$HOLDER"
    hold_rc=$?
    HOLDER=
}

# hold_kill — SIGKILL the holder (only the process this script started).
hold_kill() {
    if [ -n "${HOLDER:-}" ]; then
        kill -9 "$HOLDER" 2>/dev/null
        wait "$HOLDER" 2>/dev/null
        HOLDER=
    fi
}
# shellcheck disable=SC2154 # rc_ is set in the trap itself
trap 'rc_=$?; hold_kill; (exit $rc_); _e2e_exit' EXIT

# ---- the lake --------------------------------------------------------------

run "$ATTACH CREATE TABLE lake.t (id INTEGER, s VARCHAR);
INSERT INTO lake.t VALUES (1, 'a'), (2, 'b'), (3, 'c');
INSERT INTO lake.t SELECT i, 'p' || i FROM range(100, 1100) r(i);
$LAST"
check_run "lake created" 0
check_eq "lake at snapshot 3" "3" "$(tail -n 2 "$d/out" | head -n 1)"

# ---- a second writer while a writer holds the lake ----------------------------

if hold_start "$ATTACH INSERT INTO lake.t VALUES (10, 'holder');" \
    "INSERT INTO lake.t SELECT i, 'h' || i FROM range(2000, 2100) r(i); $LAST"; then
    before=$(listing)
    run "$ATTACH INSERT INTO lake.t VALUES (20, 'second');"
    check_run "second writer: exit status 1" 1
    check_lock_error "second writer: stderr says the catalog is locked"
    if grep -q '^Count' "$d/out"; then
        fail "second writer: nothing written" "$(cat "$d/out")"
    else
        ok "second writer: nothing written"
    fi
    check_eq "second writer: no file of the lake changed or added" "$before" "$(listing)"

    run "$ATTACH_RO SELECT count(*) FROM lake.t"
    check_run "a reader while a writer holds the lake: exit status 1 (not a crash)" 1
    check_lock_error "a reader while a writer holds the lake: stderr says locked"

    run "ATTACH 'meta.ducklake' AS m (READ_ONLY); SELECT count(*) FROM m.ducklake_snapshot"
    check_run "plain DuckDB on the held catalog: exit status 1" 1
    check_lock_error "plain DuckDB on the held catalog: stderr says locked"

    hold_release
    rc=$hold_rc
    cp "$d/hold.err" "$d/err"
    check_run "holder: finishes normally after the second writer failed" 0
    check_eq "holder: its two writes are snapshots 4 and 5" "5" "$(tail -n 2 "$d/hold.out" | head -n 1)"
fi

run "$ATTACH $STATE; $LAST"
check_run "after the holder: the lake attaches" 0
check_eq "after the holder: exactly its rows and the old ones, not the second writer's" \
    "n,sum_id,distinct_s
1104,804466,1104

last
5" "$(cat "$d/out")"
run "$ATTACH INSERT INTO lake.t VALUES (20, 'second'); $LAST"
check_run "after the holder: the lake is writable" 0
check_eq "after the holder: the write is snapshot 6" "6" "$(tail -n 2 "$d/out" | head -n 1)"

# ---- the same, while the holder has an open transaction -----------------------

if hold_start "$ATTACH BEGIN; INSERT INTO lake.t VALUES (30, 'txn');
INSERT INTO lake.t SELECT i, 'x' || i FROM range(3000, 3500) r(i);" "COMMIT; $LAST"; then
    before=$(listing)
    run "$ATTACH DELETE FROM lake.t WHERE id = 1;"
    check_run "second writer during an open transaction: exit status 1" 1
    check_lock_error "second writer during an open transaction: stderr says locked"
    check_eq "second writer during an open transaction: no file changed or added" \
        "$before" "$(listing)"
    hold_release
    rc=$hold_rc
    cp "$d/hold.err" "$d/err"
    check_run "holder: commits its transaction" 0
    check_eq "holder: the transaction is snapshot 7" "7" "$(tail -n 2 "$d/hold.out" | head -n 1)"
fi
run "$ATTACH $STATE; SELECT count(*) AS n FROM lake.t WHERE id = 1; $LAST"
check_eq "after the transaction: its rows there, the second writer's delete not" \
    "n,sum_id,distinct_s
1606,2429266,1606

n
1

last
7" "$(cat "$d/out")"

# ---- a holder killed in the middle of a transaction -------------------------

if hold_start "$ATTACH BEGIN; INSERT INTO lake.t VALUES (40, 'killed');
INSERT INTO lake.t SELECT i, 'k' || i FROM range(4000, 4500) r(i);
DELETE FROM lake.t WHERE id < 100;" "COMMIT;"; then
    run "$ATTACH INSERT INTO lake.t VALUES (50, 'second');"
    check_run "second writer while the holder is mid-transaction: exit status 1" 1
    hold_kill
    ok "holder killed with SIGKILL in its transaction"
fi
run "$ATTACH $STATE; $LAST"
check_run "after the kill: the lock is gone, the lake attaches" 0
check_eq "after the kill: the lake is at its last snapshot, nothing of the killed transaction" \
    "n,sum_id,distinct_s
1606,2429266,1606

last
7" "$(cat "$d/out")"
run "$ATTACH INSERT INTO lake.t VALUES (50, 'after kill'); $LAST; $STATE"
check_run "after the kill: the lake is writable" 0
check_eq "after the kill: the write is snapshot 8, with only its row added" \
    "last
8

n,sum_id,distinct_s
1607,2429316,1607" "$(tail -n 6 "$d/out")"

# ---- readers share, in one process the lake attaches once --------------------

if hold_start "$ATTACH_RO SELECT count(*) FROM lake.t;" "SELECT count(*) AS n FROM lake.t;"; then
    run "$ATTACH_RO SELECT count(*) AS n FROM lake.t"
    check_run "two read-only attaches in two processes at once" 0
    check_eq "the second reader reads" $'n\n1607' "$(cat "$d/out")"
    run "$ATTACH INSERT INTO lake.t VALUES (60, 'second');"
    check_run "a writer while a reader holds the lake: exit status 1" 1
    check_lock_error "a writer while a reader holds the lake: stderr says locked"
    hold_release
    check_eq "the first reader finishes normally" 0 "$hold_rc"
fi

run "$ATTACH ATTACH 'ducklake:meta.ducklake' AS lake2 (DATA_PATH 'data/');
INSERT INTO lake.t VALUES (70, 'same process'); $LAST"
check_run "the same lake attached twice in one process: exit status 1" 1
check_lock_error "the same lake attached twice in one process: stderr says it is attached"
check_eq "the first attach still works: its write is snapshot 9" "9" "$(tail -n 2 "$d/out" | head -n 1)"

# ---- the catalog, read by plain DuckDB ----------------------------------------

run "ATTACH 'meta.ducklake' AS m (READ_ONLY);
SELECT max(snapshot_id) AS last, count(*) = max(snapshot_id) + 1 AS contiguous,
  count(*) = (SELECT count(*) FROM m.ducklake_snapshot_changes) AS changes_rows
  FROM m.ducklake_snapshot"
check_run "catalog opens in plain DuckDB" 0
check_eq "catalog: snapshots 0..9 without gaps, one changes row each" \
    "last,contiguous,changes_rows
9,true,true" "$(cat "$d/out")"

finish

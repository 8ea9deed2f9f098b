#!/usr/bin/env bash
# tests/e2e/test_lake_basics.sh — `tarn sql` on a DuckLake lake, end to end,
# with exact CSV outputs:
#   - CREATE SCHEMA / TABLE, inserts that are inlined (3 rows) and that go to
#     a Parquet file (50 rows), UPDATE and DELETE across both: one snapshot
#     each (snapshots 1..6);
#   - BEGIN … COMMIT: several statements (insert, update, delete, CTAS) see
#     their own changes and make one snapshot (7);
#   - ROLLBACK: no snapshot, no visible rows, no Parquet file left behind —
#     also for a CREATE TABLE in the transaction, for a script that ends
#     inside BEGIN, and for a transaction aborted by a runtime error; plain
#     DuckDB tables roll back too;
#   - a failing statement makes no snapshot; DROP TABLE (8);
#   - ducklake_snapshots('lake'), and time travel AT (VERSION => n) to every
#     snapshot 0..8 (a table that does not exist yet / any more is an error);
#   - READ_ONLY attach: reads work, every kind of write is refused with a
#     clear error, the lake is unchanged; a READ_ONLY attach of a missing
#     lake creates no file; a file that is not a catalog is refused untouched;
#   - SNAPSHOT_VERSION attach: the lake as of that snapshot, not writable;
#   - a new process reading the lake prints exactly what the writing process
#     printed;
#   - a transaction writing two databases (two lakes, a lake and a plain
#     table) is refused as in DuckDB and commits neither.
#
# Run: `bash tests/e2e/test_lake_basics.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
lake=$d/lake
mkdir "$lake"
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');"
LAST="SELECT max(snapshot_id) AS last FROM ducklake_snapshots('lake');"
AGG="SELECT count(*) AS n, sum(id) AS ids, sum(qty) AS qty, count(qty) AS nq FROM lake.s.items"

# run SQL — `tarn sql --format csv SQL` in the lake's folder; stdout to
# $d/out, stderr to $d/err, exit status in $rc.
run() {
    (cd "$lake" && "$TARN" sql --format csv "$1") </dev/null >"$d/out" 2>"$d/err"
    rc=$?
}

# check_run NAME WANT_RC — the last run exited WANT_RC without a sanitizer report.
check_run() {
    local name=$1 want=$2
    if grep -qE 'Sanitizer|runtime error:' "$d/err"; then
        fail "$name" "sanitizer report:" "$(head -n 30 "$d/err")"
    elif [ "$rc" -ne "$want" ]; then
        fail "$name" "exit status $rc, expected $want" "$(head -n 10 "$d/err")"
    else
        ok "$name"
    fi
}

# check_out NAME EXPECTED — the last run's stdout is EXPECTED (and a blank line).
check_out() {
    check_eq "$1" "$2" "$(cat "$d/out")"
}

# check_err NAME TEXT — the last run's stderr contains TEXT (case-insensitive).
check_err() {
    if grep -qiF -- "$2" "$d/err"; then
        ok "$1"
    else
        fail "$1" "no '$2' on stderr:" "$(head -n 10 "$d/err")"
    fi
}

# files — the lake's data files (names only), sorted.
files() {
    (cd "$lake" && find data -type f 2>/dev/null | sort)
}

# ---- snapshots 1..6: one per statement -------------------------------------------

run "$ATTACH
CREATE SCHEMA lake.s;
CREATE TABLE lake.s.items (id INTEGER, name VARCHAR, qty INTEGER);
INSERT INTO lake.s.items VALUES (1, 'apple', 3), (2, 'pear', 5), (3, 'fig', NULL);
INSERT INTO lake.s.items SELECT i, 'bulk' || i, i % 7 FROM range(100, 150) r(i);
UPDATE lake.s.items SET qty = 10 WHERE id = 2 OR id BETWEEN 100 AND 119;
DELETE FROM lake.s.items WHERE id = 3 OR id BETWEEN 140 AND 149;
SELECT * FROM lake.s.items WHERE id < 100 OR id IN (100, 120, 139) ORDER BY id;
$AGG;
$LAST"
check_run "create, insert (inlined, Parquet), update, delete" 0
check_out "create, insert, update, delete: exact output" "Count
3

Count
50

Count
21

Count
11

id,name,qty
1,apple,3
2,pear,10
100,bulk100,10
120,bulk120,1
139,bulk139,6

n,ids,qty,nq
42,4783,276,42

last
6"
nfiles=$(files | grep -c '\.parquet$')
if [ "$nfiles" -ge 1 ]; then
    ok "the 50-row insert wrote Parquet ($nfiles files under data/)"
else
    fail "the 50-row insert wrote Parquet" "$(cd "$lake" && find .)"
fi

# ---- BEGIN … COMMIT: one snapshot ---------------------------------------------------

run "$ATTACH
BEGIN;
INSERT INTO lake.s.items VALUES (4, 'kiwi', 1);
UPDATE lake.s.items SET qty = 0 WHERE id = 1;
DELETE FROM lake.s.items WHERE id = 101;
CREATE TABLE lake.s.other AS SELECT 1 AS x;
SELECT * FROM lake.s.items WHERE id < 100 OR id = 101 ORDER BY id;
$LAST
COMMIT;
$LAST
$AGG;"
check_run "BEGIN … COMMIT runs" 0
check_out "BEGIN … COMMIT: reads its own writes, one snapshot (7) for five statements" "Count
1

Count
1

Count
1

Count
1

id,name,qty
1,apple,0
2,pear,10
4,kiwi,1

last
6

last
7

n,ids,qty,nq
42,4686,264,42"

# ---- ROLLBACK: nothing ----------------------------------------------------------------

before=$(files)
run "$ATTACH
BEGIN;
INSERT INTO lake.s.items VALUES (5, 'ghost', 1);
INSERT INTO lake.s.items SELECT i, 'ghost' || i, 1 FROM range(1000, 1100) r(i);
DELETE FROM lake.s.items WHERE id = 1;
SELECT count(*) AS n FROM lake.s.items;
ROLLBACK;
SELECT count(*) AS n FROM lake.s.items;
SELECT count(*) AS n FROM lake.s.items WHERE name LIKE 'ghost%' OR id = 1;
$LAST"
check_run "BEGIN … ROLLBACK runs" 0
check_out "ROLLBACK: rows seen inside, gone after, no snapshot" "Count
1

Count
100

Count
1

n
142

n
42

n
1

last
7"
check_eq "ROLLBACK: no data file left behind" "$before" "$(files)"
run "$ATTACH $AGG; $LAST"
check_out "ROLLBACK: a new process sees nothing of it" "n,ids,qty,nq
42,4686,264,42

last
7"

# ---- more ways a transaction ends without committing ------------------------------------

before=$(files)
run "$ATTACH
BEGIN;
CREATE TABLE lake.s.tmp (x INTEGER);
INSERT INTO lake.s.tmp SELECT * FROM range(50);
ROLLBACK;
SELECT count(*) AS n FROM information_schema.tables WHERE table_catalog = 'lake' AND table_name = 'tmp';
$LAST"
check_run "ROLLBACK of a CREATE TABLE and its rows" 0
check_out "ROLLBACK of a CREATE TABLE: the table does not exist, no snapshot" "Count
50

n
0

last
7"
check_eq "ROLLBACK of a CREATE TABLE: no data file left behind" "$before" "$(files)"

run "$ATTACH
BEGIN;
INSERT INTO lake.s.items VALUES (5, 'open', 1);
INSERT INTO lake.s.items SELECT i, 'open' || i, 1 FROM range(1000, 1100) r(i);"
check_run "a script that ends inside BEGIN" 0
run "$ATTACH $AGG; $LAST"
check_out "a script that ends inside BEGIN commits nothing" "n,ids,qty,nq
42,4686,264,42

last
7"
check_eq "a script that ends inside BEGIN leaves no data file behind" "$before" "$(files)"

# A runtime error aborts the transaction (as in DuckDB): COMMIT then commits
# nothing.
run "$ATTACH
BEGIN;
INSERT INTO lake.s.items VALUES (5, 'aborted', 1);
INSERT INTO lake.s.items SELECT CAST('x' || i AS INTEGER), 'bad', 1 FROM range(3) r(i);
SELECT count(*) AS n FROM lake.s.items;
COMMIT;
$AGG; $LAST"
check_run "a transaction with a runtime error: exit status 1" 1
check_out "a transaction with a runtime error: aborted, COMMIT commits nothing" "Count
1

#error

#error

n,ids,qty,nq
42,4686,264,42

last
7"
check_err "a transaction with a runtime error: later statements are refused" \
    "Current transaction is aborted"
check_eq "a transaction with a runtime error: no data file left behind" "$before" "$(files)"

# ROLLBACK undoes a plain DuckDB table's writes too, with a lake attached.
run "$ATTACH
CREATE TABLE plain_t (i INTEGER);
BEGIN;
INSERT INTO plain_t VALUES (1);
ROLLBACK;
SELECT count(*) AS n FROM plain_t;"
check_run "ROLLBACK of a plain table's insert" 0
check_out "ROLLBACK undoes a plain table's insert" "Count
1

n
0"

# ---- a failing statement; DROP TABLE -------------------------------------------------

before=$(files)
run "$ATTACH
INSERT INTO lake.s.items VALUES ('x', 'y', 'z');
INSERT INTO lake.s.nope VALUES (1);
$LAST"
check_run "failing inserts: exit status 1" 1
check_out "failing inserts: no snapshot" "#error

#error

last
7"
check_eq "failing inserts: no data file written" "$before" "$(files)"

run "$ATTACH DROP TABLE lake.s.other; $LAST"
check_run "DROP TABLE" 0
check_out "DROP TABLE is snapshot 8" "last
8"

# ---- ducklake_snapshots -----------------------------------------------------------------

run "$ATTACH SELECT snapshot_id, schema_version, changes FROM ducklake_snapshots('lake') ORDER BY snapshot_id;
SELECT count(*) AS n, count(DISTINCT snapshot_time) AS times, bool_and(author IS NULL) AS no_author
  FROM ducklake_snapshots('lake');"
check_run "ducklake_snapshots" 0
check_out "ducklake_snapshots: one row per snapshot with its changes" "snapshot_id,schema_version,changes
0,0,{schemas_created=[main]}
1,1,{schemas_created=[s]}
2,2,{tables_created=[s.items]}
3,2,{inlined_insert=[2]}
4,2,{tables_inserted_into=[2]}
5,2,\"{tables_inserted_into=[2], tables_deleted_from=[2], inlined_delete=[2]}\"
6,2,{inlined_delete=[2]}
7,3,\"{tables_created=[s.other], inlined_insert=[2, 3], inlined_delete=[2]}\"
8,4,{tables_dropped=[3]}

n,times,no_author
9,9,true"

# ---- time travel to every snapshot -------------------------------------------------------

for v in 0 1; do
    run "$ATTACH $AGG AT (VERSION => $v)"
    check_run "time travel: s.items AT (VERSION => $v), before it existed, is an error" 1
done
tt="$ATTACH"
for v in 2 3 4 5 6 7 8; do
    tt+=" $AGG AT (VERSION => $v);"
done
tt+=" SELECT * FROM lake.s.items AT (VERSION => 3) ORDER BY id;
SELECT * FROM lake.s.items AT (VERSION => 5) WHERE id < 100 OR id IN (100, 120, 149) ORDER BY id;
SELECT * FROM lake.s.other AT (VERSION => 7);"
run "$tt"
check_run "time travel: snapshots 2..8" 0
check_out "time travel: each snapshot exactly" "n,ids,qty,nq
0,,,0

n,ids,qty,nq
3,6,8,2

n,ids,qty,nq
53,6231,157,52

n,ids,qty,nq
53,6231,300,52

n,ids,qty,nq
42,4783,276,42

n,ids,qty,nq
42,4686,264,42

n,ids,qty,nq
42,4686,264,42

id,name,qty
1,apple,3
2,pear,5
3,fig,

id,name,qty
1,apple,3
2,pear,10
3,fig,
100,bulk100,10
120,bulk120,1
149,bulk149,2

x
1"
run "$ATTACH SELECT * FROM lake.s.other AT (VERSION => 8)"
check_run "time travel: a dropped table at the drop's snapshot is an error" 1
run "$ATTACH SELECT * FROM lake.s.other"
check_run "a dropped table is gone" 1
run "$ATTACH SELECT * FROM lake.s.items AT (VERSION => 9)"
check_run "time travel to a snapshot that does not exist is an error" 1

# ---- READ_ONLY ----------------------------------------------------------------------------

RO="ATTACH 'ducklake:meta.ducklake' AS lake (READ_ONLY);"
run "$RO $AGG; $LAST"
check_run "READ_ONLY attach reads" 0
check_out "READ_ONLY attach: the current rows" "n,ids,qty,nq
42,4686,264,42

last
8"
before=$(files)
for w in "INSERT INTO lake.s.items VALUES (9, 'no', 9)" \
    "INSERT INTO lake.s.items SELECT i, 'no', 1 FROM range(2000, 2100) r(i)" \
    "UPDATE lake.s.items SET qty = 99" \
    "DELETE FROM lake.s.items" \
    "CREATE TABLE lake.s.t2 (x INTEGER)" \
    "CREATE SCHEMA lake.s2" \
    "DROP TABLE lake.s.items"; do
    run "$RO $w"
    check_run "READ_ONLY refuses: $w" 1
    check_err "READ_ONLY refusal says read-only: $w" "read-only"
done
run "$RO BEGIN; INSERT INTO lake.s.items VALUES (9, 'no', 9); COMMIT;"
check_run "READ_ONLY refuses a write in a transaction" 1
check_err "READ_ONLY refusal in a transaction says read-only" "read-only"
check_eq "READ_ONLY: no data file written" "$before" "$(files)"
run "$ATTACH $AGG; $LAST"
check_out "READ_ONLY: the lake is unchanged" "n,ids,qty,nq
42,4686,264,42

last
8"

# A READ_ONLY attach of a lake that does not exist creates nothing; a file
# that is not a DuckDB database is refused, untouched.
run "ATTACH 'ducklake:nope.ducklake' AS nope (READ_ONLY);"
check_run "READ_ONLY attach of a missing lake: exit status 1" 1
if [ -e "$lake/nope.ducklake" ] || [ -e "$lake/nope.ducklake.wal" ]; then
    fail "READ_ONLY attach of a missing lake creates no file" "$(ls -la "$lake")"
else
    ok "READ_ONLY attach of a missing lake creates no file"
fi
head -c 20000 /dev/urandom >"$lake/junk.ducklake"
sum_before=$(md5sum <"$lake/junk.ducklake")
run "ATTACH 'ducklake:junk.ducklake' AS junk (DATA_PATH 'junk/');
CREATE TABLE junk.t (i INTEGER);"
check_run "attach of a file that is not a catalog: exit status 1" 1
check_eq "attach of a file that is not a catalog leaves it untouched" "$sum_before" \
    "$(md5sum <"$lake/junk.ducklake")"
rm -f "$lake/junk.ducklake"

# ---- SNAPSHOT_VERSION -----------------------------------------------------------------------

SV="ATTACH 'ducklake:meta.ducklake' AS lake (SNAPSHOT_VERSION 4);"
run "$SV $AGG; SELECT * FROM lake.s.items WHERE id < 100 ORDER BY id;"
check_run "SNAPSHOT_VERSION 4 attach reads" 0
check_out "SNAPSHOT_VERSION 4: the lake as of snapshot 4" "n,ids,qty,nq
53,6231,157,52

id,name,qty
1,apple,3
2,pear,5
3,fig,"
run "$SV SELECT * FROM lake.s.other"
check_run "SNAPSHOT_VERSION 4: a table created later does not exist" 1
run "ATTACH 'ducklake:meta.ducklake' AS lake (SNAPSHOT_VERSION 7); SELECT * FROM lake.s.other"
check_run "SNAPSHOT_VERSION 7: a table dropped later exists" 0
check_out "SNAPSHOT_VERSION 7: its rows" "x
1"
run "$SV INSERT INTO lake.s.items VALUES (9, 'no', 9)"
check_run "SNAPSHOT_VERSION attach refuses writes" 1
check_err "SNAPSHOT_VERSION refusal is clear" "SNAPSHOT_VERSION"
run "ATTACH 'ducklake:meta.ducklake' AS lake (SNAPSHOT_VERSION 99); $AGG"
check_run "SNAPSHOT_VERSION of a snapshot that does not exist is an error" 1

# ---- a new process prints the same ---------------------------------------------------

READS="$AGG;
SELECT * FROM lake.s.items ORDER BY id;
SELECT * FROM lake.s.items AT (VERSION => 4) ORDER BY id;
SELECT snapshot_id, schema_version, changes FROM ducklake_snapshots('lake') ORDER BY snapshot_id;
SELECT table_schema, table_name FROM information_schema.tables WHERE table_catalog = 'lake' ORDER BY ALL;"
run "$ATTACH INSERT INTO lake.s.items VALUES (6, 'plum', 7); $READS"
check_run "a write, then reads, in one process" 0
first=$(tail -n +4 "$d/out")
run "$ATTACH $READS"
check_run "the same reads in a new process" 0
check_eq "a new process prints exactly the same" "$first" "$(cat "$d/out")"
run "$RO $READS"
check_eq "a new READ_ONLY process without DATA_PATH prints exactly the same" "$first" "$(cat "$d/out")"
check_eq "the reads start with the new row counted" "n,ids,qty,nq
43,4692,271,43" "$(printf '%s\n' "$first" | sed -n 1,2p)"
check_eq "the reads list snapshots 0..9" "10" "$(printf '%s\n' "$first" | grep -c '^[0-9],[0-9],')"

# ---- two lakes in one transaction ------------------------------------------------------

# DuckDB refuses the second write ("a single transaction can only write to a
# single attached database") and the aborted transaction commits nothing. Two
# fresh lakes, so that a failure here does not disturb the checks above.
mkdir -p "$d/two"
TWO="ATTACH 'ducklake:$d/two/a.ducklake' AS la (DATA_PATH '$d/two/a/');
ATTACH 'ducklake:$d/two/b.ducklake' AS lb (DATA_PATH '$d/two/b/');"
run "$TWO CREATE TABLE la.t (i INTEGER); CREATE TABLE lb.t (i INTEGER);"
check_run "two lakes: created" 0
run "$TWO
BEGIN;
INSERT INTO la.t VALUES (1);
INSERT INTO lb.t VALUES (1);
COMMIT;"
check_run "a transaction writing two lakes: the second write is refused (exit status 1)" 1
run "$TWO SELECT count(*) AS n FROM la.t; SELECT count(*) AS n FROM lb.t;
SELECT max(snapshot_id) AS last FROM ducklake_snapshots('la');
SELECT max(snapshot_id) AS last FROM ducklake_snapshots('lb');"
check_out "a transaction writing two lakes: nothing committed" "n
0

n
0

last
1

last
1"

# The same with a lake and a plain DuckDB table.
run "$TWO
CREATE TABLE plain_t (i INTEGER);
BEGIN;
INSERT INTO la.t VALUES (2);
INSERT INTO plain_t VALUES (2);
COMMIT;
SELECT count(*) AS n FROM plain_t;
SELECT count(*) AS n FROM la.t;
SELECT max(snapshot_id) AS last FROM ducklake_snapshots('la');"
check_run "a transaction writing a lake and a plain table: exit status 1" 1
check_out "a transaction writing a lake and a plain table: second write refused, neither committed" "Count
1

#error

n
0

n
0

last
1"

# Closing DuckDB from an atexit handler, after exit() had run the thread-local destructors, freed
# DuckDB's per-thread allocator state twice: nothing showed until a library with exit-time cleanup
# of its own (GnuTLS, which libmicrohttpd brings) found the heap corrupted and aborted. tarn now
# closes it as main returns; the same statements with GnuTLS loaded must exit 0.
gnutls=$(ls /lib/x86_64-linux-gnu/libgnutls.so.30 /usr/lib/x86_64-linux-gnu/libgnutls.so.30 2>/dev/null | head -1)
if [ -n "$gnutls" ]; then
    g=$(mktempdir)
    # (an ASan build checks that its runtime comes first; preloading beside it is fine here)
    (cd "$g" && ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
        LD_PRELOAD=$gnutls "$TARN" sql --format csv "ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/'); CREATE TABLE lake.items (id INTEGER, qty INTEGER); INSERT INTO lake.items VALUES (1, 3), (2, 5); INSERT INTO lake.items SELECT i, i % 7 FROM range(100, 150) r(i); UPDATE lake.items SET qty = 10 WHERE id = 2 OR id BETWEEN 100 AND 119;") >"$g/out" 2>&1
    grc=$?
    if [ "$grc" = 0 ] && ! grep -q 'corrupted\|double free\|free()' "$g/out"; then
        ok "a session exits cleanly beside a library with exit-time cleanup (GnuTLS)"
    else
        fail "a session exits cleanly beside a library with exit-time cleanup (GnuTLS)" "exit $grc: $(tail -3 "$g/out")"
    fi
else
    skip "a session exits cleanly beside a library with exit-time cleanup" "no libgnutls.so.30"
fi

finish

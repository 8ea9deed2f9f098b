#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# tests/e2e/test_lake_identifiers.sh — hostile identifiers in a lake.
#
# For each hostile name (quotes, spaces, dots, unicode, "..", "/",
# "../../etc", semicolons, SQL-injection-looking text, …) used at once as a
# schema name, a table name and a column name (and, prefixed, as a second
# column), on a fresh lake:
#   - CREATE SCHEMA, CREATE TABLE, an inlined INSERT (3 rows), a Parquet
#     INSERT (40 rows), a DELETE and an UPDATE touching both, with the table
#     read back after each step: the output must be exactly the output of
#     the same script on plain DuckDB tables (the oracle);
#   - then, in a new process, time travel AT (VERSION => n) to every
#     snapshot must give the same results again, and ducklake_snapshots works;
#   - every file the lake wrote is under its DATA_PATH, and no other file or
#     directory appeared anywhere in the test's folder (the lakes sit deep
#     enough that a "../../etc" path would still land inside it).
# Then: a lake whose alias and DATA_PATH are hostile too; 300-character
# names (too long for a directory: a Parquet insert must be all or nothing);
# two lakes whose aliases end alike ("x_lake", "lake") written in one
# transaction (both or neither).
#
# Run: `bash tests/e2e/test_lake_identifiers.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

root=$(mktempdir) # the lakes, and nothing else
o=$(mktempdir)    # the test's own files
base=$root/n1/n2/n3
mkdir -p "$base"

# qi NAME — NAME as a quoted SQL identifier; ql TEXT — TEXT as a SQL string literal.
qi() {
    local s=${1//\"/\"\"}
    printf '"%s"' "$s"
}
ql() {
    local s=${1//\'/\'\'}
    printf "'%s'" "$s"
}

# run DIR SQL — `tarn sql --format csv SQL` in DIR; stdout to $OUT (default
# $o/out), stderr to $ERR ($o/err), exit status in $rc.
OUT=$o/out
ERR=$o/err
run() {
    (cd "$1" && "$TARN" sql --format csv "$2") </dev/null >"$OUT" 2>"$ERR"
    rc=$?
}

# check_run NAME WANT_RC — the last run exited WANT_RC without a sanitizer report.
check_run() {
    local name=$1 want=$2
    if grep -qE 'Sanitizer|runtime error:' "$ERR"; then
        fail "$name" "sanitizer report:" "$(head -n 30 "$ERR")"
    elif [ "$rc" -ne "$want" ]; then
        fail "$name" "exit status $rc, expected $want" "$(head -n 10 "$ERR")"
    else
        ok "$name"
    fi
}

names=(
    'dq"uote'
    "it's"
    'with space'
    'dot.ted'
    'ü ñ 表'
    '..'
    '.'
    '/'
    '../../etc'
    'a/../../b'
    'semi;colon'
    'x"; DROP TABLE y; --'
    "x'); DROP SCHEMA main CASCADE; --"
    'back\slash'
    '%2e%2e%2f'
    '-rf'
    '~'
    '*?[]'
    'tab	name'
)

# The script of each name, and the oracle: all of them on plain DuckDB in one
# process, each on a fresh in-memory database attached as "lake", each
# followed by a marker; the output is split at the markers into $o/want.K.
declare -a SCRIPT TT LABEL
oracle=""
k=0
for N in "${names[@]}"; do
    k=$((k + 1))
    LABEL[k]="name $k [${N//$'\t'/\\t}]"
    S=$(qi "$N")
    T="lake.$S.$S"
    C=$(qi "$N")
    V=$(qi "v $N")
    L=$(ql "$N")
    SEL="SELECT * FROM $T ORDER BY $C"
    # snapshot 1, 2: schema and table; 3: 3 inlined rows; 4: 40 rows in a
    # Parquet file; 5: a delete of an inlined row and 15 Parquet rows; 6: an
    # update of two inlined rows and 12 Parquet rows.
    steps=(
        "INSERT INTO $T VALUES (1, $L || '#1'), (2, $L || '#2'), (3, NULL);"
        "INSERT INTO $T SELECT i, $L || '#' || i FROM range(10, 50) r(i);"
        "DELETE FROM $T WHERE $C = 2 OR $C BETWEEN 20 AND 34;"
        "UPDATE $T SET $V = $V || ' ' || $L WHERE $C IN (1, 3) OR $C BETWEEN 38 AND 49;"
    )
    SCRIPT[k]="CREATE SCHEMA lake.$S; CREATE TABLE $T ($C INTEGER, $V VARCHAR);"
    for st in "${steps[@]}"; do
        SCRIPT[k]+=" $st $SEL;"
    done
    SCRIPT[k]+=" SELECT table_schema, table_name FROM information_schema.tables
        WHERE table_catalog = 'lake' ORDER BY ALL;"
    TT[k]=""
    for v in 3 4 5 6; do
        TT[k]+=" SELECT * FROM $T AT (VERSION => $v) ORDER BY $C;"
    done
    TT[k]+=" SELECT snapshot_id, schema_version FROM ducklake_snapshots('lake') ORDER BY snapshot_id;"
    oracle+="ATTACH ':memory:' AS lake; ${SCRIPT[k]} DETACH lake; SELECT 'end' AS __marker__;"
done
run "$o" "$oracle"
check_run "oracle: plain DuckDB runs every name's script" 0
awk -v dir="$o" 'BEGIN { k = 1; f = dir "/want." k }
    $0 == "__marker__" { getline; getline; close(f); k++; f = dir "/want." k; next }
    { print > f }' "$o/out"

# name_case K — the checks of name K on its own lake (run in the background).
name_case() {
    local k=$1 label=${LABEL[$1]} lake=$base/lake$1 want want_tt
    mkdir "$lake"
    want=$(cat "$o/want.$k")
    run "$lake" "ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/'); ${SCRIPT[k]}"
    check_run "$label: create, inlined and Parquet inserts, delete, update" 0
    check_eq "$label: every read back exactly as plain DuckDB" "$want" "$(cat "$OUT")"

    # Time travel, in a new process: each snapshot reads as the step's read,
    # i.e. the oracle's blocks that are reads (not counts) but the last (the
    # tables).
    want_tt=$(awk 'BEGIN { RS = ""; FS = "\n" } $1 != "Count" { b[++n] = $0 }
        END { for (i = 1; i < n; i++) printf "%s\n\n", b[i] }' "$o/want.$k")
    run "$lake" "ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/'); ${TT[k]}"
    check_run "$label: time travel to every snapshot in a new process" 0
    check_eq "$label: each snapshot reads as right after its write" \
        "$want_tt

snapshot_id,schema_version
0,0
1,1
2,2
3,2
4,2
5,2
6,2" "$(cat "$OUT")"
}

# Two names at a time, each in a subshell with its own output files.
running=0
for k in $(seq "${#names[@]}"); do
    (
        trap - EXIT
        OUT=$o/case$k.out
        ERR=$o/case$k.err
        name_case "$k"
    ) >"$o/case$k.log" 2>&1 &
    running=$((running + 1))
    if [ "$running" -ge 2 ]; then
        wait -n
        running=$((running - 1))
    fi
done
wait
for k in $(seq "${#names[@]}"); do
    replay "$o/case$k.log"
done

# ---- every file under its lake's data path ---------------------------------------

# Allowed: the lakes' folders, their catalog files, and anything under their data/.
stray=$(cd "$root" && find . -mindepth 1 \
    ! -path ./n1 ! -path ./n1/n2 ! -path ./n1/n2/n3 \
    ! -regex '\./n1/n2/n3/lake[0-9]+' \
    ! -regex '\./n1/n2/n3/lake[0-9]+/meta\.ducklake\(\.wal\)?' \
    ! -regex '\./n1/n2/n3/lake[0-9]+/data\(/.*\)?' -print)
check_eq "no file or directory outside the lakes' data paths" "" "$stray"
outside=$(cd "$root" && find . -name '*.parquet' ! -regex '\./n1/n2/n3/lake[0-9]+/data/.*' -print)
check_eq "no Parquet file outside the data paths" "" "$outside"
nparquet=$(cd "$root" && find . -name '*.parquet' | wc -l)
if [ "$nparquet" -ge "${#names[@]}" ]; then
    ok "the lakes wrote Parquet files ($nparquet)"
else
    fail "the lakes wrote Parquet files" "only $nparquet *.parquet under $root"
fi
# Nothing escaped above the test's folder either (a "../../etc" from a lake
# folder is inside $root/n1; from the data path it is inside the lake).
for p in "$root/../etc" "$root/../b" "$o/../etc"; do
    if [ -e "$p" ]; then
        fail "nothing written above the test folder: $p" "$(ls -la "$p")"
    fi
done
ok "nothing written above the test folder"

# ---- a hostile alias and data path -------------------------------------------------

lake=$base/lake-alias
mkdir "$lake"
A='my "lake"; DROP ü'
P="da'ta \"dir\" ü/"
run "$lake" "ATTACH 'ducklake:meta.ducklake' AS $(qi "$A") (DATA_PATH $(ql "$P"));
CREATE TABLE $(qi "$A").t (id INTEGER, s VARCHAR);
INSERT INTO $(qi "$A").t VALUES (1, 'one');
INSERT INTO $(qi "$A").t SELECT i, 'p' || i FROM range(100, 120) r(i);
DELETE FROM $(qi "$A").t WHERE id BETWEEN 100 AND 104;
SELECT count(*) AS n, sum(id) AS s FROM $(qi "$A").t;
SELECT count(*) AS n FROM $(qi "$A").t AT (VERSION => 3);
SELECT max(snapshot_id) AS last FROM ducklake_snapshots($(ql "$A"));"
check_run "hostile alias and data path: write and read" 0
check_eq "hostile alias and data path: results" "Count
1

Count
20

Count
5

n,s
16,1681

n
21

last
4" "$(cat "$o/out")"
stray=$(cd "$lake" && find . -mindepth 1 ! -name meta.ducklake ! -name meta.ducklake.wal \
    ! -path "./${P%/}" ! -path "./$P*" -print)
check_eq "hostile alias and data path: every file under the data path" "" "$stray"
if [ -n "$(find "$lake/$P" -name '*.parquet' 2>/dev/null)" ]; then
    ok "hostile alias and data path: Parquet files in the data path"
else
    fail "hostile alias and data path: Parquet files in the data path" "$(cd "$lake" && find .)"
fi

# ---- a name too long for a directory ----------------------------------------------------

# 300 plain characters: DuckLake's directory rule uses such a name as the
# directory name, which the file system refuses (at most 255 bytes). A write
# that cannot create its file must fail cleanly and leave the lake as it was.
lake=$base/lake-long
mkdir "$lake"
LONG=$(printf 'n%.0s' $(seq 300))
run "$lake" "ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');
CREATE SCHEMA lake.$LONG; CREATE TABLE lake.$LONG.$LONG (i INTEGER);
INSERT INTO lake.$LONG.$LONG VALUES (1), (2), (3);"
check_run "300-character names: schema, table, inlined insert" 0
run "$lake" "ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');
INSERT INTO lake.$LONG.$LONG SELECT * FROM range(100, 200);"
long_rc=$rc
if [ "$long_rc" -ge 2 ]; then
    check_run "300-character names: a Parquet insert succeeds or fails cleanly" 0
fi
run "$lake" "ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');
SELECT count(*) AS n FROM lake.$LONG.$LONG;
SELECT max(snapshot_id) AS last FROM ducklake_snapshots('lake');"
if [ "$long_rc" -eq 0 ]; then
    want=$'n\n103\n\nlast\n4'
else
    want=$'n\n3\n\nlast\n3'
fi
check_eq "300-character names: the Parquet insert (exit status $long_rc) is all or nothing" \
    "$want" "$(cat "$OUT")"
stray=$(cd "$lake" && find . -mindepth 1 ! -name meta.ducklake ! -name meta.ducklake.wal \
    ! -path ./data ! -path './data/*' -print)
check_eq "300-character names: nothing outside the data path" "" "$stray"

# ---- two lakes whose aliases end alike ------------------------------------------------

# "x_lake" ends with "_lake": nothing of one lake may be mistaken for the
# other's (tarn keeps per-lake pending state under names built from the
# alias). One transaction writes both: DuckDB refuses the second write (a
# transaction writes one database) and commits nothing; in any case the two
# lakes must end up both changed or both unchanged, never half.
lake=$base/lake-two
mkdir "$lake"
TWO="ATTACH 'ducklake:x.ducklake' AS x_lake (DATA_PATH 'xdata/');
ATTACH 'ducklake:l.ducklake' AS lake (DATA_PATH 'ldata/');"
run "$lake" "$TWO CREATE TABLE x_lake.t (i INTEGER); CREATE TABLE lake.t (i INTEGER);
INSERT INTO x_lake.t SELECT * FROM range(100); INSERT INTO lake.t SELECT * FROM range(100);"
check_run "two lakes x_lake and lake: created" 0
run "$lake" "$TWO BEGIN;
DELETE FROM x_lake.t WHERE i < 50;
INSERT INTO lake.t VALUES (1000);
DELETE FROM lake.t WHERE i < 10;
COMMIT;"
run "$lake" "$TWO SELECT count(*) AS n FROM x_lake.t; SELECT count(*) AS n FROM lake.t;"
case $(cat "$o/out") in
$'n\n100\n\nn\n100' | $'n\n50\n\nn\n91')
    ok "two lakes x_lake and lake in one transaction: both changed or neither"
    ;;
*)
    fail "two lakes x_lake and lake in one transaction: both changed or neither" \
        "expected x_lake.t and lake.t to have 100 and 100 rows (nothing committed) or 50 and 91 (both)" \
        "actual:" "$(cat "$o/out")" \
        "repro: BEGIN; DELETE FROM x_lake.t WHERE i < 50; INSERT INTO lake.t VALUES (1000); DELETE FROM lake.t WHERE i < 10; COMMIT;"
    ;;
esac
run "$lake" "$TWO INSERT INTO x_lake.t VALUES (7); INSERT INTO lake.t VALUES (7);
DELETE FROM x_lake.t WHERE i = 7; DELETE FROM lake.t WHERE i = 7;"
check_run "two lakes x_lake and lake: each still writable" 0

finish

#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# Several writer processes on one PostgreSQL catalog (pg_lib.sh's throwaway cluster): 16 tarn
# processes × 100 autocommit INSERTs into one table and into 16 tables commit every snapshot with
# unique row ids and consistent counters, and a fresh process reads every row back; the same
# commits made concurrently and one after another give the same catalog rows (up to order); each
# real conflict of DuckLake's rules (two drops or alters of one table, one name created twice, a
# delete from a file another deleted from, a delete from or insert into a dropped table) fails with
# DuckLake's message and leaves the lake as the other commit left it; ducklake_max_retry_count 1
# makes a commit that needs a retry fail. A transaction held open by a second process reads its
# statements from a fifo, so the steps interleave without timed sleeps.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"

pg_start || {
    [ -n "$PG_SKIP" ] && skip "postgres catalog" "$PG_SKIP"
    finish
}

d=$(mktempdir)
# the issue's figures (16 × 100); the sanitized build, several times slower, runs 4 × 20 (a multiple of 10: every tenth commit writes a file).
# PG_CONC_WRITERS / PG_CONC_COMMITS set other sizes.
WRITERS=${PG_CONC_WRITERS:-$(by_build 16 4)}
COMMITS=${PG_CONC_COMMITS:-$(by_build 100 20)}

# attach DB — the ATTACH statement of database DB's lake (data under DB/)
attach() { echo "ATTACH 'ducklake:postgres:$(pg_conninfo "$1")' AS lake (DATA_PATH '$1/');"; }

# q DB SQL — run SQL on DB's lake in a fresh process (CSV, no header)
q() { (cd "$d" && "$TARN" sql --format csv "$(attach "$1") $2") </dev/null 2>>"$d/q.err" | sed 1d; }

# writers DB SQLGEN — run $WRITERS processes at once, process w running the statements that
# `SQLGEN w` prints; ok when all exit 0 (their stderr in $d/w.*.err)
writers() {
    local db=$1 gen=$2 w pids=()
    for w in $(seq 1 "$WRITERS"); do
        { attach "$db"; "$gen" "$w"; } >"$d/w.$w.sql"
    done
    for w in $(seq 1 "$WRITERS"); do
        (cd "$d" && "$TARN" sql -f "w.$w.sql" >/dev/null 2>"$d/w.$w.err" </dev/null) &
        pids+=($!)
    done
    local rc=0
    for w in "${pids[@]}"; do wait "$w" || rc=1; done
    return $rc
}

errors() { cat "$d"/w.*.err; }

# one table: every tenth commit a Parquet file of 20 rows, the others one inlined row
gen_one() {
    local w=$1 i
    for i in $(seq 1 "$COMMITS"); do
        if [ $((i % 10)) = 0 ]; then
            echo "INSERT INTO lake.t SELECT $w, $i * 100 + x, 'f' || x FROM range(20) r(x);"
        else
            echo "INSERT INTO lake.t VALUES ($w, $i, 'r$i');"
        fi
    done
}

# expected rows of writer w's table(s), sorted as the queries sort them
expect_rows() {
    local w i x
    for w in $(seq 1 "$WRITERS"); do
        for i in $(seq 1 "$COMMITS"); do
            if [ $((i % 10)) = 0 ]; then
                for x in $(seq 0 19); do echo "$w,$((i * 100 + x)),f$x"; done
            else
                echo "$w,$i,r$i"
            fi
        done
    done | sort -t, -k1,1n -k2,2n
}

ROWS_PER_WRITER=$((COMMITS / 10 * 20 + COMMITS - COMMITS / 10))

# ---- (a) 16 writers into one table ----
pg_createdb one
q one "CREATE TABLE lake.t (w INTEGER, i INTEGER, s VARCHAR);" >/dev/null
before=$(pg_psql "SELECT count(*) FROM ducklake_snapshot" one)
start=$(date +%s)
if writers one gen_one; then
    ok "$WRITERS writers × $COMMITS commits into one table all commit"
else
    fail "$WRITERS writers × $COMMITS commits into one table all commit" "$(errors | head -n 5)"
fi
echo "# one table: $((WRITERS * COMMITS)) commits in $(($(date +%s) - start)) s"
check_eq "no retry exhausted, no error" "" "$(errors)"
check_eq "one snapshot per commit" "$((before + WRITERS * COMMITS))" \
    "$(pg_psql "SELECT count(*) FROM ducklake_snapshot" one)"
check_eq "snapshot ids are dense and changes_made says one insert each" \
    "$((before + WRITERS * COMMITS))|$((WRITERS * COMMITS))" \
    "$(pg_psql "SELECT max(snapshot_id) + 1, count(*) FILTER (WHERE changes_made IN
                ('inlined_insert:1', 'inserted_into_table:1')) FROM ducklake_snapshot_changes" one)"
total=$((WRITERS * ROWS_PER_WRITER))
check_eq "a fresh process reads every row back" "$(expect_rows)" \
    "$(q one "SELECT w, i, s FROM lake.t ORDER BY w, i;")"
check_eq "row ids are unique and dense" "$total,$total,0,$((total - 1))" \
    "$(q one "SELECT count(*), count(DISTINCT rowid), min(rowid), max(rowid) FROM lake.t;")"
check_eq "table stats add up every commit" "$total|$total" \
    "$(pg_psql "SELECT record_count, next_row_id FROM ducklake_table_stats" one)"
check_eq "the files' row id ranges do not overlap" "0" \
    "$(pg_psql "SELECT count(*) FROM ducklake_data_file a JOIN ducklake_data_file b ON
                a.data_file_id < b.data_file_id AND a.row_id_start < b.row_id_start + b.record_count
                AND b.row_id_start < a.row_id_start + a.record_count" one)"
check_eq "next_file_id is past every file, snapshot by snapshot" "0" \
    "$(pg_psql "SELECT count(*) FROM ducklake_data_file f JOIN ducklake_snapshot s ON
                s.snapshot_id = f.begin_snapshot WHERE f.data_file_id >= s.next_file_id" one)"
check_eq "column stats cover both kinds of commit" "1|$WRITERS|1|$((COMMITS * 100 + 19))" \
    "$(pg_psql "SELECT min(min_value::int) FILTER (WHERE column_id = 1),
                       max(max_value::int) FILTER (WHERE column_id = 1),
                       min(min_value::int) FILTER (WHERE column_id = 2),
                       max(max_value::int) FILTER (WHERE column_id = 2)
                FROM ducklake_table_column_stats" one)"

# ---- (b) 16 writers, one table each ----
gen_own() {
    local w=$1 i
    for i in $(seq 1 "$COMMITS"); do
        if [ $((i % 10)) = 0 ]; then
            echo "INSERT INTO lake.t$w SELECT $w, $i * 100 + x, 'f' || x FROM range(20) r(x);"
        else
            echo "INSERT INTO lake.t$w VALUES ($w, $i, 'r$i');"
        fi
    done
}
pg_createdb many
ddl=""
for w in $(seq 1 "$WRITERS"); do ddl="$ddl CREATE TABLE lake.t$w (w INTEGER, i INTEGER, s VARCHAR);"; done
q many "BEGIN; $ddl COMMIT;" >/dev/null
before=$(pg_psql "SELECT count(*) FROM ducklake_snapshot" many)
start=$(date +%s)
if writers many gen_own; then
    ok "$WRITERS writers × $COMMITS commits into $WRITERS tables all commit"
else
    fail "$WRITERS writers × $COMMITS commits into $WRITERS tables all commit" "$(errors | head -n 5)"
fi
echo "# 16 tables: $((WRITERS * COMMITS)) commits in $(($(date +%s) - start)) s"
check_eq "no retry exhausted, no error (16 tables)" "" "$(errors)"
check_eq "one snapshot per commit (16 tables)" "$((before + WRITERS * COMMITS))" \
    "$(pg_psql "SELECT count(*) FROM ducklake_snapshot" many)"
union=""
for w in $(seq 1 "$WRITERS"); do
    union="$union${union:+ UNION ALL }SELECT w, i, s, rowid AS r FROM lake.t$w"
done
check_eq "a fresh process reads every table back" "$(expect_rows)" \
    "$(q many "SELECT w, i, s FROM ($union) ORDER BY w, i;")"
check_eq "each table's row ids are unique and dense" \
    "$(for w in $(seq 1 "$WRITERS"); do echo "$w,$ROWS_PER_WRITER,$ROWS_PER_WRITER,$((ROWS_PER_WRITER - 1))"; done)" \
    "$(q many "SELECT w, count(*), count(DISTINCT r), max(r) FROM ($union) GROUP BY w ORDER BY w;")"
check_eq "each table's stats add up" \
    "$(for w in $(seq 1 "$WRITERS"); do echo "$ROWS_PER_WRITER|$ROWS_PER_WRITER"; done)" \
    "$(pg_psql "SELECT record_count, next_row_id FROM ducklake_table_stats ORDER BY table_id" many)"

# ---- the same commits, concurrent and one after another ----
# the catalog rows that do not depend on the order of the commits
catalog_rows() {
    pg_psql "SELECT 'stats', record_count::text, next_row_id::text, file_size_bytes::text
             FROM ducklake_table_stats
             UNION ALL SELECT 'col', column_id::text, contains_null::text, min_value || '..' || max_value
             FROM ducklake_table_column_stats
             UNION ALL SELECT 'files', count(*)::text, sum(record_count)::text,
             sum(file_size_bytes)::text FROM ducklake_data_file
             UNION ALL SELECT 'snapshots', count(*)::text, max(snapshot_id)::text,
             max(next_file_id)::text FROM ducklake_snapshot
             UNION ALL SELECT 'inlined', count(*)::text, count(DISTINCT row_id)::text,
             count(DISTINCT begin_snapshot)::text FROM ducklake_inlined_data_1_1
             ORDER BY 1, 2, 3, 4" "$1"
}
WRITERS=4
COMMITS=20
pg_createdb conc
pg_createdb seq
for db in conc seq; do q $db "CREATE TABLE lake.t (w INTEGER, i INTEGER, s VARCHAR);" >/dev/null; done
writers conc gen_one
for w in $(seq 1 "$WRITERS"); do
    (cd "$d" && { attach seq; gen_one "$w"; } | "$TARN" sql -f - >/dev/null 2>>"$d/q.err")
done
seq_rows=$(catalog_rows seq)
if [ "$(printf '%s\n' "$seq_rows" | grep -c '^stats|')" = 1 ]; then
    check_eq "concurrent commits leave the rows one-after-another commits leave" \
        "$seq_rows" "$(catalog_rows conc)"
else
    fail "concurrent commits leave the rows one-after-another commits leave" "$seq_rows"
fi

# ---- writers of different kinds at once: deletes and updates, inserts, tables created ----
pg_createdb mixed
q mixed "CREATE TABLE lake.a (i INTEGER, s VARCHAR); CREATE TABLE lake.b (i INTEGER);
         INSERT INTO lake.a SELECT x, 'v' FROM range(1000) r(x);" >/dev/null
{
    attach mixed
    for i in $(seq 1 20); do
        echo "DELETE FROM lake.a WHERE i % 20 = $((i % 20)) AND i < 500;"
        echo "UPDATE lake.a SET s = 'u$i' WHERE i = $((600 + i)); INSERT INTO lake.a VALUES ($((2000 + i)), 'n');"
    done
} >"$d/ma.sql"
{
    attach mixed
    for i in $(seq 1 30); do
        echo "INSERT INTO lake.b SELECT x FROM range($((i * 100)), $((i * 100 + 15))) r(x); INSERT INTO lake.b VALUES ($i);"
    done
} >"$d/mb.sql"
{
    attach mixed
    for i in $(seq 1 10); do echo "BEGIN; CREATE TABLE lake.c$i AS SELECT $i AS k; INSERT INTO lake.c$i VALUES (1); COMMIT;"; done
} >"$d/mc.sql"
pids=()
for m in ma mb mc; do
    (cd "$d" && "$TARN" sql -f "$m.sql" >/dev/null 2>"$d/$m.err" </dev/null) &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
check_eq "deletes, updates, inserts and new tables at once: no error" "" "$(cat "$d"/m?.err)"
check_eq "and every row is there once" "520,520,414960|480,480|10" \
    "$(q mixed "SELECT count(*), count(DISTINCT rowid), sum(i) FROM lake.a;")|$(q mixed \
        "SELECT count(*), count(DISTINCT rowid) FROM lake.b;")|$(q mixed \
        "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'lake' AND table_name LIKE 'c%';")"

# ---- (c) real conflicts: A's transaction waits at its COMMIT, B commits, A's commit goes on ----
# a_start DB SQL — process A runs `BEGIN; SQL; COMMIT;` on DB's lake, its commit held before the
# catalog transaction (TARN_COMMIT_WAIT: fifos, no timing) until a_go; A's stderr in $d/a.err
a_start() {
    rm -f "$d/go" "$d/go.ready"
    mkfifo "$d/go" "$d/go.ready"
    (cd "$d" && TARN_COMMIT_WAIT="$d/go" "$TARN" sql "$(attach "$1") BEGIN; $2 COMMIT;" \
        >"$d/a.out" 2>"$d/a.err" </dev/null) &
    A_PID=$!
    local line
    read -r line <"$d/go.ready" # A reached its commit
}
a_go() {
    echo go >"$d/go"
    wait "$A_PID"
}

# state DB — what a failed commit must not change: the snapshots, the tables, their rows
state() {
    pg_psql "SELECT count(*), max(snapshot_id) FROM ducklake_snapshot" "$1"
    pg_psql "SELECT table_name, begin_snapshot, end_snapshot FROM ducklake_table ORDER BY 1, 2" "$1"
    pg_psql "SELECT table_id, record_count, next_row_id FROM ducklake_table_stats ORDER BY 1" "$1"
    pg_psql "SELECT count(*) FROM ducklake_data_file" "$1"
    pg_psql "SELECT count(*) FROM ducklake_delete_file" "$1"
}

# conflict NAME DB SETUP A_SQL B_SQL MESSAGE — SETUP runs first; A runs BEGIN; A_SQL; then B
# commits B_SQL; A's COMMIT must fail with MESSAGE (a fixed string, %ID% the table's id) and
# leave the lake as B left it, without A's files
conflict() {
    local name=$1 db=$2 setup=$3 a_sql=$4 b_sql=$5 msg=$6
    pg_createdb "$db"
    q "$db" "$setup" >/dev/null
    local id
    id=$(pg_psql "SELECT table_id FROM ducklake_table WHERE table_name = 'c' AND end_snapshot IS NULL" "$db")
    msg=${msg//%ID%/$id}
    local fid
    fid=$(pg_psql "SELECT min(data_file_id) FROM ducklake_data_file" "$db")
    msg=${msg//%FILE%/$fid}
    a_start "$db" "$a_sql"
    q "$db" "$b_sql" >/dev/null
    local after_b
    after_b=$(state "$db")
    a_go
    if grep -qF -- "$msg" "$d/a.err"; then
        ok "$name: DuckLake's message"
    else
        fail "$name: DuckLake's message" "expected: $msg" "got: $(cat "$d/a.err")"
    fi
    check_eq "$name: the lake is as the other commit left it" "$after_b" "$(state "$db")"
    check_eq "$name: the failed commit's files are gone" \
        "$(pg_psql "SELECT (SELECT count(*) FROM ducklake_data_file) +
                           (SELECT count(*) FROM ducklake_delete_file)" "$db")" \
        "$(find "$d/$db" -name '*.parquet' 2>/dev/null | wc -l)"
}

FILE_ROWS="INSERT INTO lake.c SELECT x, 'v' || x FROM range(100) r(x);"
conflict "two drops of one table" c1 "CREATE TABLE lake.c (a INTEGER, b VARCHAR);" \
    "DROP TABLE lake.c;" "DROP TABLE lake.c;" \
    "Transaction conflict - attempting to drop table with index \"%ID%\" - but another transaction has dropped it already"
conflict "two alters of one table" c2 "CREATE TABLE lake.c (a INTEGER, b VARCHAR);" \
    "ALTER TABLE lake.c ADD COLUMN x INTEGER;" "ALTER TABLE lake.c ADD COLUMN y INTEGER;" \
    "Transaction conflict - attempting to alter table with index \"%ID%\" - but another transaction has altered it"
conflict "one name created twice" c3 "CREATE TABLE lake.other (a INTEGER);" \
    "CREATE TABLE lake.c (a INTEGER);" "CREATE TABLE lake.c (b VARCHAR);" \
    "Transaction conflict - attempting to create table \"c\" in schema \"main\" - but this table has been created by another transaction already"
conflict "deletes from one file" c4 "CREATE TABLE lake.c (a INTEGER, b VARCHAR); $FILE_ROWS" \
    "DELETE FROM lake.c WHERE a < 30;" "DELETE FROM lake.c WHERE a >= 70;" \
    "Transaction conflict - attempting to delete from file with index \"%FILE%\" - but another transaction has deleted from it"
conflict "a delete from a dropped table" c5 "CREATE TABLE lake.c (a INTEGER, b VARCHAR); $FILE_ROWS" \
    "DELETE FROM lake.c WHERE a < 30;" "DROP TABLE lake.c;" \
    "Transaction conflict - attempting to delete from table with index \"%ID%\" - but another transaction has dropped it"
conflict "an insert into a dropped table" c6 "CREATE TABLE lake.c (a INTEGER, b VARCHAR);" \
    "INSERT INTO lake.c VALUES (1, 'x');" "DROP TABLE lake.c;" \
    "Transaction conflict - attempting to insert into table with index \"%ID%\" - but another transaction has dropped it"
conflict "an insert into a table another deleted from" c7 \
    "CREATE TABLE lake.c (a INTEGER, b VARCHAR); $FILE_ROWS" \
    "INSERT INTO lake.c VALUES (1, 'x');" "DELETE FROM lake.c WHERE a < 50;" \
    "Transaction conflict - attempting to insert into table with index \"%ID%\" - but another transaction has deleted from it"

# no conflict: inserts into one table from two open transactions both commit
pg_createdb ok1
q ok1 "CREATE TABLE lake.c (a INTEGER, b VARCHAR); $FILE_ROWS" >/dev/null
a_start ok1 "INSERT INTO lake.c VALUES (1000, 'a'); INSERT INTO lake.c SELECT x, 'a' FROM range(2000, 2050) r(x);"
q ok1 "INSERT INTO lake.c SELECT x, 'b' FROM range(3000, 3030) r(x); INSERT INTO lake.c VALUES (4000, 'b');" >/dev/null
a_go
check_eq "two open transactions' inserts into one table both commit" "" "$(cat "$d/a.err")"
check_eq "their rows have unique row ids and the stats add up" "182,182,181|182|182" \
    "$(q ok1 "SELECT count(*), count(DISTINCT rowid), max(rowid) FROM lake.c;")|$(pg_psql \
        "SELECT record_count || '|' || next_row_id FROM ducklake_table_stats" ok1)"

# no conflict: two transactions create different tables, and a schema each, at once (DuckLake
# conflicts on one name made twice only): both commit, each new object numbered past the other's
pg_createdb ok3
q ok3 "CREATE TABLE lake.base (a INTEGER);" >/dev/null
a_start ok3 "CREATE SCHEMA lake.sa; CREATE TABLE lake.sa.t (a INTEGER, b VARCHAR);
    INSERT INTO lake.sa.t VALUES (1, 'a'), (2, 'b'); CREATE TABLE lake.na AS SELECT x AS i FROM range(100) r(x);
    INSERT INTO lake.base VALUES (1);"
q ok3 "CREATE SCHEMA lake.sb; CREATE TABLE lake.sb.t (c DOUBLE); INSERT INTO lake.sb.t VALUES (1.5);
    CREATE TABLE lake.nb AS SELECT x AS k FROM range(40) r(x); INSERT INTO lake.base VALUES (2);" >/dev/null
a_go
check_eq "two transactions creating different tables and schemas at once both commit" "" "$(cat "$d/a.err")"
check_eq "and a fresh process reads both sides' tables" "2,3|100,4950|1.5|40,780|2,3" \
    "$(q ok3 "SELECT count(*), sum(a) FROM lake.sa.t;")|$(q ok3 "SELECT count(*), sum(i) FROM lake.na;")|$(q ok3 \
        "SELECT c FROM lake.sb.t;")|$(q ok3 "SELECT count(*), sum(k) FROM lake.nb;")|$(q ok3 \
        "SELECT count(*), sum(a) FROM lake.base;")"
check_eq "their catalog ids are distinct and below next_catalog_id" "5|5|3|3|t" \
    "$(pg_psql "SELECT count(*) || '|' || count(DISTINCT table_id) FROM ducklake_table" ok3)|$(pg_psql \
        "SELECT count(*) || '|' || count(DISTINCT schema_id) FROM ducklake_schema" ok3)|$(pg_psql \
        "SELECT (SELECT max(table_id) FROM ducklake_table) < (SELECT max(next_catalog_id) FROM ducklake_snapshot)" ok3)"
check_eq "every column, file and stats row names a table of the catalog" "0|0|0" \
    "$(pg_psql "SELECT count(*) FROM ducklake_column WHERE table_id NOT IN (SELECT table_id FROM ducklake_table)" ok3)|$(pg_psql \
        "SELECT count(*) FROM ducklake_data_file WHERE table_id NOT IN (SELECT table_id FROM ducklake_table)" ok3)|$(pg_psql \
        "SELECT count(*) FROM ducklake_table_stats WHERE table_id NOT IN (SELECT table_id FROM ducklake_table)" ok3)"
check_eq "the inlined-data tables carry their table's id and schema version, and exist" "0" \
    "$(pg_psql "SELECT count(*) FROM ducklake_inlined_data_tables WHERE table_name <> 'ducklake_inlined_data_' ||
        table_id || '_' || schema_version OR to_regclass(table_name) IS NULL" ok3)"
check_eq "the moved commit's changes_made names its own tables' final ids" "1" \
    "$(pg_psql "SELECT count(*) FROM ducklake_snapshot_changes c, ducklake_table t WHERE t.table_name = 'na'
        AND c.changes_made LIKE '%inserted_into_table:' || t.table_id || '%' AND c.changes_made LIKE '%created_table:\"main\".\"na\"%'" ok3)"

# a session whose commit moved onto another's snapshot reads the other's rows afterwards
pg_createdb ok2
q ok2 "CREATE TABLE lake.t (i INTEGER); CREATE TABLE lake.x (i INTEGER); INSERT INTO lake.t SELECT * FROM range(50) r(i);" >/dev/null
rm -f "$d/go" "$d/go.ready"
mkfifo "$d/go" "$d/go.ready"
(cd "$d" && TARN_COMMIT_WAIT="$d/go" "$TARN" sql --format csv "$(attach ok2) INSERT INTO lake.x VALUES (1);
    SELECT count(*) AS n FROM lake.t; SELECT count(*) AS n FROM lake.x;" >"$d/a.out" 2>"$d/a.err" </dev/null) &
A_PID=$!
read -r line <"$d/go.ready"
q ok2 "INSERT INTO lake.t SELECT * FROM range(30) r(i); INSERT INTO lake.t VALUES (7);" >/dev/null
a_go
check_eq "after its commit moved onto another's, a session reads the other's rows" \
    "81 1" "$(sed -n '/^n$/{n;p}' "$d/a.out" | tr '\n' ' ' | sed 's/ $//')"

# ---- (d) the retry settings: one attempt only, and the commit that needed a retry fails ----
pg_createdb r1
q r1 "CREATE TABLE lake.c (a INTEGER);" >/dev/null
a_start r1 "SET ducklake_max_retry_count = 1; INSERT INTO lake.c VALUES (1);"
q r1 "INSERT INTO lake.c VALUES (2);" >/dev/null
a_go
if grep -qF "Exceeded the maximum retry count of 1 set by the ducklake_max_retry_count setting." "$d/a.err"; then
    ok "ducklake_max_retry_count 1: a commit that needs a retry fails"
else
    fail "ducklake_max_retry_count 1: a commit that needs a retry fails" "$(cat "$d/a.err")"
fi
check_eq "and leaves only the other commit's row" "2" "$(q r1 "SELECT a FROM lake.c;")"

check_eq "no unexpected errors in the reading processes" "" "$(cat "$d/q.err")"
finish

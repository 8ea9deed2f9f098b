#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# A lake whose catalog is in PostgreSQL (`ATTACH 'ducklake:postgres:…'`), on a throwaway cluster
# (pg_lib.sh): the same script run on it and on a DuckDB-file catalog reads the same, and the
# ducklake_* rows psql reads from PostgreSQL are the DuckDB file's (pg_compare.py normalizes
# uuids, times and booleans' text); inlined rows are in tables with DuckLake's PostgreSQL types.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"

pg_start || {
    [ -n "$PG_SKIP" ] && skip "postgres catalog" "$PG_SKIP"
    finish
}

d=$(mktempdir)
# the two lakes' folders: names of one length, so that files naming paths (delete files) have
# one size
mkdir -p "$d/p" "$d/f"
PG_ATTACH="ATTACH 'ducklake:postgres:$PG_CONNINFO' AS lake (DATA_PATH 'data/');"
FILE_ATTACH="ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'data/');"

# both SQL — run SQL on both lakes (one tarn process each); each output in $d/out.{pg,file}
both() {
    (cd "$d/p" && "$TARN" sql --format csv "$PG_ATTACH $1") >"$d/out.pg" 2>"$d/err.pg" </dev/null
    local a=$?
    (cd "$d/f" && "$TARN" sql --format csv "$FILE_ATTACH $1") >"$d/out.file" 2>"$d/err.file" </dev/null
    local b=$?
    [ "$a" = 0 ] && [ "$b" = 0 ]
}

step() { # step NAME SQL — both lakes run SQL; ok when both succeed and print the same
    if both "$2"; then
        check_eq "$1" "$(cat "$d/out.file")" "$(cat "$d/out.pg")"
    else
        fail "$1" "postgres: $(cat "$d/err.pg")" "duckdb file: $(cat "$d/err.file")"
    fi
}

step "create a lake, a schema and a table" \
    "CREATE SCHEMA lake.s; CREATE TABLE lake.s.t (a INTEGER, b VARCHAR, c DOUBLE, d TIMESTAMP,
     e BLOB, f INTEGER[]);"
step "a small insert (inlined in the catalog)" \
    "INSERT INTO lake.s.t VALUES (1, 'one', 1.5, TIMESTAMP '2024-01-02 03:04:05', 'x\\x00y'::BLOB,
     [1, 2]), (2, 'two', NULL, NULL, NULL, NULL), (3, 'it''s', -0.25, TIMESTAMP '1999-12-31
     23:59:59.123456', ''::BLOB, []);"
step "a large insert (a Parquet file)" \
    "INSERT INTO lake.s.t SELECT i, 'v' || i, i / 4, TIMESTAMP '2020-01-01' + INTERVAL (i) HOUR,
     NULL, [i] FROM range(10, 3010) r(i);"
step "update and delete, inlined and file rows" \
    "UPDATE lake.s.t SET b = upper(b) WHERE a IN (2, 11); DELETE FROM lake.s.t WHERE a = 3 OR a
     BETWEEN 100 AND 199;"
step "a transaction of several statements is one snapshot" \
    "BEGIN; CREATE TABLE lake.u AS SELECT 42 AS x; INSERT INTO lake.u VALUES (43); COMMIT;"
step "reads: now, the inlined rows, aggregates" \
    "SELECT * FROM lake.s.t WHERE a < 20 ORDER BY a; SELECT count(*), sum(a), min(b), max(b),
     max(d) FROM lake.s.t; SELECT * FROM lake.u ORDER BY x;"
step "time travel AT (VERSION => n)" \
    "SELECT count(*), sum(a) FROM lake.s.t AT (VERSION => 3); SELECT a, b FROM lake.s.t AT
     (VERSION => 4) WHERE a < 12 ORDER BY a; SELECT count(*) FROM lake.s.t AT (VERSION => 5);"
step "ducklake_snapshots() and the change feed" \
    "SELECT snapshot_id, schema_version, changes FROM ducklake_snapshots('lake') ORDER BY 1;
     SELECT a, b, change_type FROM ducklake_table_changes('lake', 's', 't', 4, 5) WHERE a < 20
     ORDER BY a, change_type;"
step "ducklake_table_info and list_files" \
    "SELECT table_name, file_count FROM ducklake_table_info('lake') ORDER BY 1;
     SELECT count(*) FROM ducklake_list_files('lake', 't', schema => 's');"

step "maintenance: flush inlined rows, merge adjacent files" \
    "CREATE TABLE lake.w (a INTEGER); INSERT INTO lake.w VALUES (1); INSERT INTO lake.w VALUES (2);
     CALL ducklake_flush_inlined_data('lake', table_name => 'w');
     INSERT INTO lake.w SELECT * FROM range(3, 20); INSERT INTO lake.w SELECT * FROM range(20, 40);
     CALL ducklake_merge_adjacent_files('lake', 'w');
     SELECT count(*), sum(a) FROM lake.w; SELECT count(*) FROM ducklake_list_files('lake', 'w');"

step "maintenance: rewrite a mostly deleted file" \
    "CREATE TABLE lake.r (id INTEGER, v VARCHAR); INSERT INTO lake.r SELECT i, 'v' || i FROM
     range(40) t(i); DELETE FROM lake.r WHERE id < 38;
     SELECT * FROM ducklake_rewrite_data_files('lake', 'r'); SELECT * FROM lake.r ORDER BY id;
     SELECT count(*) FROM ducklake_list_files('lake', 'r');"
step "maintenance: expire snapshots, clean up the files only they used" \
    "SELECT snapshot_id FROM ducklake_expire_snapshots('lake', versions => [2, 4, 6]) ORDER BY 1;
     SELECT count(*) FROM ducklake_cleanup_old_files('lake', dry_run => true, cleanup_all => true);
     SELECT count(*) FROM ducklake_cleanup_old_files('lake', cleanup_all => true);
     SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY 1;
     SELECT count(*), sum(a) FROM lake.s.t AT (VERSION => 5);"
# a Parquet file in each lake's data path that no catalog row names
for l in p f; do
    (cd "$d/$l" && "$TARN" sql "COPY (SELECT 1 AS x) TO 'data/main/stray.parquet'") >/dev/null 2>&1
done
step "maintenance: delete orphaned files" \
    "SELECT count(*) FROM ducklake_delete_orphaned_files('lake', dry_run => true, cleanup_all =>
     true); SELECT count(*) FROM ducklake_delete_orphaned_files('lake', cleanup_all => true);
     SELECT count(*) FROM ducklake_delete_orphaned_files('lake', cleanup_all => true);"
# data_files DIR — the lake's files: how many in each folder (the names are random)
data_files() {
    (cd "$1/data" && find . -type f | sed 's|/[^/]*$||' | sort | uniq -c)
}
check_eq "the same files are left in both lakes' data paths" "$(data_files "$d/f")" \
    "$(data_files "$d/p")"
[ -e "$d/p/data/main/stray.parquet" ] && fail "the orphan is deleted on postgres" ||
    ok "the orphan is deleted on postgres"

check_eq "the snapshots are rows of PostgreSQL, as many as the DuckDB file's" \
    "$(cd "$d/f" && "$TARN" sql --format csv "ATTACH 'm.ducklake' AS m (READ_ONLY);
        SELECT max(snapshot_id) FROM m.ducklake_snapshot" | grep -v "^$" | tail -n 1)" \
    "$(pg_psql 'SELECT max(snapshot_id) FROM public.ducklake_snapshot')"
check_eq "inlined rows in a table with DuckLake's PostgreSQL types" \
    "row_id bigint
begin_snapshot bigint
end_snapshot bigint
a integer
b bytea
c double precision
d character varying
e bytea
f character varying" \
    "$(pg_psql "SELECT attname || ' ' || format_type(atttypid, atttypmod) FROM pg_attribute
                WHERE attrelid = 'public.ducklake_inlined_data_2_2'::regclass AND attnum > 0
                ORDER BY attnum" | sed 's/|/ /')"
check_eq "an inlined VARCHAR is its bytes, a NUL byte is kept in a BLOB" \
    "1|\\x6f6e65|\\x780079
3|\\x69742773|\\x" \
    "$(pg_psql "SELECT a, b, e FROM public.ducklake_inlined_data_2_2 WHERE a IN (1, 3)
                ORDER BY a")"

# The catalogs' rows: every ducklake_* table of PostgreSQL against the DuckDB file's.
mkdir -p "$d/cat.pg" "$d/cat.file"
tables=$(pg_psql "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'
                  AND table_name LIKE 'ducklake%' AND table_name NOT LIKE 'ducklake_inlined_data_%'
                  ORDER BY 1")
dump_ok=1
for t in $tables; do
    psql -X -q --csv -h "$PG_HOST" -U tarn -d lake -c "SELECT * FROM public.$t" \
        >"$d/cat.pg/$t.csv" || dump_ok=0
    (cd "$d/f" && "$TARN" sql --format csv "ATTACH 'm.ducklake' AS m (READ_ONLY);
                                          SELECT * FROM m.$t") >"$d/cat.file/$t.csv" </dev/null ||
        dump_ok=0
done
if [ "$dump_ok" = 1 ] && [ "$(echo "$tables" | wc -w)" -ge 28 ]; then
    check "the catalog rows equal a DuckDB-file catalog's" \
        python3 "$REPO/tests/e2e/pg_compare.py" "$d/cat.pg" "$d/cat.file"
else
    fail "the catalog rows equal a DuckDB-file catalog's" "dumping the catalogs failed: $tables"
fi

# A new process reads the lake back (the views over PostgreSQL's tables are made at attach).
step "a fresh process reads the lake" "SELECT count(*), sum(a), sum(c) FROM lake.s.t"

# METADATA_SCHEMA: the catalog tables in that schema (created with the lake), two lakes in one
# database.
pg_createdb schemas
ms=$(mktempdir)
for sch in one two; do
    check "a lake in METADATA_SCHEMA $sch" \
        env -C "$ms" "$TARN" sql "ATTACH 'ducklake:postgres:$(pg_conninfo schemas)' AS lake
            (DATA_PATH '$sch/', METADATA_SCHEMA '$sch'); CREATE TABLE lake.t AS SELECT '$sch' AS v;
            INSERT INTO lake.t VALUES ('$sch!');"
done
check_eq "each schema holds its lake's catalog" "one|2
two|2" \
    "$(pg_psql "SELECT 'one', count(*) FROM one.ducklake_snapshot WHERE snapshot_id > 0 UNION ALL
                SELECT 'two', count(*) FROM two.ducklake_snapshot WHERE snapshot_id > 0" schemas)"
check_eq "each lake reads its own rows" "v
two
two!" \
    "$(cd "$ms" && "$TARN" sql --format csv "ATTACH 'ducklake:postgres:$(pg_conninfo schemas)' AS lake
        (METADATA_SCHEMA 'two'); SELECT v FROM lake.t ORDER BY v" 2>&1)"

# tarn run: a project whose config/catalog.sql attaches a PostgreSQL catalog builds as one on a
# DuckDB file does; its run records are rows of PostgreSQL.
pg_createdb proj
pp=$(mktempdir)
pf=$(mktempdir)
cp -r "$FIXTURES/projects/basic/." "$pp/"
cp -r "$FIXTURES/projects/basic/." "$pf/"
echo "ATTACH 'ducklake:postgres:$(pg_conninfo proj)' AS lake (DATA_PATH 'lake/');" \
    >"$pp/config/catalog.sql"
check "tarn run builds a project on a PostgreSQL catalog" tarn run -C "$pp"
check "tarn run builds it on a DuckDB file" tarn run -C "$pf"
out=$(tarn run -C "$pp" 2>&1)
case $out in
*"0 succeeded"*"3 unchanged"*) ok "a second run skips the unchanged models" ;;
*) fail "a second run skips the unchanged models" "$out" ;;
esac
models="SELECT * FROM lake.staging.items ORDER BY id; SELECT * FROM lake.marts.expensive
        ORDER BY id; SELECT * FROM lake.marts.summary;"
# project_sql DIR SQL — SQL on the project's lake, attached as its config/catalog.sql does
project_sql() {
    (cd "$1" && "$TARN" sql --format csv "$(grep -v '^--' config/catalog.sql) $2" 2>&1 </dev/null)
}
check_eq "the models' rows equal the DuckDB-file build's" \
    "$(project_sql "$pf" "$models")" "$(project_sql "$pp" "$models")"
check_eq "the run records are in PostgreSQL" "1|3|success
2|3|skipped" \
    "$(pg_psql "SELECT run_id, count(*), min(status) FROM public.tarn_model_run GROUP BY 1
                ORDER BY 1" proj)"
hist=$(tarn history -C "$pp" 2>&1)
case $hist in
*staging.items*"first run"*) ok "tarn history reads the records" ;;
*) fail "tarn history reads the records" "$hist" ;;
esac

# tarn maintain on both projects: the same output, the same rows, the same snapshots left, and
# a run after it finds every model unchanged. volatile: times and durations out of the output,
# and the widths of the columns (a time of fewer digits makes its column narrower).
volatile() {
    sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+(\+00)?/TIME/g; s/[0-9.]+ m?s\b/N s/g; s/ +/ /g; s/-+/-/g'
}
for step in flush compact "expire --keep-last 1" "cleanup --all"; do
    # shellcheck disable=SC2086 # the step's words
    a=$(tarn maintain $step -C "$pf" 2>&1)
    ra=$?
    # shellcheck disable=SC2086
    b=$(tarn maintain $step -C "$pp" 2>&1)
    rb=$?
    if [ "$ra" = 0 ] && [ "$rb" = 0 ]; then
        check_eq "tarn maintain $step: the same as on a DuckDB file" "$(volatile <<<"$a")" \
            "$(volatile <<<"$b")"
    else
        fail "tarn maintain $step on both catalogs" "duckdb file ($ra): $a" "postgres ($rb): $b"
    fi
done
check_eq "after tarn maintain the models' rows are the DuckDB-file build's" \
    "$(project_sql "$pf" "$models")" "$(project_sql "$pp" "$models")"
check_eq "after tarn maintain the same snapshots are left" \
    "$(project_sql "$pf" "SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY 1")" \
    "$(project_sql "$pp" "SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY 1")"
out=$(tarn run -C "$pp" 2>&1)
case $out in
*"0 succeeded"*"3 unchanged"*) ok "a run after tarn maintain skips the unchanged models" ;;
*) fail "a run after tarn maintain skips the unchanged models" "$out" ;;
esac

# Four processes attaching one new PostgreSQL lake at once (in public, then in a METADATA_SCHEMA
# that does not exist yet): one creates it, the others wait and attach what it made; every
# process succeeds and the lake has one set of catalog tables and one initial snapshot.
for round in public race_schema; do
    db="race_$round"
    pg_createdb "$db"
    opt=""
    [ "$round" = public ] || opt=", METADATA_SCHEMA '$round'"
    mkdir -p "$d/$db"
    pids=""
    for i in 1 2 3 4; do
        (cd "$d/$db" && "$TARN" sql --format csv "ATTACH 'ducklake:postgres:$(pg_conninfo "$db")'
            AS lake (DATA_PATH 'data/'$opt); SELECT count(*) FROM ducklake_snapshots('lake');") \
            >"$d/$db/out.$i" 2>"$d/$db/err.$i" </dev/null &
        pids="$pids $!"
    done
    failed=""
    i=0
    for pid in $pids; do
        i=$((i + 1))
        wait "$pid" || failed="$failed $i: $(cat "$d/$db/err.$i")"
    done
    sch=$([ "$round" = public ] && echo public || echo "$round")
    if [ -z "$failed" ]; then
        ok "4 processes attaching a new PostgreSQL lake at once all succeed ($round)"
    else
        fail "4 processes attaching a new PostgreSQL lake at once all succeed ($round)" "$failed"
    fi
    check_eq "the racing attaches made one set of catalog tables and one snapshot ($round)" \
        "28|1|1" "$(pg_psql "SELECT (SELECT count(*) FROM pg_tables WHERE schemaname = '$sch'
            AND tablename LIKE 'ducklake_%'), (SELECT count(*) FROM $sch.ducklake_snapshot),
            (SELECT count(*) FROM $sch.ducklake_metadata WHERE key = 'version')" "$db")"
done

# Errors: a new PostgreSQL lake needs DATA_PATH; a server that is not there is named.
pg_createdb empty
err=$(cd "$d" && "$TARN" sql "ATTACH 'ducklake:postgres:$(pg_conninfo empty)' AS l2" 2>&1 >/dev/null)
case $err in
*"needs a DATA_PATH"*) ok "a new PostgreSQL lake without DATA_PATH is refused" ;;
*) fail "a new PostgreSQL lake without DATA_PATH is refused" "$err" ;;
esac
check_eq "the empty database was left empty" "0" \
    "$(pg_psql "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'" empty)"
err=$(cd "$d" && "$TARN" sql "ATTACH 'ducklake:postgres:dbname=x host=$d/none' AS l3
                              (DATA_PATH 'x/')" 2>&1 >/dev/null)
case $err in
*"PostgreSQL connection failed"*) ok "an unreachable server is a clear error" ;;
*) fail "an unreachable server is a clear error" "$err" ;;
esac

finish

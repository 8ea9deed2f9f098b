#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# test_build_bad_projects.sh — the corpus of malformed projects in tests/fixtures/bad-projects/:
# each case is laid over a copy of tests/fixtures/projects/basic whose lake was built first, and
# `tarn run` must fail with the exit status and the messages (file:line, fix) of its `expect`
# file, leaving the lake exactly as it was: same snapshots, same table contents; and no message
# shows tarn's generated SQL or internal names. See the README there for the format.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

# One pristine lake, copied for each case (building it once keeps the test quick).
base=$(project basic)
"$TARN" run -C "$base" >/dev/null 2>&1 || fail "the base project builds"

# state DIR — in one tarn process (each costs a lake attach): the lake's snapshot count, its
# tables, every base table's rows, and last the recorded runs ("count,status of the last").
tables=$(lakeq "$base" "SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_catalog = 'lake' ORDER BY 1")
state_sql="SELECT count(*) AS snapshots FROM ducklake_snapshots('lake');
SELECT string_agg(table_schema || '.' || table_name, ',' ORDER BY table_schema, table_name) AS tables
    FROM information_schema.tables WHERE table_catalog = 'lake';"
for t in $tables; do
    state_sql="$state_sql SELECT * FROM lake.$t ORDER BY ALL;"
done
state_sql="$state_sql SELECT count(*), arg_max(status, run_id) FROM __ducklake_metadata_lake.tarn_run;"
base_state=$(lakeq "$base" "$state_sql")
base_lake=$(head -n -2 <<<"$base_state")
base_runs=$(tail -n 1 <<<"$base_state")
[ "$(grep -c . <<<"$base_lake")" -gt 5 ] || fail "the state of the base lake is read" "$base_state"

for case_dir in "$FIXTURES"/bad-projects/*/; do
    name=$(basename "$case_dir")
    d=$(mktempdir)
    cp -r "$base/." "$d/"
    cp -r "$case_dir/." "$d/"
    rm -f "$d/expect" "$d/args"
    want=$(head -n 1 "$case_dir/expect")
    args=()
    if [ -f "$case_dir/args" ]; then
        read -r -a args <"$case_dir/args"
    fi
    run_rc "$name: tarn run exits $want" "$want" "$d" run "${args[@]}"
    while IFS= read -r line; do
        [ -n "$line" ] || continue
        contains "$name: says '$line'" "$line" "$ERR"
    done < <(tail -n +2 "$case_dir/expect")
    case $ERR in
    *_tarn_stage* | *__tarn_q* | *__tarn_c* | *"COLUMNS(*)"* | *__ducklake_metadata* | *__tarn_meta*)
        fail "$name: names none of tarn's internal objects" "$ERR" ;;
    *) ok "$name: names none of tarn's internal objects" ;;
    esac
    after=$(lakeq "$d" "$state_sql")
    check_eq "$name: no snapshot was written, the tables are unchanged" "$base_lake" \
        "$(head -n -2 <<<"$after")"
    if [ "$want" = 2 ]; then
        check_eq "$name: no run was recorded" "$base_runs" "$(tail -n 1 <<<"$after")"
    else
        check_eq "$name: the failed build was recorded" "failed" "$(tail -n 1 <<<"$after" | cut -d, -f2)"
    fi
done

# Load errors also stop `tarn plan` (which never opens the lake).
d=$(mktempdir)
cp -r "$base/." "$d/"
cp -r "$FIXTURES/bad-projects/annot_misspelled/." "$d/"
run_rc "plan reports load errors too" 2 "$d" plan
contains "plan names file and line" "models/marts/summary.sql:1:" "$ERR"

# Several mistakes are reported together.
cp "$FIXTURES/bad-projects/annot_bad_grain/models/marts/summary.sql" "$d/models/marts/summary.sql"
cp "$FIXTURES/bad-projects/managed_insert/models/marts/summary.sql" "$d/models/marts/expensive.sql"
run_rc "several errors" 2 "$d" plan
contains "the first" "models/marts/summary.sql:1: 'daly' is not a partition grain" "$ERR"
contains "the second" "models/marts/expensive.sql:2: the model's last statement is INSERT" "$ERR"

# Not a project at all.
run_rc "a folder without models/" 2 "$(mktempdir)" run
contains "it says what a project is" "is not a tarn project: it has no models/ folder" "$ERR"

finish

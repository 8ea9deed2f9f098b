#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# test_build_on_pg.sh — build tests run a second time with every project's catalog in PostgreSQL,
# on one throwaway cluster (pg_lib.sh): each script runs with TARN_TEST_PG_HOST set, so
# build_lib.sh's project() / lake_catalog give each project a database of its own and attach it
# from config/catalog.sql (lakeq reads it there). The checks are the scripts' own, the same as on
# a DuckDB file (rows, run records, snapshots, messages); each is reported as `SCRIPT: CHECK`.
#
# By default (the suite's time budget) two scripts: data tests and tarn test, history / SCD2.
# TARN_PG_BUILD_TESTS=all runs the whole representative set — also partitioned, slices, table and
# view (build_replace), incremental and append, merge, backfills —, or names the scripts itself
# (without test_ and .sh). Under the sanitizers only the data tests run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"

scripts=${TARN_PG_BUILD_TESTS:-build_datatests build_history}
case $TARN in
*/build-san/*) scripts=${TARN_PG_BUILD_TESTS:-build_datatests} ;;
esac
[ "$scripts" = all ] && scripts="build_datatests build_replace build_incremental build_history
    build_partitioned build_merge ops_backfill ops_slices"
pg_start || {
    [ -n "$PG_SKIP" ] && skip "build tests on postgres" "$PG_SKIP"
    finish
}
export TARN_TEST_PG_HOST=$PG_HOST
for name in $scripts; do
    script=$REPO/tests/e2e/test_$name.sh
    if [ ! -f "$script" ]; then
        fail "$name on postgres" "no $script"
        continue
    fi
    out=$(mktemp "$_E2E_TMP/pgb.XXXXXX")
    bash "$script" >"$out" 2>&1 </dev/null
    rc=$?
    nfail=0 failing="" detail=""
    while IFS= read -r line; do
        case $line in
        "#"*)
            [ -n "$failing" ] && detail+="${line#\#   }"$'\n'
            continue
            ;;
        esac
        if [ -n "$failing" ]; then
            fail "$name: $failing" "$detail"
            failing="" detail=""
        fi
        case $line in
        "ok - "*) ok "$name: ${line#ok - }" ;;
        "not ok - "*)
            nfail=$((nfail + 1))
            failing=${line#not ok - }
            ;;
        "skip - "*) echo "skip - $name: ${line#skip - }" ;;
        esac
    done <"$out"
    [ -n "$failing" ] && fail "$name: $failing" "$detail"
    if [ "$rc" != 0 ] && [ "$nfail" = 0 ]; then
        fail "$name ran to its end on postgres" "exit status $rc: $(tail -n 20 "$out")"
    fi
done
finish

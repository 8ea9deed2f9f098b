#!/usr/bin/env bash
# test_build_maintenance.sh — maintenance is not a change (issue 11). On
# tests/fixtures/projects/upkeep (a replace, an append, a merge and a mart over the append; small
# writes inlined, larger ones in Parquet files): three runs give the lake inlined rows, inlined
# and file deletions and several small files; then `tarn maintain expire` (every snapshot but the
# newest) + `cleanup --all` + `compact` + `flush`, and the next run skips every model (no
# snapshot, `tarn plan` says so) and the append model does not append its input again. The same
# with DuckLake's own functions through `tarn sql` (ducklake_flush_inlined_data,
# ducklake_merge_adjacent_files, ducklake_expire_snapshots, ducklake_cleanup_old_files). A real
# change after the maintenance still runs what it reaches, and an append model whose own table
# was written outside tarn does not append the same input again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

# ran — "model:status/reason" of each model of the last --json run in $OUT, sorted.
ran() {
    printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["event"] == "model_finish":
        print(o["model"] + ":" + o["status"] + "/" + (o.get("reason") or o.get("run_reason") or "-"))' |
        sort
}

# maintain DIR ACTION ARGS... — `tarn maintain` on the project's lake.
maintain() {
    local d=$1
    shift
    (cd "$d" && "$TARN" maintain "$@" --lake 'ducklake:lake.ducklake' --data-path lake/) \
        >"$d/maint.out" 2>&1 </dev/null
}

ALL_SKIPPED="core.items_by_id:skipped/unchanged
facts.items_log:skipped/unchanged
marts.log_size:skipped/unchanged
staging.items:skipped/unchanged"

# three runs: the first writes files, the second and third inline small changes
three_runs() {
    local d=$1
    run_ok "$2: first run" "$d" run --json
    printf '6,lime,0.40\n' >>"$d/data/items.csv"
    sed -i 's/^2,pear,2.00$/2,pear,2.20/' "$d/data/items.csv"
    run_ok "$2: second run" "$d" run --json
    sed -i 's/^3,plum,0.80$/3,plum,0.90/' "$d/data/items.csv"
    run_ok "$2: third run" "$d" run --json
    check_eq "$2: the append model appended three times" "17" \
        "$(lakeq "$d" "SELECT count(*) FROM lake.facts.items_log")"
}

# ---- tarn maintain -----------------------------------------------------------
d=$(project upkeep)
three_runs "$d" "maintain"
inlined=$(lakeq "$d" "SELECT count(*) FROM __ducklake_metadata_lake.ducklake_inlined_data_tables")
[ "$inlined" -gt 0 ] && ok "maintain: the lake has inlined rows" ||
    fail "maintain: the lake has inlined rows" "$inlined inlined tables"
maintain "$d" expire --older-than '0 seconds' && ok "maintain expire" ||
    fail "maintain expire" "$(cat "$d/maint.out")"
maintain "$d" cleanup --all && ok "maintain cleanup" || fail "maintain cleanup" "$(cat "$d/maint.out")"
maintain "$d" compact && ok "maintain compact" || fail "maintain compact" "$(cat "$d/maint.out")"
contains "maintain: compact merged the append model's files" "merge | facts       | items_log  |" \
    "$(cat "$d/maint.out")"
maintain "$d" flush && ok "maintain flush" || fail "maintain flush" "$(cat "$d/maint.out")"
contains "maintain: flush moved the merge model's inlined rows" " core        | items_by_id |" \
    "$(cat "$d/maint.out")"
check_eq "maintain: the snapshots before the maintenance are gone" "0" \
    "$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE snapshot_id <= 3")"
snap=$(snapshots "$d")
run_ok "maintain: plan after the maintenance" "$d" plan
contains "maintain: plan would skip every model" "(0 would run, 4 would skip)" "$OUT"
run_ok "maintain: run after the maintenance" "$d" run --json
check_eq "maintain: every model is skipped as unchanged" "$ALL_SKIPPED" "$(ran)"
check_eq "maintain: no snapshot" "$snap" "$(snapshots "$d")"
check_eq "maintain: the append model did not append again" "17" \
    "$(lakeq "$d" "SELECT count(*) FROM lake.facts.items_log")"
check_eq "maintain: the merge model keeps its rows" "6,8.70" \
    "$(lakeq "$d" "SELECT count(*), sum(price) FROM lake.core.items_by_id")"

# A real change after the maintenance runs what it reaches, once.
printf '7,date,5.00\n' >>"$d/data/items.csv"
run_ok "maintain: a change after the maintenance" "$d" run --json
check_eq "maintain: a change after the maintenance runs its readers" \
    "core.items_by_id:success/upstream changed: staging.items
facts.items_log:success/upstream changed: staging.items
marts.log_size:success/upstream changed: facts.items_log
staging.items:success/source file changed: data/items.csv" "$(ran)"
check_eq "maintain: the append model appended the new input once" "24" \
    "$(lakeq "$d" "SELECT count(*) FROM lake.facts.items_log")"
run_ok "maintain: and then nothing" "$d" run --json
check_eq "maintain: and then nothing runs" "$ALL_SKIPPED" "$(ran)"

# An append model's table written outside tarn: not appended to again with the same input.
lakeq "$d" "DELETE FROM lake.facts.items_log WHERE id = 7" >/dev/null
run_ok "maintain: run after an outside delete" "$d" run --json
check_eq "maintain: the append model does not append the same input again" "23" \
    "$(lakeq "$d" "SELECT count(*) FROM lake.facts.items_log")"

# ---- DuckLake's functions through tarn sql ------------------------------------
d=$(project upkeep)
three_runs "$d" "functions"
snap_last=$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")
lakeq "$d" "CALL ducklake_flush_inlined_data('lake'); CALL ducklake_merge_adjacent_files('lake');
    CALL ducklake_expire_snapshots('lake', versions => (SELECT list(snapshot_id) FROM ducklake_snapshots('lake') WHERE snapshot_id < $snap_last));
    CALL ducklake_cleanup_old_files('lake', cleanup_all => true)" >/dev/null
check_eq "functions: snapshots expired" "0" \
    "$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE snapshot_id < $snap_last")"
snap=$(snapshots "$d")
run_ok "functions: run after the maintenance" "$d" run --json
check_eq "functions: every model is skipped as unchanged" "$ALL_SKIPPED" "$(ran)"
check_eq "functions: no snapshot" "$snap" "$(snapshots "$d")"
check_eq "functions: the append model did not append again" "17" \
    "$(lakeq "$d" "SELECT count(*) FROM lake.facts.items_log")"

finish

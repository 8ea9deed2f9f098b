#!/usr/bin/env bash
# test_build_append_same_input.sh — an append model never appends the same input twice, also when
# a table it reads gets a new version with the same rows: an upstream model whose SQL changed but
# not its result, or one rebuilt with --force. The append model compares the rows its last build
# read with the rows it would read now, table by table; the same rows (and columns) append
# nothing, write no snapshot and record the new versions, so the next run is unchanged. A real
# change appends, as before, and so does `--force` on the append model itself.
# `tarn plan` says the truth about it: it runs the same comparison (reading only) and says the
# model would skip, appending nothing (text and --json); when the table is one a model would
# rebuild first, whose rows the plan cannot know, it says the model would run unless that leaves
# the rows as they were; a real change would run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

META=__ducklake_metadata_lake
d=$(project basic)
cat >"$d/models/marts/items_log.sql" <<'SQL'
-- materialize append
SELECT id, name, price FROM staging.items
SQL
cat >"$d/models/marts/star_log.sql" <<'SQL'
-- materialize append
SELECT * FROM staging.items
SQL
cat >"$d/models/marts/pair_log.sql" <<'SQL'
-- materialize append
SELECT i.id, e.price FROM staging.items i JOIN marts.expensive e USING (id)
SQL
run_ok "first run" "$d" run
check_eq "the log has the items once" "4" "$(lakeq "$d" "SELECT count(*) FROM lake.marts.items_log")"
log_version() { lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_table_changes('lake', 'marts', 'items_log', 0, (SELECT max(snapshot_id) FROM ducklake_snapshots('lake')))"; }
v0=$(log_version)

# plan_model NAME — the --json plan's would_run and reason of model NAME (after run_ok … plan --json).
plan_model() {
    printf '%s' "$OUT" | python3 -c '
import json, sys
m = [m for m in json.load(sys.stdin)["models"] if m["model"] == sys.argv[1]][0]
print(str(m["would_run"]).lower() + ": " + m["reason"])' "$1"
}

# the upstream's SQL changes, its rows do not
sed -i 's/^FROM raw.items$/FROM raw.items WHERE id > 0/' "$d/models/staging/items.sql"
run_ok "plan, the upstream to be rebuilt first" "$d" plan
contains "plan: the log would run unless the rebuild leaves its rows" "would run: upstream changed: staging.items (appends nothing if the models built before it leave the rows it reads as its last build read them)" "$OUT"
run_ok "the upstream rebuilt with the same rows, alone" "$d" run staging.items
contains "the upstream did build a snapshot" "ok        staging.items" "$ERR"
snap=$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")
run_ok "plan, the upstream rebuilt" "$d" plan
contains "plan: the log would skip, appending nothing" "would skip: upstream changed: staging.items, which holds the rows the last build read: nothing appended" "$OUT"
contains "plan: the models downstream of the upstream would still run" "would run: upstream changed: staging.items" "$OUT"
contains "plan: counted as skipped" "(3 would run, 3 would skip)" "$OUT"
run_ok "plan --json" "$d" plan --json
check_eq "plan --json: would_run false, with the reason" "false: upstream changed: staging.items, which holds the rows the last build read: nothing appended" "$(plan_model marts.items_log)"
check_eq "plan --json: a log also reading a model that would rebuild first: the run decides" "true: upstream changed: staging.items (appends nothing if the models built before it leave the rows it reads as its last build read them)" "$(plan_model marts.pair_log)"
check_eq "plan wrote nothing" "$snap" "$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")"
run_ok "the run after it" "$d" run
contains "the log says why it appends nothing" "upstream changed: staging.items, which holds the rows the last build read: nothing appended" "$ERR"
check_eq "the log still has the items once" "4" "$(lakeq "$d" "SELECT count(*) FROM lake.marts.items_log")"
check_eq "… and no new version" "$v0" "$(log_version)"
check_eq "recorded as a success that wrote no snapshot" "success,no change: no snapshot written" \
    "$(lakeq "$d" "SELECT status, note FROM $META.tarn_model_run WHERE model = 'marts.items_log' ORDER BY run_id DESC LIMIT 1")"
run_ok "the next run" "$d" run marts.items_log
contains "… finds it unchanged: the new versions were recorded" "unchanged marts.items_log" "$ERR"

# a forced upstream: a new snapshot, the same rows
run_ok "the upstream forced" "$d" run --force staging.items
run_ok "the run after it" "$d" run marts.items_log
contains "appends nothing either" "nothing appended" "$ERR"
check_eq "the log has the items once" "4" "$(lakeq "$d" "SELECT count(*) FROM lake.marts.items_log")"

# a real change appends, as an append model does
echo "5,desk,99.00" >>"$d/data/items.csv"
run_ok "a new item, the upstream rebuilt alone" "$d" run staging.items
run_ok "plan --json, the rows changed" "$d" plan --json
check_eq "plan --json: the log would run" "true: upstream changed: staging.items" "$(plan_model marts.items_log)"
run_ok "plan, the rows changed" "$d" plan marts.items_log
contains "plan: would run" "would run: upstream changed: staging.items" "$OUT"
run_ok "a new item" "$d" run
check_eq "the log has the query's rows appended" "9" "$(lakeq "$d" "SELECT count(*) FROM lake.marts.items_log")"
check_eq "the two-table log appended too (one of its tables changed)" "3,3" \
    "$(lakeq "$d" "SELECT count(*) FILTER (WHERE id = 5) + count(*) FILTER (WHERE id = 2), count(DISTINCT id) FROM lake.marts.pair_log")"

# the same rows under another column name is not the same input: the model that reads every
# column builds, and its column check speaks
sed -i 's/^SELECT id, lower(name) AS name, price$/SELECT id, lower(name) AS label, price/' "$d/models/staging/items.sql"
run_ok "a renamed column upstream" "$d" run staging.items
run_rc "… the log reading * builds, and its column check refuses the new name" 1 "$d" run marts.star_log
contains "… naming the columns" "the SELECT's columns (id, label, price) differ from marts.star_log's (id, name, price)" "$ERR"
contains "… as a run for its upstream" "(upstream changed: staging.items)" "$ERR"

# --force on the append model itself appends again: asked for
before=$(lakeq "$d" "SELECT count(*) FROM lake.marts.pair_log")
run_ok "the append model forced" "$d" run --force marts.pair_log
check_eq "… appends its query's three rows again" "$((before + 3))" "$(lakeq "$d" "SELECT count(*) FROM lake.marts.pair_log")"

finish

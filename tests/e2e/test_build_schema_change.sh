#!/usr/bin/env bash
# test_build_schema_change.sh — on_schema_change=fail|warn|ignore|sync on
# tests/fixtures/projects/crm, for the strategies that keep the table (merge, append):
#   - fail (the default): a SELECT whose columns differ from the table's fails, names both column
#     lists and the remedy, and leaves the lake as it was — also when only the order differs
#     (an append inserts by position: a silent swap would corrupt the data);
#   - ignore / warn: the table's columns are written, the SELECT's new ones left out, its missing
#     ones NULL, reordered columns land by name; warn says so in the run's output;
#   - sync: the table is altered to the SELECT's columns (added and dropped columns, in the
#     build's one snapshot), earlier snapshots keep their columns;
#   - commit_extra_info records what was done (schema_change).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project crm)
M=$d/models/core
run_ok "first run" "$d" run
last_info() {
    lakeq "$d" "SELECT commit_extra_info::JSON->>'schema_change' FROM ducklake_snapshots('lake') ORDER BY snapshot_id DESC LIMIT 1"
}

# fail: a new column
cat >"$M/dim_customer.sql" <<'SQL'
-- materialize key=id,region
SELECT id, region, name, tier, upper(name) AS shout FROM raw.customers
SQL
before=$(lake_dump "$d")
run_rc "a new column fails by default" 1 "$d" run core.dim_customer
contains "the error names the remedy" "on_schema_change=sync" "$ERR"
check_eq "nothing written" "$before" "$(lake_dump "$d")"

# fail: the same columns in another order, for an append
cat >"$M/visits_log.sql" <<'SQL'
-- materialize append
SELECT day, customer_id FROM raw.visits
SQL
run_rc "reordered columns fail an append" 1 "$d" run core.visits_log
check_eq "nothing appended" "$before" "$(lake_dump "$d")"

# ignore: reordered columns land by name
cat >"$M/visits_log.sql" <<'SQL'
-- materialize append on_schema_change=ignore
SELECT day, customer_id FROM raw.visits
SQL
run_ok "ignore appends by name" "$d" run core.visits_log
check_eq "every row in its column" "0" \
    "$(lakeq "$d" "SELECT count(*) FROM lake.core.visits_log WHERE customer_id IS NULL OR day IS NULL")"
check_eq "both runs' rows" "4" "$(lakeq "$d" "SELECT count(*) FROM lake.core.visits_log")"
check_eq "recorded" "columns reordered to the table's" "$(last_info)"

# warn: a new column is left out, a missing one is NULL, and the output says so
cat >"$M/visits_log.sql" <<'SQL'
-- materialize append on_schema_change=warn
SELECT customer_id, 'web' AS channel FROM raw.visits
SQL
run_ok "warn appends the table's columns" "$d" run core.visits_log
contains "the run says what it did" "ignored new column channel; day left NULL" "$ERR"
check_eq "missing column NULL" "2" "$(lakeq "$d" "SELECT count(*) FROM lake.core.visits_log WHERE day IS NULL")"
check_eq "table columns unchanged" "customer_id day" \
    "$(lakeq "$d" "SELECT string_agg(column_name, ' ' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = 'visits_log'")"

# sync: a merge adds a column and drops one, in one snapshot
cat >"$M/dim_customer.sql" <<'SQL'
-- materialize key=id,region on_schema_change=sync
SELECT id, region, name, upper(name) AS shout FROM raw.customers
SQL
snap=$(snapshots "$d")
run_ok "sync alters the table" "$d" run core.dim_customer
check_eq "one snapshot" "$((snap + 1))" "$(snapshots "$d")"
check_eq "the table has the SELECT's columns" "id region name shout" \
    "$(lakeq "$d" "SELECT string_agg(column_name, ' ' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_name = 'dim_customer'")"
check_eq "merged rows carry the new column" "1,ANN" \
    "$(lakeq "$d" "SELECT id, shout FROM lake.core.dim_customer WHERE id = 1")"
check_eq "recorded" "added shout VARCHAR; dropped tier" "$(last_info)"
check_eq "the snapshot before still has tier" "gold" \
    "$(lakeq "$d" "SELECT tier FROM lake.core.dim_customer AT (VERSION => $((snap - 1))) WHERE id = 1")"

finish

#!/usr/bin/env bash
# test_build_datatests.sh — `-- data_test` end to end on tests/fixtures/projects/tested: the tests
# run inside the build's transaction on what the build wrote; passing results are in the
# snapshot's extra info and the run record; a failing test fails the build (rolled back, the lake
# stays at its previous snapshot), names each failing test with file:line, count and examples,
# and skips the models downstream.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project tested)
run_ok "tests pass" "$d" run
check_eq "results in the extra info" "unique id:0 not_null email:0 accepted_values tier = gold,silver:0" \
    "$(lakeq "$d" "SELECT string_agg((t->>'test') || ':' || (t->>'violations'), ' ') FROM (SELECT unnest(from_json(commit_extra_info::JSON->'tests', '[\"JSON\"]')) AS t FROM ducklake_snapshots('lake') WHERE commit_message LIKE '%core.customers%')" | tr -d '"')"
check_eq "results in the run record" "3" \
    "$(lakeq "$d" "SELECT json_array_length(tests::JSON) FROM __ducklake_metadata_lake.tarn_model_run WHERE model = 'core.orders'")"

# Break every test of core.customers at once.
cat >"$d/data/customers.csv" <<'CSV'
id,email,tier
1,a@x.org,gold
1,dup@x.org,gold
2,,silver
3,c@x.org,platinum
CSV
snap=$(snapshots "$d")
before=$(lake_dump "$d")
run_rc "failing tests fail the build" 1 "$d" run core.customers+
contains "unique names the key" "models/core/customers.sql:1: data test unique id failed: 1 violation (e.g. id=1)" "$ERR"
contains "not_null counts" "models/core/customers.sql:2: data test not_null email failed: 1 violation" "$ERR"
contains "accepted_values names the value" "models/core/customers.sql:3: data test accepted_values tier = gold,silver failed: 1 violation (e.g. platinum)" "$ERR"
contains "downstream skipped" "upstream core.customers failed" "$ERR"
check_eq "no snapshot" "$snap" "$(snapshots "$d")"
check_eq "the lake is unchanged" "$before" "$(lake_dump "$d")"

# relationships and custom tests on the merge model.
cp "$FIXTURES/projects/tested/data/customers.csv" "$d/data/customers.csv"
cat >"$d/data/orders.csv" <<'CSV'
order_id,customer_id,amount
10,1,5
11,9,7
12,3,-2
CSV
run_rc "relationships and custom tests fail" 1 "$d" run core.orders
contains "relationships names the missing key" "models/core/orders.sql:3: data test relationships customer_id -> core.customers.id failed: 1 violation (e.g. 9)" "$ERR"
contains "the custom test counts its rows" "models/core/orders.sql:4: data test tests/no_negative_amounts.sql failed: 1 violation" "$ERR"
check_eq "the merge was rolled back" "10,1,5
11,2,7
12,3,9" "$(lakeq "$d" "SELECT * FROM lake.core.orders ORDER BY 1")"

finish

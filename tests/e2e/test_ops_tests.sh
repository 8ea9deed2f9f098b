#!/usr/bin/env bash
# test_ops_tests.sh — data tests as an operation: `tarn test` runs the data tests on what is
# published without building (exit 1 on a failing error-severity test), `severity=warn` reports
# and never blocks, every failing test keeps a sample of its violating rows (at most 20 rows and
# 50 KB of JSON, rows dropped, never cut) in tarn_test_result, the run record, --json and
# `tarn runs show`; a history model's built-in tests see its current rows, and tarn checks the
# history table itself (one current row per key, valid_from < valid_to).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

CAT=__ducklake_metadata_lake

# line_has NAME LABEL MODEL TEST TEXT — ok if TEXT has the line "LABEL  MODEL  TEST…" (any spacing).
line_has() {
    if printf '%s\n' "$5" | grep -qE "^  $2 +$3 +$(printf '%s' "$4" | sed 's/[][().*+?^$|\\]/\\&/g')"; then
        ok "$1"
    else
        fail "$1" "missing: $2 $3 $4" "in: $5"
    fi
}

d=$(project tested)
run_rc "nothing built yet" 2 "$d" test
contains "says so" "has nothing built yet: tarn run first" "$ERR"
run_ok "build" "$d" run
snap=$(snapshots "$d")
run_ok "tarn test passes" "$d" test
line_has "a line per test" "PASS" "core.customers" "unique id" "$OUT"
line_has "custom tests too" "PASS" "core.orders" "tests/no_negative_amounts.sql" "$OUT"
contains "summary" "6 passed, 0 failed, 0 warned" "$ERR"
check_eq "nothing built" "$snap" "$(snapshots "$d")"
run_id=$(lakeq "$d" "SELECT max(run_id) FROM $CAT.tarn_run")
check_eq "the run is recorded with trigger test" "test,success" \
    "$(lakeq "$d" "SELECT \"trigger\", status FROM $CAT.tarn_run WHERE run_id = $run_id")"
check_eq "one result row per test" "6,6" \
    "$(lakeq "$d" "SELECT count(*), count(*) FILTER (WHERE status = 'pass') FROM $CAT.tarn_test_result WHERE run_id = $run_id")"
check_eq "no model run rows: change detection is not fooled" "0" \
    "$(lakeq "$d" "SELECT count(*) FROM $CAT.tarn_model_run WHERE run_id = $run_id")"
check_eq "the build recorded its tests too" "6" \
    "$(lakeq "$d" "SELECT count(*) FROM $CAT.tarn_test_result WHERE run_id = 1")"
run_ok "selectors" "$d" test core.orders
contains "only the selected" "3 passed, 0 failed" "$ERR"
run_ok "a model without tests" "$d" test core.order_totals
contains "says so" "no data tests in the selected models" "$ERR"
run_rc "bad selector" 2 "$d" test nosuch.model

# The published table changes outside tarn: tarn test sees it, without building.
lakeq "$d" "CREATE OR REPLACE TABLE lake.core.customers AS SELECT * FROM (VALUES (1, 'a@x.org', 'gold'), (1, 'dup@x.org', 'gold'), (2, NULL, 'silver'), (3, 'c@x.org', 'platinum')) t(id, email, tier)" >/dev/null
snap=$(snapshots "$d")
last=$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")
run_rc "failing tests exit 1" 1 "$d" test
line_has "unique fails" "FAIL" "core.customers" "unique id  (1 violation)" "$OUT"
contains "where" "models/core/customers.sql:1  e.g. id=1" "$OUT"
contains "the sample's rows" '{"id":1,"email":"dup@x.org","tier":"gold"}' "$OUT"
line_has "relationships on the new rows pass" "PASS" "core.orders" "relationships customer_id -> core.customers.id" "$OUT"
contains "summary" "3 passed, 3 failed, 0 warned" "$ERR"
check_eq "still nothing built" "$snap" "$(snapshots "$d")"
run_id=$(lakeq "$d" "SELECT max(run_id) FROM $CAT.tarn_run")
check_eq "the run failed" "test,failed" \
    "$(lakeq "$d" "SELECT \"trigger\", status FROM $CAT.tarn_run WHERE run_id = $run_id")"
check_eq "unique's sample: every row of the duplicated key, as JSON objects" "2,0,true" \
    "$(lakeq "$d" "SELECT sample_rows, sample_dropped, sample = '[{\"id\":1,\"email\":\"a@x.org\",\"tier\":\"gold\"},{\"id\":1,\"email\":\"dup@x.org\",\"tier\":\"gold\"}]' FROM $CAT.tarn_test_result WHERE run_id = $run_id AND test = 'unique id'")"
check_eq "not_null's sample" '2,true' \
    "$(lakeq "$d" "SELECT (sample::JSON)->0->>'id', ((sample::JSON)->0->'email') = 'null' FROM $CAT.tarn_test_result WHERE run_id = $run_id AND test = 'not_null email'")"
check_eq "accepted_values' sample" 'platinum' \
    "$(lakeq "$d" "SELECT (sample::JSON)->0->>'tier' FROM $CAT.tarn_test_result WHERE run_id = $run_id AND test LIKE 'accepted_values%'")"
check_eq "the snapshot tested" "$last" \
    "$(lakeq "$d" "SELECT DISTINCT snapshot_id FROM $CAT.tarn_test_result WHERE run_id = $run_id")"
run_ok "runs show" "$d" runs show "$run_id"
contains "runs show lists the tests" "| unique id " "$OUT"
contains "with the sample" '[{"id":1,"email":"a@x.org"' "$OUT"
run_ok "runs show --json" "$d" runs show "$run_id" --json
contains "the whole sample as JSON text" 'dup@x.org' "$OUT"
run_ok "runs lists the test run" "$d" runs --format csv
contains "trigger test" "$run_id,test,failed," "$OUT"
run_rc "--json" 1 "$d" test --json core.customers
check_eq "--json: one event per test, each with its sample" "run_start test:fail:2 test:fail:1 test:fail:1 run_finish" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
out = []
for line in sys.stdin:
    e = json.loads(line)
    if e["event"] == "test":
        s = e["status"] + (":%d" % len(e["sample"]) if e["status"] != "pass" else "")
        out.append("test:" + s)
    else:
        out.append(e["event"])
print(" ".join(out))')"

# A custom test's sample is its query's rows.
lakeq "$d" "INSERT INTO lake.core.orders VALUES (20, 1, -4), (21, 2, -9)" >/dev/null
run_rc "custom test fails" 1 "$d" test core.orders
line_has "custom counts" "FAIL" "core.orders" "tests/no_negative_amounts.sql  (2 violations)" "$OUT"
run_id=$(lakeq "$d" "SELECT max(run_id) FROM $CAT.tarn_run")
check_eq "custom sample rows" "-4 -9" \
    "$(lakeq "$d" "SELECT (sample::JSON)->0->>'amount' || ' ' || ((sample::JSON)->1->>'amount') FROM $CAT.tarn_test_result WHERE run_id = $run_id AND test = 'tests/no_negative_amounts.sql'")"

# The sample's cap: 20 rows, 50 KB, whole rows only.
lakeq "$d" "CREATE OR REPLACE TABLE lake.core.customers AS SELECT 7 AS id, repeat('x', 4000) || i AS email, 'gold' AS tier FROM range(100) t(i)" >/dev/null
run_rc "a big failure" 1 "$d" test core.customers
run_id=$(lakeq "$d" "SELECT max(run_id) FROM $CAT.tarn_run")
check_eq "20 rows at most" "20" \
    "$(lakeq "$d" "SELECT sample_rows + sample_dropped FROM $CAT.tarn_test_result WHERE run_id = $run_id AND test = 'unique id'")"
check_eq "under 50 KB, rows dropped, the rest whole" "true,true,true" \
    "$(lakeq "$d" "SELECT length(sample) <= 51200, sample_dropped > 0, json_array_length(sample::JSON) = sample_rows AND list_min(list_transform(from_json(sample, '[\"JSON\"]'), x -> length(x->>'email'))) > 4000 FROM $CAT.tarn_test_result WHERE run_id = $run_id AND test = 'unique id'")"
contains "the output says rows were dropped" "more dropped: 50 KB" "$OUT"

# severity=warn: reported, never fails the run or blocks the build and its downstream.
d=$(project tested)
sed -i 's/^-- data_test not_null email$/-- data_test not_null email severity=warn/' "$d/models/core/customers.sql"
printf 'id,email,tier\n1,a@x.org,gold\n2,,silver\n3,c@x.org,gold\n' >"$d/data/customers.csv"
run_ok "a failing warn test does not fail the build" "$d" run --json
contains "the warning is printed" "models/core/customers.sql:2: data test not_null email (severity=warn) failed: 1 violation" "$ERR"
check_eq "the build and its downstream committed" "core.customers:success core.orders:success core.order_totals:success" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
print(" ".join(e["model"] + ":" + e["status"] for e in map(json.loads, sys.stdin) if e["event"] == "model_finish"))')"
check_eq "the run --json event has the tests and the sample" "warn:2" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for e in map(json.loads, sys.stdin):
    if e["event"] == "model_finish" and e["model"] == "core.customers":
        t = [t for t in e["tests"] if t["test"] == "not_null email"][0]
        print("%s:%d" % (t["status"], t["sample"][0]["id"]))')"
check_eq "the snapshot's extra info keeps the warn result and its sample" "warn,2" \
    "$(lakeq "$d" "SELECT t->>'status', (t->'sample')->0->>'id' FROM (SELECT unnest(from_json(commit_extra_info::JSON->'tests', '[\"JSON\"]')) AS t FROM ducklake_snapshots('lake') WHERE commit_message LIKE '%core.customers%') WHERE t->>'test' = 'not_null email'")"
check_eq "recorded with the build" "warn,1" \
    "$(lakeq "$d" "SELECT status, sample_rows FROM $CAT.tarn_test_result WHERE test = 'not_null email'")"
run_ok "tarn test: a warn failure exits 0" "$d" test
line_has "WARN line" "WARN" "core.customers" "not_null email  (1 violation)" "$OUT"
contains "counted as warned" "5 passed, 0 failed, 1 warned" "$ERR"
run_ok "history shows the warn" "$d" history core.customers --format csv
contains "tests column" "2/3 passed, 1 warn" "$OUT"
sed -i 's/severity=warn/severity=fatal/' "$d/models/core/customers.sql"
run_rc "a bad severity is a load error" 2 "$d" test
contains "with file:line and the fix" "models/core/customers.sql:2" "$ERR"
contains "names it" "unknown severity 'fatal'" "$ERR"

# A failing error-severity test in a build: rolled back, and its sample recorded with the build.
printf 'id,email,tier\n1,a@x.org,gold\n1,b@x.org,gold\n' >"$d/data/customers.csv"
sed -i 's/severity=fatal/severity=warn/' "$d/models/core/customers.sql"
run_rc "a failing unique test fails the build" 1 "$d" run core.customers
run_id=$(lakeq "$d" "SELECT max(run_id) FROM $CAT.tarn_run")
check_eq "its sample is recorded, with no snapshot" "fail,2,true" \
    "$(lakeq "$d" "SELECT status, sample_rows, snapshot_id IS NULL FROM $CAT.tarn_test_result WHERE run_id = $run_id AND test = 'unique id'")"
check_eq "and in tarn_model_run.tests" "2" \
    "$(lakeq "$d" "SELECT json_array_length(t->'sample') FROM (SELECT unnest(from_json(tests, '[\"JSON\"]')) AS t FROM $CAT.tarn_model_run WHERE run_id = $run_id) WHERE t->>'test' = 'unique id'")"

# A history model: built-in tests see its current rows; tarn checks the history table itself.
h=$(project scd)
sed -i 's/^-- data_test not_null valid_from$/-- data_test unique id/' "$h/models/core/dim_customer.sql"
run_ok "history build" "$h" run
sed -i 's/^2,bob,rome,silver$/2,bob,milan,silver/' "$h/data/customers.csv"
run_ok "a second version of key 2" "$h" run
check_eq "two versions of key 2" "2" "$(lakeq "$h" "SELECT count(*) FROM lake.core.dim_customer WHERE id = 2")"
run_ok "unique id passes on the current rows" "$h" test core.dim_customer
line_has "unique id" "PASS" "core.dim_customer" "unique id" "$OUT"
line_has "tarn's own check" "PASS" "core.dim_customer" "history: one current row per key (id)" "$OUT"
line_has "and the validity" "PASS" "core.dim_customer" "history: valid_from < valid_to" "$OUT"
lakeq "$h" "UPDATE lake.core.dim_customer SET is_current = true, valid_to = NULL WHERE id = 2" >/dev/null
run_rc "a second current row fails" 1 "$h" test core.dim_customer
line_has "one current row per key" "FAIL" "core.dim_customer" "history: one current row per key (id)  (1 violation)" "$OUT"
line_has "unique id too" "FAIL" "core.dim_customer" "unique id  (1 violation)" "$OUT"
lakeq "$h" "UPDATE lake.core.dim_customer SET is_current = false, valid_to = valid_from WHERE id = 2 AND city = 'rome'" >/dev/null
run_rc "a closed version with valid_to = valid_from fails" 1 "$h" test core.dim_customer
line_has "the validity check" "FAIL" "core.dim_customer" "history: valid_from < valid_to, valid_to NULL only on the current row  (1 violation)" "$OUT"
contains "its example names the key" "e.g. id=2, valid_from=" "$OUT"

finish

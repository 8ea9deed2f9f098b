#!/usr/bin/env bash
# test_build_merge.sh — merge by key (key=a,b) and append end to end on
# tests/fixtures/projects/crm: untouched rows kept, changed rows replaced, new rows added, keys
# matched NULL-safely, only changed rows rewritten, duplicate keys refused with the keys named and
# nothing written, a SELECT whose columns no longer match refused; append inserts every run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project crm)
run_ok "first run creates the tables" "$d" run
check_eq "dim_customer" "1,eu,ann,gold
2,eu,bob,silver
3,us,cid,gold
,us,nobody,none" "$(lakeq "$d" "SELECT * FROM lake.core.dim_customer ORDER BY id NULLS LAST")"
check_eq "visits_log" "2" "$(lakeq "$d" "SELECT count(*) FROM lake.core.visits_log")"

# Change one customer, drop one from the source, add one; the NULL-key row is unchanged.
cat >"$d/data/customers.csv" <<'CSV'
id,region,name,tier
1,eu,ann,platinum
3,us,cid,gold
4,us,dan,silver
,us,nobody,none
CSV
run_ok "merge run" "$d" run core.dim_customer
check_eq "changed replaced, missing kept, new added" "1,eu,ann,platinum
2,eu,bob,silver
3,us,cid,gold
4,us,dan,silver
,us,nobody,none" "$(lakeq "$d" "SELECT * FROM lake.core.dim_customer ORDER BY id NULLS LAST")"
check_eq "only the changed rows were written" "2,1" \
    "$(lakeq "$d" "SELECT j->>'rows_written', j->>'rows_deleted' FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') ORDER BY snapshot_id DESC LIMIT 1)")"
check_eq "extra info names the key" '["id","region"]' \
    "$(lakeq "$d" "SELECT commit_extra_info::JSON->>'key' FROM ducklake_snapshots('lake') ORDER BY snapshot_id DESC LIMIT 1" | sed 's/""/"/g; s/^"//; s/"$//')"
last=$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")
check_eq "the change feed shows exactly that" "delete,1,gold
insert,1,platinum
insert,4,silver" \
    "$(lakeq "$d" "SELECT change_type, id, tier FROM ducklake_table_changes('lake', 'core', 'dim_customer', $last, $last) ORDER BY id, change_type" | sed 's/^update_preimage/delete/; s/^update_postimage/insert/')"

# NULL-safe: a changed row with a NULL key part replaces the NULL-key row.
sed -i 's/^,us,nobody,none$/,us,nobody,changed/' "$d/data/customers.csv"
run_ok "merge with a NULL key part" "$d" run core.dim_customer
check_eq "the NULL-key row was replaced, not duplicated" ",us,nobody,changed" \
    "$(lakeq "$d" "SELECT * FROM lake.core.dim_customer WHERE id IS NULL")"

# A merge that changes nothing writes no snapshot (as DuckLake does for an empty transaction) and
# is recorded as a success at the current snapshot.
snap=$(snapshots "$d")
run_ok "merge with nothing changed" "$d" run --force core.dim_customer
check_eq "no snapshot" "$snap" "$(snapshots "$d")"
check_eq "recorded with a note" "success,$((snap - 1)),0,no change: no snapshot written" \
    "$(lakeq "$d" "SELECT status, snapshot_id, rows_written, note FROM __ducklake_metadata_lake.tarn_model_run ORDER BY run_id DESC LIMIT 1")"

# Duplicate keys: the build fails naming them, and writes nothing.
before=$(lake_dump "$d")
snap=$(snapshots "$d")
cat >>"$d/data/customers.csv" <<'CSV'
3,us,cid2,gold
3,us,cid3,gold
1,eu,ann2,gold
,us,nobody2,none
CSV
run_rc "duplicate keys fail the build" 1 "$d" run core.dim_customer
contains "the error names the keys" "merge key (id, region) is not unique in the SELECT: 2 keys appear more than once: id=3, region=us (3 rows); id=1, region=eu (2 rows); nothing was written" "$ERR"
contains "the error names the file" "models/core/dim_customer.sql:4:" "$ERR"
check_eq "no snapshot" "$snap" "$(snapshots "$d")"
check_eq "the lake is unchanged" "$before" "$(lake_dump "$d")"
check_eq "the failure is recorded" "failed" \
    "$(lakeq "$d" "SELECT status FROM __ducklake_metadata_lake.tarn_model_run ORDER BY run_id DESC LIMIT 1")"

# A SELECT whose columns no longer match the table is refused with the fix.
cp "$FIXTURES/projects/crm/data/customers.csv" "$d/data/customers.csv"
cat >"$d/models/core/dim_customer.sql" <<'SQL'
-- materialize key=id,region
SELECT id, region, name FROM raw.customers
SQL
run_rc "changed columns fail a merge" 1 "$d" run core.dim_customer
contains "it says why" "the SELECT's columns (id, region, name) differ from core.dim_customer's (id, region, name, tier): merge keeps the table's columns" "$ERR"
cat >"$d/models/core/dim_customer.sql" <<'SQL'
-- materialize key=nope
SELECT id, region, name, tier FROM raw.customers
SQL
run_rc "a key that is not a column is a load error" 2 "$d" run core.dim_customer
contains "it names the key" "models/core/dim_customer.sql:1: key column nope is not a column of the query (it returns id, region, name, tier)" "$ERR"
cat >"$d/models/core/dim_customer.sql" <<'SQL'
-- materialize key=nope
SELECT * FROM raw.customers
SQL
run_rc "behind a star it fails the build" 1 "$d" run core.dim_customer
contains "naming the key too" "key column nope is not a column of the SELECT" "$ERR"
cp "$FIXTURES/projects/crm/models/core/dim_customer.sql" "$d/models/core/dim_customer.sql"

# Append: a run inserts what the SELECT returns; with its input unchanged the model is skipped
# (the same rows are not appended twice).
run_ok "append run, input unchanged" "$d" run core.visits_log
check_eq "not appended twice" "2" "$(lakeq "$d" "SELECT count(*) FROM lake.core.visits_log")"
echo "3,2024-05-03" >>"$d/data/visits.csv"
run_ok "append run, input changed" "$d" run core.visits_log
check_eq "appended again" "5" "$(lakeq "$d" "SELECT count(*) FROM lake.core.visits_log")"
check_eq "append extra info" "append,3,source file changed: data/visits.csv" \
    "$(lakeq "$d" "SELECT j->>'strategy', j->>'rows_written', j->>'run_reason' FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') ORDER BY snapshot_id DESC LIMIT 1)")"

finish

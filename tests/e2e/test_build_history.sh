#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# test_build_history.sh — the history strategy (SCD type 2: `-- materialize key=id history
# [track=…] [deletes=close]`) end to end on tests/fixtures/projects/scd, whose CSV source is
# rewritten between runs: the table's exact contents after each run (versions labelled by the run
# that opened and closed them), a re-run over the same input changing nothing and making no
# snapshot, exactly the changed keys closed and reopened (change feed and extra info), NULL-safe
# comparison, track= limiting what is a change, deletes=close, a key coming back, the
# <table>_current view (and a model reading it), time travel to older states, duplicate keys and
# bad columns failing with the lake left as it was, and every snapshot's extra info being JSON.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

META=__ducklake_metadata_lake

# versions DIR TABLE [COLS] — the table's rows with valid_from/valid_to as the run ids whose build
# opened/closed them (each run has one timestamp: its start), then is_current.
versions() {
    local cols=${3:-id, name, city, tier}
    lakeq "$1" "WITH runs AS (SELECT DISTINCT run_id, CAST(details::JSON->>'valid_at' AS TIMESTAMP) AS valid_at
                FROM $META.tarn_model_run WHERE model = 'core.$2' AND details IS NOT NULL)
              SELECT $cols, (SELECT run_id FROM runs WHERE runs.valid_at = valid_from) AS opened,
                     (SELECT run_id FROM runs WHERE runs.valid_at = valid_to) AS closed, is_current
              FROM lake.core.$2 ORDER BY id, valid_from"
}

# last_extra DIR MODEL FIELDS — fields of the newest snapshot's extra info of MODEL, as CSV.
last_extra() {
    lakeq "$1" "SELECT $3 FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake')
               WHERE commit_extra_info::JSON->>'model' = '$2' ORDER BY snapshot_id DESC LIMIT 1)"
}

d=$(project scd)

run_ok "plan" "$d" plan
contains "plan shows the history options" "core.customer_city               history key=id track=city deletes=close" "$ERR$OUT"
contains "a model reading <table>_current depends on the history model" "reads models: core.dim_customer" "$ERR$OUT"

# ---- run 1: every key opens a current version ----------------------------------------------
run_ok "run 1 builds the history tables" "$d" run
check_eq "run 1: dim_customer" "1,ann,paris,gold,1,,true
2,bob,rome,silver,1,,true
3,cid,oslo,gold,1,,true
5,eve,kyiv,,1,,true
6,fay,,,1,,true" "$(versions "$d" dim_customer)"
check_eq "run 1: customer_city" "1,ann,paris,1,,true
2,bob,rome,1,,true
3,cid,oslo,1,,true
5,eve,kyiv,1,,true
6,fay,,1,,true" "$(versions "$d" customer_city "id, name, city")"
check_eq "the table's columns" "id,INTEGER
name,VARCHAR
city,VARCHAR
tier,VARCHAR
valid_from,TIMESTAMP
valid_to,TIMESTAMP
is_current,BOOLEAN" "$(lakeq "$d" "SELECT column_name, data_type FROM information_schema.columns WHERE table_catalog = 'lake' AND table_schema = 'core' AND table_name = 'dim_customer' ORDER BY ordinal_position")"
check_eq "valid_from is the run's start" "true" \
    "$(lakeq "$d" "SELECT abs(epoch_us(CAST(m.details::JSON->>'valid_at' AS TIMESTAMP)) - epoch_us(r.started_at)) <= 1
                   FROM $META.tarn_model_run m JOIN $META.tarn_run r USING (run_id) WHERE m.model = 'core.dim_customer'")"
check_eq "the _current view is a lake view" "dim_customer_current,VIEW" \
    "$(lakeq "$d" "SELECT table_name, table_type FROM information_schema.tables WHERE table_catalog = 'lake' AND table_name = 'dim_customer_current'")"
check_eq "the _current view: current rows, the query's columns and valid_from" "id,name,city,tier,valid_from" \
    "$(cd "$d" && "$TARN" sql --format csv -c "$(lake_attach "$d") SELECT * FROM lake.core.dim_customer_current LIMIT 0" | head -n 1)"
check_eq "run 1 extra info" "history,5,5,0,0,[],keep" \
    "$(last_extra "$d" core.dim_customer "j->>'strategy', j->>'rows_written', j->>'rows_opened', j->>'rows_closed', j->>'rows_deleted', j->>'track', j->>'deletes'" | sed 's/""/"/g')"
check_eq "data tests ran on the history table and its view, then tarn's own two checks" "4,0,0,truetrue" \
    "$(last_extra "$d" core.dim_customer "json_array_length(j->'tests'), j->'tests'->0->>'violations', j->'tests'->1->>'violations', (j->'tests'->2->>'builtin') || (j->'tests'->3->>'builtin')")"
check_eq "track= and deletes=close in extra info" '["city"],close' \
    "$(last_extra "$d" core.customer_city "j->>'track', j->>'deletes'" | sed 's/""/"/g; s/^"//; s/",/,/')"
check_eq "a model reading the view built after it" "gold,2
silver,1
,2" "$(lakeq "$d" "SELECT * FROM lake.marts.customers_by_tier ORDER BY tier NULLS LAST")"
check_eq "its read of the history table is recorded" "core.dim_customer,core.dim_customer,2" \
    "$(last_extra "$d" marts.customers_by_tier "j->'upstream'->0->>'table', j->'upstream'->0->>'model', j->'upstream'->0->>'snapshot_id'")"
v1=$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")

# ---- run 2: the same input changes nothing ------------------------------------------------
dump=$(lake_dump "$d")
snaps=$(snapshots "$d")
# (--force: unchanged models are skipped before they build; here the strategy itself is tested)
run_ok "run 2 over the same input" "$d" run --force core.dim_customer core.customer_city
check_eq "run 2: the tables are unchanged" "$dump" "$(lake_dump "$d")"
check_eq "run 2: no snapshot is made" "$snaps" "$(snapshots "$d")"
check_eq "run 2: recorded as no change" "success,0,no change: no snapshot written
success,0,no change: no snapshot written" \
    "$(lakeq "$d" "SELECT status, rows_written, note FROM $META.tarn_model_run WHERE run_id = 2 ORDER BY model")"

# ---- run 3: one tier, one city, a NULL filled, one key gone, one new ------------------------
cat >"$d/data/customers.csv" <<'CSV'
id,name,city,tier
1,ann,paris,platinum
2,bob,milan,silver
4,dan,lima,gold
5,eve,kyiv,gold
6,fay,,
CSV
snaps=$(snapshots "$d")
run_ok "run 3" "$d" run
check_eq "run 3: one snapshot per model build" "$((snaps + 3))" "$(snapshots "$d")"
check_eq "run 3: changed keys closed and reopened, missing key kept current, NULLs compared safely" "1,ann,paris,gold,1,3,false
1,ann,paris,platinum,3,,true
2,bob,rome,silver,1,3,false
2,bob,milan,silver,3,,true
3,cid,oslo,gold,1,,true
4,dan,lima,gold,3,,true
5,eve,kyiv,,1,3,false
5,eve,kyiv,gold,3,,true
6,fay,,,1,,true" "$(versions "$d" dim_customer)"
check_eq "run 3: track=city: only the move is a change; deletes=close closes the missing key" "1,ann,paris,1,,true
2,bob,rome,1,3,false
2,bob,milan,3,,true
3,cid,oslo,1,3,false
4,dan,lima,3,,true
5,eve,kyiv,1,,true
6,fay,,1,,true" "$(versions "$d" customer_city "id, name, city")"
check_eq "run 3 extra info: opened and closed" "4,3,4,0" \
    "$(last_extra "$d" core.dim_customer "j->>'rows_opened', j->>'rows_closed', j->>'rows_written', j->>'rows_deleted'")"
check_eq "run 3 extra info (track=city, deletes=close)" "2,2" \
    "$(last_extra "$d" core.customer_city "j->>'rows_opened', j->>'rows_closed'")"
snap=$(last_extra "$d" core.dim_customer "j->>'run_id'") # (sanity: the build is run 3's)
check_eq "the newest dim_customer build is run 3's" "3" "$snap"
s3=$(lakeq "$d" "SELECT snapshot_id FROM ducklake_snapshots('lake') WHERE commit_extra_info::JSON->>'model' = 'core.dim_customer' ORDER BY snapshot_id DESC LIMIT 1")
check_eq "the change feed: only the changed keys were rewritten" "1,update_postimage
1,update_preimage
1,insert
2,update_postimage
2,update_preimage
2,insert
4,insert
5,update_postimage
5,update_preimage
5,insert" "$(lakeq "$d" "SELECT id, change_type FROM ducklake_table_changes('lake', 'core', 'dim_customer', $s3, $s3) ORDER BY id, is_current, change_type DESC")"
check_eq "the run record's details" "4,3" \
    "$(lakeq "$d" "SELECT details::JSON->>'rows_opened', details::JSON->>'rows_closed' FROM $META.tarn_model_run WHERE run_id = 3 AND model = 'core.dim_customer'")"
check_eq "the _current view after run 3" "1,platinum
2,silver
3,gold
4,gold
5,gold
6," "$(lakeq "$d" "SELECT id, tier FROM lake.core.dim_customer_current ORDER BY id")"
check_eq "the model reading the view follows it" "gold,3
platinum,1
silver,1
,1" "$(lakeq "$d" "SELECT * FROM lake.marts.customers_by_tier ORDER BY tier NULLS LAST")"

# ---- time travel ---------------------------------------------------------------------------
check_eq "AT (VERSION => run 1's snapshot) shows run 1's state" "1,gold,true
2,silver,true
3,gold,true
5,,true
6,,true" "$(lakeq "$d" "SELECT id, tier, is_current FROM lake.core.dim_customer AT (VERSION => $v1) ORDER BY id")"
check_eq "the current rows as of run 1, from the table at that version" "1,paris
2,rome
3,oslo
5,kyiv
6," "$(lakeq "$d" "SELECT id, city FROM lake.core.customer_city AT (VERSION => $v1) WHERE is_current ORDER BY id")"

# ---- run 4: a closed key comes back, an untracked change is ignored -------------------------
cat >"$d/data/customers.csv" <<'CSV'
id,name,city,tier
1,ann,paris,platinum
2,bob,milan,silver
3,cid,oslo,gold
4,daniel,lima,gold
5,eve,kyiv,gold
6,fay,,
CSV
run_ok "run 4" "$d" run core.dim_customer core.customer_city
check_eq "run 4: a key back from deletes=close opens a new version; a name change is not tracked" "1,ann,paris,1,,true
2,bob,rome,1,3,false
2,bob,milan,3,,true
3,cid,oslo,1,3,false
3,cid,oslo,4,,true
4,dan,lima,3,,true
5,eve,kyiv,1,,true
6,fay,,1,,true" "$(versions "$d" customer_city "id, name, city")"
check_eq "run 4: dim_customer versions the name change, leaves the still-current id 3 alone" "4,daniel,1" \
    "$(lakeq "$d" "SELECT id, name, (SELECT count(*) FROM lake.core.dim_customer WHERE id = 3) FROM lake.core.dim_customer_current WHERE id = 4")"

# ---- failures leave the lake as it was ------------------------------------------------------
dump=$(lake_dump "$d")
snaps=$(snapshots "$d")
printf '3,cid,bergen,gold\n7,gus,rome,gold\n7,gus,nice,gold\n' >>"$d/data/customers.csv"
run_rc "duplicate keys fail the build" 1 "$d" run core.dim_customer
contains "the error names the keys" "history key (id) is not unique in the SELECT: 2 keys appear more than once: id=3 (2 rows); id=7 (2 rows); nothing was written" "$ERR"
contains "the error names file and line" "models/core/dim_customer.sql:7:" "$ERR"
check_eq "no snapshot" "$snaps" "$(snapshots "$d")"
check_eq "the lake is unchanged" "$dump" "$(lake_dump "$d")"
check_eq "the failure is recorded" "failed" \
    "$(lakeq "$d" "SELECT status FROM $META.tarn_model_run ORDER BY run_id DESC LIMIT 1")"

cp "$FIXTURES/projects/scd/data/customers.csv" "$d/data/customers.csv"
cat >"$d/models/core/dim_customer.sql" <<'SQL'
-- materialize key=id history
SELECT id, name, city, tier, now() AS valid_from FROM raw.customers
SQL
run_rc "a SELECT with a column history adds" 1 "$d" run core.dim_customer
contains "it says which and what to do" "the SELECT has a column named valid_from, which history adds (valid_from, valid_to, is_current): rename it in the SELECT" "$ERR"
cat >"$d/models/core/dim_customer.sql" <<'SQL'
-- materialize key=id history
SELECT id, name, tier FROM raw.customers
SQL
run_rc "a SELECT whose columns changed" 1 "$d" run core.dim_customer
contains "it names both column lists" "the SELECT's columns (id, name, tier) differ from core.dim_customer's (id, name, city, tier; history adds valid_from, valid_to, is_current): history keeps the table's columns" "$ERR"
cat >"$d/models/core/dim_customer.sql" <<'SQL'
-- materialize key=id history track=nope
SELECT id, name, city, tier FROM raw.customers
SQL
run_rc "a track= column that is not selected is a load error" 2 "$d" run core.dim_customer
contains "it names the column" "models/core/dim_customer.sql:1: track column nope is not a column of the query (it returns id, name, city, tier)" "$ERR"
cat >"$d/models/core/dim_customer.sql" <<'SQL'
-- materialize key=id history track=nope
SELECT * FROM raw.customers
SQL
run_rc "behind a star it fails the build" 1 "$d" run core.dim_customer
contains "naming the column too" "track column nope is not a column of the SELECT" "$ERR"
check_eq "still no snapshot" "$snaps" "$(snapshots "$d")"
check_eq "still unchanged" "$dump" "$(lake_dump "$d")"

# ---- every snapshot's extra info is JSON and names its build --------------------------------
check_eq "every build's extra info parses as JSON" "0" \
    "$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE snapshot_id > 0 AND (commit_extra_info IS NULL OR NOT json_valid(commit_extra_info))")"
check_eq "and matches its commit message" "0" \
    "$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE snapshot_id > 0 AND commit_message <> 'tarn: build ' || (commit_extra_info::JSON->>'model') || ' (' || (commit_extra_info::JSON->>'strategy') || ')'")"

# ---- --json events carry the figures --------------------------------------------------------
cat >"$d/models/core/dim_customer.sql" <<'SQL'
-- materialize key=id history
SELECT id, name, city, tier FROM raw.customers
SQL
cat >"$d/data/customers.csv" <<'CSV'
id,name,city,tier
1,ann,paris,platinum
2,bob,milan,silver
3,cid,oslo,gold
4,daniel,lima,gold
5,eve,kyiv,gold
6,fay,york,
CSV
run_ok "run --json" "$d" run core.dim_customer --json
contains "model_finish has rows_opened/rows_closed" '"rows_opened":' "$(grep model_finish <<<"$OUT")"
check_eq "the figures" "1,1" \
    "$(grep model_finish <<<"$OUT" | python3 -c 'import json,sys; e=json.loads(sys.stdin.read()); print("%d,%d" % (e["rows_opened"], e["rows_closed"]))')"

finish

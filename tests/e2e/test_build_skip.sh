#!/usr/bin/env bash
# test_build_skip.sh — change detection end to end on tests/fixtures/projects/layers (two staging
# models over CSV sources, three marts over them, two config/ macros): a second run skips every
# model and makes no snapshot; a changed SQL reruns the model and its downstream (upstream
# changed: …) but not its siblings; whitespace and comments change nothing; a changed macro or
# source view reruns only the models that use it; a harmless SET reruns nothing, another SET every
# model; a changed source file reruns its readers; --force reruns all; a failed build is retried;
# a table dropped or written outside tarn is rebuilt; a non-deterministic model always runs;
# history models and readers of their current view; incremental models always run; run_reason in
# commit_extra_info, tarn_model_run, --json events, plan and history; a lake whose records predate
# run_reason still works.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

# reasons — "model:reason" per model event of the --json output in $OUT, in run order: the
# run_reason of a model that ran, "skipped/<reason>" of one that did not.
reasons() {
    printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["event"] != "model_finish":
        continue
    if o["status"] == "skipped":
        print(o["model"] + ":skipped/" + o["reason"])
    else:
        print(o["model"] + ":" + o["status"] + "/" + (o.get("run_reason") or "-"))'
}

# ran — the models of the last --json run that were built, sorted, space-separated.
ran() {
    reasons | grep -v ':skipped/' | cut -d: -f1 | sort | tr '\n' ' ' | sed 's/ $//'
}

d=$(project layers)
run_ok "first run" "$d" run --json
check_eq "every model runs for the first time" "staging.items:success/first run
staging.shops:success/first run
marts.item_count:success/first run
marts.price_list:success/first run
marts.shop_pairs:success/first run" "$(reasons | sort -t: -k1,1 -s | sort -s -t. -k1,1r)"
snap=$(snapshots "$d")
check_eq "one snapshot per model" "6" "$snap"

# Nothing changed: every model is skipped, no snapshot.
run_ok "second run" "$d" run --json
check_eq "no snapshot" "$snap" "$(snapshots "$d")"
check_eq "every model skipped as unchanged" "5" "$(reasons | grep -c ':skipped/unchanged$')"
check_eq "run_finish counts them" "0 0 0 5" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["event"] == "run_finish":
        print(o["succeeded"], o["failed"], o["skipped"], o["unchanged"])')"
run_ok "second run, human output" "$d" run
contains "the summary counts the unchanged models" "0 succeeded, 0 failed, 0 skipped, 5 unchanged" "$ERR"
contains "each unchanged model is listed" "unchanged marts.price_list                 replace" "$ERR"
check_eq "tarn_run counts them" "0,0,5" \
    "$(lakeq "$d" "SELECT models_succeeded, models_skipped, models_unchanged FROM __ducklake_metadata_lake.tarn_run ORDER BY run_id DESC LIMIT 1")"
run_ok "plan" "$d" plan
contains "plan: nothing would run" "5 models selected, in order (0 would run, 5 would skip):" "$OUT"
check_eq "plan: every model would skip" "5" "$(printf '%s\n' "$OUT" | grep -c 'would skip: unchanged')"

# A changed SQL: the model and its downstream run, its sibling and the other branch do not.
cat >"$d/models/staging/items.sql" <<'SQL'
-- Items in cents.
SELECT id, upper(name) AS name, cents(price) AS price_cents
FROM raw.items
SQL
run_ok "plan after a SQL change" "$d" plan --json
check_eq "plan says what would run and why" "staging.items:sql changed
staging.shops:unchanged
marts.item_count:upstream changed: staging.items
marts.price_list:upstream changed: staging.items
marts.shop_pairs:unchanged" "$(printf '%s' "$OUT" | python3 -c '
import json, sys
for m in json.load(sys.stdin)["models"]:
    print(m["model"] + ":" + m["reason"])' | sort -s -t. -k1,1r)"
run_ok "run after a SQL change" "$d" run --json
check_eq "reasons" "staging.items:success/sql changed
marts.item_count:success/upstream changed: staging.items
marts.price_list:success/upstream changed: staging.items" "$(reasons | grep -v skipped/)"
check_eq "three snapshots" "$((snap + 3))" "$(snapshots "$d")"
check_eq "run_reason in the commit's extra info" "upstream changed: staging.items,64" \
    "$(lakeq "$d" "SELECT j->>'run_reason', length(j->>'config_hash') FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') WHERE commit_message = 'tarn: build marts.price_list (replace)' ORDER BY snapshot_id DESC LIMIT 1)")"
check_eq "upstream versions in the extra info" "staging.items,true" \
    "$(lakeq "$d" "SELECT j->'upstream'->0->>'table', (j->'upstream'->0->>'version')::BIGINT = (j->'upstream'->0->>'snapshot_id')::BIGINT FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') WHERE commit_message = 'tarn: build marts.item_count (replace)' ORDER BY snapshot_id DESC LIMIT 1)")"
check_eq "run_reason in tarn_model_run" "marts.item_count,success,upstream changed: staging.items
marts.price_list,success,upstream changed: staging.items
marts.shop_pairs,skipped,
staging.items,success,sql changed
staging.shops,skipped," \
    "$(lakeq "$d" "SELECT model, status, run_reason FROM __ducklake_metadata_lake.tarn_model_run WHERE run_id = (SELECT max(run_id) FROM __ducklake_metadata_lake.tarn_run) ORDER BY model")"

# Whitespace and comments are not changes.
cat >"$d/models/marts/shop_pairs.sql" <<'SQL'
-- Two of every shop (reformatted).
SELECT   shop,
         doubled(1) AS copies   -- a comment
FROM staging.shops
SQL
run_ok "run after a reformatting" "$d" run --json
check_eq "nothing ran" "" "$(ran)"

# A changed macro reruns only the model that calls it.
sed -i 's/AS x \* 2;/AS x + x;/' "$d/config/macros.sql"
run_ok "run after a macro change" "$d" run --json
check_eq "only its caller ran" "marts.shop_pairs:success/config changed" "$(reasons | grep -v skipped/)"

# A changed source view reruns its reader; the readers of that model follow as upstream changes.
sed -i "s/columns = {'shop': 'VARCHAR', 'city': 'VARCHAR'});/columns = {'shop': 'VARCHAR', 'city': 'VARCHAR'}) WHERE true;/" \
    "$d/config/sources.sql"
run_ok "run after a source view change" "$d" run --json
check_eq "its reader and their downstream ran" "staging.shops:success/config changed
marts.price_list:success/upstream changed: staging.shops
marts.shop_pairs:success/upstream changed: staging.shops" "$(reasons | grep -v skipped/)"

# Settings: one that cannot change results reruns nothing; any other, every model.
sed -i 's/threads = 2/threads = 1/' "$d/config/settings.sql"
run_ok "run after a harmless setting change" "$d" run --json
check_eq "nothing ran" "" "$(ran)"
echo "SET TimeZone = 'UTC';" >>"$d/config/settings.sql"
run_ok "run after another setting change" "$d" run --json
check_eq "every model ran" "5" "$(reasons | grep -c 'success/config changed$')"

# A changed source file reruns the model that reads it (and its downstream).
echo "east,bern" >>"$d/data/shops.csv"
run_ok "run after a source file change" "$d" run --json
check_eq "its reader and downstream ran" "staging.shops:success/source file changed: data/shops.csv
marts.price_list:success/upstream changed: staging.shops
marts.shop_pairs:success/upstream changed: staging.shops" "$(reasons | grep -v skipped/)"
check_eq "the new row is there" "3" "$(lakeq "$d" "SELECT count(*) FROM lake.marts.shop_pairs")"

# --force reruns everything.
run_ok "forced run" "$d" run --force --json
check_eq "every model forced" "5" "$(reasons | grep -c 'success/forced$')"

# A failed build is not a build: the next run retries it; restoring the SQL of its last
# successful build leaves nothing to do (the table is that build's).
cp "$d/models/marts/item_count.sql" "$d/item_count.sql.good"
cat >"$d/models/marts/item_count.sql" <<'SQL'
SELECT count(*) AS n, CAST(min(name) AS INTEGER) AS broken FROM staging.items
SQL
run_rc "a failing model" 1 "$d" run --json
run_rc "the next run retries it" 1 "$d" run --json
check_eq "retried with its reason" "marts.item_count:failed/sql changed" "$(reasons | grep -v skipped/)"
cp "$d/item_count.sql.good" "$d/models/marts/item_count.sql"
run_ok "the SQL of its last success restored" "$d" run --json
check_eq "nothing to do" "" "$(ran)"

# A table dropped, or written, outside tarn is rebuilt.
lakeq "$d" "DROP TABLE lake.marts.shop_pairs" >/dev/null
run_ok "run after a DROP TABLE" "$d" run --json
check_eq "the dropped table is rebuilt" "marts.shop_pairs:success/table missing" "$(reasons | grep -v skipped/)"
lakeq "$d" "INSERT INTO lake.staging.items VALUES (9, 'extra', 1)" >/dev/null
run_ok "run after an outside INSERT" "$d" run --json
check_eq "the table is rebuilt, its downstream follows" "staging.items:success/table changed outside tarn
marts.item_count:success/upstream changed: staging.items
marts.price_list:success/upstream changed: staging.items" "$(reasons | grep -v skipped/)"
check_eq "the outside row is gone" "3" "$(lakeq "$d" "SELECT count(*) FROM lake.staging.items")"

# A model calling a non-deterministic function always runs.
echo "SELECT now() AS at" >"$d/models/marts/stamp.sql"
run_ok "run with a now() model" "$d" run marts.stamp --json
run_ok "again" "$d" run marts.stamp --json
check_eq "it runs again" "marts.stamp:success/non-deterministic: now" "$(reasons)"

# history shows the reason; skipped-as-unchanged rows only with --all.
run_ok "history" "$d" history marts.stamp --format csv
check_eq "history reason column" "time,run_id,model,status,snapshot,rows,ms,partitions,reason,tests,message" \
    "$(printf '%s\n' "$OUT" | head -1)"
contains "history shows the reason" ",marts.stamp,success," "$OUT"
contains "history shows the reason" ",non-deterministic: now," "$OUT"
run_ok "history of an unchanged model" "$d" history staging.shops --format csv
check_eq "no unchanged rows by default" "0" "$(printf '%s\n' "$OUT" | grep -c ',unchanged$')"
run_ok "history --all" "$d" history staging.shops --all --format csv
contains "unchanged rows with --all" ",staging.shops,skipped," "$OUT"

# Partitioned models: the current slice (or the requested ones) is always rebuilt.
e=$(project events)
run_ok "partitioned run" "$e" run facts.events_daily --partition 2024-05-01 --json
run_ok "partitioned run again" "$e" run facts.events_daily --partition 2024-05-01 --json
check_eq "partition requested" "facts.events_daily:success/partition requested" "$(reasons)"
run_ok "current slice" "$e" run facts.events_daily --json
check_eq "current partition" "facts.events_daily:success/current partition" "$(reasons)"

# History models are skipped like any other; a model reading <table>_current follows the history
# table's version. Incremental models always run (their watermark decides what is new).
h=$(project scd)
run_ok "history project" "$h" run
run_ok "history project again" "$h" run --json
check_eq "all unchanged" "3" "$(reasons | grep -c ':skipped/unchanged$')"
sed -i 's/^2,bob,rome,silver$/2,bob,rome,gold/' "$h/data/customers.csv"
run_ok "history project after a source change" "$h" run core.dim_customer+ --json
check_eq "the history model and the reader of its current view ran" "core.dim_customer:success/source file changed: data/customers.csv
marts.customers_by_tier:success/upstream changed: core.dim_customer" "$(reasons)"
f=$(project feed)
run_ok "incremental project" "$f" run
run_ok "incremental project again" "$f" run --json
check_eq "incremental models always run" "2" "$(reasons | grep -c ':success/incremental$')"

# A lake whose records were written by a tarn without change detection: the columns are added,
# every model runs once ("no change record"), then skips.
o=$(project layers)
run_ok "build" "$o" run
lakeq "$o" "ALTER TABLE __ducklake_metadata_lake.tarn_model_run DROP COLUMN run_reason; ALTER TABLE __ducklake_metadata_lake.tarn_model_run DROP COLUMN config_hash; ALTER TABLE __ducklake_metadata_lake.tarn_model_run DROP COLUMN target_version; ALTER TABLE __ducklake_metadata_lake.tarn_model_run DROP COLUMN source_files; ALTER TABLE __ducklake_metadata_lake.tarn_run DROP COLUMN models_unchanged" >/dev/null
check_eq "the old layout" "0" "$(lakeq "$o" "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'tarn_model_run' AND column_name = 'run_reason'")"
run_ok "plan on the old layout" "$o" plan
contains "plan reads it" "would run: no change record" "$OUT"
run_ok "history on the old layout" "$o" history --format csv
run_ok "run on the old layout" "$o" run --json
check_eq "every model runs once" "5" "$(reasons | grep -c 'success/no change record$')"
run_ok "then skips" "$o" run --json
check_eq "nothing ran" "" "$(ran)"

finish

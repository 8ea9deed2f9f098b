#!/usr/bin/env bash
# test_build_changed_model.sh — a changed model leaves no stale history: when a model's SQL (or a
# write-affecting annotation) changes, an incremental model rebuilds from scratch and a
# partitioned one rebuilds every slice it has built — each slice its own snapshot, resumable after
# a crash — with run reason `sql changed (full rebuild)`, and `tarn plan` shows the cost; a dynamic
# model's slices the new SQL no longer yields are emptied; an append model keeps appending with
# the new SQL and says so, and `--full-refresh` replaces its table with the query's current rows.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

META=__ducklake_metadata_lake

# ---- partitioned: every slice built is rebuilt ----------------------------------------------------
d=$(project events)
run_ok "build three days" "$d" run facts.events_daily --from 2024-05-01 --to 2024-05-03
today=$(date -u +%Y-%m-%d)
sed -i 's/^SELECT id, ts, region, amount$/SELECT id, ts, region, amount * 10 AS amount/' \
    "$d/models/facts/events_daily.sql"
run_ok "plan" "$d" plan facts.events_daily
contains "plan shows the cost" "would run: sql changed (full rebuild): would rebuild 3 slices" "$OUT"
snaps=$(snapshots "$d")
run_ok "the changed model runs" "$d" run facts.events_daily
contains "the reason says so" "(sql changed (full rebuild))" "$ERR"
check_eq "every slice has the new SQL's rows" "1,100
2,200
3,300
4,400
5,500" "$(lakeq "$d" "SELECT id, amount FROM lake.facts.events_daily ORDER BY id")"
check_eq "each slice is a snapshot of its own (today's is empty: none)" "$((snaps + 3))" "$(snapshots "$d")"
check_eq "each recorded as a build with the reason" "2024-05-01
2024-05-02
2024-05-03
$today" "$(lakeq "$d" "SELECT partitions::JSON->>0 FROM $META.tarn_model_run WHERE model = 'facts.events_daily' AND run_reason = 'sql changed (full rebuild)' ORDER BY 1")"
run_ok "plan afterwards" "$d" plan facts.events_daily
contains "the next run builds only the current slice" "would run: current partition" "$OUT"

# Resumable: a run that dies after its first slice leaves the others to the next run.
sed -i 's/amount \* 10 AS amount/amount * 100 AS amount/' "$d/models/facts/events_daily.sql"
TARN_CRASH_AT=after-commit "$TARN" run facts.events_daily -C "$d" >/dev/null 2>&1
check_eq "the crashed run rebuilt the first slice" "1000,2000,300,400,500" \
    "$(lakeq "$d" "SELECT string_agg(CAST(amount AS VARCHAR), ',' ORDER BY id) FROM lake.facts.events_daily" | tr -d '"')"
first=$(lakeq "$d" "SELECT snapshot_id FROM $META.tarn_partition WHERE model = 'facts.events_daily' AND \"partition\" = '2024-05-01'")
run_ok "plan after the crash" "$d" plan facts.events_daily
contains "three slices are left (two days and today)" "would rebuild 3 slices" "$OUT"
run_ok "the next run resumes" "$d" run facts.events_daily
check_eq "every slice has the newest SQL's rows" "1000,2000,3000,4000,5000" \
    "$(lakeq "$d" "SELECT string_agg(CAST(amount AS VARCHAR), ',' ORDER BY id) FROM lake.facts.events_daily" | tr -d '"')"
check_eq "the slice rebuilt before the crash was not rebuilt again" "$first" \
    "$(lakeq "$d" "SELECT snapshot_id FROM $META.tarn_partition WHERE model = 'facts.events_daily' AND \"partition\" = '2024-05-01'")"

# A dynamic model: the slices the new SQL no longer yields are rebuilt too, as empty.
run_ok "dynamic slices" "$d" run facts.by_region
sed -i 's/^FROM raw.events$/FROM raw.events WHERE region <> '"'apac'"'/' "$d/models/facts/by_region.sql"
run_ok "the changed dynamic model" "$d" run facts.by_region
check_eq "no stale apac slice" "eu
us" "$(lakeq "$d" "SELECT region FROM lake.facts.by_region ORDER BY 1")"

# ---- incremental: rebuilt from scratch ------------------------------------------------------------
t=$(project trust)
run_ok "incremental: first run" "$t" run core.order_feed
cat >>"$t/data/orders.csv" <<'EOF'
4,2024-05-03 10:00:00,open,40
EOF
run_ok "incremental: new rows" "$t" run core.order_feed
sed -i 's/^SELECT id, ts, amount FROM raw.orders$/SELECT id, ts, amount * 2 AS amount FROM raw.orders/' \
    "$t/models/core/order_feed.sql"
run_ok "incremental: plan" "$t" plan core.order_feed
contains "plan: a full rebuild" "would run: sql changed (full rebuild): would rebuild the table from scratch" "$OUT"
run_ok "incremental: the changed model" "$t" run core.order_feed --json
contains "its reason" '"run_reason":"sql changed (full rebuild)"' "$OUT"
check_eq "every row has the new SQL's values" "1,20
2,40
3,60
4,80" "$(lakeq "$t" "SELECT id, amount FROM lake.core.order_feed ORDER BY id")"
run_ok "incremental: then incremental again" "$t" run core.order_feed
contains "reason incremental" "(incremental)" "$ERR"

# ---- append: keeps appending, and says so; --full-refresh replaces ----------------------------------
run_ok "append: first run" "$t" run core.order_log
sed -i 's/^SELECT id, status, amount FROM raw.orders$/SELECT id, upper(status) AS status, amount FROM raw.orders/' \
    "$t/models/core/order_log.sql"
run_ok "append: the changed model" "$t" run core.order_log
contains "it says it appends with the new SQL" \
    "sql changed (appending with the new SQL; the rows appended before stay)" "$ERR"
check_eq "both the old and the new rows" "open,3
OPEN,3
paid,1
PAID,1" "$(lakeq "$t" "SELECT status, count(*) FROM lake.core.order_log GROUP BY 1 ORDER BY lower(status), status DESC")"
run_ok "append --full-refresh" "$t" run core.order_log --full-refresh
check_eq "the table is the query's current rows" "1,OPEN
2,OPEN
3,PAID
4,OPEN" "$(lakeq "$t" "SELECT id, status FROM lake.core.order_log ORDER BY id")"

# ---- a lake whose catalog tables live in a METADATA_SCHEMA ---------------------------------------
# Change detection reads the tables' versions from the catalog wherever its tables are.
m=$(project basic)
echo "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/', METADATA_SCHEMA 'dl');" \
    >"$m/config/catalog.sql"
run_ok "METADATA_SCHEMA: the first run" "$m" run
run_ok "METADATA_SCHEMA: the second run" "$m" run
contains "METADATA_SCHEMA: nothing changed, nothing rebuilt" "0 succeeded, 0 failed, 0 skipped, 3 unchanged" "$ERR"
(cd "$m" && "$TARN" sql -c "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/', METADATA_SCHEMA 'dl'); INSERT INTO lake.staging.items VALUES (99, 'late', 1.00)" >/dev/null 2>&1)
run_ok "METADATA_SCHEMA: the run after a write to an upstream table" "$m" run
contains "METADATA_SCHEMA: the written table is rebuilt" "(table changed outside tarn)" "$ERR"
contains "METADATA_SCHEMA: and the models reading it" "(upstream changed: staging.items)" "$ERR"

finish

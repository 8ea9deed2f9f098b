#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# test_build_strategy_change.sh — a change of strategy on a table that has rows is refused when it
# would lose or duplicate some (tests/fixtures/projects/trust and scd): a removed merge annotation
# (merge → replace), a removed history annotation (history → replace), a changed key=, append and
# incremental → replace. Each fails that model before writing, naming what would be lost and the
# remedy, leaves the lake as it was, and `tarn plan` says `would fail: strategy changed (…)`;
# `--full-refresh` then rebuilds the table on purpose. Changes that lose nothing just work:
# replace → merge, replace → partitioned on an existing table (its rows are kept, each in its
# slice), a new partition grain on an empty table.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

META=__ducklake_metadata_lake

# refused NAME DIR MODEL MESSAGE — `tarn run MODEL` fails (exit 1) saying MESSAGE and the
# remedy, with no snapshot written and every table as it was.
refused() {
    local name=$1 dir=$2 model=$3 msg=$4 snaps dump
    snaps=$(snapshots "$dir")
    dump=$(lake_dump "$dir")
    run_rc "$name: the run fails" 1 "$dir" run "$model"
    contains "$name: says what would be lost" "$msg" "$ERR"
    contains "$name: names the remedy" "tarn run --full-refresh $model" "$ERR"
    check_eq "$name: no snapshot" "$snaps" "$(snapshots "$dir")"
    check_eq "$name: the tables are as they were" "$dump" "$(lake_dump "$dir")"
}

d=$(project trust)
run_ok "first run" "$d" run
# a second extract: order 1 is gone, 4 is new, 2 changed
cat >"$d/data/orders.csv" <<'EOF'
id,ts,status,amount
2,2024-05-01 12:00:00,paid,20
3,2024-05-02 09:00:00,paid,30
4,2024-05-03 10:00:00,open,40
EOF
run_ok "second run" "$d" run
check_eq "the merge kept order 1" "1,open
2,paid
3,paid
4,open" "$(lakeq "$d" "SELECT id, status FROM lake.core.orders ORDER BY id")"
check_eq "strategy_spec is recorded" "core.order_days,replace
core.order_feed,incremental
core.order_log,append
core.orders,merge key=id" \
    "$(lakeq "$d" "SELECT DISTINCT model, strategy_spec FROM $META.tarn_model_run ORDER BY 1")"

# ---- a mistyped annotation (not a line comment: the model is a plain replace) -------------------
cp "$d/models/core/orders.sql" "$d/orders.sql"
sed -i 's|^-- materialize key=id$|/* materialize key=id */|' "$d/models/core/orders.sql"
refused "a mistyped annotation" "$d" core.orders "core.orders: merge → replace would replace 4 rows by 3 rows"
# key=ID is the same key: column names are case-insensitive
sed -i 's|^/\* materialize key=id \*/$|-- materialize key=ID|' "$d/models/core/orders.sql"
run_ok "key=ID: plan" "$d" plan core.orders
contains "key=ID is no change of strategy" "would run: sql changed" "$OUT"
cp "$d/orders.sql" "$d/models/core/orders.sql"

# ---- merge → replace: the annotation removed --------------------------------------------------
sed -i '/^-- materialize key=id$/d' "$d/models/core/orders.sql"
run_ok "plan" "$d" plan
contains "plan: would fail" "would fail: strategy changed (merge → replace)" "$OUT"
contains "plan counts it" "4 models selected, in order (1 would run, 1 would fail, 2 would skip):" "$OUT"
refused "merge → replace" "$d" core.orders \
    "models/core/orders.sql:1: core.orders: merge → replace would replace 4 rows by 3 rows; nothing was written"
run_ok "plan --full-refresh" "$d" plan core.orders --full-refresh
contains "plan --full-refresh: would run" "would run: forced" "$OUT"
run_ok "--full-refresh rebuilds it on purpose" "$d" run core.orders --full-refresh
check_eq "the table is the query's rows" "2,paid
3,paid
4,open" "$(lakeq "$d" "SELECT id, status FROM lake.core.orders ORDER BY id")"
run_ok "then it runs as a replace" "$d" run core.orders --force

# ---- replace → merge loses nothing --------------------------------------------------------------
sed -i '1i -- materialize key=id' "$d/models/core/orders.sql"
run_ok "replace → merge just works" "$d" run core.orders
contains "its reason says so" "strategy changed (replace → merge)" "$ERR"

# ---- a changed key= --------------------------------------------------------------------------------
sed -i 's/^-- materialize key=id$/-- materialize key=status/' "$d/models/core/orders.sql"
run_ok "plan" "$d" plan core.orders
contains "plan: would fail" "would fail: strategy changed (merge key=id → merge key=status)" "$OUT"
refused "key=id → key=status" "$d" core.orders \
    "core.orders: merge key=id → merge key=status would match its 3 rows by (status) instead of by (id)"

# ---- append → replace, incremental → replace ------------------------------------------------------
check_eq "the append table has both extracts" "6" "$(lakeq "$d" "SELECT count(*) FROM lake.core.order_log")"
sed -i '/^-- materialize append$/d' "$d/models/core/order_log.sql"
refused "append → replace" "$d" core.order_log "core.order_log: append → replace would replace 6 rows by 3 rows"
sed -i 's/^-- materialize incremental watermark=ts$/-- the watermark annotation removed/' "$d/models/core/order_feed.sql"
refused "incremental → replace" "$d" core.order_feed \
    "core.order_feed: incremental → replace would replace 4 rows by 3 rows"
run_ok "plan" "$d" plan
contains "plan: append would fail" "would fail: strategy changed (append → replace)" "$OUT"
contains "plan: incremental would fail" "would fail: strategy changed (incremental → replace)" "$OUT"

# ---- replace → partitioned on an existing table: every row kept in its slice ------------------------
cat >"$d/models/core/order_days.sql" <<'EOF'
-- partitioned daily column=ts
SELECT id, ts, amount FROM raw.orders WHERE tarn_partition(ts) = {partition}
EOF
run_ok "an unpartitioned table becomes partitioned" "$d" run core.order_days --partition 2024-05-03
check_eq "its rows are kept, each in its slice" "2,2024-05-01
3,2024-05-02
4,2024-05-03" "$(lakeq "$d" "SELECT id, _tarn_partition FROM lake.core.order_days ORDER BY id")"
check_eq "and DuckLake lays it out by slice" "true" \
    "$(lakeq "$d" "SELECT commit_extra_info::JSON->>'physical_partitioning' FROM ducklake_snapshots('lake') ORDER BY snapshot_id DESC LIMIT 1")"

# ---- a new grain: refused on a table with rows, fine on an empty one -------------------------------
sed -i 's/^-- partitioned daily column=ts$/-- partitioned monthly column=ts/' "$d/models/core/order_days.sql"
refused "daily → monthly" "$d" core.order_days \
    "core.order_days: partitioned daily column=ts → partitioned monthly column=ts would cut its 3 rows into slices monthly by ts while they sit in slices daily by ts"
lakeq "$d" "DELETE FROM lake.core.order_days" >/dev/null
run_ok "a new grain on an empty table just works" "$d" run core.order_days --partition 2024-05
check_eq "monthly slices" "2,2024-05
3,2024-05
4,2024-05" "$(lakeq "$d" "SELECT id, _tarn_partition FROM lake.core.order_days ORDER BY id")"

# ---- history → replace (tests/fixtures/projects/scd) ------------------------------------------------
s=$(project scd)
run_ok "scd: first run" "$s" run
sed -i 's/^2,bob,rome,silver$/2,bob,milan,silver/' "$s/data/customers.csv"
run_ok "scd: a move makes a version" "$s" run
check_eq "six versions of five customers" "6,5" \
    "$(lakeq "$s" "SELECT count(*), count(*) FILTER (WHERE is_current) FROM lake.core.dim_customer")"
# the history annotation (and the data tests on the _current view) removed
sed -i '/^-- materialize key=id history$/d; /^-- data_test/d' "$s/models/core/dim_customer.sql"
run_ok "scd: plan" "$s" plan core.dim_customer
contains "scd plan: would fail" "would fail: strategy changed (history → replace)" "$OUT"
refused "history → replace" "$s" core.dim_customer \
    "core.dim_customer: history → replace would replace 6 versions by 5 rows; nothing was written"
contains "history → replace: says how it was built" "The table was built as history key=id" "$ERR"
check_eq "the _current view is still there" "1" \
    "$(lakeq "$s" "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'lake' AND table_name = 'dim_customer_current'")"
sed -i 's/^-- Every version/-- materialize key=id\n-- Every version/' "$s/models/core/dim_customer.sql"
refused "history → merge" "$s" core.dim_customer \
    "core.dim_customer: history → merge would drop valid_from, valid_to and is_current from its 6 versions (1 of them closed)"
run_ok "history → merge with --full-refresh" "$s" run core.dim_customer --full-refresh
check_eq "the table is the query's rows, without the history columns" "id,name,city,tier" \
    "$(lakeq "$s" "SELECT string_agg(column_name, ',' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_catalog = 'lake' AND table_name = 'dim_customer'" | tr -d '"')"
check_eq "and its _current view is gone" "0" \
    "$(lakeq "$s" "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'lake' AND table_name = 'dim_customer_current'")"

# ---- more changes that lose nothing ---------------------------------------------------------------
l=$(project trust)
run_ok "lossless: first run" "$l" run
sed -i 's/^-- A plain table first.*$/-- materialize key=id history/' "$l/models/core/order_days.sql"
sed -i 's/^-- materialize key=id$/-- materialize incremental watermark=ts key=id/' "$l/models/core/orders.sql"
sed -i 's/^-- materialize append$/-- materialize incremental watermark=id/' "$l/models/core/order_log.sql"
run_ok "replace → history, merge → incremental by the same key, append → incremental" "$l" run
contains "each says its strategy changed" "(strategy changed (merge → incremental))" "$ERR"
check_eq "the replace table became a history table of its rows" "3,3" \
    "$(lakeq "$l" "SELECT count(*), count(*) FILTER (WHERE is_current AND valid_to IS NULL) FROM lake.core.order_days")"
check_eq "the merge and append tables kept their rows" "3,3" \
    "$(lakeq "$l" "SELECT (SELECT count(*) FROM lake.core.orders), (SELECT count(*) FROM lake.core.order_log)")"

finish

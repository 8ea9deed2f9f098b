#!/usr/bin/env bash
# tests/e2e/test_cli_compile.sh — `tarn compile MODEL|SELECTOR…`: the SQL tarn would run to build
# a model now (dbt compile, SQLMesh render). Before the first build it prints a first build and
# creates no lake; after, the reads are pinned AT (VERSION => n) to the lake's snapshot and the
# strategy's statements are the later build's. Running the printed SQL by hand on one copy of a
# project builds the same table as `tarn run` on another (replace and merge); selectors pick and
# order the models; an unknown model is an error naming the closest; compile writes nothing;
# partitioned (a transaction per slice), history and incremental models print their statements.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project tested)
run_ok "tarn compile before the first build" "$d" compile core.orders
contains "… prints a first build" "its table does not exist yet: a first build" "$OUT"
contains "… of the merge from its stage" 'CREATE OR REPLACE TABLE "lake"."core"."orders" AS SELECT * FROM temp.main._tarn_stage' "$OUT"
[ ! -e "$d/lake.ducklake" ] && ok "… and creates no lake" || fail "… and creates no lake" "$(ls "$d")"
left=$(find /tmp -maxdepth 1 -name 'tarn-compile-*' -newer "$d/models" 2>/dev/null | head -1)
[ -z "$left" ] && ok "… nor leaves its stand-in lake behind" || fail "… nor leaves its stand-in lake behind" "$left"

run_ok "run 1 builds the project" "$d" run
snap=$(snapshots "$d")
runs=$(lakeq "$d" "SELECT count(*) FROM __ducklake_metadata_lake.main.tarn_run")
run_ok "tarn compile a replace model" "$d" compile core.order_totals
contains "… its read pinned to the lake's snapshot" '"lake"."core"."orders" AT (VERSION => 3)' "$OUT"
contains "… in the strategy's statement" 'CREATE OR REPLACE TABLE "lake"."core"."order_totals" AS' "$OUT"
contains "… inside the build's transaction" "BEGIN;" "$OUT"
run_ok "tarn compile a merge model" "$d" compile core.orders
contains "… shows the changed keys" "CREATE OR REPLACE TEMP TABLE _tarn_keys" "$OUT"
contains "… the delete of their rows" 'DELETE FROM "lake"."core"."orders" AS t WHERE EXISTS' "$OUT"
contains "… and its data tests' queries" "-- data test relationships customer_id -> core.customers.id (models/core/orders.sql:3)" "$OUT"
check_eq "compile wrote no snapshot" "$snap" "$(snapshots "$d")"
check_eq "… and recorded no run" "$runs" "$(lakeq "$d" "SELECT count(*) FROM __ducklake_metadata_lake.main.tarn_run")"

# the printed SQL, run by hand, builds what tarn run builds
printf 'order_id,customer_id,amount\n10,1,5\n11,2,8\n13,1,4\n' >"$d/data/orders.csv"
e=$(mktempdir)
cp -r "$d/." "$e/"
run_ok "compile the merge after its source changed" "$e" compile core.orders
merge_sql=$OUT
by_hand() { # by_hand DIR SQL — runs config/sources.sql and SQL on DIR's lake with tarn sql
    (cd "$1" && "$TARN" sql -c "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/'); $(cat config/sources.sql) $2" >/dev/null 2>"$_E2E_TMP/by_hand.err")
}
by_hand "$e" "$merge_sql" && ok "the compiled merge runs as written" || fail "the compiled merge runs as written" "$(cat "$_E2E_TMP/by_hand.err")"
run_ok "tarn run builds the merge on the other copy" "$d" run core.orders
check_eq "… the same rows" "$(lakeq "$d" "FROM lake.core.orders ORDER BY ALL")" "$(lakeq "$e" "FROM lake.core.orders ORDER BY ALL")"
run_ok "compile the replace downstream of it" "$e" compile core.order_totals
contains "… reading the merge's new snapshot" "AT (VERSION => $(lakeq "$e" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')"))" "$OUT"
by_hand "$e" "$OUT" && ok "the compiled replace runs as written" || fail "the compiled replace runs as written" "$(cat "$_E2E_TMP/by_hand.err")"
run_ok "tarn run builds the replace on the other copy" "$d" run core.order_totals
check_eq "… the same rows" "$(lakeq "$d" "FROM lake.core.order_totals ORDER BY ALL")" "$(lakeq "$e" "FROM lake.core.order_totals ORDER BY ALL")"

# selectors, and errors
run_ok "compile takes dbt's selectors" "$d" compile +core.order_totals
check_eq "… printing each model in build order" \
    "-- tarn compile core.customers (replace): models/core/customers.sql|-- tarn compile core.orders (merge): models/core/orders.sql|-- tarn compile core.order_totals (replace): models/core/order_totals.sql" \
    "$(grep '^-- tarn compile' <<<"$OUT" | paste -sd'|')"
run_ok "… and --exclude" "$d" compile -s 'core.*' --exclude core.orders
check_eq "… leaving the excluded out" "core.customers|core.order_totals" \
    "$(grep '^-- tarn compile' <<<"$OUT" | awk '{print $4}' | paste -sd'|')"
run_rc "an unknown model is a usage error" 2 "$d" compile core.oders
contains "… naming the closest" "did you mean core.orders?" "$ERR"
run_rc "no model is a usage error" 2 "$d" compile
contains "… saying what is wanted" "which model?" "$ERR"

# errors name the user's file and line
b=$(project tested)
run_ok "another copy builds" "$b" run
printf -- '-- materialize key=order_id\nSELECT order_id, customer_id, amount_typo FROM raw.orders\n' >"$b/models/core/orders.sql"
run_rc "a model whose SQL does not bind" 2 "$b" compile core.orders
contains "… names its file and line" "models/core/orders.sql:2: Binder Error" "$ERR"
printf -- 'SELECT * FROM raw.nothere\n' >"$b/models/core/order_totals.sql"
run_rc "a model reading a table that does not exist" 2 "$b" compile core.order_totals
contains "… names it, with the fix" "models/core/order_totals.sql:1: table raw.nothere does not exist" "$ERR"

# the other strategies
p=$(project events)
run_ok "compile a partitioned model's slices" "$p" compile facts.events_daily --from 2024-06-01 --to 2024-06-02
check_eq "… each slice its own transaction" "2 2" \
    "$(grep -c '^BEGIN;' <<<"$OUT") $(grep -c '^COMMIT;' <<<"$OUT")"
contains "… its slice's rows replaced" "DELETE FROM \"lake\".\"facts\".\"events_daily\" WHERE \"_tarn_partition\" IN ('2024-06-02')" "$OUT"
contains "… {partition} as the slice" "WHERE tarn_partition(ts) = '2024-06-01'" "$OUT"
h=$(project scd)
run_ok "the scd project builds" "$h" run
run_ok "compile a history model" "$h" compile core.dim_customer
contains "… closing the changed keys' versions" 'UPDATE "lake"."core"."dim_customer" AS t SET "valid_to" = TIMESTAMP' "$OUT"
contains "… and opening their new ones" "FROM temp.main._tarn_stage AS s WHERE EXISTS (SELECT 1 FROM temp.main._tarn_keys AS k WHERE k._tarn_open" "$OUT"
f=$(project feed)
run_ok "the feed project builds" "$f" run
run_ok "compile an incremental model" "$f" compile facts.events_log
mark=$(lakeq "$f" "SELECT max(ts) FROM lake.facts.events_log")
contains "… {watermark} as the table's mark" "CAST('$mark' AS TIMESTAMP)" "$OUT"
contains "… the range it reads, up to the frontier" "WHERE \"ts\" >= CAST('$mark' AS TIMESTAMP) AND \"ts\" < CAST(" "$OUT"
contains "… replaced in the table" "DELETE FROM \"lake\".\"facts\".\"events_log\" WHERE \"ts\" >= CAST('$mark' AS TIMESTAMP)" "$OUT"
finish

#!/usr/bin/env bash
# test_build_empty_result.sh — an empty SELECT meeting a table that has rows: a replace build (which
# would empty it, and the models downstream), a `history … deletes=close` build (which would close
# every current version) and a merge build fail naming the count, writing nothing, unless the
# model says `allow_empty` or the run `--allow-empty`; a history build that keeps missing keys is
# not concerned. Also: an append model whose query calls
# now(), random(), current_date … is warned about by `tarn plan` and the run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project scd)
run_ok "first run" "$d" run
cp "$d/data/customers.csv" "$d/customers.full"
head -n 1 "$d/customers.full" >"$d/data/customers.csv" # the source file gone empty
snaps=$(snapshots "$d")
dump=$(lake_dump "$d")
run_rc "an empty source fails the deletes=close model" 1 "$d" run
contains "it names the count it would close" \
    "the SELECT returned no rows and deletes=close would close all 5 current versions; nothing was written" "$ERR"
contains "and the remedy" "add allow_empty to the materialize line, or run with --allow-empty" "$ERR"
contains "the model that keeps missing keys builds" "ok        core.dim_customer" "$ERR"
check_eq "no version was closed" "5" \
    "$(lakeq "$d" "SELECT count(*) FROM lake.core.customer_city WHERE is_current")"
check_eq "no snapshot (the other history model changed nothing)" "$snaps" "$(snapshots "$d")"
check_eq "the tables are as they were" "$dump" "$(lake_dump "$d")"

run_ok "--allow-empty lets it close them" "$d" run core.customer_city --allow-empty
check_eq "every version closed" "0,5" \
    "$(lakeq "$d" "SELECT count(*) FILTER (WHERE is_current), count(*) FROM lake.core.customer_city")"
cp "$d/customers.full" "$d/data/customers.csv"
run_ok "the customers come back" "$d" run core.customer_city
head -n 1 "$d/customers.full" >"$d/data/customers.csv"
sed -i 's/^-- materialize key=id history track=city deletes=close$/& allow_empty/' \
    "$d/models/core/customer_city.sql"
run_ok "allow_empty on the model" "$d" run core.customer_city
check_eq "closed again" "0" "$(lakeq "$d" "SELECT count(*) FROM lake.core.customer_city WHERE is_current")"

# A merge: an empty result would write nothing, but an empty source is most likely a broken one.
t=$(project trust)
run_ok "merge: first run" "$t" run core.orders
head -n 1 "$t/data/orders.csv" >"$t/data/orders.tmp" && mv "$t/data/orders.tmp" "$t/data/orders.csv"
run_rc "merge: an empty source fails" 1 "$t" run core.orders
contains "merge: it names the count" "the SELECT returned no rows and core.orders has 3 rows; nothing was written" "$ERR"
run_ok "merge: --allow-empty" "$t" run core.orders --allow-empty
check_eq "merge: the rows stay" "3" "$(lakeq "$t" "SELECT count(*) FROM lake.core.orders")"

# A replace: an empty result would empty the table, and every model downstream with it.
b=$(project basic)
run_ok "replace: first run" "$b" run
cp "$b/data/items.csv" "$b/items.full"
head -n 1 "$b/items.full" >"$b/data/items.csv"
snaps=$(snapshots "$b")
dump=$(lake_dump "$b")
run_rc "replace: an empty source fails" 1 "$b" run
contains "replace: it names the count" "the SELECT returned no rows and replacing would empty staging.items, which has 4 rows; nothing was written" "$ERR"
contains "replace: the remedy names the line to write" "add allow_empty to the materialize line (-- materialize allow_empty), or run with --allow-empty" "$ERR"
contains "replace: the models downstream are skipped" "skipped   marts.expensive" "$ERR"
check_eq "replace: no snapshot" "$snaps" "$(snapshots "$b")"
check_eq "replace: the tables are as they were" "$dump" "$(lake_dump "$b")"
run_ok "replace: --allow-empty" "$b" run staging.items --allow-empty
check_eq "replace: emptied on purpose" "0" "$(lakeq "$b" "SELECT count(*) FROM lake.staging.items")"
run_ok "replace: an empty table stays empty without a word" "$b" run staging.items --force
cp "$b/items.full" "$b/data/items.csv"
run_ok "replace: the items come back" "$b" run staging.items
head -n 1 "$b/items.full" >"$b/data/items.csv"
sed -i '1i -- materialize allow_empty' "$b/models/staging/items.sql"
run_ok "replace: allow_empty on the model" "$b" run staging.items
check_eq "replace: emptied again" "0" "$(lakeq "$b" "SELECT count(*) FROM lake.staging.items")"

# allow_empty where no empty check is made is a load error.
sed -i 's/^-- materialize append$/-- materialize append allow_empty/' "$t/models/core/order_log.sql"
run_rc "allow_empty on an append model" 2 "$t" plan
contains "it says where it does not apply" "models/core/order_log.sql:2: 'allow_empty' does not apply to 'append'" "$ERR"
sed -i 's/^-- materialize append allow_empty$/-- materialize append/' "$t/models/core/order_log.sql"

# ---- an append model whose result changes on every run -------------------------------------------
cat >"$t/models/core/run_log.sql" <<'EOF'
-- materialize append
SELECT count(*) AS orders, now() AS seen_at FROM raw.orders
EOF
run_ok "plan" "$t" plan core.run_log
contains "plan warns" "warning: the query calls now(), so its result differs on every run and this append model appends its rows again each time" "$OUT"
run_ok "run" "$t" run core.run_log
contains "the run warns" "warning: the query calls now()" "$ERR"
run_ok "run --json" "$t" run core.run_log --json
contains "the JSON event too" '"warning":"the query calls now()' "$OUT"
check_eq "it did append twice" "2" "$(lakeq "$t" "SELECT count(*) FROM lake.core.run_log")"
sed -i 's/now() AS seen_at/current_date AS seen_on/' "$t/models/core/run_log.sql"
run_ok "plan with current_date" "$t" plan core.run_log
contains "a keyword too" "warning: the query calls current_date, so" "$OUT"
run_ok "plan of a replace model" "$t" plan core.order_days
case $OUT in *warning:*) fail "no warning for a replace model" "$OUT" ;; *) ok "no warning for a replace model" ;; esac

finish

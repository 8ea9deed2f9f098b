#!/usr/bin/env bash
# test_build_cli.sh — the project commands around `tarn run`: init (a project that runs as is),
# plan, lineage (text, dot, json), history, show (--at, --limit, formats), -C, help and usage
# errors (exit 2).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

t=$(mktempdir)
check "init creates a project" tarn init "$t/p"
check_fails "init refuses an existing project" tarn init "$t/p"
run_ok "the new project runs as is" "$t/p" run
run_ok "show the mart" "$t/p" show marts.orders_daily --format csv
check_eq "the mart's rows" "order_date,orders,revenue
2024-05-01,2,19.50
2024-05-02,2,23.25
2024-05-03,1,5.75" "$OUT"
(cd "$t/p" && "$TARN" run --force >/dev/null 2>&1) && ok "run from inside the project folder" ||
    fail "run from inside the project folder"

# plan
run_ok "plan" "$t/p" plan
check_eq "plan lists the models in order" "2 models selected, in order (0 would run, 2 would skip):
  1. staging.stg_orders               replace
       models/staging/stg_orders.sql
       would skip: unchanged
       reads sources: raw.orders
  2. marts.orders_daily               merge key=order_date
       models/marts/orders_daily.sql
       would skip: unchanged
       reads models: staging.stg_orders" "$OUT"
run_ok "plan --json" "$t/p" plan --json marts.orders_daily
check_eq "plan json" "1 marts.orders_daily merge ['staging.stg_orders']" \
    "$(printf '%s' "$OUT" | python3 -c '
import json, sys
o = json.load(sys.stdin)
m = o["models"][0]
print(o["schema_version"], m["model"], m["strategy"], m["upstream"])')"

# lineage
run_ok "lineage" "$t/p" lineage
contains "lineage text" "marts.orders_daily  (merge, models/marts/orders_daily.sql)
  reads: staging.stg_orders" "$OUT"
run_ok "lineage dot" "$t/p" lineage --format dot
contains "dot edge" '"staging.stg_orders" -> "marts.orders_daily";' "$OUT"
contains "dot source" '"raw.orders" -> "staging.stg_orders";' "$OUT"
run_ok "lineage json of one model" "$t/p" lineage marts.orders_daily --format json
check_eq "lineage json" "raw.orders>staging.stg_orders staging.stg_orders>marts.orders_daily" \
    "$(printf '%s' "$OUT" | python3 -c '
import json, sys
o = json.load(sys.stdin)
print(" ".join(e["from"] + ">" + e["to"] for e in o["edges"]))')"
run_rc "lineage --format bad" 2 "$t/p" lineage --format svg

# history and show --at
run_ok "history" "$t/p" history --format csv
check_eq "history newest first" "2,marts.orders_daily,success
2,staging.stg_orders,success
1,marts.orders_daily,success
1,staging.stg_orders,success" "$(printf '%s\n' "$OUT" | tail -n +2 | cut -d, -f2-4 | head -4)"
run_ok "history of one model, limited" "$t/p" history staging.stg_orders --limit 1 --format json
contains "history json" '"staging.stg_orders"' "$OUT"
run_ok "show --at the first snapshot" "$t/p" show staging.stg_orders --at 1 --limit 2 --format csv
check_eq "two rows at snapshot 1" "3" "$(printf '%s\n' "$OUT" | grep -c .)"
run_rc "show an unknown model" 2 "$t/p" show nope
run_rc "show without a model" 2 "$t/p" show
run_rc "show --limit 0" 2 "$t/p" show staging.stg_orders --limit 0
run_rc "show --at a snapshot that does not exist" 1 "$t/p" show staging.stg_orders --at 999
contains "… names the snapshots there are" "lake \"lake\" has no snapshot 999: its oldest is 0, its latest " "$ERR"
run_rc "show --at a snapshot before the model's table was made" 1 "$t/p" show marts.orders_daily --at 1
contains "… says when it was made" "marts.orders_daily was not in lake \"lake\" at snapshot 1: its table was made at snapshot 2 (\`tarn history marts.orders_daily\` lists its builds)" "$ERR"

# help and usage errors
check "help run" tarn help run
check "run --help" tarn run --help
run_rc "unknown option" 2 "$t/p" run --nope
run_rc "-j needs a number" 2 "$t/p" run -j x
run_rc "--partition with --from" 2 "$t/p" run --partition 2024-01-01 --from 2024-01-01 --to 2024-01-02
check_fails "a missing project folder" tarn run -C "$t/nope"
check "init another" tarn init "$t/q"
run_ok "history before any build" "$t/q" history
contains "it says so" "no builds recorded" "$ERR"

finish

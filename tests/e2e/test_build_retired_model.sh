#!/usr/bin/env bash
# test_build_retired_model.sh — a model whose file is removed or renamed leaves its table in the
# lake, as dbt does, but that table's rows never change again: a model still reading it is warned,
# by `tarn run` (also while it is skipped as unchanged, which is when the stale rows would go
# unseen), `tarn run --json` and `tarn plan`. A table tarn never built (written outside it) is
# not warned about, and the warning goes once the file is back or the table is dropped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project basic)
run_ok "first run" "$d" run
mv "$d/models/marts/expensive.sql" "$d/models/marts/pricey.sql"
cat >"$d/models/marts/report.sql" <<'SQL'
SELECT count(*) AS n FROM marts.expensive
SQL
run_ok "a run after the rename" "$d" run
contains "the new name builds" "marts.pricey" "$ERR"
contains "the reader is warned" "warning: reads marts.expensive, which no model builds now (last built by run 1 from models/marts/expensive.sql, a file the project no longer has)" "$ERR"
check_eq "the warning is under the reader only" 1 "$(grep -c 'warning:' <<<"$ERR")"
check_eq "the old table is kept" 1 "$(lakeq "$d" "SELECT count(*) FROM information_schema.tables WHERE table_catalog = 'lake' AND table_name = 'expensive'")"

run_ok "the next run, nothing changed" "$d" run
contains "an unchanged reader is warned too" "unchanged marts.report" "$ERR"
contains "… with the warning under it" "warning: reads marts.expensive" "$ERR"
run_ok "run --json" "$d" run --json
check_eq "the JSON event of the reader has it" 1 \
    "$(grep '"model":"marts.report"' <<<"$OUT" | grep -c '"warning":"reads marts.expensive, which no model builds now')"
run_ok "plan" "$d" plan marts.report
contains "plan warns" "warning: reads marts.expensive, which no model builds now" "$OUT"

# a catalog-qualified read is the same table
echo "SELECT count(*) AS n FROM lake.marts.expensive" >"$d/models/marts/report.sql"
run_ok "a qualified read" "$d" run marts.report
contains "… is warned too" "warning: reads marts.expensive" "$ERR"

# a table written outside tarn is a source like any other
(cd "$d" && "$TARN" sql -c "$(lake_attach "$d") CREATE TABLE lake.marts.manual_rates AS SELECT 1 AS r" >/dev/null)
echo "SELECT r FROM marts.manual_rates" >"$d/models/marts/rates.sql"
run_ok "a model reading a table tarn never built" "$d" run marts.rates
case $ERR in
*warning:*) fail "… is not warned" "$ERR" ;;
*) ok "… is not warned" ;;
esac

# the file back: no warning; the table dropped: the reader fails, naming it
mv "$d/models/marts/pricey.sql" "$d/models/marts/expensive.sql"
run_ok "the file restored" "$d" run
case $ERR in
*"warning: reads marts.expensive"*) fail "… the warning is gone" "$ERR" ;;
*) ok "… the warning is gone" ;;
esac
mv "$d/models/marts/expensive.sql" "$d/models/marts/gone.sql"
run_ok "renamed again" "$d" run marts.report
contains "warned again" "warning: reads marts.expensive" "$ERR"
(cd "$d" && "$TARN" sql -c "$(lake_attach "$d") DROP TABLE lake.marts.expensive" >/dev/null)
run_rc "the table dropped: the reader fails" 2 "$d" run marts.report
contains "… naming the table" "table lake.marts.expensive does not exist" "$ERR"

finish

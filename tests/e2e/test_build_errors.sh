#!/usr/bin/env bash
# test_build_errors.sh — errors about a project point at the user's files, on a real project
# (tests/fixtures/projects/basic; the load-time and single-model cases are in the bad-project
# corpus, test_build_bad_projects.sh):
#   - a partition column the query's text cannot show (SELECT *) is checked on the query's rows
#     before tarn's own statements run: named as such, never as a binder error in tarn's SQL;
#   - a failing setup statement and a failing query of a partitioned model name the file and the
#     line of the mistake, with the user's line as the excerpt;
#   - `tarn plan` reports the load-time column checks too;
#   - `tarn show` of a model never built says so (and how to build it);
#   - a changed data test is reported as `tests changed`, a changed config statement still as
#     `config changed`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

internal() {
    case $2 in
    *_tarn_stage* | *__tarn_q* | *__tarn_c* | *"COLUMNS(*)"* | *__ducklake_metadata* | *__tarn_meta*)
        fail "$1" "an internal name in: $2" ;;
    *) ok "$1" ;;
    esac
}

d=$(project basic)
run_ok "the project builds" "$d" run

# ---- partition column behind a star ----
cat >"$d/models/marts/daily.sql" <<'EOF'
-- partitioned daily column=sold_at
SELECT * FROM staging.items
EOF
run_rc "a partition column the query lacks fails the build" 1 "$d" run marts.daily
contains "it is named as the partition column" \
    "models/marts/daily.sql:2: partition column sold_at is not a column of the query (it returns id, name, price); select it, or fix column= on line 1" "$ERR"
internal "with no internal name" "$ERR"
check_eq "nothing was built" "0" \
    "$(lakeq "$d" "SELECT count(*) FROM information_schema.tables WHERE table_name = 'daily'")"

# ---- setup and query errors of a partitioned model ----
cat >"$d/models/marts/daily.sql" <<'EOF'
-- partitioned daily column=sold_at
CREATE TEMP TABLE picked AS
    SELECT id,
           price * nope AS amount
    FROM staging.items;
SELECT id, amount, TIMESTAMP '2024-06-01 10:00' AS sold_at FROM picked
EOF
run_rc "a failing setup statement fails the build" 1 "$d" run marts.daily --partition 2024-06-01
contains "it names the line of the mistake" \
    "models/marts/daily.sql:4: Binder Error: Referenced column \"nope\" not found" "$ERR"
contains "and shows the user's line" "LINE 4:            price * nope AS amount" "$ERR"
internal "with no internal name" "$ERR"
cat >"$d/models/marts/daily.sql" <<'EOF'
-- partitioned daily column=sold_at
SELECT id,
       TIMESTAMP '2024-06-01 10:00' AS sold_at,
       CAST(name AS INTEGER) AS broken
FROM staging.items
EOF
run_rc "a failing query of a slice fails the build" 1 "$d" run marts.daily --partition 2024-06-01
contains "its error names the query's line" \
    "models/marts/daily.sql:4: Conversion Error: Could not convert string 'pen' to INT32" "$ERR"
contains "with the user's line" "LINE 4:        CAST(name AS INTEGER) AS broken" "$ERR"
internal "and no internal name" "$ERR"
rm "$d/models/marts/daily.sql"

# ---- tarn plan checks the columns at load ----
cat >"$d/models/marts/since.sql" <<'EOF'
-- materialize incremental watermark=updated_at key=id
SELECT id, price FROM staging.items
EOF
run_rc "plan reports a missing watermark column" 2 "$d" plan
contains "at its annotation's line" "models/marts/since.sql:1: watermark column updated_at is not a column of the query" "$ERR"
rm "$d/models/marts/since.sql"

# ---- tarn show of a model never built ----
echo "SELECT 1 AS one" >"$d/models/marts/later.sql"
run_rc "show of a model never built fails" 1 "$d" show marts.later
contains "it says the model was not built" \
    "marts.later has not been built: the lake has no table marts.later yet (build it with \`tarn run marts.later\`)" "$ERR"
internal "without DuckDB's catalog error" "$ERR"
run_ok "once built" "$d" run marts.later
run_ok "show prints it" "$d" show marts.later --format csv
check_eq "its rows" "one
1" "$OUT"

# ---- tests changed, config changed ----
run_ok "a run with nothing changed" "$d" run
sed -i '1i -- data_test not_null price' "$d/models/marts/expensive.sql"
run_ok "a data test added" "$d" run marts.expensive --json
contains "is reported as tests changed" '"run_reason":"tests changed"' "$OUT"
run_ok "plan after the run" "$d" plan marts.expensive
contains "then skips it" "would skip: unchanged" "$OUT"
sed -i 's/^-- data_test not_null price$/&\n-- data_test unique id/' "$d/models/marts/expensive.sql"
run_ok "plan of a changed data test" "$d" plan marts.expensive
contains "plan says tests changed" "would run: tests changed" "$OUT"
run_ok "a data test changed" "$d" run marts.expensive --json
contains "is reported as tests changed too" '"run_reason":"tests changed"' "$OUT"
echo "CREATE OR REPLACE MACRO cheap(p) AS p < 10;" >>"$d/config/sources.sql"
sed -i 's/WHERE price > 10/WHERE NOT cheap(price) AND price > 10/' "$d/models/marts/expensive.sql"
run_ok "a run after the SQL changed" "$d" run marts.expensive
echo "CREATE OR REPLACE MACRO cheap(p) AS p < 11;" >>"$d/config/sources.sql"
run_ok "a config statement changed" "$d" run marts.expensive --json
contains "is still config changed" '"run_reason":"config changed"' "$OUT"

finish

#!/usr/bin/env bash
# test_build_replace.sh — the replace strategy end to end on tests/fixtures/projects/basic:
# contents after each run, one snapshot per build with a right commit message and extra info,
# idempotent re-runs, schema changes, pinned upstream snapshots, failures recorded with the lake
# left at its previous snapshot, downstream skipped but siblings built, --json events, -j.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project basic)

run_ok "first run builds every model" "$d" run
check_eq "run status on stderr" "tarn: run 1 succeeded: 3 succeeded, 0 failed, 0 skipped, 0 unchanged" \
    "$(printf '%s\n' "$ERR" | grep '^tarn: run 1 succeeded' | sed 's/ in .*//')"
check_eq "staging.items rows" "1,pen,1.50
2,book,12.00
3,lamp,25.00
4,cup,4.00" "$(lakeq "$d" "SELECT * FROM lake.staging.items ORDER BY id")"
check_eq "marts.summary" "4,42.50" "$(lakeq "$d" "SELECT * FROM lake.marts.summary")"
check_eq "marts.expensive" "2,book,12.00
3,lamp,25.00" "$(lakeq "$d" "SELECT * FROM lake.marts.expensive ORDER BY id")"

# One snapshot per model build, each naming its model.
check_eq "one snapshot per build" "4" "$(snapshots "$d")"
check_eq "commit messages name the models" "tarn: build staging.items (replace)
tarn: build marts.expensive (replace)
tarn: build marts.summary (replace)" \
    "$(lakeq "$d" "SELECT commit_message FROM ducklake_snapshots('lake') WHERE snapshot_id > 0 ORDER BY snapshot_id")"
check_eq "author is tarn" "tarn" \
    "$(lakeq "$d" "SELECT DISTINCT author FROM ducklake_snapshots('lake') WHERE snapshot_id > 0")"
check_eq "extra info is valid JSON" "true" \
    "$(lakeq "$d" "SELECT bool_and(json_valid(commit_extra_info)) FROM ducklake_snapshots('lake') WHERE snapshot_id > 0")"
check_eq "extra info of staging.items" "staging.items,lake.staging.items,replace,4,0,[],1,0.1.0,64" \
    "$(lakeq "$d" "SELECT j->>'model', j->>'target', j->>'strategy', j->>'rows_written', j->>'rows_deleted', j->>'upstream', j->>'run_id', j->>'tarn_version', length(j->>'model_hash') FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') WHERE snapshot_id = 1)")"
check_eq "extra info: upstream snapshot read" "marts.summary,1,staging.items,1" \
    "$(lakeq "$d" "SELECT j->>'model', j->>'rows_written', j->'upstream'->0->>'table', j->'upstream'->0->>'snapshot_id' FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') WHERE snapshot_id = 3)")"
check_eq "extra info: timings" "true" \
    "$(lakeq "$d" "SELECT bool_and((commit_extra_info::JSON->'timings'->>'total_ms')::DOUBLE > 0) FROM ducklake_snapshots('lake') WHERE snapshot_id > 0")"
check_eq "run records commit with the snapshots" "staging.items,success,1,4
marts.expensive,success,2,2
marts.summary,success,3,1" \
    "$(lakeq "$d" "SELECT model, status, snapshot_id, rows_written FROM __ducklake_metadata_lake.tarn_model_run ORDER BY snapshot_id")"
check_eq "tarn_run row" "1,success,0,3,3,0,0" \
    "$(lakeq "$d" "SELECT run_id, status, start_snapshot_id, end_snapshot_id, models_succeeded, models_failed, models_skipped FROM __ducklake_metadata_lake.tarn_run")"

# A re-run skips the unchanged models (tests/e2e/test_build_skip.sh); a forced one rebuilds the
# same contents, one new snapshot per model.
before=$(lake_dump "$d")
run_ok "second run" "$d" run
check_eq "re-run is idempotent" "$before" "$(lake_dump "$d")"
check_eq "no new snapshot" "4" "$(snapshots "$d")"
run_ok "forced run" "$d" run --force
check_eq "forced re-run is idempotent" "$before" "$(lake_dump "$d")"
check_eq "three more snapshots" "7" "$(snapshots "$d")"
check_eq "second run reads the upstream it just built" "4" \
    "$(lakeq "$d" "SELECT j->'upstream'->0->>'snapshot_id' FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') WHERE commit_message = 'tarn: build marts.summary (replace)' ORDER BY snapshot_id DESC LIMIT 1)")"

# Time travel to the first build.
run_ok "show --at" "$d" show marts.summary --at 3 --format csv
check_eq "show --at prints the old rows" "n,total
4,42.50" "$OUT"

# Replace picks up a changed SELECT schema.
cat >"$d/models/staging/items.sql" <<'SQL'
SELECT id, upper(name) AS name, price, price * 2 AS double_price, 'x' AS note
FROM raw.items
SQL
run_ok "run after a schema change" "$d" run staging.items
check_eq "new columns" "id|name|price|double_price|note" \
    "$(lakeq "$d" "SELECT string_agg(column_name, '|' ORDER BY ordinal_position) FROM information_schema.columns WHERE table_catalog = 'lake' AND table_name = 'items'")"
check_eq "new rows" "1,PEN,1.50,3.00,x" "$(lakeq "$d" "SELECT * FROM lake.staging.items WHERE id = 1")"

# A failing model: recorded, the lake stays at its previous snapshot, downstream skipped,
# siblings built.
snap_before=$(snapshots "$d")
cat >"$d/models/staging/items.sql" <<'SQL'
SELECT id, name, CAST(name AS INTEGER) AS broken
FROM raw.items
SQL
cat >"$d/models/marts/other.sql" <<'SQL'
SELECT 42 AS answer
SQL
run_rc "a failing model exits 1" 1 "$d" run
check_eq "failed build wrote no snapshot, sibling did" "$((snap_before + 1))" "$(snapshots "$d")"
check_eq "the sibling was built" "42" "$(lakeq "$d" "SELECT * FROM lake.marts.other")"
check_eq "the failed table is unchanged" "1,PEN,1.50,3.00,x" \
    "$(lakeq "$d" "SELECT * FROM lake.staging.items WHERE id = 1")"
check_eq "statuses of the run" "marts.expensive,skipped,upstream staging.items failed
marts.other,success,-
marts.summary,skipped,upstream staging.items failed
staging.items,failed,models/staging/items.sql:1" \
    "$(lakeq "$d" "SELECT model, status, CASE WHEN status = 'failed' THEN split_part(error, ': ', 1) ELSE coalesce(error, '-') END FROM __ducklake_metadata_lake.tarn_model_run WHERE run_id = (SELECT max(run_id) FROM __ducklake_metadata_lake.tarn_model_run) ORDER BY model")"
contains "summary names the failure" "FAILED    staging.items" "$ERR"
contains "summary names what was skipped and why" "upstream staging.items failed" "$ERR"
contains "run status" "1 succeeded, 1 failed, 2 skipped" "$ERR"
run_ok "history lists the failure" "$d" history staging.items --format csv
contains "history row" ",staging.items,failed," "$OUT"

# --json: one object per event on stdout, nothing else.
cp "$FIXTURES/projects/basic/models/staging/items.sql" "$d/models/staging/items.sql"
run_ok "run --json" "$d" run --json -j 1 # one at a time: the event order below is exact
check_eq "every line is a JSON event with schema_version 1" "" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for line in sys.stdin:
    o = json.loads(line)
    if o.get("schema_version") != 1 or "event" not in o:
        print("bad:", line)
')"
# marts.other is unchanged: one model_finish event (status skipped, reason unchanged).
check_eq "event sequence" "run_start model_finish model_start model_finish model_start model_finish model_start model_finish run_finish" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
print(" ".join(json.loads(l)["event"] for l in sys.stdin))')"
check_eq "model_finish figures" "staging.items success 4 True" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["event"] == "model_finish" and o["model"] == "staging.items":
        print(o["model"], o["status"], o["rows_written"], o["snapshot_id"] > 0)')"
check_eq "the unchanged model's event" "marts.other skipped unchanged" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["event"] == "model_finish" and o["status"] == "skipped":
        print(o["model"], o["status"], o["reason"])')"

# Selectors: one model, upstream, tags.
run_ok "select one model" "$d" run marts.summary --json
check_eq "only that model" "marts.summary" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
print(" ".join(json.loads(l)["model"] for l in sys.stdin if "model_finish" in l))')"
run_ok "select +tag" "$d" run tag:pricey --json
check_eq "tag selects" "marts.expensive" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
print(" ".join(json.loads(l)["model"] for l in sys.stdin if "model_finish" in l))')"
run_rc "unknown selector is a usage error" 2 "$d" run nope
contains "unknown selector message" "selector 'nope' matches no model" "$ERR"

# -j N builds the same lake as -j 1.
a=$(project basic)
b=$(project basic)
run_ok "run -j 1" "$a" run -j 1
run_ok "run -j 2" "$b" run -j 2
check_eq "-j 2 gives the same lake as -j 1" "$(lake_dump "$a")" "$(lake_dump "$b")"
run_rc "-j 0 is a usage error" 2 "$a" run -j 0

finish

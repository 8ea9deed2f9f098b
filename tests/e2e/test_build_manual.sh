#!/usr/bin/env bash
# test_build_manual.sh — `-- materialize manual` end to end on tests/fixtures/projects/ops: the
# script's own statements run inside the build's transaction (one snapshot for all of them), its
# reads of models are pinned, it is recorded like any build, models downstream of it order after
# it, and a failing statement rolls every statement of the script back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project ops)
run_ok "plan orders the manual model after what it reads" "$d" plan
check_eq "order" "1. staging.numbers
2. ops.audit
3. ops.audit_count" "$(printf '%s\n' "$OUT" | grep -o '[0-9]\. [a-z_.]*')"

run_ok "first run" "$d" run
check_eq "the script's rows" "count,5
sum,10" "$(lakeq "$d" "SELECT * FROM lake.ops.audit ORDER BY label")"
check_eq "the downstream model read them" "2" "$(lakeq "$d" "SELECT entries FROM lake.ops.audit_count")"
check_eq "four statements, one snapshot" "1,true" \
    "$(lakeq "$d" "SELECT count(*), bool_and(changes::VARCHAR LIKE '%tables_created=[ops.audit]%') FROM ducklake_snapshots('lake') WHERE commit_message = 'tarn: build ops.audit (manual)'")"
check_eq "recorded, rows counted, upstream pinned" "manual,2,staging.numbers,1" \
    "$(lakeq "$d" "SELECT j->>'strategy', j->>'rows_written', j->'upstream'->0->>'table', j->'upstream'->0->>'snapshot_id' FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') WHERE commit_message LIKE '%ops.audit (manual)%')")"

run_ok "second run appends through the script" "$d" run ops.audit
check_eq "four rows now" "4" "$(lakeq "$d" "SELECT count(*) FROM lake.ops.audit")"

# A failing statement rolls the whole script back.
cat >>"$d/models/ops/audit.sql" <<'SQL'
INSERT INTO lake.ops.audit SELECT 'bad', CAST('x' AS BIGINT);
SQL
snap=$(snapshots "$d")
run_rc "a failing statement fails the build" 1 "$d" run ops.audit+
contains "the error names the file and the statement's line" "models/ops/audit.sql:8:" "$ERR"
check_eq "no snapshot" "$snap" "$(snapshots "$d")"
check_eq "the earlier statements were rolled back" "4" "$(lakeq "$d" "SELECT count(*) FROM lake.ops.audit")"
contains "the downstream model was skipped" "upstream ops.audit failed" "$ERR"

finish

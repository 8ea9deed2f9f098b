#!/usr/bin/env bash
# test_build_incremental.sh — the incremental strategy (`-- materialize incremental watermark=col
# [key=…]`) end to end on tests/fixtures/projects/feed, whose CSV source is rewritten between
# runs: facts.events_log (no {watermark}: tarn keeps the rows of the range [mark, frontier) and
# replaces that range) and facts.events_latest (filters with {watermark} itself and merges by
# key=id). Shown: exact contents after each run, a re-run with nothing new making no snapshot,
# only the range rewritten, late changes merged by key, the range and the mark after in the extra
# info (the frontier: the run's start),
# the run record and --json, a failed build leaving the lake and the watermark as they were,
# --full-refresh rebuilding from scratch, time travel to older states, and load/run errors.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

META=__ducklake_metadata_lake

# last_extra DIR MODEL FIELDS — fields of the newest snapshot's extra info of MODEL, as CSV.
last_extra() {
    lakeq "$1" "SELECT $3 FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake')
               WHERE commit_extra_info::JSON->>'model' = '$2' ORDER BY snapshot_id DESC LIMIT 1)"
}
last_snapshot() {
    lakeq "$1" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')"
}
rows() {
    lakeq "$1" "SELECT id, ts, kind, amount FROM lake.facts.$2 ORDER BY id, amount"
}

d=$(project feed)

run_ok "plan" "$d" plan
contains "plan shows the watermark" "facts.events_latest              incremental key=id watermark=ts" "$ERR$OUT"

# ---- run 1: everything ----------------------------------------------------------------------
run_ok "run 1 builds both tables" "$d" run
check_eq "run 1: events_log" "1,2024-05-01 10:00:00,open,10
2,2024-05-01 11:00:00,open,20
3,2024-05-01 12:00:00,close,30" "$(rows "$d" events_log)"
check_eq "run 1: events_latest" "$(rows "$d" events_log)" "$(rows "$d" events_latest)"
check_eq "run 1: the range read ends at the run's start (the frontier)" \
    "$(lakeq "$d" "SELECT strftime(started_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S') FROM $META.tarn_run WHERE run_id = 1")" \
    "$(last_extra "$d" facts.events_log "j->>'watermark_to'")"
check_eq "run 1 extra info: no mark before, the max after" "incremental,ts,,2024-05-01 12:00:00,false,3" \
    "$(last_extra "$d" facts.events_log "j->>'strategy', j->>'watermark_column', j->>'watermark_from', j->>'covered_through', j->>'full_refresh', j->>'rows_written'")"
check_eq "the run record has the marks" "facts.events_latest,,2024-05-01 12:00:00
facts.events_log,,2024-05-01 12:00:00" \
    "$(lakeq "$d" "SELECT model, details::JSON->>'watermark_from', details::JSON->>'covered_through' FROM $META.tarn_model_run WHERE run_id = 1 ORDER BY model")"
v1=$(last_snapshot "$d")

# ---- run 2: nothing new ---------------------------------------------------------------------
dump=$(lake_dump "$d")
snaps=$(snapshots "$d")
run_ok "run 2 with no new rows" "$d" run
check_eq "run 2: the tables are unchanged" "$dump" "$(lake_dump "$d")"
check_eq "run 2: no snapshot is made" "$snaps" "$(snapshots "$d")"
check_eq "run 2: recorded as no change, the mark kept" "facts.events_latest,0,no change: no snapshot written,2024-05-01 12:00:00,2024-05-01 12:00:00
facts.events_log,0,no change: no snapshot written,2024-05-01 12:00:00,2024-05-01 12:00:00" \
    "$(lakeq "$d" "SELECT model, rows_written, note, details::JSON->>'watermark_from', details::JSON->>'covered_through' FROM $META.tarn_model_run WHERE run_id = 2 ORDER BY model")"

# ---- run 3: new rows, a late correction at the mark, an old row changed ---------------------
cat >"$d/data/events.csv" <<'CSV'
id,ts,kind,amount
1,2024-05-01 10:00:00,open,11
2,2024-05-01 11:00:00,open,20
3,2024-05-01 12:00:00,close,33
4,2024-05-01 13:00:00,open,40
5,2024-05-01 14:00:00,open,50
CSV
run_ok "run 3" "$d" run
check_eq "run 3: events_log replaced the range from the mark: new rows and the row at the mark" "1,2024-05-01 10:00:00,open,10
2,2024-05-01 11:00:00,open,20
3,2024-05-01 12:00:00,close,33
4,2024-05-01 13:00:00,open,40
5,2024-05-01 14:00:00,open,50" "$(rows "$d" events_log)"
check_eq "run 3: events_latest merged the slice from the mark on by key" "1,2024-05-01 10:00:00,open,10
2,2024-05-01 11:00:00,open,20
3,2024-05-01 12:00:00,close,33
4,2024-05-01 13:00:00,open,40
5,2024-05-01 14:00:00,open,50" "$(rows "$d" events_latest)"
check_eq "run 3 extra info (the range replaced)" "2024-05-01 12:00:00,2024-05-01 14:00:00,3,1" \
    "$(last_extra "$d" facts.events_log "j->>'watermark_from', j->>'covered_through', j->>'rows_written', j->>'rows_deleted'")"
check_eq "run 3 extra info (merge by key)" "2024-05-01 12:00:00,2024-05-01 14:00:00,3,1,\"[\"\"id\"\"]\"" \
    "$(last_extra "$d" facts.events_latest "j->>'watermark_from', j->>'covered_through', j->>'rows_written', j->>'rows_deleted', j->>'key'")"
s3=$(lakeq "$d" "SELECT snapshot_id FROM ducklake_snapshots('lake') WHERE commit_extra_info::JSON->>'model' = 'facts.events_log' ORDER BY snapshot_id DESC LIMIT 1")
check_eq "the change feed: the row at the mark rewritten, two inserts, nothing else" "3,delete
3,insert
4,insert
5,insert" "$(lakeq "$d" "SELECT id, change_type FROM ducklake_table_changes('lake', 'facts', 'events_log', $s3, $s3) ORDER BY id, change_type")"
v3=$(last_snapshot "$d")

# ---- run 4: a build that fails leaves the lake and the mark as they were ---------------------
echo "6,2024-05-01 15:00:00,open,lots" >>"$d/data/events.csv"
dump=$(lake_dump "$d")
snaps=$(snapshots "$d")
run_rc "run 4 fails on a bad row" 1 "$d" run facts.events_log
contains "the error is DuckDB's, with the file" "models/facts/events_log.sql:5:" "$ERR"
contains "it says what failed" "lots" "$ERR"
check_eq "run 4: no snapshot" "$snaps" "$(snapshots "$d")"
check_eq "run 4: the lake is at the previous snapshot" "$v3" "$(last_snapshot "$d")"
check_eq "run 4: the tables are unchanged" "$dump" "$(lake_dump "$d")"
check_eq "run 4: recorded as failed, from the mark it had" "failed,2024-05-01 14:00:00" \
    "$(lakeq "$d" "SELECT status, details::JSON->>'watermark_from' FROM $META.tarn_model_run WHERE run_id = 4")"

# ---- a failing data test also rolls the build back ---------------------------------------------
sed -i 's/,open,lots$/,bogus,60/' "$d/data/events.csv"
run_rc "a data test fails on the new slice" 1 "$d" run facts.events_log
contains "the test is named" "accepted_values kind" "$ERR"
check_eq "still no snapshot" "$snaps" "$(snapshots "$d")"
check_eq "still unchanged" "$dump" "$(lake_dump "$d")"

# ---- run 5: fixed, it carries on from the same mark ------------------------------------------
sed -i 's/,bogus,60$/,open,60/' "$d/data/events.csv"
run_ok "run 5" "$d" run facts.events_log
check_eq "run 5: the row is appended once" "6,2024-05-01 15:00:00,open,60" \
    "$(lakeq "$d" "SELECT id, ts, kind, amount FROM lake.facts.events_log WHERE id >= 5 AND id <> 5")"
check_eq "run 5 extra info" "2024-05-01 14:00:00,2024-05-01 15:00:00,2" \
    "$(last_extra "$d" facts.events_log "j->>'watermark_from', j->>'covered_through', j->>'rows_written'")"

# ---- time travel ----------------------------------------------------------------------------
check_eq "AT (VERSION => run 1's snapshot)" "3" \
    "$(lakeq "$d" "SELECT count(*) FROM lake.facts.events_log AT (VERSION => $v1)")"
check_eq "AT (VERSION => run 3's snapshot)" "5,33" \
    "$(lakeq "$d" "SELECT count(*), max(amount) FILTER (WHERE id = 3) FROM lake.facts.events_log AT (VERSION => $v3)")"

# ---- --full-refresh rebuilds from the source --------------------------------------------------
run_ok "run --full-refresh" "$d" run facts.events_log --full-refresh --json
check_eq "the table is the source's rows again (old changes included)" "1,2024-05-01 10:00:00,open,11
2,2024-05-01 11:00:00,open,20
3,2024-05-01 12:00:00,close,33
4,2024-05-01 13:00:00,open,40
5,2024-05-01 14:00:00,open,50
6,2024-05-01 15:00:00,open,60" "$(rows "$d" events_log)"
check_eq "full refresh extra info: no mark before" "true,,2024-05-01 15:00:00,6" \
    "$(last_extra "$d" facts.events_log "j->>'full_refresh', j->>'watermark_from', j->>'covered_through', j->>'rows_written'")"
check_eq "the --json event has the marks" "true,None,2024-05-01 15:00:00" \
    "$(grep model_finish <<<"$OUT" | python3 -c 'import json,sys; e=json.loads(sys.stdin.read()); print("%s,%s,%s" % (str(e["full_refresh"]).lower(), e["watermark_from"], e["covered_through"]))')"
check_eq "the state before the refresh is still there" "6,33" \
    "$(lakeq "$d" "SELECT count(*), max(amount) FILTER (WHERE id = 3) FROM lake.facts.events_log AT (VERSION => $((v3 + 1)))")"
snaps=$(snapshots "$d")
run_ok "a run after the refresh" "$d" run facts.events_log
check_eq "it has nothing new: no snapshot" "$snaps" "$(snapshots "$d")"

# ---- run errors -------------------------------------------------------------------------------
dump=$(lake_dump "$d")
echo "7,2024-05-01 16:00:00,open,70" >>"$d/data/events.csv"
echo "7,2024-05-01 16:00:00,close,71" >>"$d/data/events.csv"
run_rc "duplicate keys in the new slice" 1 "$d" run facts.events_latest
contains "the error names the key" "incremental key (id) is not unique in the SELECT: 1 key appears more than once: id=7 (2 rows); nothing was written" "$ERR"
cat >"$d/models/facts/events_log.sql" <<'SQL'
-- materialize incremental watermark=ts
SELECT id, kind, amount FROM raw.events
SQL
run_rc "a watermark column the SELECT does not return is a load error" 2 "$d" run facts.events_log
contains "it says so on the annotation's line" "models/facts/events_log.sql:1: watermark column ts is not a column of the query (it returns id, kind, amount)" "$ERR"
cat >"$d/models/facts/events_log.sql" <<'SQL'
-- materialize incremental watermark=ts
SELECT * EXCLUDE (ts) FROM raw.events
SQL
run_rc "behind a star it fails the build" 1 "$d" run facts.events_log
contains "it says so on the right line" "models/facts/events_log.sql:2: watermark column ts is not a column of the SELECT; select it, or fix watermark= on line 1" "$ERR"
lake_reset "$d"
run_rc "the same on a first build" 1 "$d" run facts.events_log
contains "it names the column and the annotation's line" "watermark column ts is not a column of the SELECT; select it, or fix watermark= on line 1" "$ERR"
cp "$FIXTURES/projects/feed/models/facts/events_log.sql" "$d/models/facts/events_log.sql"
check_eq "after the failures, no table was made" "" \
    "$(lakeq "$d" "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'lake'")"

# ---- every snapshot's extra info is JSON ------------------------------------------------------
# (with a third model that takes {watermark} in a setup statement)
d2=$(project feed)
cat >"$d2/models/facts/events_setup.sql" <<'SQL'
-- materialize incremental watermark=ts
CREATE TEMP TABLE since AS SELECT CAST({watermark} AS TIMESTAMP) AS mark;
SELECT id, ts, kind, amount FROM raw.events, since WHERE mark IS NULL OR ts >= mark
SQL
run_ok "a fresh lake" "$d2" run
snaps=$(snapshots "$d2")
cp "$d/data/events.csv" "$d2/data/events.csv"
sed -i '$d' "$d2/data/events.csv"
run_ok "a second run" "$d2" run
check_eq "one snapshot per model build" "$((snaps + 3))" "$(snapshots "$d2")"
check_eq "{watermark} in a setup statement" "$(rows "$d2" events_log)" "$(rows "$d2" events_setup)"
check_eq "it read the range from the mark: the row at the mark and the new rows" "2024-05-01 12:00:00,2024-05-01 16:00:00,5" \
    "$(last_extra "$d2" facts.events_setup "j->>'watermark_from', j->>'covered_through', j->>'rows_written'")"
check_eq "every build's extra info parses as JSON" "0" \
    "$(lakeq "$d2" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE snapshot_id > 0 AND (commit_extra_info IS NULL OR NOT json_valid(commit_extra_info))")"
check_eq "and names its build" "6" \
    "$(lakeq "$d2" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE commit_message = 'tarn: build ' || (commit_extra_info::JSON->>'model') || ' (incremental)'")"

finish

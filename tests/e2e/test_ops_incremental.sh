#!/usr/bin/env bash
# test_ops_incremental.sh — incremental models read the bounded range [covered_through, frontier):
# the frontier is the run's start (`tarn run --now` sets it), so rows stamped later are left for
# the next build; lookback=2h re-reads that much before the mark, so rows that arrive late are
# taken, and without key= the range is replaced, so re-read rows are never appended twice; with
# key= they are merged. Each build's range and mark are in its run record. A run killed with kill
# -9 mid-build commits nothing, and the rerun reads the same range: no duplicate rows.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

CAT=__ducklake_metadata_lake

d=$(mktempdir)
mkdir -p "$d/config" "$d/models/facts" "$d/data"
cat >"$d/config/catalog.sql" <<'SQL'
ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');
SQL
# src.slow: as many rows as TARN_TEST_ROWS, for a build slow enough to kill.
cat >"$d/config/sources.sql" <<'SQL'
CREATE SCHEMA IF NOT EXISTS raw;
CREATE OR REPLACE VIEW raw.events AS
SELECT * FROM read_csv('data/events.csv', header = true, columns = {'id': 'INTEGER', 'ts': 'TIMESTAMP', 'v': 'INTEGER'});
CREATE OR REPLACE VIEW raw.slow AS SELECT i FROM range(CAST('${TARN_TEST_ROWS:-10}' AS BIGINT)) t(i);
SQL
cat >"$d/models/facts/ev_log.sql" <<'SQL'
-- Every event once; events can arrive up to two hours late.
-- materialize incremental watermark=ts lookback=2h
CREATE TEMP TABLE burn AS SELECT max(hash(i)) AS h FROM raw.slow;
SELECT id, ts, v FROM raw.events
SQL
cat >"$d/models/facts/ev_latest.sql" <<'SQL'
-- materialize incremental watermark=ts key=id lookback=2h
SELECT id, ts, v FROM raw.events WHERE {watermark} IS NULL OR ts >= {watermark}
SQL
cat >"$d/data/events.csv" <<'CSV'
id,ts,v
1,2026-06-01 01:00:00,10
2,2026-06-01 03:00:00,20
3,2026-06-01 05:00:00,30
9,2026-06-01 09:00:00,90
CSV

rows() { lakeq "$d" "SELECT string_agg(id || '@' || strftime(ts, '%H:%M') || '=' || v, ' ' ORDER BY id) FROM lake.facts.$1"; }
rec() { # rec MODEL — the newest run record's range and mark: from|to|covered|rows_written|rows_deleted
    lakeq "$d" "SELECT concat_ws('|', coalesce(details::JSON->>'watermark_from', '-'), details::JSON->>'watermark_to',
                details::JSON->>'covered_through', rows_written, rows_deleted) FROM $CAT.tarn_model_run
                WHERE model = 'facts.$1' ORDER BY run_id DESC LIMIT 1"
}

# ---- a first build: everything below the frontier --------------------------------------------
run_ok "plan before the first run" "$d" plan facts.ev_log --now 2026-06-01T06:00:00Z
contains "plan: what a first build reads" "would read: a first or full build: every row (a date or timestamp ts before the run's start, 2026-06-01 06:00:00 UTC)" "$OUT"
run_ok "first run at 06:00" "$d" run --now 2026-06-01T06:00:00Z
check_eq "the row stamped after the run's start is left for later" "1@01:00=10 2@03:00=20 3@05:00=30" "$(rows ev_log)"
check_eq "the same for the keyed model" "1@01:00=10 2@03:00=20 3@05:00=30" "$(rows ev_latest)"
check_eq "the record: from the start to the frontier, covered through the newest row" \
    "-|2026-06-01 06:00:00|2026-06-01 05:00:00|3|0" "$(rec ev_log)"
check_eq "the snapshot's extra info says the same" "2026-06-01 06:00:00,2026-06-01 05:00:00,2h" \
    "$(lakeq "$d" "SELECT j->>'watermark_to', j->>'covered_through', j->>'lookback' FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') WHERE commit_extra_info::JSON->>'model' = 'facts.ev_log' ORDER BY snapshot_id DESC LIMIT 1)")"

# ---- late rows inside the lookback, a new row, a row corrected -------------------------------
cat >"$d/data/events.csv" <<'CSV'
id,ts,v
1,2026-06-01 01:00:00,10
2,2026-06-01 03:00:00,21
4,2026-06-01 04:30:00,40
3,2026-06-01 05:00:00,30
5,2026-06-01 07:00:00,50
9,2026-06-01 09:00:00,90
CSV
run_ok "plan the second run" "$d" plan --now 2026-06-01T08:00:00Z
contains "plan: the range with its lookback" "would read: ts from 2026-06-01 03:00:00 (the mark 2026-06-01 05:00:00 less lookback=2h), before 2026-06-01 08:00:00 (the run's start)" "$OUT"
run_ok "plan --json" "$d" plan facts.ev_latest --now 2026-06-01T08:00:00Z --json
contains "plan --json: the range" "\"range\":\"ts from 2026-06-01 03:00:00" "$OUT"
run_ok "second run at 08:00" "$d" run --now 2026-06-01T08:00:00Z
check_eq "the range [03:00, 08:00) is replaced: the late row taken, the correction applied, nothing twice" \
    "1@01:00=10 2@03:00=21 3@05:00=30 4@04:30=40 5@07:00=50" "$(rows ev_log)"
check_eq "merged by key: the same rows" "$(rows ev_log)" "$(rows ev_latest)"
check_eq "the record: from the mark less 2h to the frontier" \
    "2026-06-01 03:00:00|2026-06-01 08:00:00|2026-06-01 07:00:00|4|2" "$(rec ev_log)"
check_eq "no id twice" "5,5" "$(lakeq "$d" "SELECT count(*), count(DISTINCT id) FROM lake.facts.ev_log")"

# ---- the same run again: the range reads the same rows, no snapshot ---------------------------
snaps=$(snapshots "$d")
run_ok "a rerun at the same time" "$d" run --now 2026-06-01T08:00:00Z
check_eq "no snapshot: the range already holds those rows" "$snaps" "$(snapshots "$d")"
check_eq "recorded as no change" "no change: no snapshot written" \
    "$(lakeq "$d" "SELECT note FROM $CAT.tarn_model_run WHERE model = 'facts.ev_log' ORDER BY run_id DESC LIMIT 1")"

# ---- the frontier passes the row stamped 09:00 --------------------------------------------------
run_ok "a run at 10:00" "$d" run --now 2026-06-01T10:00:00Z
check_eq "the 09:00 row is taken now" "1@01:00=10 2@03:00=21 3@05:00=30 4@04:30=40 5@07:00=50 9@09:00=90" "$(rows ev_log)"
check_eq "covered through 09:00" "2026-06-01 05:00:00|2026-06-01 10:00:00|2026-06-01 09:00:00|3|2" "$(rec ev_log)"

# ---- a row later than the lookback is not re-read; --full-refresh takes it ---------------------
echo "6,2026-06-01 02:00:00,60" >>"$d/data/events.csv"
run_ok "a run at 11:00" "$d" run facts.ev_log --now 2026-06-01T11:00:00Z
check_eq "02:00 is before [07:00, 11:00): not read" "0" "$(lakeq "$d" "SELECT count(*) FROM lake.facts.ev_log WHERE id = 6")"
run_ok "--full-refresh" "$d" run facts.ev_log --full-refresh --now 2026-06-01T11:00:00Z
check_eq "a full build reads everything below the frontier" "7,7" "$(lakeq "$d" "SELECT count(*), count(DISTINCT id) FROM lake.facts.ev_log")"
check_eq "its record" "-|2026-06-01 11:00:00|2026-06-01 09:00:00|7|0" "$(rec ev_log)"

# ---- kill -9 mid-build: nothing committed, the rerun appends nothing twice ---------------------
echo "7,2026-06-01 10:30:00,70" >>"$d/data/events.csv"
before=$(lake_dump "$d")
o=$(mktemp "$_E2E_TMP/inc.XXXXXX")
TARN_TEST_ROWS=4000000000 "$TARN" run facts.ev_log --now 2026-06-01T12:00:00Z -C "$d" >"$o" 2>"$o.err" &
BG=$!
for i in $(seq 1 600); do
    grep -q 'run [0-9]*:' "$o.err" 2>/dev/null && break
    sleep 0.1
done
sleep 1.5
if kill -0 "$BG" 2>/dev/null; then ok "the build is in flight"; else fail "the build is in flight" "$(cat "$o.err")"; fi
kill -KILL "$BG"
wait "$BG" 2>/dev/null
check_eq "killed mid-build: the lake is as it was" "$before" "$(lake_dump "$d")"
run_ok "run again" "$d" run facts.ev_log --now 2026-06-01T12:00:00Z
contains "the killed run is marked interrupted" "marked interrupted" "$ERR"
check_eq "the new row once, no row twice" "8,8,1" \
    "$(lakeq "$d" "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id = 7) FROM lake.facts.ev_log")"
check_eq "the rerun read the range the killed one would have" "2026-06-01 07:00:00|2026-06-01 12:00:00|2026-06-01 10:30:00|3|2" "$(rec ev_log)"

# ---- time travel: each build's state is there -------------------------------------------------
first=$(lakeq "$d" "SELECT min(snapshot_id) FROM $CAT.tarn_model_run WHERE model = 'facts.ev_log' AND status = 'success'")
check_eq "the first build's rows, at its snapshot" "3" "$(lakeq "$d" "SELECT count(*) FROM lake.facts.ev_log AT (VERSION => $first)")"

# ---- errors ---------------------------------------------------------------------------------------
run_rc "--now that is not a time" 2 "$d" run --now tomorrow
contains "it says what it takes" "--now takes a UTC time such as 2026-06-01T06:00:00Z, not 'tomorrow'" "$ERR"
sed -i 's/ts >= {watermark}/ts > {watermark}/' "$d/models/facts/ev_latest.sql"
run_rc "'> {watermark}' is a load error" 2 "$d" run
contains "at its line, with the fix" "models/facts/ev_latest.sql:2: '> {watermark}' would leave out the rows at the mark" "$ERR"
contains "the fix" "write >= {watermark}" "$ERR"

finish

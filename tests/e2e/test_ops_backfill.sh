#!/usr/bin/env bash
# test_ops_backfill.sh — backfills and partitions: `tarn backfill MODEL --start A --end B` builds
# each slice as its own build and snapshot (a bad slice fails alone), takes its worklist from the
# recorded state of each slice (--missing by default, --failed, --all), is resumable (stopped by
# SIGTERM or killed with kill -9 mid-way, run again, it builds only what is left), reports progress
# per slice (--json: one event per slice) and records trigger backfill; `tarn partitions MODEL`
# shows each slice's state; `-- partitioned daily … start=` makes a first run a backfill from
# start, and `lookback=N` rebuilds the N slices before the current one.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

CAT=__ducklake_metadata_lake

d=$(mktempdir)
mkdir -p "$d/config" "$d/models/facts"
lake_catalog "$d"
# src.slow: as many rows as TARN_TEST_ROWS (a slow slice); bad_day(): the slice that fails.
cat >"$d/config/sources.sql" <<'SQL'
CREATE SCHEMA IF NOT EXISTS src;
CREATE OR REPLACE VIEW src.slow AS SELECT i FROM range(CAST('${TARN_TEST_ROWS:-10}' AS BIGINT)) t(i);
CREATE OR REPLACE MACRO bad_day() AS '${BAD_DAY:-none}';
SQL
cat >"$d/models/facts/daily.sql" <<'SQL'
-- partitioned daily column=d
SELECT CAST({partition} AS DATE) AS d,
       CASE WHEN {partition} = bad_day() THEN CAST(error('no data for ' || {partition}) AS BIGINT)
            ELSE count(*) END AS n,
       sum(hash(i) % 7) AS s
FROM src.slow
SQL
cat >"$d/models/facts/plain.sql" <<'SQL'
SELECT 1 AS x
SQL

slices() { # slices DIR MODEL — each recorded slice as partition:status, in order
    lakeq "$1" "SELECT string_agg(\"partition\" || ':' || status, ' ' ORDER BY \"partition\") FROM $CAT.tarn_partition WHERE model = '$2'"
}
json_slices() { # the partitions of the slice events of $OUT, in order
    printf '%s\n' "$OUT" | python3 -c '
import json, sys
print(" ".join(e["partition"] + ":" + e["status"] for e in map(json.loads, sys.stdin) if e["event"] == "slice"))'
}

# A range: one snapshot per slice, progress per slice, the run recorded as a backfill.
snap=$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake')" 2>/dev/null || echo 0)
run_ok "backfill ten days" "$d" backfill facts.daily --start 2024-01-01 --end 2024-01-10
contains "the plan" "tarn: backfill facts.daily: 10 of 10 slices 2024-01-01 … 2024-01-10 (0 built already)" "$ERR"
contains "progress: done/total" "[3/10] 2024-01-03     ok" "$ERR"
contains "rows, snapshot, elapsed" "1 rows  snapshot 3  " "$ERR"
contains "an ETA" "ETA " "$ERR"
contains "the summary" "10 slices built (10 rows), 0 failed" "$ERR"
check_eq "one snapshot per slice" "10" \
    "$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE commit_message LIKE '%facts.daily%'")"
check_eq "each snapshot holds one slice" "1" \
    "$(lakeq "$d" "SELECT DISTINCT json_array_length(commit_extra_info::JSON->'partitions') FROM ducklake_snapshots('lake') WHERE commit_message LIKE '%facts.daily%'")"
check_eq "every slice recorded" "2024-01-01:success 2024-01-02:success 2024-01-03:success 2024-01-04:success 2024-01-05:success 2024-01-06:success 2024-01-07:success 2024-01-08:success 2024-01-09:success 2024-01-10:success" \
    "$(slices "$d" facts.daily)"
check_eq "the run's trigger" "backfill,success,1" \
    "$(lakeq "$d" "SELECT \"trigger\", status, models_succeeded FROM $CAT.tarn_run ORDER BY run_id DESC LIMIT 1")"
check_eq "each slice's record says backfill" "10,backfill" \
    "$(lakeq "$d" "SELECT count(*), any_value(run_reason) FROM $CAT.tarn_model_run WHERE model = 'facts.daily'")"
check_eq "the rows" "10,100" "$(lakeq "$d" "SELECT count(*), sum(n) FROM lake.facts.daily")"

run_ok "again: nothing left" "$d" backfill facts.daily --start 2024-01-01 --end 2024-01-10
contains "says so" "nothing to backfill: 10 of the 10 slices 2024-01-01 … 2024-01-10 are built by the current SQL" "$ERR"
run_ok "a wider range builds only the new slices" "$d" backfill facts.daily --from 2024-01-09 --to 2024-01-12 --json
check_eq "one event per slice, the missing ones" "2024-01-11:success 2024-01-12:success" "$(json_slices)"
contains "events have done/total and an ETA" '"index":1,"total":2' "$OUT"
contains "eta" '"eta_ms":' "$OUT"

# A bad slice fails alone; its neighbours commit; --failed retries just it.
before=$(lakeq "$d" "SELECT snapshot_id FROM $CAT.tarn_partition WHERE model = 'facts.daily' AND \"partition\" = '2024-01-05'")
BAD_DAY=2024-01-05 run_rc "--all with a bad day" 1 "$d" backfill facts.daily --start 2024-01-04 --end 2024-01-06 --all
contains "the bad slice is named" "[2/3] 2024-01-05     FAILED" "$ERR"
contains "with its error" "no data for 2024-01-05" "$ERR"
contains "the summary says what to do" "2 slices built (2 rows), 1 failed" "$ERR"
check_eq "the neighbours committed, the bad one failed" "2024-01-04:success 2024-01-05:failed 2024-01-06:success" \
    "$(lakeq "$d" "SELECT string_agg(\"partition\" || ':' || status, ' ' ORDER BY \"partition\") FROM $CAT.tarn_partition WHERE model = 'facts.daily' AND \"partition\" BETWEEN '2024-01-04' AND '2024-01-06'")"
check_eq "the failed slice keeps its last good snapshot and rows" "$before,1" \
    "$(lakeq "$d" "SELECT snapshot_id, \"rows\" FROM $CAT.tarn_partition WHERE model = 'facts.daily' AND \"partition\" = '2024-01-05'")"
check_eq "its rows are still there" "1" "$(lakeq "$d" "SELECT count(*) FROM lake.facts.daily WHERE d = DATE '2024-01-05'")"
run_ok "partitions" "$d" partitions facts.daily --format csv
contains "states" "2024-01-05,failed,1,$before," "$OUT"
contains "the error" "no data for 2024-01-05" "$OUT"
contains "built ones" "2024-01-04,built,1," "$OUT"
run_ok "--failed retries the failed slice only" "$d" backfill facts.daily --start 2024-01-01 --end 2024-01-12 --failed --json
check_eq "just it" "2024-01-05:success" "$(json_slices)"

# Stopped with SIGTERM mid-way: the slice in flight is rolled back, what was built is kept; run
# again, the backfill builds only what is left.
slow_backfill() { # slow_backfill OUTFILE ARGS… — a backfill with slow slices, in the background
    local out=$1
    shift
    TARN_TEST_ROWS=30000000 "$TARN" backfill facts.daily --json -C "$d" "$@" >"$out" 2>"$out.err" &
    BG=$!
}
wait_events() { # wait_events FILE N — until FILE has N slice events (at most 120 s)
    local i
    for i in $(seq 1 1200); do
        [ "$(grep -c '"event":"slice"' "$1" 2>/dev/null)" -ge "$2" ] && return 0
        kill -0 "$BG" 2>/dev/null || return 1
        sleep 0.1
    done
    return 1
}
o=$(mktemp "$_E2E_TMP/bf.XXXXXX")
slow_backfill "$o" --start 2024-02-01 --end 2024-02-08
if wait_events "$o" 2; then ok "two slices built"; else fail "two slices built" "$(cat "$o" "$o.err")"; fi
kill -TERM "$BG"
wait "$BG"
check_eq "SIGTERM: exit 143" "143" "$?"
done_n=$(grep -c '"status":"success"' "$o")
check_eq "what it committed is recorded, nothing else" "$done_n" \
    "$(lakeq "$d" "SELECT count(*) FROM $CAT.tarn_partition WHERE model = 'facts.daily' AND \"partition\" LIKE '2024-02-%' AND status = 'success'")"
check_eq "the run is cancelled" "backfill,cancelled" \
    "$(lakeq "$d" "SELECT \"trigger\", status FROM $CAT.tarn_run ORDER BY run_id DESC LIMIT 1")"
run_ok "run again" "$d" backfill facts.daily --start 2024-02-01 --end 2024-02-08 --json
check_eq "it builds only what is left" "$((8 - done_n))" "$(json_slices | wc -w)"
check_eq "every slice built once at last" "8" \
    "$(lakeq "$d" "SELECT count(*) FROM lake.facts.daily WHERE d BETWEEN DATE '2024-02-01' AND DATE '2024-02-08'")"

# Killed outright (kill -9): the run is left 'running'; the next one marks it interrupted and
# builds what is left.
slow_backfill "$o" --start 2024-03-01 --end 2024-03-06
if wait_events "$o" 1; then ok "one slice built"; else fail "one slice built" "$(cat "$o" "$o.err")"; fi
kill -KILL "$BG"
wait "$BG" 2>/dev/null
done_n=$(lakeq "$d" "SELECT count(*) FROM $CAT.tarn_partition WHERE model = 'facts.daily' AND \"partition\" LIKE '2024-03-%' AND status = 'success'")
run_ok "run again after kill -9" "$d" backfill facts.daily --start 2024-03-01 --end 2024-03-06
contains "the killed run is marked interrupted" "marked interrupted" "$ERR"
contains "builds only what is left" "$((6 - done_n)) of 6 slices" "$ERR"
check_eq "no slice twice" "6,6" \
    "$(lakeq "$d" "SELECT count(*), count(DISTINCT d) FROM lake.facts.daily WHERE d BETWEEN DATE '2024-03-01' AND DATE '2024-03-06'")"
check_eq "the killed run" "interrupted" \
    "$(lakeq "$d" "SELECT status FROM $CAT.tarn_run WHERE \"trigger\" = 'backfill' ORDER BY run_id DESC LIMIT 1 OFFSET 1")"

# tarn run --from/--to builds slice by slice too.
BAD_DAY=2024-04-02 run_rc "a range with a bad day" 1 "$d" run facts.daily --from 2024-04-01 --to 2024-04-03
check_eq "a bad slice no longer fails its good neighbours" "2024-04-01:success 2024-04-02:failed 2024-04-03:success" \
    "$(lakeq "$d" "SELECT string_agg(\"partition\" || ':' || status, ' ' ORDER BY \"partition\") FROM $CAT.tarn_partition WHERE model = 'facts.daily' AND \"partition\" LIKE '2024-04-%'")"
contains "the failure names its slice" "partition 2024-04-02" "$ERR"

# Usage and project errors.
run_rc "not partitioned" 2 "$d" backfill facts.plain --start 2024-01-01
contains "says so" "facts.plain is not partitioned" "$ERR"
run_rc "no range and no start=" 2 "$d" backfill facts.daily
contains "names the fix" "give the range: tarn backfill facts.daily --start 2024-01-01" "$ERR"
run_rc "a reversed range" 2 "$d" backfill facts.daily --start 2024-01-05 --end 2024-01-01
run_rc "a bad date" 2 "$d" backfill facts.daily --start 2024-13-01
run_rc "no model" 2 "$d" backfill
run_rc "an unknown model" 2 "$d" backfill facts.nope --start 2024-01-01
run_rc "partitions of a plain model" 2 "$d" partitions facts.plain

# start=: the first run builds every slice from start to now, one snapshot each; later runs the
# current slice and lookback=1 before it.
start=$(date -u -d '3 days ago' +%Y-%m-%d)
today=$(date -u +%Y-%m-%d)
yesterday=$(date -u -d '1 day ago' +%Y-%m-%d)
cat >"$d/models/facts/recent.sql" <<SQL
-- partitioned daily column=d start=$start lookback=1
SELECT CAST({partition} AS DATE) AS d, count(*) AS n FROM src.slow
SQL
run_ok "partitions before the first run" "$d" partitions facts.recent --format csv
check_eq "every slice from start is missing" "4" "$(printf '%s\n' "$OUT" | grep -c ',missing,')"
run_ok "plan before the first run" "$d" plan facts.recent
contains "plan: the range a first run builds" "would build: first run: every slice from start=$start, 4 slices $start … $today, one snapshot each" "$OUT"
contains "plan: the slices listed" "daily by d: 4 partitions $start … $today" "$OUT"
run_ok "plan --json" "$d" plan facts.recent --json
contains "plan --json: the range" "\"range\":\"first run: every slice from start=$start, 4 slices" "$OUT"
run_ok "first run" "$d" run facts.recent --json
check_eq "four slices, four snapshots" "4" \
    "$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE commit_message LIKE '%facts.recent%'")"
contains "the reason" "first run (every slice from start=$start)" "$OUT"
run_ok "plan after it" "$d" plan facts.recent
contains "plan: the lookback slices to rebuild" "would build: the current slice $today and the 1 before it (lookback=1): $yesterday, $today" "$OUT"
run_ok "second run" "$d" run facts.recent --json
contains "the current slice and the one before" "\"partitions\":[\"$yesterday\",\"$today\"]" "$OUT"
run_ok "partitions after" "$d" partitions facts.recent --format csv
check_eq "all built" "4" "$(printf '%s\n' "$OUT" | grep -c ',built,')"
run_ok "a backfill defaults to start=" "$d" backfill facts.recent
contains "nothing left" "nothing to backfill: 4 of the 4 slices $start … $today" "$ERR"

# Annotation errors, with file:line.
printf -- '-- partitioned daily column=d start=yesterday\nSELECT CAST({partition} AS DATE) AS d\n' >"$d/models/facts/recent.sql"
run_rc "bad start=" 2 "$d" plan
contains "start=" "models/facts/recent.sql:1: 'yesterday' is not a start date for start=" "$ERR"
printf -- '-- partitioned daily column=d lookback=x\nSELECT CAST({partition} AS DATE) AS d\n' >"$d/models/facts/recent.sql"
run_rc "bad lookback=" 2 "$d" plan
contains "lookback=" "models/facts/recent.sql:1: 'x' is not a number of slices for lookback=" "$ERR"
printf -- '-- partitioned dynamic column=d start=2024-01-01\nSELECT 1 AS d\n' >"$d/models/facts/recent.sql"
run_rc "start= on a dynamic model" 2 "$d" plan
contains "refused" "'start' applies to hourly, daily, weekly and monthly partitions" "$ERR"

finish

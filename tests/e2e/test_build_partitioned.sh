#!/usr/bin/env bash
# test_build_partitioned.sh — partitioned replace end to end on tests/fixtures/projects/events:
# --partition, --from/--to, the current slice by default, slices replaced independently and
# idempotently, {partition} and tarn_partition(ts), rows outside their slice rejected, dynamic
# partitions, the tarn_partition records and DuckLake partitioning of the table.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project events)

run_ok "plan shows the range" "$d" plan --from 2024-05-01 --to 2024-05-03
contains "plan lists the daily partitions" "daily by ts: 3 partitions 2024-05-01 … 2024-05-03" "$OUT"
contains "plan lists the weekly partition" "weekly by ts: 2024-W18" "$OUT"

run_ok "build three days" "$d" run --from 2024-05-01 --to 2024-05-03
check_eq "daily slices" "1,2024-05-01
2,2024-05-01
3,2024-05-02
4,2024-05-02
5,2024-05-03" "$(lakeq "$d" "SELECT id, _tarn_partition FROM lake.facts.events_daily ORDER BY id")"
check_eq "weekly slice read the daily table" "1,2024-W18
2,2024-W18
3,2024-W18
4,2024-W18
5,2024-W18" "$(lakeq "$d" "SELECT id, _tarn_partition FROM lake.facts.events_weekly ORDER BY id")"
check_eq "one snapshot per slice, its partition in the extra info" \
    "facts.events_daily,partitioned,[2024-05-01]:2 [2024-05-02]:2 [2024-05-03]:1" \
    "$(lakeq "$d" "SELECT any_value(j->>'model'), any_value(j->>'strategy'), string_agg(replace(j->>'partitions', '\"', '') || ':' || (j->>'rows_written'), ' ' ORDER BY s) FROM (SELECT snapshot_id AS s, commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') WHERE commit_message LIKE '%events_daily%')")"
check_eq "tarn_partition holds each slice" "facts.events_daily,2024-05-01,success,2
facts.events_daily,2024-05-02,success,2
facts.events_daily,2024-05-03,success,1
facts.events_weekly,2024-W18,success,5" \
    "$(lakeq "$d" "SELECT model, \"partition\", status, \"rows\" FROM __ducklake_metadata_lake.tarn_partition WHERE model LIKE '%events_%' ORDER BY ALL")"
check_eq "the table is partitioned by DuckLake" "1" \
    "$(lakeq "$d" "SELECT count(*) FROM __ducklake_metadata_lake.ducklake_partition_info pi JOIN __ducklake_metadata_lake.ducklake_table t USING (table_id) WHERE t.table_name = 'events_daily' AND pi.end_snapshot IS NULL AND t.end_snapshot IS NULL")"
check_eq "extra info says so" "true" \
    "$(lakeq "$d" "SELECT DISTINCT commit_extra_info::JSON->>'physical_partitioning' FROM ducklake_snapshots('lake') WHERE commit_message LIKE '%events_daily%'")"

# Re-running a slice is idempotent and leaves the other slices alone.
before=$(lake_dump "$d")
run_ok "re-run one day" "$d" run facts.events_daily --partition 2024-05-02
check_eq "same contents after re-running a slice" "$before" "$(lake_dump "$d")"
sed -i 's/^4,2024-05-02 12:00:00,eu,40$/4,2024-05-02 12:00:00,eu,41/; s/^1,2024-05-01 08:00:00,eu,10$/1,2024-05-01 08:00:00,eu,11/' "$d/data/events.csv"
snap_0501=$(lakeq "$d" "SELECT snapshot_id FROM __ducklake_metadata_lake.tarn_partition WHERE model = 'facts.events_daily' AND \"partition\" = '2024-05-01'")
run_ok "rebuild 2024-05-02 after a source change" "$d" run facts.events_daily --partition 2024-05-02
check_eq "only the rebuilt slice changed" "1,10
2,20
3,30
4,41
5,50" "$(lakeq "$d" "SELECT id, amount FROM lake.facts.events_daily ORDER BY id")"
check_eq "the other slice keeps its snapshot" "$snap_0501" \
    "$(lakeq "$d" "SELECT snapshot_id FROM __ducklake_metadata_lake.tarn_partition WHERE model = 'facts.events_daily' AND \"partition\" = '2024-05-01'")"
check_eq "the rebuilt slice has the new snapshot" \
    "$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")" \
    "$(lakeq "$d" "SELECT snapshot_id FROM __ducklake_metadata_lake.tarn_partition WHERE model = 'facts.events_daily' AND \"partition\" = '2024-05-02'")"
check_eq "rows deleted and written for the slice" "2,2" \
    "$(lakeq "$d" "SELECT j->>'rows_deleted', j->>'rows_written' FROM (SELECT commit_extra_info::JSON AS j FROM ducklake_snapshots('lake') ORDER BY snapshot_id DESC LIMIT 1)")"

# The default is the current slice (empty here: the data is from 2024).
today=$(date -u +%Y-%m-%d)
run_ok "default partition is today" "$d" run facts.events_daily --json
contains "today's slice was built" "\"partitions\":[\"$today\"]" "$OUT"
check_eq "nothing else changed" "5" "$(lakeq "$d" "SELECT count(*) FROM lake.facts.events_daily")"

# Rows outside their slice are refused, and the lake is left as it was. (The SQL changed, so the
# build rebuilds every slice built so far, from the first: 2024-05-01 fails.)
cat >"$d/models/facts/events_daily.sql" <<'SQL'
-- partitioned daily column=ts
SELECT id, ts, region, amount FROM raw.events
SQL
snap=$(snapshots "$d")
snap_0501=$(lakeq "$d" "SELECT snapshot_id FROM __ducklake_metadata_lake.tarn_partition WHERE model = 'facts.events_daily' AND \"partition\" = '2024-05-01'")
run_rc "rows outside the slice fail the build" 1 "$d" run facts.events_daily --partition 2024-05-02
contains "the error says why and how to fix it" \
    "partition 2024-05-01: the SELECT returned 4 rows outside the partition (the first has ts = 2024-05-02 00:00:00); filter with WHERE tarn_partition(ts) = {partition}" "$ERR"
check_eq "no snapshot written" "$snap" "$(snapshots "$d")"
check_eq "tarn_partition records the failure, keeps the last good snapshot" "failed,$snap_0501,2" \
    "$(lakeq "$d" "SELECT status, snapshot_id, \"rows\" FROM __ducklake_metadata_lake.tarn_partition WHERE model = 'facts.events_daily' AND \"partition\" = '2024-05-01'")"
cp "$FIXTURES/projects/events/models/facts/events_daily.sql" "$d/models/facts/events_daily.sql"

# Bad partition arguments are usage errors.
run_rc "a malformed --partition" 2 "$d" run facts.events_daily --partition 2024-5-2
contains "it says the expected form" "'2024-5-2' is not a daily partition: write YYYY-MM-DD" "$ERR"
run_rc "--from without --to" 2 "$d" run --from 2024-05-01
run_rc "a reversed range" 2 "$d" run facts.events_daily --from 2024-05-03 --to 2024-05-01

# Dynamic partitions: every region the SELECT yields replaces its slice.
check_eq "dynamic slices" "apac,1,60,apac
eu,3,80,eu
us,2,70,us" "$(lakeq "$d" "SELECT * FROM lake.facts.by_region ORDER BY region")"
sed -i '/,us,/d' "$d/data/events.csv"
run_ok "rebuild dynamic slices" "$d" run facts.by_region
check_eq "a region absent from the SELECT keeps its slice" "apac,1,60
eu,3,82
us,2,70" "$(lakeq "$d" "SELECT region, events, amount FROM lake.facts.by_region ORDER BY region")"
cat >"$d/models/facts/by_region.sql" <<'SQL'
-- partitioned dynamic column=region
SELECT region, count(*) AS events, sum(amount) AS amount
FROM raw.events WHERE region = {partition}
GROUP BY ALL
SQL
run_rc "dynamic with {partition} needs --partition" 2 "$d" run facts.by_region
contains "it says so" "give --partition VALUE" "$ERR"
run_ok "dynamic --partition us (now empty)" "$d" run facts.by_region --partition us
check_eq "the us slice is empty now" "apac
eu" "$(lakeq "$d" "SELECT region FROM lake.facts.by_region ORDER BY region")"

finish

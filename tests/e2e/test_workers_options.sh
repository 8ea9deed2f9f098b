#!/usr/bin/env bash
# tests/e2e/test_workers_options.sh — `tarn run --on-workers` (two `tarn worker`s, a throwaway
# PostgreSQL cluster: pg_lib.sh) on a lake attached with METADATA_SCHEMA and on partitioned
# models (tests/fixtures/projects/events: daily slices built one snapshot each, a weekly model
# reading them, a dynamic one, and a plain model reading the daily table): the same tables,
# rows, run records and text output as `tarn run -j 1` of the same project; tarn's tables,
# the queue's among them, in the metadata schema; every model (every slice) committed once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"
. "$(dirname "$0")/pg_lib.sh"
. "$(dirname "$0")/worker_lib.sh"

pg_start || {
    [ -n "$PG_SKIP" ] && skip "workers with METADATA_SCHEMA and partitions" "$PG_SKIP"
    finish
}


# q DIR SQL — CSV rows of SQL on DIR's lake, attached as its config/catalog.sql attaches it.
# (a query that fails says so, naming DIR: two failures never compare equal)
q() { (cd "$1" && "$TARN" sql --format csv -c "$(cat config/catalog.sql) $2") || echo "query failed in $1"; }

# normalize — a run's text lines without what differs between runs (times, snapshot ids),
# sorted (two workers finish independent models in either order)
normalize() {
    sed -E 's/[0-9.]+ (ms|s)\b/T/g; s/snapshot [0-9]+/snapshot N/g; s/run [0-9]+/run N/g' | sort
}

# the events fixture, and a plain model reading the partitioned daily table
proj() {
    local d
    d=$(project events)
    pg_createdb "$1"
    echo "ATTACH 'ducklake:postgres:$(pg_conninfo "$1")' AS lake (DATA_PATH 'lake/', METADATA_SCHEMA 'x');" \
        >"$d/config/catalog.sql"
    echo "SELECT count(*) AS n, sum(amount) AS amount FROM facts.events_daily" \
        >"$d/models/facts/total.sql"
    echo "$d"
}
s=$(proj onworkers)
l=$(proj local)

for w in w1 w2; do
    "$TARN" worker -C "$s" --id "$w" --lease 5 >"$s/$w.log" 2>&1 </dev/null &
    BG+=($!)
done
run_ok "a run on two workers" "$s" run --on-workers --from 2024-05-01 --to 2024-05-03
pg_text=$(grep -v "waiting for a worker" <<<"$ERR" | normalize)
run_ok "the same run in one process" "$l" run -j 1 --from 2024-05-01 --to 2024-05-03
check_eq "the run's text output is tarn run's" "$(normalize <<<"$ERR")" "$pg_text"
contains "the daily model is reported with its three slices" \
    "facts.events_daily               partitioned        5 rows  snapshot N  3 partitions" "$pg_text"

for t in events_daily events_weekly by_region total; do
    check_eq "facts.$t: the rows are tarn run's" \
        "$(q "$l" "SELECT * FROM lake.facts.$t ORDER BY ALL")" \
        "$(q "$s" "SELECT * FROM lake.facts.$t ORDER BY ALL")"
done
recs="SELECT model, \"partition\", status, \"rows\" FROM __ducklake_metadata_lake.x.tarn_partition ORDER BY ALL"
check_eq "the slices' records are tarn run's" "$(q "$l" "$recs")" "$(q "$s" "$recs")"
# (a build whose commit conflicted with another worker's is built again: its failed attempt is
# recorded beside the success)
recs="SELECT model, status, rows_written, partitions, run_reason, snapshot_id IS NOT NULL FROM
      __ducklake_metadata_lake.x.tarn_model_run WHERE status = 'success' ORDER BY ALL"
check_eq "the builds' records are tarn run's" "$(q "$l" "$recs")" "$(q "$s" "$recs")"
check_eq "tarn's tables are in the metadata schema only" "x|7|0" \
    "$(pg_psql "SELECT max(table_schema), count(*), count(*) FILTER (WHERE table_schema <> 'x')
                FROM information_schema.tables WHERE table_name LIKE 'tarn\\_%'" onworkers)"
check_eq "every model and slice committed once, each commit one snapshot" "6|6|6" \
    "$(pg_psql "SELECT count(*), count(DISTINCT (model, slice)),
                (SELECT count(*) - 1 FROM x.ducklake_snapshot) FROM x.tarn_job_commit" onworkers)"
check_eq "the records name the snapshots the commits made (renumbered past other workers')" \
    "$(pg_psql "SELECT string_agg(snapshot_id::text, ',' ORDER BY snapshot_id) FROM x.tarn_job_commit" onworkers)" \
    "$(pg_psql "SELECT string_agg(snapshot_id::text, ',' ORDER BY snapshot_id) FROM x.tarn_model_run
                WHERE run_id = 1 AND status = 'success'" onworkers)"
check_eq "both workers took part" "2" \
    "$(pg_psql "SELECT count(DISTINCT worker) FROM x.tarn_job_commit" onworkers)"

run_ok "a second run on workers" "$s" run --on-workers facts.by_region facts.total
contains "it finds the first run's records in the schema (unchanged)" "2 unchanged" "$ERR"

stop_workers
finish

#!/usr/bin/env bash
# test_ops_slices.sh — key= and append inside a partitioned model's slices (Windmill's grammar):
# a slice build with key= merges its rows by key within that slice (rows of keys the query no
# longer yields stay, the same key in another slice is another row), append adds its rows to the
# slice; neither touches another slice. An append model is not rebuilt on every run (its input
# unchanged, it is skipped: nothing appended twice); --full-refresh replaces the slice; a
# duplicate key fails the slice, writing nothing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

CAT=__ducklake_metadata_lake

d=$(mktempdir)
mkdir -p "$d/config" "$d/models/facts" "$d/data"
lake_catalog "$d"
cat >"$d/config/sources.sql" <<'SQL'
CREATE SCHEMA IF NOT EXISTS raw;
CREATE OR REPLACE VIEW raw.items AS
SELECT * FROM read_csv('data/items.csv', header = true, columns = {'id': 'INTEGER', 'd': 'DATE', 'v': 'INTEGER'});
CREATE OR REPLACE VIEW raw.landing AS
SELECT * FROM read_csv('data/landing.csv', header = true, columns = {'id': 'INTEGER', 'd': 'DATE', 'v': 'INTEGER'});
SQL
cat >"$d/models/facts/keyed.sql" <<'SQL'
-- materialize key=id
-- partitioned daily column=d
SELECT id, d, v FROM raw.items WHERE tarn_partition(d) = {partition}
SQL
cat >"$d/models/facts/log.sql" <<'SQL'
-- materialize append
-- partitioned daily column=d
SELECT id, d, v FROM raw.landing WHERE tarn_partition(d) = {partition}
SQL
cat >"$d/data/items.csv" <<'CSV'
id,d,v
1,2024-01-01,10
2,2024-01-01,20
1,2024-01-02,100
5,2024-01-02,500
CSV
cat >"$d/data/landing.csv" <<'CSV'
id,d,v
1,2024-01-01,1
2,2024-01-02,2
CSV

rows() { lakeq "$d" "SELECT string_agg(_tarn_partition || ':' || id || '=' || v, ' ' ORDER BY _tarn_partition, id, v) FROM lake.facts.$1"; }

run_ok "build two days of both" "$d" run --from 2024-01-01 --to 2024-01-02
check_eq "keyed: both slices" "2024-01-01:1=10 2024-01-01:2=20 2024-01-02:1=100 2024-01-02:5=500" "$(rows keyed)"
check_eq "log: both slices" "2024-01-01:1=1 2024-01-02:2=2" "$(rows log)"
check_eq "the strategy recorded" "partitioned daily column=d key=id" \
    "$(lakeq "$d" "SELECT DISTINCT strategy_spec FROM $CAT.tarn_model_run WHERE model = 'facts.keyed'")"

# ---- key=: a slice merges by key, inside itself ---------------------------------------------------
cat >"$d/data/items.csv" <<'CSV'
id,d,v
1,2024-01-01,11
3,2024-01-01,30
1,2024-01-02,999
5,2024-01-02,555
CSV
snap=$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")
run_ok "rebuild one slice of the keyed model" "$d" run facts.keyed --partition 2024-01-01
check_eq "key 1 updated, key 3 added, key 2 kept; the other slice untouched (its key 1 too)" \
    "2024-01-01:1=11 2024-01-01:2=20 2024-01-01:3=30 2024-01-02:1=100 2024-01-02:5=500" "$(rows keyed)"
s=$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")
check_eq "one snapshot" "$((snap + 1))" "$s"
check_eq "the change feed: only key 1 rewritten and key 3 added, in that slice" "1/2024-01-01/delete 1/2024-01-01/insert 3/2024-01-01/insert" \
    "$(lakeq "$d" "SELECT string_agg(id || '/' || _tarn_partition || '/' || change_type, ' ' ORDER BY id, change_type) FROM ducklake_table_changes('lake', 'facts', 'keyed', $s, $s)")"
check_eq "the record: 1 written over 1 deleted, plus 1 new" "2,1" \
    "$(lakeq "$d" "SELECT rows_written, rows_deleted FROM $CAT.tarn_model_run WHERE model = 'facts.keyed' ORDER BY run_id DESC LIMIT 1")"
snaps=$(snapshots "$d")
run_ok "the same slice again" "$d" run facts.keyed --partition 2024-01-01
check_eq "nothing changed: no snapshot" "$snaps" "$(snapshots "$d")"

# a duplicate key inside the slice fails it, writing nothing
echo "3,2024-01-01,31" >>"$d/data/items.csv"
dump=$(lake_dump "$d")
run_rc "a duplicate key in the slice" 1 "$d" run facts.keyed --partition 2024-01-01
contains "the error names the key and the file" "models/facts/keyed.sql:3: merge key (id) is not unique in the SELECT: 1 key appears more than once: id=3 (2 rows); nothing was written" "$ERR"
check_eq "the lake is as it was" "$dump" "$(lake_dump "$d")"
sed -i '$d' "$d/data/items.csv"

# --full-refresh replaces the slice: key 2, gone from the source, goes
run_ok "--full-refresh of one slice" "$d" run facts.keyed --partition 2024-01-01 --full-refresh
check_eq "the slice is the query's rows; the other is untouched" \
    "2024-01-01:1=11 2024-01-01:3=30 2024-01-02:1=100 2024-01-02:5=500" "$(rows keyed)"

# ---- append: rows added to the slice, never twice by a plain run ----------------------------------
cat >"$d/data/landing.csv" <<'CSV'
id,d,v
3,2024-01-02,3
CSV
run_ok "a run at 2024-01-02 appends the new batch to the current slice" "$d" run facts.log --now 2024-01-02T12:00:00Z
check_eq "appended, the other slice untouched" "2024-01-01:1=1 2024-01-02:2=2 2024-01-02:3=3" "$(rows log)"
contains "it ran because its input changed" "source file changed: data/landing.csv" "$ERR"
snaps=$(snapshots "$d")
run_ok "the same again" "$d" run facts.log --now 2024-01-02T13:00:00Z
contains "unchanged: skipped, not appended twice" "unchanged" "$ERR"
check_eq "no snapshot" "$snaps" "$(snapshots "$d")"
check_eq "the rows once" "2024-01-01:1=1 2024-01-02:2=2 2024-01-02:3=3" "$(rows log)"
run_ok "plan says so" "$d" plan facts.log --now 2024-01-02T13:00:00Z
contains "would skip" "would skip: unchanged" "$OUT"
run_ok "the next day, its input unchanged" "$d" run facts.log --now 2024-01-03T01:00:00Z
contains "a slice never built is built" "(current partition (not built yet))" "$ERR"
check_eq "it has no rows of that day: nothing appended" "2024-01-01:1=1 2024-01-02:2=2 2024-01-02:3=3" "$(rows log)"

# ---- a partitioned model changes how it writes its slices: nothing refused -------------------------
sed -i 's/^-- materialize key=id$/-- materialize append/' "$d/models/facts/keyed.sql"
run_ok "key= → append on the same slices" "$d" run facts.keyed --partition 2024-01-02
contains "it runs" "facts.keyed" "$ERR"

# ---- load errors ------------------------------------------------------------------------------------
sed -i 's/^-- partitioned daily column=d$/-- partitioned daily column=d lookback=1/' "$d/models/facts/log.sql"
run_rc "append with lookback=" 2 "$d" run
contains "refused at its line" "models/facts/log.sql:2: lookback=1 cannot be combined with 'append'" "$ERR"

finish

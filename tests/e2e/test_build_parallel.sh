#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# test_build_parallel.sh — `tarn run -j N`: workers evaluate models' queries while the session
# builds. A project with every strategy (replace, merge, append, history and a reader of its
# current view, partitioned daily with tarn_partition() and {partition}, partitioned dynamic, a
# model with setup statements, a manual one), config/ with
# connection-local statements (a TEMP macro, SET VARIABLE, a TEMP view) that workers must replay:
# -j 4 gives exactly the lake of -j 1 (first run, and a second one after a source changed); models
# were evaluated ahead on workers and overlapped; every build read its upstream models at the
# snapshot their build in this run produced; a failing model fails with the same message as with
# -j 1, skips its downstream only, and leaves no snapshot; --json stays one event per line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

# make_project DIR — writes the project.
make_project() {
    local p=$1
    mkdir -p "$p/config" "$p/data" "$p/models/staging" "$p/models/core" "$p/models/marts"
    cat >"$p/config/catalog.sql" <<'EOF'
ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');
EOF
    cat >"$p/config/sources.sql" <<'EOF'
CREATE SCHEMA IF NOT EXISTS raw;
CREATE OR REPLACE VIEW raw.people AS
    FROM read_csv('data/people.csv', header = true,
                  columns = {'id': 'INTEGER', 'name': 'VARCHAR', 'city': 'VARCHAR', 'score': 'INTEGER'});
-- Connection-local: every worker must run these as the session did.
CREATE OR REPLACE TEMP MACRO bump(x) AS x * 10 + 1;
SET VARIABLE bonus = 7;
CREATE OR REPLACE TEMP VIEW small_numbers AS SELECT range AS n FROM range(5);
-- A TEMP table is not computed again on workers: its readers are evaluated in the session.
CREATE TEMP TABLE seed AS SELECT 42 AS v;
EOF
    cat >"$p/data/people.csv" <<'EOF'
id,name,city,score
1,Ada,Paris,10
2,Bo,Oslo,20
3,Cy,Rome,30
4,Di,Oslo,40
EOF
    # layer 0: independent models, one of them slow enough to overlap with the others
    cat >"$p/models/staging/people.sql" <<'EOF'
SELECT id, upper(name) AS name, city, bump(score) AS score FROM raw.people ORDER BY id
EOF
    cat >"$p/models/staging/numbers.sql" <<'EOF'
SELECT n, n * getvariable('bonus') AS bonus FROM small_numbers
EOF
    cat >"$p/models/staging/heavy.sql" <<'EOF'
SELECT i % 97 AS k, count(*) AS n, sum(hash(i) % 1000) AS h
FROM range(6000000) t(i) GROUP BY ALL ORDER BY k
EOF
    cat >"$p/models/staging/heavy2.sql" <<'EOF'
SELECT i % 89 AS k, count(*) AS n, max(hash(i * 3) % 1000) AS h
FROM range(6000000) t(i) GROUP BY ALL ORDER BY k
EOF
    cat >"$p/models/staging/with_setup.sql" <<'EOF'
CREATE OR REPLACE TEMP TABLE picks AS SELECT 3 AS n;
SELECT n FROM picks
EOF
    cat >"$p/models/staging/broken.sql" <<'EOF'
SELECT CAST(name AS INTEGER) AS id FROM raw.people
EOF
    cat >"$p/models/staging/seeded.sql" <<'EOF'
SELECT v, v + 1 AS w FROM seed
EOF
    # layer 1
    cat >"$p/models/core/people_merged.sql" <<'EOF'
-- materialize key=id
SELECT id, name, score + getvariable('bonus') AS score FROM staging.people
EOF
    cat >"$p/models/core/people_log.sql" <<'EOF'
-- materialize append
SELECT id, score FROM staging.people
EOF
    cat >"$p/models/core/people_hist.sql" <<'EOF'
-- materialize key=id history
SELECT id, city FROM staging.people
EOF
    cat >"$p/models/core/joined.sql" <<'EOF'
SELECT p.id, p.name, h.n AS heavy_n, n.bonus
FROM staging.people p
JOIN staging.heavy h ON h.k = p.id
JOIN staging.numbers n ON n.n = p.id
ORDER BY p.id
EOF
    cat >"$p/models/core/by_city.sql" <<'EOF'
-- partitioned dynamic column=city
SELECT city, count(*) AS people FROM staging.people GROUP BY city
EOF
    cat >"$p/models/core/today.sql" <<'EOF'
-- partitioned daily column=ts
SELECT current_date::TIMESTAMP + INTERVAL (id) HOUR AS ts, id, name
FROM staging.people
WHERE tarn_partition(current_date::TIMESTAMP + INTERVAL (id) HOUR) = {partition}
EOF
    cat >"$p/models/core/after_broken.sql" <<'EOF'
SELECT id + 1 AS id FROM staging.broken
EOF
    cat >"$p/models/core/stamp.sql" <<'EOF'
-- materialize manual
CREATE TABLE IF NOT EXISTS lake.core.stamp (n INTEGER);
INSERT INTO lake.core.stamp SELECT count(*) FROM lake.staging.people;
EOF
    # layer 2
    cat >"$p/models/marts/current_cities.sql" <<'EOF'
SELECT city, count(*) AS n FROM core.people_hist_current GROUP BY city ORDER BY city
EOF
    cat >"$p/models/marts/summary.sql" <<'EOF'
SELECT (SELECT sum(score) FROM core.people_merged) AS merged,
       (SELECT count(*) FROM core.people_log) AS logged,
       (SELECT sum(heavy_n) FROM core.joined) AS heavy,
       (SELECT sum(h) FROM staging.heavy2) AS heavy2
EOF
}

# dump DIR — lake_dump with the history model's build times masked (they are wall-clock times).
dump() {
    lake_dump "$1" | sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+/TIME/g'
}

# events — "event model status prefetch" per line of the --json output in $OUT.
events() {
    printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    print(o["event"], o.get("model", "-"), o.get("status", "-"), o.get("prefetch", "-"))'
}

a=$(mktempdir)
b=$(mktempdir)
make_project "$a"
make_project "$b"

run_rc "-j 1: the broken model fails" 1 "$a" run -j 1
err_a=$ERR
run_rc "-j 4: the broken model fails" 1 "$b" run -j 4 --json
json_b=$OUT
err_b=$ERR

check_eq "-j 4 gives the same lake as -j 1" "$(dump "$a")" "$(dump "$b")"
check_eq "the same number of snapshots" "$(snapshots "$a")" "$(snapshots "$b")"
check_eq "every stdout line is a JSON event" "" "$(events >/dev/null 2>&1 || echo bad)"
check_eq "run_start says 4 jobs" "4 None" "$(printf '%s\n' "$json_b" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["event"] == "run_start":
        print(o["jobs"], o["jobs_note"])')"

prefetched=$(events | awk '$1 == "model_finish" && $4 == "used" {print $2}' | sort | tr '\n' ' ')
case $prefetched in
*staging.* | *core.* | *marts.*) ok "some models were evaluated on workers ($prefetched)" ;;
*) fail "some models were evaluated on workers" "none: $(events)" ;;
esac
for m in staging.with_setup core.stamp staging.seeded; do
    check_eq "$m runs in the session (setup statements, manual, TEMP table)" "" \
        "$(events | awk -v m="$m" '$1 == "model_finish" && $2 == m && $4 == "used"')"
done
check_eq "builds overlap: a model starts before an earlier one finishes" "yes" \
    "$(printf '%s\n' "$json_b" | python3 -c '
import json, sys
open_ = set(); overlap = False
for l in sys.stdin:
    o = json.loads(l)
    if o["event"] == "model_start":
        overlap |= len(open_) > 0
        open_.add(o["model"])
    elif o["event"] == "model_finish":
        open_.discard(o["model"])
print("yes" if overlap else "no")')"

# Every build read each upstream model at the snapshot that model's build produced in this run.
check_eq "upstream snapshots are the upstream builds' snapshots" "" \
    "$(printf '%s\n' "$json_b" | python3 -c '
import json, sys
snap, ups = {}, {}
for l in sys.stdin:
    o = json.loads(l)
    if o["event"] == "model_finish" and o["status"] == "success":
        snap["lake." + o["model"]] = o["snapshot_id"]
        snap[o["model"]] = o["snapshot_id"]
        ups[o["model"]] = o["upstream"]
for m, us in ups.items():
    for u in us:
        t = u["table"].replace("_current", "")
        if t in snap and u["snapshot_id"] != snap[t]:
            print(m, "read", u["table"], "at", u["snapshot_id"], "not", snap[t])')"

# The failure: same message, downstream skipped, siblings built, no snapshot for it.
msg_a=$(printf '%s\n' "$err_a" | grep -A1 'FAILED    staging.broken' | tail -n 1)
contains "-j 1 names file and line" "models/staging/broken.sql:1:" "$msg_a"
contains "-j 4 gives the same message" "$msg_a" "$err_b"
contains "its downstream is skipped" "upstream staging.broken failed" "$err_b"
check_eq "statuses" "core.after_broken skipped
marts.current_cities success
marts.summary success
staging.broken failed" \
    "$(events | awk '$1 == "model_finish" && ($2 ~ /broken|marts/) {print $2, $3}' | sort)"
check_eq "run records agree" "1,15,1" \
    "$(lakeq "$b" "SELECT models_failed, models_succeeded, models_skipped FROM __ducklake_metadata_lake.tarn_run")"

# The connection-local config reached the workers: bump() and the bonus variable.
check_eq "TEMP macro and variable in worker-evaluated models" "1,ADA,101,108" \
    "$(lakeq "$b" "SELECT p.id, p.name, p.score, m.score FROM lake.staging.people p JOIN lake.core.people_merged m USING (id) WHERE id = 1")"
check_eq "TEMP view read by a worker" "4,28" \
    "$(lakeq "$b" "SELECT max(n), max(bonus) FROM lake.staging.numbers")"
check_eq "the config's TEMP table, read in the session" "42,43" \
    "$(lakeq "$b" "SELECT v, w FROM lake.staging.seeded")"

# A second run after a source changed: the changed models and their downstream rebuild in
# both, and the lakes stay equal.
for p in "$a" "$b"; do
    printf '5,Ed,Rome,50\n' >>"$p/data/people.csv"
    printf 'SELECT 1 AS id\n' >"$p/models/staging/broken.sql"
done
run_ok "-j 1: second run" "$a" run -j 1
run_ok "-j 4: second run" "$b" run -j 4 --json
check_eq "still the same lake" "$(dump "$a")" "$(dump "$b")"
check_eq "the heavy models were unchanged" "staging.heavy unchanged
staging.heavy2 unchanged" \
    "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
for l in sys.stdin:
    o = json.loads(l)
    if o["event"] == "model_finish" and o["model"].startswith("staging.heavy"):
        print(o["model"], o.get("reason"))' | sort)"
check_eq "history kept both versions of nobody, added Ed" "5,5" \
    "$(lakeq "$b" "SELECT count(*), count(*) FILTER (WHERE valid_to IS NULL) FROM lake.core.people_hist")"

# -j 2 on a project where one model alone is ready at a time builds it in the session.
run_ok "-j 2 --force" "$b" run -j 2 --force staging.people --json
check_eq "a lone model is not staged" "model_finish staging.people success none" \
    "$(events | grep model_finish)"

# A worker that fails is not an error: the session evaluates the query itself. Two models ready
# together: the session takes the first in run order, a worker the second, which reads the
# config's TEMP table (not re-created on workers) and so fails there.
w=$(mktempdir)
mkdir -p "$w/config" "$w/models/s"
cat >"$w/config/catalog.sql" <<'EOF'
ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');
CREATE TEMP TABLE seed AS SELECT 42 AS v;
EOF
echo "SELECT count(*) AS n FROM range(3000000)" >"$w/models/s/a_first.sql"
echo "SELECT v FROM seed" >"$w/models/s/b_seeded.sql"
run_ok "-j 2: a worker fails on a TEMP table" "$w" run -j 2 --json
check_eq "the session built it after the worker failed" "model_finish s.a_first success none
model_finish s.b_seeded success failed" "$(events | grep model_finish | sort)"
check_eq "with the session's rows" "42" "$(lakeq "$w" "SELECT v FROM lake.s.b_seeded")"

finish

#!/usr/bin/env bash
# tests/e2e/test_build_merge_broken_file.sh — a merge (or history) model whose table has a data
# file missing or corrupt, and tables rebuilt from scratch meeting an empty result:
#   - a merge build keeps the rows already in its table, so it cannot build over one it cannot
#     read: `tarn run` (its SQL changed, or --force, an empty result too) fails before writing,
#     naming the model's file, the data file and the remedy (restore the file, or
#     `tarn run --full-refresh`), not a statement of the build nor the model's SQL line; the
#     models downstream are skipped and no snapshot is made;
#   - `tarn run --full-refresh` rebuilds it, as a replace build rebuilds a replace table
#     (test_lake_broken_file.sh): the empty check is skipped when the rows cannot be counted, so
#     an empty result makes an empty table, and it reads again;
#   - a history build over a broken table fails the same way (restore the file), and so do an
#     append and an incremental build (restore the file, or --full-refresh), recorded as failed;
#   - on a readable table, a --full-refresh (any strategy) whose SELECT returns no rows is a
#     replace that would empty it: refused as a replace is, unless --allow-empty, after which the
#     table is empty (before, the rebuild was rolled back as "no change" and the old rows kept).
#
# Run: `bash tests/e2e/test_build_merge_broken_file.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

contains() {
    case $3 in
    *"$2"*) ok "$1" ;;
    *) fail "$1" "missing: $2" "in: $3" ;;
    esac
}

# run DIR ARGS… — `tarn run -q` in DIR: stderr to $ERR, status in $RC.
run() {
    local d=$1
    shift
    ERR=$("$TARN" run -C "$d" -q "$@" 2>&1 >/dev/null)
    RC=$?
}

# q DIR SQL — one query on DIR's lake, CSV without the header.
q() {
    lake_sql "$1" "$2" | tail -n +2
}

snapshots() {
    q "$1" "SELECT count(*) FROM ducklake_snapshots('l')"
}

# model DIR ANNOTATION SQL — models/s/t.sql.
model() {
    printf -- '-- materialize %s\n%s\n' "$2" "$3" >"$1/models/s/t.sql"
}

# project ANNOTATION — a built project: model s.t (3000 rows) and s.n downstream of it.
project() {
    local p
    p=$(mktempdir)
    mkdir -p "$p/config" "$p/models/s"
    echo "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/');" >"$p/config/catalog.sql"
    model "$p" "$1" "SELECT range AS a, 'x' AS b FROM range(3000)"
    echo "SELECT count(*) AS n FROM s.t" >"$p/models/s/n.sql"
    "$TARN" run -C "$p" -q >/dev/null 2>&1 || echo "first run failed" >&2
    echo "$p"
}

# brake DIR KIND — s.t's one data file removed (missing) or overwritten (corrupt).
brake() {
    local f
    f=$(find "$1/d" -path '*/t/*' -name '*.parquet')
    case $2 in
    missing) rm "$f" ;;
    corrupt) echo "not parquet at all" >"$f" ;;
    esac
}

for kind in missing corrupt; do
    p=$(project "key=a")
    brake "$p" "$kind"
    snaps=$(snapshots "$p")
    model "$p" "key=a" "SELECT range AS a, 'y' AS b FROM range(10)"
    run "$p"
    check_eq "$kind: a merge build over its broken table fails" "1" "$RC"
    contains "$kind: naming the model's file" "models/s/t.sql: " "$ERR"
    contains "$kind: the table and the data file" "table s.t cannot be read" "$ERR"
    contains "$kind: which file" "$p/d/s/t/ducklake-" "$ERR"
    contains "$kind: and the remedy" "restore the file, or rebuild the table from the query with \`tarn run --full-refresh s.t\`" "$ERR"
    case $ERR in
    *"models/s/t.sql:2"*) fail "$kind: the model's SQL is not blamed" "$ERR" ;;
    *) ok "$kind: the model's SQL is not blamed" ;;
    esac
    contains "$kind: the model downstream is skipped" "1 failed, 1 skipped" "$ERR"
    check_eq "$kind: no snapshot" "$snaps" "$(snapshots "$p")"
    check_eq "$kind: recorded as failed" "failed" \
        "$(q "$p" "SELECT status FROM __ducklake_metadata_l.tarn_model_run WHERE model = 's.t' ORDER BY run_id DESC LIMIT 1")"

    run "$p" --force s.t
    check_eq "$kind: --force fails the same way" "1" "$RC"
    contains "$kind: with the remedy" "tarn run --full-refresh s.t" "$ERR"

    # an empty result: the same failure, not the empty check's (the rows cannot be counted)
    model "$p" "key=a" "SELECT range AS a, 'y' AS b FROM range(10) WHERE false"
    run "$p" s.t
    contains "$kind: an empty result fails the same way" "tarn run --full-refresh s.t" "$ERR"

    cp -r "$p" "$p.empty"
    run "$p.empty" --full-refresh s.t
    check_eq "$kind: --full-refresh with an empty result rebuilds it" "0" "$RC"
    check_eq "$kind: empty, and it reads again" "0" "$(q "$p.empty" "SELECT count(*) FROM l.s.t")"

    model "$p" "key=a" "SELECT range AS a, 'y' AS b FROM range(10)"
    run "$p" --full-refresh
    check_eq "$kind: --full-refresh rebuilds it" "0" "$RC"
    check_eq "$kind: which then reads, downstream too" "10,10" \
        "$(q "$p" "SELECT (SELECT count(*) FROM l.s.t), (SELECT n FROM l.s.n)")"
    run "$p"
    check_eq "$kind: and merges again" "0" "$RC"
done

# history: its table is the record; the remedy is the file
h=$(project "key=a history")
brake "$h" missing
model "$h" "key=a history" "SELECT range AS a, 'y' AS b FROM range(3000)"
run "$h" s.t
check_eq "history: a build over its broken table fails" "1" "$RC"
contains "history: naming the table and the remedy" "table s.t cannot be read" "$ERR"
contains "history: restore the file" "restore the file (dropping the table starts its history over)" "$ERR"

# append and incremental keep the rows already there too: the same clean failure before BEGIN
# (an append failed inside its transaction with "Current transaction is aborted", blaming the
# model's SQL line; an incremental build blamed that line), then --full-refresh mends it.
for ann in "append" "incremental watermark=a" "incremental watermark=a key=a"; do
    for kind in missing corrupt; do
        p=$(project "$ann")
        brake "$p" "$kind"
        snaps=$(snapshots "$p")
        runs=$(q "$p" "SELECT count(*) FROM __ducklake_metadata_l.tarn_run")
        # an unchanged SQL (an incremental build always runs; an append is forced), and a changed
        # append, which keeps appending with the new SQL
        for how in "--force" "changed"; do
            [ "$how" = changed ] && model "$p" "$ann" "SELECT range AS a, 'y' AS b FROM range(3005)"
            [ "$how" = changed ] && [ "$ann" != append ] && continue # a changed one starts over
            if [ "$how" = changed ]; then run "$p"; else run "$p" --force; fi
            check_eq "$ann, $kind, $how: a build over its broken table fails" "1" "$RC"
            contains "$ann, $kind, $how: naming the model's file" "models/s/t.sql: " "$ERR"
            contains "$ann, $kind, $how: the table" "table s.t cannot be read" "$ERR"
            contains "$ann, $kind, $how: which file" "$p/d/s/t/ducklake-" "$ERR"
            contains "$ann, $kind, $how: and the remedy" \
                "restore the file, or rebuild the table from the query with \`tarn run --full-refresh s.t\`" "$ERR"
            case $ERR in
            *"models/s/t.sql:2"* | *"transaction is aborted"*)
                fail "$ann, $kind, $how: neither the SQL nor an aborted transaction is blamed" "$ERR" ;;
            *) ok "$ann, $kind, $how: neither the SQL nor an aborted transaction is blamed" ;;
            esac
            contains "$ann, $kind, $how: the model downstream is skipped" "1 failed, 1 skipped" "$ERR"
            check_eq "$ann, $kind, $how: no snapshot" "$snaps" "$(snapshots "$p")"
            runs=$((runs + 1))
            check_eq "$ann, $kind, $how: the run and the build recorded as failed" "$runs,failed,failed" \
                "$(q "$p" "SELECT (SELECT count(*) FROM __ducklake_metadata_l.tarn_run), (SELECT status FROM __ducklake_metadata_l.tarn_run ORDER BY run_id DESC LIMIT 1), (SELECT status FROM __ducklake_metadata_l.tarn_model_run WHERE model = 's.t' ORDER BY run_id DESC LIMIT 1)")"
        done
        run "$p" --full-refresh
        check_eq "$ann, $kind: --full-refresh rebuilds it" "0" "$RC"
        check_eq "$ann, $kind: which then reads, downstream too" "true" \
            "$(q "$p" "SELECT (SELECT count(*) FROM l.s.t) = (SELECT n FROM l.s.n)")"
    done
done

# A readable table rebuilt from scratch with an empty result is refused as a replace is.
for ann in "key=a" "append"; do
    p=$(project "$ann")
    snaps=$(snapshots "$p")
    model "$p" "$ann" "SELECT range AS a, 'y' AS b FROM range(10) WHERE false"
    run "$p" --full-refresh s.t
    check_eq "$ann: --full-refresh with an empty result is refused" "1" "$RC"
    contains "$ann: naming the count" "the SELECT returned no rows and" "$ERR"
    contains "$ann: and the remedy" "or run with --allow-empty" "$ERR"
    check_eq "$ann: the table keeps its rows, no snapshot" "3000 $snaps" \
        "$(q "$p" "SELECT count(*) FROM l.s.t") $(snapshots "$p")"
    run "$p" --full-refresh --allow-empty s.t
    check_eq "$ann: --allow-empty rebuilds it" "0" "$RC"
    check_eq "$ann: empty, in a new snapshot" "0 $((snaps + 1))" \
        "$(q "$p" "SELECT count(*) FROM l.s.t") $(snapshots "$p")"
done

finish

#!/usr/bin/env bash
# test_ops_retention.sh — retention that respects the record: `tarn maintain expire -C DIR`
# (--older-than, --keep-last) keeps the newest snapshot, every model's last good build (so
# `tarn show --at` of it and change detection keep working, a failed build included) and every
# snapshot pinned with `tarn pin`; --dry-run changes nothing; pins are listed and removed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

CAT=__ducklake_metadata_lake
snaps() { lakeq "$1" "SELECT string_agg(snapshot_id::VARCHAR, ' ' ORDER BY snapshot_id) FROM ducklake_snapshots('lake')"; }
last_good() { lakeq "$1" "SELECT snapshot_id FROM $CAT.tarn_model_run WHERE model = '$2' AND status = 'success' AND snapshot_id IS NOT NULL ORDER BY run_id DESC LIMIT 1"; }

d=$(project basic)
run_rc "nothing built yet" 2 "$d" maintain expire --keep-last 1
run_ok "build" "$d" run
first_items=$(last_good "$d" staging.items)
run_ok "pin the first build of staging.items" "$d" pin staging.items --note "release 1"
contains "says what it pinned" "snapshot $first_items pinned (last good build of staging.items)" "$ERR"
run_ok "pins are listed" "$d" pin --format csv
contains "the pin" "$first_items,staging.items,release 1," "$OUT"
for i in 1 2 3; do
    printf '%s,item%s,%s.00\n' "$((100 + i))" "$i" "$((20 + i))" >>"$d/data/items.csv"
    run_ok "rebuild $i" "$d" run
done
items=$(last_good "$d" staging.items)
summary=$(last_good "$d" marts.summary)
expensive=$(last_good "$d" marts.expensive)
newest=$(lakeq "$d" "SELECT max(snapshot_id) FROM ducklake_snapshots('lake')")
all=$(snaps "$d")

run_ok "--dry-run" "$d" maintain expire --older-than '0 seconds' --dry-run
check_eq "--dry-run expires nothing" "$all" "$(snaps "$d")"
contains "it names what it keeps and why" "keeping snapshot $first_items: pinned (release 1)" "$ERR"
contains "would" "would expire" "$ERR"

run_ok "expire everything the rule allows" "$d" maintain expire --older-than '0 seconds'
check_eq "kept: the pinned one, each model's last good build, the newest" \
    "$(printf '%s\n' "$first_items" "$items" "$summary" "$expensive" "$newest" | sort -nu | tr '\n' ' ' | sed 's/ $//')" \
    "$(lakeq "$d" "SELECT string_agg(snapshot_id::VARCHAR, ' ' ORDER BY snapshot_id) FROM ducklake_snapshots('lake') WHERE snapshot_id > 0")"
contains "the summary" "expired " "$ERR"
run_ok "show --at the pinned build" "$d" show staging.items --at "$first_items" --format csv
check_eq "the pinned build's rows" "$(($(wc -l <"$FIXTURES/projects/basic/data/items.csv") - 1))" "$(printf '%s\n' "$OUT" | tail -n +2 | wc -l)"
run_ok "show --at the last good build" "$d" show marts.summary --at "$summary" --format csv
run_ok "change detection still works" "$d" run --json
check_eq "every model unchanged" "3" "$(printf '%s\n' "$OUT" | grep -c '"reason":"unchanged"')"

# A failing build: the model's last good build is still the one kept.
good=$(last_good "$d" marts.expensive)
cp "$d/models/marts/expensive.sql" "$d/expensive.sql.bak"
printf 'SELECT id, nosuchcolumn FROM staging.items\n' >"$d/models/marts/expensive.sql"
run_rc "a failing build" 1 "$d" run marts.expensive
printf '999,more,99.00\n' >>"$d/data/items.csv"
run_rc "more builds, marts.expensive failing still" 1 "$d" run staging.items+ --force
cp "$d/expensive.sql.bak" "$d/models/marts/expensive.sql"
run_ok "expire" "$d" maintain expire --older-than '0 seconds'
check_eq "the failed model's last good build is kept" "1" \
    "$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE snapshot_id = $good")"
contains "why" "keeping snapshot $good: last good build of marts.expensive" "$ERR"

# --keep-last N keeps the newest N as well.
for i in 4 5; do
    printf '%s,item%s,%s.00\n' "$((100 + i))" "$i" "$((20 + i))" >>"$d/data/items.csv"
    run_ok "rebuild $i" "$d" run staging.items --force
done
n=$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake')")
run_ok "--keep-last 3" "$d" maintain expire --keep-last 3
check_eq "the newest three are kept" "3" \
    "$(lakeq "$d" "SELECT count(*) FROM (SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY snapshot_id DESC LIMIT 3)")"
check_eq "the pin is kept" "1" "$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE snapshot_id = $first_items")"
run_ok "again: nothing to expire" "$d" maintain expire --keep-last 3
contains "says so" "nothing to expire" "$ERR"

# Unpinning lets the next expiry take it.
run_ok "unpin" "$d" pin --remove "$first_items"
contains "unpinned" "snapshot $first_items unpinned" "$ERR"
run_rc "unpin again" 1 "$d" pin --remove "$first_items"
run_ok "expire" "$d" maintain expire --older-than '0 seconds'
check_eq "the unpinned snapshot is gone" "0" "$(lakeq "$d" "SELECT count(*) FROM ducklake_snapshots('lake') WHERE snapshot_id = $first_items")"

# Errors.
run_rc "pin an unknown snapshot" 2 "$d" pin 99999
contains "says so" "has no snapshot 99999" "$ERR"
run_rc "pin an expired snapshot" 2 "$d" pin "$first_items"
run_rc "no rule" 2 "$d" maintain expire
contains "names both" "--older-than AGE" "$ERR"
run_rc "a bad age" 2 "$d" maintain expire --older-than 'last tuesday'
contains "says why" "is neither a timestamp" "$ERR"
run_rc "a bad --keep-last" 2 "$d" maintain expire --keep-last x

finish

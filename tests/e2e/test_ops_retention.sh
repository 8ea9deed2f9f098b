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

# ---- a partitioned model: each slice's last good build is kept ------------------------------------
# Day 2 is rebuilt, day 3's rebuild fails (its last good build stays the first); other builds make
# snapshots after them. Expiring all it may keeps every slice's last good build, and time travel
# to every kept snapshot reads what it read before, after the expired files are deleted too.
p=$(mktempdir)
mkdir -p "$p/config" "$p/models/facts"
echo "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');" >"$p/config/catalog.sql"
printf '%s\n' "CREATE OR REPLACE MACRO bad_day() AS '\${BAD_DAY:-none}';" \
    "CREATE OR REPLACE MACRO n_val() AS \${N:-1};" >"$p/config/macros.sql"
cat >"$p/models/facts/daily.sql" <<'SQL'
-- partitioned daily column=d
SELECT CAST({partition} AS DATE) AS d,
       CASE WHEN {partition} = bad_day() THEN CAST(error('no data') AS INTEGER) ELSE n_val() END AS n
SQL
echo "SELECT n_val() AS x" >"$p/models/facts/other.sql"
run_ok "slices: backfill three days" "$p" backfill facts.daily --start 2024-01-01 --end 2024-01-03
N=2 run_ok "slices: rebuild day 2" "$p" run facts.daily --partition 2024-01-02
N=3 BAD_DAY=2024-01-03 run_rc "slices: day 3's rebuild fails" 1 "$p" run facts.daily --partition 2024-01-03
for i in 1 2 3; do N=$i run_ok "slices: another model, build $i" "$p" run facts.other --force; done
slice_snaps=$(lakeq "$p" "SELECT string_agg(DISTINCT snapshot_id::VARCHAR, ' ' ORDER BY snapshot_id::VARCHAR) FROM $CAT.tarn_partition WHERE model = 'facts.daily'")
model_good=$(last_good "$p" facts.daily)
check_eq "three slices, three last good builds, the model's last good build is day 2's" "3" "$(echo "$slice_snaps" | wc -w)"
# what each snapshot reads of facts.daily, before the expiry
reads() {
    local k out=""
    for k in $(lakeq "$p" "SELECT snapshot_id FROM ducklake_snapshots('lake') ORDER BY snapshot_id"); do
        out="$out $k:$(lakeq "$p" "SELECT coalesce(sum(n), 0) || '/' || count(*) FROM lake.facts.daily AT (VERSION => $k)" 2>/dev/null || echo none)"
    done
    echo "$out"
}
before=$(reads)
run_ok "slices: expire everything the rule allows" "$p" maintain expire --older-than '0 seconds'
kept=$(lakeq "$p" "SELECT string_agg(snapshot_id::VARCHAR, ' ' ORDER BY snapshot_id) FROM ducklake_snapshots('lake')")
for k in $slice_snaps; do
    case " $kept " in
    *" $k "*) ok "slice snapshot $k kept" ;;
    *) fail "slice snapshot $k kept" "kept: $kept" ;;
    esac
done
contains "it says why" "last good build of the slices of facts.daily (2024-01-01)" "$ERR"
contains "the failed slice's too" "facts.daily (2024-01-03)" "$ERR"
run_ok "slices: delete the files only expired snapshots used" "$p" maintain cleanup --all
after=$(reads)
for k in $kept; do
    b=$(tr ' ' '\n' <<<"$before" | grep "^$k:")
    a=$(tr ' ' '\n' <<<"$after" | grep "^$k:")
    check_eq "time travel to kept snapshot $k reads as before" "$b" "$a"
done
run_ok "slices: tarn partitions still names each last good snapshot" "$p" partitions facts.daily --format csv
for k in $slice_snaps; do contains "snapshot $k listed" ",$k," "$OUT"; done

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

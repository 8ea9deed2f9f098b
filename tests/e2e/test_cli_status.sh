#!/usr/bin/env bash
# tests/e2e/test_cli_status.sh — status words and --quiet beyond `tarn run` (test_cli_output.sh):
# `tarn test`, `tarn plan`, `tarn backfill`, `tarn scheduler --once` and `tarn maintain expire`
# colour their statuses at a terminal (tmux: PASS/ok green, FAIL/FAILED red, WARN yellow, would
# skip / keeping dim), never when piped or with NO_COLOR, and with -q/--quiet print only failures
# and errors. Also `tarn test` takes -s/--select and --exclude like the other project commands.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

d=$(project tested)
run_ok "the project builds" "$d" run
printf -- '-- data_test not_null tier severity=warn\nSELECT * FROM core.customers\n' >"$d/models/core/vip.sql"
printf 'id,email,tier\n1,a@x.org,gold\n2,b@x.org,\n3,c@x.org,gold\n' >"$d/data/customers.csv"
run_ok "… and again with a warned test" "$d" run
e=$(project events)
run_ok "a partitioned project builds one slice" "$e" run facts.events_daily --partition 2024-06-01

# ---- at a terminal (tmux) ----
sock="tarn-e2e-status-$$"
tm() { tmux -L "$sock" "$@"; }
trap 'tm kill-server 2>/dev/null; _e2e_exit' EXIT
n=0
# at_tty DIR CMD… — runs `tarn CMD…` in DIR at a terminal; its screen, escapes kept, in $SCREEN
at_tty() {
    local dir=$1 i
    shift
    n=$((n + 1))
    tm new-session -d -s "s$n" -x 200 -y 50 "cd '$dir' && TERM=xterm $* ; echo TTY-DONE; sleep 30"
    for ((i = 0; i < 300; i++)); do
        tm capture-pane -p -t "s$n" | grep -q TTY-DONE && break
        sleep 0.1
    done
    SCREEN=$(tm capture-pane -p -e -t "s$n" -S -200)
    tm kill-session -t "s$n"
}
# (tmux redraws bold red as two sequences, bold then red)
green=$'\033[32m' red=$'\033[31m' yellow=$'\033[33m' dim=$'\033[2m'
has() { # has NAME TEXT — $SCREEN contains TEXT
    case $SCREEN in *"$2"*) ok "$1" ;; *) fail "$1" "missing: $(cat -v <<<"$2")" "$(cat -v <<<"$SCREEN")" ;; esac
}
hasnt() {
    case $SCREEN in *"$2"*) fail "$1" "unwanted: $(cat -v <<<"$2")" "$(cat -v <<<"$SCREEN")" ;; *) ok "$1" ;; esac
}

at_tty "$d" "$TARN" test
has "tarn test at a terminal: PASS in green" "${green}PASS"
has "… WARN in yellow" "${yellow}WARN"
printf 'order_id,customer_id,amount\n10,1,5\n10,2,8\n' >"$d/data/orders.csv"
run_ok "orders get a duplicate key (published by a run that fails)" "$d" run core.customers
(cd "$d" && "$TARN" sql -c "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/'); INSERT INTO lake.core.orders VALUES (10, 3, 1)" >/dev/null)
at_tty "$d" "$TARN" test
has "… FAIL in red" "${red}FAIL"
at_tty "$d" NO_COLOR=1 "$TARN" test
hasnt "… none with NO_COLOR" $'\033['
run_rc "tarn test piped" 1 "$d" test
case $OUT$ERR in *$'\033'*) fail "… none when piped" "$(cat -v <<<"$OUT")" ;; *) ok "… none when piped" ;; esac
run_rc "tarn test --quiet" 1 "$d" test --quiet
contains "… prints the failure" "FAIL  core.orders" "$OUT"
case $OUT in *PASS* | *WARN*) fail "… and no PASS or WARN line" "$OUT" ;; *) ok "… and no PASS or WARN line" ;; esac
contains "… with the summary, since one failed" "1 failed" "$ERR"
run_ok "tarn test -q of models that pass" "$d" test -q core.customers
check_eq "… prints nothing" "" "$OUT$ERR"
run_ok "tarn test -s SEL --exclude SEL" "$d" test -s 'core.*' --exclude core.orders core.vip
check_eq "… tests the selected models only" "core.customers" \
    "$(awk '$1 == "PASS" || $1 == "WARN" || $1 == "FAIL" {print $2}' <<<"$OUT" | sort -u | paste -sd'|')"
run_rc "tarn test -s with a typo" 2 "$d" test -s core.custmers
contains "… names the closest model" "did you mean core.customers?" "$ERR"

at_tty "$d" "$TARN" plan
has "tarn plan at a terminal: would run in green" "${green}would run:"
has "… would skip in dim" "${dim}would skip:"
run_ok "tarn plan --quiet" "$d" plan --quiet
case $OUT in *"would skip:"*) fail "… leaves out what would skip" "$OUT" ;; *) ok "… leaves out what would skip" ;; esac
contains "… and keeps what would run" "would run:" "$OUT"

at_tty "$e" "$TARN" backfill facts.events_daily --start 2024-06-02 --end 2024-06-03
has "tarn backfill at a terminal: ok in green" "${green}ok"
run_ok "tarn backfill --quiet" "$e" backfill facts.events_daily --start 2024-06-04 --end 2024-06-05 --quiet
check_eq "… prints nothing when every slice builds" "" "$OUT$ERR"
check_eq "… which it built" "2" \
    "$(lakeq "$e" "SELECT count(*) FROM __ducklake_metadata_lake.main.tarn_partition WHERE model = 'facts.events_daily' AND status = 'success' AND \"partition\" IN ('2024-06-04', '2024-06-05')")"

s=$(project tested)
printf -- '-- freshness 1h\nSELECT tier, count(*) AS n FROM core.customers GROUP BY ALL\n' >"$s/models/core/tiers.sql"
at_tty "$s" "$TARN" scheduler --once --now 2026-06-01T06:00:00Z
has "tarn scheduler at a terminal: a built model's status in green" "${green}success"
printf 'id,email,tier\n1,a@x.org,gold\n' >"$s/data/customers.csv"
printf -- '-- freshness 1h\nSELECT tier, CAST(tier AS INTEGER) AS n FROM core.customers\n' >"$s/models/core/tiers.sql"
# a day past the real clock: the last build (now) is over an hour old, so it fires again
later=$(date -u -d '+1 day' +%Y-%m-%dT%H:%M:%SZ)
run_rc "tarn scheduler --once --quiet with a failing model" 1 "$s" scheduler --once --quiet --now "$later"
contains "… logs the failure" "core.tiers failed" "$ERR"
case $ERR in *" success"* | *" fired"*) fail "… and nothing else of the tick" "$ERR" ;; *) ok "… and nothing else of the tick" ;; esac

at_tty "$d" "$TARN" maintain expire --keep-last 1 --dry-run
has "tarn maintain expire at a terminal: keeping in dim" "${dim}keeping"
has "… would expire in green" "${green}would expire"
before=$(snapshots "$d")
run_ok "tarn maintain expire --quiet" "$d" maintain expire --keep-last 1 --quiet
case $ERR in *keeping* | *expired*) fail "… no kept or summary lines" "$ERR" ;; *) ok "… no kept or summary lines" ;; esac
[ "$(snapshots "$d")" -lt "$before" ] && ok "… and it expired" || fail "… and it expired" "$before snapshots, now $(snapshots "$d")"
finish

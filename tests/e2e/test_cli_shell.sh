#!/usr/bin/env bash
# test_cli_shell.sh — `tarn sql` as a duckdb CLI user expects it: dot commands (.tables, .schema,
# .mode table|csv|json|line, .timer, .read, .help, .quit), SHOW TABLES after USE lake and SHOW ALL
# TABLES without tarn's internal objects, Ctrl-C cancelling the running query (not the shell) and
# clearing the line at the prompt, Ctrl-D leaving — at a real terminal (tmux) — and, without one,
# --format json-typed with typed values (and --format json with DuckDB's text of each value), --format line, counts labelled by their statement, tables cut to
# the terminal's width (under `script`) unless --wide.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
sqlq() { "$TARN" sql "$@" </dev/null 2>>"$d/err"; }

# ---- without a terminal ------------------------------------------------------------------------
out=$(sqlq --format json-typed -c "SELECT 1 AS i, 2.5 AS f, 12.50::DECIMAL(5,2) AS dec, 'x' AS s, true AS b, NULL AS n, [1, 2] AS l, {'k': 'v'} AS st, DATE '2024-01-02' AS dt, 'inf'::DOUBLE AS inf, 170141183460469231731687303715884105727::HUGEINT AS h")
check_eq "--format json-typed: typed values" '[1, 2.5, 12.5, "x", true, null, [1, 2], {"k": "v"}, "2024-01-02", "Infinity", "170141183460469231731687303715884105727"]' \
    "$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())["rows"][0]))')"
check_eq "--format json-typed: the columns" '["i", "f", "dec", "s", "b", "n", "l", "st", "dt", "inf", "h"]' \
    "$(printf '%s' "$out" | python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())["columns"]))')"
check_eq "--format json-typed: a string that looks like a number stays a string" '["1", 1]' \
    "$(sqlq --format json-typed -c "SELECT '1' AS s, 1 AS i" | python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())["rows"][0]))')"
check_eq "--format json: each value as DuckDB's text of it" '["1", "x", null, "[1, 2]"]' \
    "$(sqlq --format json -c "SELECT 1 AS i, 'x' AS s, NULL AS n, [1, 2] AS l" | python3 -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())["rows"][0]))')"
check_eq "--format line" "   a = 1
long = x

   a = 2
long = NULL" "$(sqlq --format line -c "SELECT * FROM (VALUES (1, 'x'), (2, NULL)) t(a, long) ORDER BY a")"

printf "ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'd/');\nCREATE TABLE lake.t (id INTEGER, name VARCHAR);\nINSERT INTO lake.t VALUES (1, 'a'), (2, 'b');\nUPDATE lake.t\n  SET name = 'c' WHERE id = 2;\nDELETE FROM lake.t WHERE id = 1;\n" >script.sql
check_eq "a script's counts say which statement they are of" "INSERT INTO lake.t VALUES (1, 'a'), (2, 'b')
2 rows affected

UPDATE lake.t …
1 row affected

DELETE FROM lake.t WHERE id = 1
1 row affected" "$(sqlq -f script.sql)"
check_eq "csv counts are not labelled" "0" "$(rm -rf m.ducklake* d; sqlq --format csv -f script.sql | grep -c 'INSERT\|UPDATE\|DELETE')"
check_eq "SHOW TABLES after USE lake: the lake's tables" " name
------
 t
(1 row)" "$(sqlq -c "ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'd/'); USE lake; SHOW TABLES" | sed '/^$/d')"
all=$(sqlq --format csv -c "ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'd/'); SHOW ALL TABLES")
check_eq "SHOW ALL TABLES: the lake's table only" "database,schema,name
lake,main,t" "$(printf '%s\n' "$all" | cut -d, -f1-3)"

# wide results: cut to the terminal's width under a terminal, --wide for all
wide="SELECT repeat('x', 60) AS a, repeat('y', 60) AS b, 1 AS c"
script -q -c "COLUMNS=60 $TARN sql -c \"$wide\"" /dev/null </dev/null >tty.out 2>&1
w=$(python3 -c 'import sys; print(max(len(l.rstrip("\r")) for l in open(sys.argv[1], encoding="utf-8").read().split("\n")))' tty.out)
[ "$w" -le 60 ] && ok "a terminal: the table fits its width" || fail "a terminal: the table fits its width" "$(cat tty.out)"
grep -q 'xxxx…' tty.out && ok "cut values end in …" || fail "cut values end in …" "$(cat tty.out)"
script -q -c "COLUMNS=60 $TARN sql --wide -c \"$wide\"" /dev/null </dev/null >tty.out 2>&1
grep -q "$(printf 'x%.0s' $(seq 60))" tty.out && ok "--wide: every character" || fail "--wide: every character" "$(cat tty.out)"
check_eq "piped: never cut" "1" "$(COLUMNS=20 sqlq -c "$wide" | grep -c "$(printf 'y%.0s' $(seq 60))")"

# ---- at a terminal (tmux) ----------------------------------------------------------------------
sock="tarn-e2e-$$"
tm() { tmux -L "$sock" "$@"; }
trap 'tm kill-server 2>/dev/null' EXIT
screen() { tm capture-pane -p -t sh -S -200 2>/dev/null; }
# wait_for TEXT [SECONDS] — until the pane shows TEXT
wait_for() {
    local i
    for ((i = 0; i < ${2:-20} * 10; i++)); do
        screen | grep -qF -- "$1" && return 0
        sleep 0.1
    done
    return 1
}
# typed LINE — type a line and press Enter
# (a ';' at the end of a tmux argument separates tmux commands: sent escaped)
typed() {
    case $1 in
    *";") tm send-keys -t sh -l -- "${1%;}" && tm send-keys -t sh '\;' Enter ;;
    *) tm send-keys -t sh -l -- "$1" && tm send-keys -t sh Enter ;;
    esac
}
printf 'SELECT 40 + 2 AS answer;\n' >more.sql
tm new-session -d -s sh -x 160 -y 50 "cd '$d' && HOME='$d' TERM=xterm '$TARN' sql; echo SHELL-EXITED \$?; sleep 30"
wait_for "tarn>" && ok "the prompt" || fail "the prompt" "$(screen)"
typed ".help"
wait_for ".schema [TABLE]" && ok ".help lists the commands" || fail ".help lists the commands" "$(screen)"
typed "ATTACH 'ducklake:m.ducklake' AS lake (DATA_PATH 'd/');"
typed "USE lake;"
typed ".tables"
wait_for " t" && ok ".tables after USE lake" || fail ".tables after USE lake" "$(screen)"
typed ".schema t"
wait_for 'CREATE TABLE' && ok ".schema t: its CREATE statement" || fail ".schema t: its CREATE statement" "$(screen)"
typed ".mode csv"
typed "SELECT 'c1' AS k, 7 AS v;"
wait_for "c1,7" && ok ".mode csv" || fail ".mode csv" "$(screen)"
typed ".mode json-typed"
typed "SELECT 8 AS jv;"
wait_for '"rows": [[8]]' && ok ".mode json-typed" || fail ".mode json-typed" "$(screen)"
typed ".mode line"
typed "SELECT 9 AS lv;"
wait_for "lv = 9" && ok ".mode line" || fail ".mode line" "$(screen)"
typed ".mode table"
typed ".timer on"
typed "SELECT 10 AS tv;"
wait_for "Run Time (s): real" && ok ".timer on" || fail ".timer on" "$(screen)"
typed ".timer off"
typed ".read more.sql"
wait_for " 42" && ok ".read FILE" || fail ".read FILE" "$(screen)"
typed ".nope"
wait_for "unknown command .nope" && ok "an unknown dot command is said" || fail "an unknown dot command is said" "$(screen)"

# Ctrl-C during a query: the query stops, the shell stays
tm clear-history -t sh
typed "SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range + b.range = -1;"
sleep 1.5
tm send-keys -t sh C-c
wait_for "INTERRUPT" 20 || wait_for "Interrupt" 1
if screen | grep -qi "interrupt"; then ok "Ctrl-C interrupts the running query"; else fail "Ctrl-C interrupts the running query" "$(screen)"; fi
typed "SELECT 'still' || 'here' AS alive;"
wait_for "stillhere" && ok "the shell goes on after Ctrl-C" || fail "the shell goes on after Ctrl-C" "$(screen)"
screen | grep -q SHELL-EXITED && fail "the shell did not exit on Ctrl-C" || ok "the shell did not exit on Ctrl-C"

# Ctrl-C at the prompt drops the line being typed
tm send-keys -t sh -l "SELECT 'dropped"
tm send-keys -t sh C-c
sleep 0.3
typed "SELECT 'kept' AS k2;"
wait_for " kept" && ok "Ctrl-C at the prompt clears the line" || fail "Ctrl-C at the prompt clears the line" "$(screen)"
screen | grep -q "dropped.*kept\|Parser Error" && fail "nothing of the dropped line ran" "$(screen)" || ok "nothing of the dropped line ran"

# Ctrl-D at an empty prompt leaves
tm send-keys -t sh C-d
wait_for "SHELL-EXITED 0" && ok "Ctrl-D exits (status 0)" || fail "Ctrl-D exits (status 0)" "$(screen)"
tm kill-session -t sh

tm new-session -d -s sh -x 160 -y 50 "cd '$d' && HOME='$d' '$TARN' sql; echo SHELL-EXITED \$?; sleep 30"
wait_for "tarn>"
typed ".quit"
wait_for "SHELL-EXITED 0" && ok ".quit exits" || fail ".quit exits" "$(screen)"
tm kill-server

finish

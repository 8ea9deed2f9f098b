#!/usr/bin/env bash
# tests/e2e/test_sql_cli.sh — end-to-end checks of `tarn sql` and the
# command dispatch of src/cli/main.c: the three input sources (arguments,
# -f FILE, stdin), the three output formats (the CSV one byte for byte
# against the golden "Output format"), exit statuses, usage errors and the
# interactive prompt (through script(1), which gives it a terminal).
#
# Plain DuckDB SQL only; no lakes. Run: `bash tests/e2e/test_sql_cli.sh`,
# or `TARN=build-san/tarn bash tests/e2e/test_sql_cli.sh` for the
# sanitizer build (every run's stderr is also checked for ASan/UBSan/LSan
# reports, so a leak in tarn fails the check that caused it).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)

# run [ARGS...] — tarn with stdin from $IN (default /dev/null); stdout to
# $d/out, stderr to $d/err, exit status in $rc.
run() {
    "$TARN" "$@" <"${IN:-/dev/null}" >"$d/out" 2>"$d/err"
    rc=$?
}

# check_run NAME WANT_RC — the last run exited WANT_RC and its stderr has
# no sanitizer report.
check_run() {
    local name=$1 want=$2
    if grep -qE 'Sanitizer|runtime error:' "$d/err"; then
        fail "$name" "sanitizer report:" "$(head -n 30 "$d/err")"
    elif [ "$rc" -ne "$want" ]; then
        fail "$name" "exit status $rc, expected $want" "$(tail -n 10 "$d/err")"
    else
        ok "$name"
    fi
}

# check_stdout NAME EXPECTED — the last run's stdout is exactly EXPECTED
# (trailing newlines included, which $(...) would strip).
check_stdout() {
    local name=$1
    printf '%s' "$2" >"$d/expected"
    if cmp -s "$d/expected" "$d/out"; then
        ok "$name"
    else
        fail "$name" "$(diff -u --label expected --label actual "$d/expected" "$d/out" | cat -A)"
    fi
}

# check_grep NAME FILE TEXT — $d/FILE (out or err) contains TEXT, which
# may span lines.
check_grep() {
    if [[ "$(cat "$d/$2")" == *"$3"* ]]; then
        ok "$1"
    else
        fail "$1" "no '$3' in std$2:" "$(head -n 20 "$d/$2")"
    fi
}

# ---- dispatch --------------------------------------------------------

run --version
check_run "--version exits 0" 0
check_stdout "--version prints the version" $'tarn 0.1.0\n'
run version
check_stdout "version prints the version" $'tarn 0.1.0\n'

run help
check_run "help exits 0" 0
check_grep "help lists sql" out "sql"
run --help
check_grep "--help lists sql" out "sql"
run help sql
check_grep "help sql shows its usage" out "usage: tarn sql"
run sql --help
check_run "sql --help exits 0" 0
check_grep "sql --help shows its usage" out "--format"

run frobnicate
check_run "unknown command exits 2" 2
check_grep "unknown command names it" err "frobnicate"
check_grep "unknown command prints usage on stderr" err "usage: tarn"
check_stdout "unknown command prints nothing on stdout" ""
run
check_run "no command exits 2" 2

# ---- input sources -----------------------------------------------------

run sql --format csv "SELECT 1 AS a," "'x' AS b"
check_run "SQL arguments run" 0
check_stdout "SQL arguments are joined with spaces" $'a,b\n1,x\n\n'

run sql --format csv -c "SELECT 7 AS c"
check_stdout "-c SQL runs" $'c\n7\n\n'

printf 'SELECT 2 AS two;\nSELECT 3 AS three\n' >"$d/script.sql"
run sql -f "$d/script.sql" --format csv
check_run "-f FILE runs" 0
check_stdout "-f FILE output, last statement without ';'" $'two\n2\n\nthree\n3\n\n'

IN=$d/script.sql run sql --format csv
check_run "stdin script runs" 0
check_stdout "stdin script output" $'two\n2\n\nthree\n3\n\n'

IN=$d/script.sql run sql --format csv -f -
check_stdout "-f - reads stdin" $'two\n2\n\nthree\n3\n\n'

printf '' >"$d/empty.sql"
IN=$d/empty.sql run sql
check_run "empty script exits 0" 0
check_stdout "empty script prints nothing" ""

run sql --format csv "SELECT 'a;b' AS x; SELECT 1 AS y -- trailing ; comment"
check_stdout "';' inside strings and comments does not split" $'x\na;b\n\ny\n1\n\n'

# ---- the golden CSV format ---------------------------------------------

cat >"$d/golden.sql" <<'EOF'
CREATE TABLE t (id INTEGER, s VARCHAR);
INSERT INTO t VALUES (1, 'a,b'), (2, 'say "hi"'), (3, ''),
  (4, NULL), (5, 'line1
line2');
SELECT id, s AS "s,x" FROM t ORDER BY id;
SELECT * FROM no_such_table;
SELECT count(*) AS n FROM t;
UPDATE t SET s = 'x' WHERE id > 3;
SET threads = 1;
EOF
run sql -f "$d/golden.sql" --format csv
check_run "csv: a failing statement makes the exit status 1" 1
check_stdout "csv: exact golden output" 'Count
5

id,"s,x"
1,"a,b"
2,"say ""hi"""
3,""
4,
5,"line1
line2"

#error

n
5

Count
2

'
check_grep "csv: error on stderr names statement and line" err "tarn: statement 4 (line 6): "
check_grep "csv: error on stderr has DuckDB's message" err "no_such_table"

# ---- json ----------------------------------------------------------------

run sql -f "$d/golden.sql" --format json
check_run "json: exit status 1" 1
if python3 -c 'import json,sys; [json.loads(l) for l in sys.stdin]' <"$d/out" 2>"$d/pyerr"; then
    ok "json: every line parses"
else
    fail "json: every line parses" "$(cat "$d/pyerr")" "$(cat "$d/out")"
fi
if python3 - "$d/out" <<'EOF' 2>"$d/pyerr"; then
import json, sys
objs = [json.loads(l) for l in open(sys.argv[1])]
assert len(objs) == 7, objs
# CREATE: DuckDB's empty "Count" row set; SET: nothing
assert objs[0] == {"statement": 1, "columns": ["Count"], "rows": []}, objs[0]
assert objs[1] == {"statement": 2, "count": 5}, objs[1]
assert objs[2] == {"statement": 3, "columns": ["id", "s,x"],
                   "rows": [["1", "a,b"], ["2", 'say "hi"'], ["3", ""],
                            ["4", None], ["5", "line1\nline2"]]}, objs[2]
assert objs[3]["statement"] == 4 and "no_such_table" in objs[3]["error"], objs[3]
assert objs[4] == {"statement": 5, "columns": ["n"], "rows": [["5"]]}, objs[4]
assert objs[5] == {"statement": 6, "count": 2}, objs[5]
assert objs[6] == {"statement": 7, "ok": True}, objs[6]
EOF
    ok "json: objects for rows, count, error and none"
else
    fail "json: objects for rows, count, error and none" "$(cat "$d/pyerr")"
fi

# ---- table -----------------------------------------------------------

run sql "SELECT 1 AS a, 'xyz' AS b"
check_run "table is the default format" 0
check_stdout "table: aligned with header, separator and footer" ' a |  b
---+-----
 1 | xyz
(1 row)

'

run sql "SELECT 'héllo' AS s, 12 AS n UNION ALL SELECT NULL, 345 ORDER BY n"
check_stdout "table: UTF-8 width, NULL, numbers right-aligned" '   s   |  n
-------+-----
 héllo |  12
 NULL  | 345
(2 rows)

'

run sql -f "$d/golden.sql"
check_run "table: exit status 1" 1
check_grep "table: count" out "5 rows affected"
check_grep "table: multi-line values span lines" out $'  5 | line1\n    | line2'
check_grep "table: row footer" out "(5 rows)"
if grep -q '#error' "$d/out"; then
    fail "table: errors only on stderr" "$(cat "$d/out")"
else
    ok "table: errors only on stderr"
fi
check_grep "table: the next statement still runs" out "2 rows affected"

# ---- usage errors --------------------------------------------------------

run sql --bogus "SELECT 1"
check_run "bad flag exits 2" 2
check_grep "bad flag is named" err "--bogus"
check_stdout "bad flag runs nothing" ""

run sql --format xml "SELECT 1"
check_run "bad format exits 2" 2
check_grep "bad format is named" err "xml"

run sql -f
check_run "-f without a file exits 2" 2

run sql -f "$d/no-such-file.sql"
check_run "missing file exits 2" 2
check_grep "missing file is named" err "$d/no-such-file.sql"

run sql -f "$d"
check_run "a directory as file exits 2" 2

run sql -f "$d/script.sql" "SELECT 1"
check_run "SQL arguments and -f together exit 2" 2

# ---- interactive prompt ------------------------------------------------

# script(1) runs tarn on a pseudo-terminal, so isatty(stdin) holds and the
# libedit prompt starts; its stdin is fed through the pty.
if command -v script >/dev/null && script -qec true /dev/null </dev/null >/dev/null 2>&1; then
    home=$(mktempdir)
    printf "SELECT 40 +\n2 AS answer;\nSELECT * FROM nope;\n.quit\nSELECT 'not run' AS x;\n" |
        HOME=$home TERM=dumb script -qec "$(printf '%q' "$TARN") sql --format csv" /dev/null \
            >"$d/out" 2>"$d/err"
    rc=$?
    tr -d '\r' <"$d/out" >"$d/out.lf" && mv "$d/out.lf" "$d/out"
    check_run "repl: exits 0 on .quit, even after an error" 0
    check_grep "repl: statement continued over two lines" out $'answer\n42\n'
    check_grep "repl: error reported" out "nope"
    if grep -q 'not run$' "$d/out"; then
        fail "repl: .quit stops reading" "$(cat "$d/out")"
    else
        ok "repl: .quit stops reading"
    fi
    if grep -q 'answer' "$home/.tarn_history" 2>/dev/null; then
        ok "repl: history file written"
    else
        fail "repl: history file written" "no $home/.tarn_history with the statement"
    fi

    printf "SELECT 5 AS five;\n" |
        HOME=$home TERM=dumb script -qec "$(printf '%q' "$TARN") sql --format csv" /dev/null \
            >"$d/out" 2>"$d/err"
    rc=$?
    tr -d '\r' <"$d/out" >"$d/out.lf" && mv "$d/out.lf" "$d/out"
    check_run "repl: end of input leaves with status 0" 0
    check_grep "repl: runs before end of input" out $'five\n5\n'
else
    ok "repl: skipped (script(1) not available)"
fi

finish

#!/usr/bin/env bash
# test_cli_output.sh — what `tarn run` prints: colours on a terminal only (NO_COLOR, piped: none),
# the live progress line, status words the summary counts (ok / unchanged / skipped / FAILED),
# `N rows: D deleted, N inserted`, --quiet, --json events (JSON numbers, null), and the typed JSON
# of `tarn runs --json` / `history --format json`.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/build_lib.sh"

p=$(mktempdir)
mkdir -p "$p/config" "$p/models/s" "$p/data"
echo "ATTACH 'ducklake:lake.ducklake' AS lake (DATA_PATH 'lake/');" >"$p/config/catalog.sql"
printf 'id,v\n1,a\n2,b\n' >"$p/data/in.csv"
printf -- "SELECT * FROM read_csv('data/in.csv')\n" >"$p/models/s/src.sql"
printf -- "-- materialize key=id\nSELECT id, v FROM s.src\n" >"$p/models/s/m.sql"
printf -- "SELECT 1 AS x\n" >"$p/models/s/other.sql"

run_ok "first run (piped)" "$p" run
case $ERR in *$'\033'*) fail "piped: no colours" "$ERR" ;; *) ok "piped: no colours" ;; esac
printf 'id,v\n1,a\n2,c\n' >"$p/data/in.csv"
run_ok "second run" "$p" run
contains "a merge says what its figures are" "1 rows: 1 deleted, 1 inserted" "$ERR"
contains "an unchanged model's line says unchanged" "unchanged s.other" "$ERR"
check_eq "the summary counts the lines" \
    "$(printf '%s\n' "$ERR" | grep -c '^  ok ') succeeded, 0 failed, 0 skipped, $(printf '%s\n' "$ERR" | grep -c '^  unchanged ') unchanged" \
    "$(printf '%s\n' "$ERR" | sed -n 's/^tarn: run 2 succeeded: \(.*\) in .*/\1/p')"

# a terminal: colours and the progress line (script gives tarn a pseudo-terminal)
script -q -c "$TARN run --force -C '$p'" /dev/null </dev/null >"$p/tty.out" 2>&1
grep -q $'\033\[32mok' "$p/tty.out" && ok "a terminal: ok in green" || fail "a terminal: ok in green" "$(cat -v "$p/tty.out")"
grep -q '\[[0-9]*/3 [0-9.]*s\] building' "$p/tty.out" && ok "a terminal: progress with done/total and elapsed" ||
    fail "a terminal: progress with done/total and elapsed" "$(cat -v "$p/tty.out")"
script -q -c "NO_COLOR=1 $TARN run --force -C '$p'" /dev/null </dev/null >"$p/tty.out" 2>&1
grep -q $'\033\[3' "$p/tty.out" && fail "NO_COLOR: no colours" "$(cat -v "$p/tty.out")" || ok "NO_COLOR: no colours"

# --quiet
run_ok "--quiet" "$p" run --force --quiet
check_eq "--quiet: nothing when all is well" "" "$ERR"
printf -- "SELECT CAST('x' AS INTEGER) AS broken\n" >"$p/models/s/other.sql"
run_rc "--quiet with a failure" 1 "$p" run --quiet
contains "--quiet: the failure" "FAILED    s.other" "$ERR"
contains "--quiet: and the summary" "1 failed" "$ERR"
case $ERR in *"  ok "*) fail "--quiet: no ok lines" "$ERR" ;; *) ok "--quiet: no ok lines" ;; esac

# --json: every line an event, numbers are numbers
run_rc "--json" 1 "$p" run --json --force
check_eq "--json events typed" "ok" "$(printf '%s\n' "$OUT" | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
names = [e["event"] for e in ev]
assert names[0] == "run_start" and names[-1] == "run_finish", names
for e in ev:
    assert isinstance(e["schema_version"], int) and isinstance(e["run_id"], int), e
fin = [e for e in ev if e["event"] == "model_finish"]
bad = [e for e in fin if e["status"] == "failed"][0]
assert bad["snapshot_id"] is None and isinstance(bad["error"], str), bad
good = [e for e in fin if e["status"] == "success"][0]
assert isinstance(good["rows_written"], int) and isinstance(good["duration_ms"], (int, float)), good
assert ev[0]["target"] == "default", ev[0]
print("ok")' 2>&1)"
run_ok "runs --json" "$p" runs --json
check_eq "runs --json: numbers are numbers, NULL null" "ok" "$(printf '%s' "$OUT" | python3 -c '
import json, sys
o = json.load(sys.stdin)
cols = o["columns"]; row = dict(zip(cols, o["rows"][0]))
ints = [v for k, v in row.items() if isinstance(v, int)]
assert ints, row
assert all(not (isinstance(v, str) and v.isdigit()) for v in row.values()), row
print("ok")' 2>&1)"
run_ok "history --format json" "$p" history --format json
check_eq "history json: snapshot and rows typed" "ok" "$(printf '%s' "$OUT" | python3 -c '
import json, sys
o = json.load(sys.stdin)
rows = [dict(zip(o["columns"], r)) for r in o["rows"]]
assert any(r["status"] == "failed" and r["snapshot"] is None for r in rows), rows
assert all(isinstance(r["run_id"], int) for r in rows), rows
print("ok")' 2>&1)"

finish

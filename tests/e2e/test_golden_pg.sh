#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# The DuckLake golden cases (../shared/ducklake-golden, or $TARN_SHARED/ducklake-golden) run a
# second time with their catalog in PostgreSQL, on one throwaway cluster (pg_lib.sh), a database
# per case: golden_pg.py checks that each prints the recorded output and that the ducklake_* rows
# read back from PostgreSQL equal those of the same script on a DuckDB-file catalog after the
# golden checker's normalization. tests/golden-pg-expected-failures.txt lists the cases that
# legitimately differ, with the reason; a listed case that fails is reported as skipped, one that
# passes is a failure (delete its line). GOLDEN_PG_ONLY=PAT[,PAT…] runs only the cases matching.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pg_lib.sh"

golden=${TARN_SHARED:-$REPO/../shared}/ducklake-golden
if [ ! -f "$golden/check.py" ]; then
    skip "golden cases on postgres" "no $golden/check.py"
    finish
fi
pg_start || {
    [ -n "$PG_SKIP" ] && skip "golden cases on postgres" "$PG_SKIP"
    finish
}

xfail=$REPO/tests/golden-pg-expected-failures.txt
listed() { grep -v '^#' "$xfail" 2>/dev/null | cut -f1 | grep -qxF "$1"; }

# under the sanitizers (several times slower) five cases through the main kinds of catalog write:
# every type inlined, DML on files, transactions, flush, expire and cleanup
only=${GOLDEN_PG_ONLY:-}
case $TARN in
*/build-san/*) only=${only:-001-*,006-*,013-*,023-*,028-*} ;;
esac
out=$(mktempdir)/golden-pg.out
python3 "$REPO/tests/e2e/golden_pg.py" --tarn "$TARN" --libduckdb "$TARN_LIBDUCKDB" \
    --golden "$golden" --pghost "$PG_HOST" --file-xfail "$REPO/tests/golden-expected-failures.txt" ${only:+--only "$only"} \
    >"$out" 2>&1
rc=$?
n=0
cur="" body=""
flush() {
    [ -n "$cur" ] || return 0
    n=$((n + 1))
    case $cur in
    ok\ *)
        name=${cur#ok   }
        if listed "$name"; then
            fail "$name on postgres" "passes now: delete its line in tests/golden-pg-expected-failures.txt"
        else
            ok "$name on postgres"
        fi
        ;;
    FAIL\ *)
        name=${cur#FAIL }
        if listed "$name" && ! grep -q "exited abnormally" <<<"$body"; then
            skip "$name on postgres" "$(grep -v '^#' "$xfail" | grep -F "$name	" | cut -f2)"
        else
            fail "$name on postgres" "$body"
        fi
        ;;
    esac
    cur="" body=""
}
while IFS= read -r line; do
    case $line in
    "ok   case "* | "FAIL case "*)
        flush
        cur=$line
        ;;
    *" passed, "*" failed") flush ;;
    *) body+="$line"$'\n' ;;
    esac
done <"$out"
flush
if [ "$n" = 0 ]; then
    fail "golden_pg.py ran the cases" "exit status $rc: $(tail -n 20 "$out")"
fi
finish

#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# tests/e2e/test_lake_property.sh — the schema-evolution property test (tests/e2e/lake_property.py):
# seeded random sequences of column operations (add with/without default, drop, rename, widen,
# add a struct field) interleaved with inlined and Parquet inserts, deletes and updates; after every
# step the table read at every earlier snapshot must equal what an in-memory model says it held.
# Each step of the Python script is one `ok - ...` / `not ok - ...` line here.
#
# Defaults: the fixed scenario (seed 0) and 16 random seeds x 14 steps (about 250 checks, ~40 s on
# two idle cores); the sanitized build runs seed 0 and 4 seeds x 10 steps.
# Override with LAKE_PROPERTY_SEEDS=1,2,3 and LAKE_PROPERTY_STEPS=N (a failing seed is printed
# with the command to rerun it alone); LAKE_PROPERTY_JOBS=N seeds run at once (default 2).
#
# Run: `bash tests/e2e/test_lake_property.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

if ! command -v python3 >/dev/null; then
    fail "python3 is installed" "the property test needs python3 (scripts/deps.sh installs it)"
    finish
fi

case $TARN in
*build-san*)
    : "${LAKE_PROPERTY_SEEDS:=0,1,2,3,4}" "${LAKE_PROPERTY_STEPS:=10}"
    ;;
*)
    : "${LAKE_PROPERTY_SEEDS:=$(seq -s, 0 16)}" "${LAKE_PROPERTY_STEPS:=14}"
    ;;
esac
export LAKE_PROPERTY_SEEDS LAKE_PROPERTY_STEPS

out=$(mktemp "$(mktempdir)/property.XXXXXX")
python3 "$REPO/tests/e2e/lake_property.py" >"$out" 2>&1
rc=$?

# Re-count the script's lines through lib.sh, so that finish prints the totals; its `#` lines
# (seeds, details of failures) pass through as they are.
while IFS= read -r line; do
    case $line in
    "ok - "*) ok "${line#ok - }" ;;
    "not ok - "*) fail "${line#not ok - }" ;;
    "#"*) printf '%s\n' "$line" ;;
    esac
done <"$out"
if [ "$rc" -ne 0 ] && ! grep -q '^not ok - ' "$out"; then
    fail "lake_property.py ran to the end" "exit status $rc" "$(tail -n 20 "$out")"
fi
finish

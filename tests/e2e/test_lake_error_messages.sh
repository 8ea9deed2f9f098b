#!/usr/bin/env bash
# tests/e2e/test_lake_error_messages.sh — a lake statement that fails prints
# its error: the rollback of the statement's lake transaction (which runs
# statements of its own and rebuilds views) must not clear it. Each failing
# statement below printed `tarn: statement N (line L): ` and nothing more.
#
# Run: `bash tests/e2e/test_lake_error_messages.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');"
(cd "$d" && "$TARN" sql "$ATTACH CREATE TABLE lake.t (i INTEGER, s VARCHAR);") </dev/null >/dev/null 2>&1

# msg SQL — the error tarn prints for SQL (after the attach), without the
# statement prefix.
msg() {
    (cd "$d" && "$TARN" sql "$ATTACH $1") </dev/null 2>&1 >/dev/null | head -n 1 |
        sed 's/^tarn: statement [0-9]* (line [0-9]*): //'
}

check_eq "INSERT with too few values" \
    "Binder Error: table lake.t has 2 columns but 1 values were supplied" \
    "$(msg "INSERT INTO lake.t VALUES (1);")"
check_eq "INSERT into an unknown column" \
    'Binder Error: Table "lake.t" does not have a column with name "nope"' \
    "$(msg "INSERT INTO lake.t (nope) VALUES (1);")"
check_eq "INSERT of a value that does not cast" \
    "Conversion Error: Could not convert string 'x' to INT32" \
    "$(msg "INSERT INTO lake.t VALUES ('x', 'y');")"
check_eq "a duplicate ADD COLUMN" "Catalog Error: Column with name i already exists in table t" \
    "$(msg "ALTER TABLE lake.t ADD COLUMN i INTEGER;")"
check_eq "a duplicate CREATE TABLE" 'Table with name "t" already exists in lake "lake"' \
    "$(msg "CREATE TABLE lake.t (x INTEGER);")"
check_eq "the lake is unchanged" "1" \
    "$(cd "$d" && "$TARN" sql --format csv "$ATTACH SELECT max(snapshot_id) FROM ducklake_snapshots('lake');" </dev/null | tail -n 2 | head -n 1)"

finish

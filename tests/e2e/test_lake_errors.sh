#!/usr/bin/env bash
# tests/e2e/test_lake_errors.sh — failures on a lake, as the user sees them:
#   - an aborted transaction commits nothing: after a statement fails inside
#     BEGIN (a time-travel read of a snapshot that does not exist, a failed
#     INSERT), every later statement fails until the transaction ends, and
#     COMMIT rolls back: the earlier writes are not in the lake;
#   - AT (VERSION => -1) (or any negative version) names no snapshot;
#   - every failing write has its message (INSERT with the wrong column
#     count — a query with more columns than the table was written with
#     the extra ones dropped —, an unknown column or a bad cast, DELETE on a missing column,
#     UPDATE with a bad cast, a duplicate ADD COLUMN, a narrowing ALTER),
#     about the user's statement: no tarn-internal names in it.
#
# Run: `bash tests/e2e/test_lake_errors.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATTACH="ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/');"

# sql SQL — `tarn sql` on the lake: stdout to $OUT, stderr to $ERR, status in $RC.
sql() {
    OUT=$(cd "$d" && "$TARN" sql --format csv "$ATTACH $1" </dev/null 2>"$d/stderr")
    RC=$?
    ERR=$(cat "$d/stderr")
}

# contains NAME NEEDLE HAYSTACK
contains() {
    case $3 in
    *"$2"*) ok "$1" ;;
    *) fail "$1" "missing: $2" "in: $3" ;;
    esac
}

# no_internal NAME TEXT — TEXT names none of tarn's internal objects.
no_internal() {
    case $2 in
    *__tarn* | *_tarn_stage* | *"COLUMNS(*)"* | *__ducklake_metadata* | *ducklake_inlined*)
        fail "$1" "an internal name in: $2" ;;
    *) ok "$1" ;;
    esac
}

sql "CREATE TABLE l.t (a INTEGER, b VARCHAR); INSERT INTO l.t VALUES (1, 'x');"
check_eq "the table is made" "0" "$RC"

# ---- an aborted transaction commits nothing ----
sql "BEGIN; INSERT INTO l.t VALUES (2, 'y'); SELECT * FROM l.t AT (VERSION => 999);
     INSERT INTO l.t VALUES (3, 'z'); COMMIT;"
contains "a missing version is an error" "statement 4 (line 1): No snapshot found at version 999" "$ERR"
contains "the next statement fails: the transaction is aborted" \
    "statement 5 (line 2): Current transaction is aborted" "$ERR"
sql "SELECT count(*) FROM l.t"
check_eq "COMMIT of the aborted transaction wrote nothing" "count_star()
1" "$OUT"

sql "BEGIN; INSERT INTO l.t VALUES (2, 'y'); INSERT INTO l.t VALUES ('zz', 'w'); COMMIT;"
contains "a failed INSERT aborts the transaction" "Could not convert string 'zz'" "$ERR"
sql "SELECT count(*) FROM l.t"
check_eq "and its COMMIT wrote nothing either" "count_star()
1" "$OUT"

sql "BEGIN; INSERT INTO l.t VALUES (2, 'y');
     SELECT * FROM l.t AT (TIMESTAMP => TIMESTAMP '2000-01-01'); COMMIT;"
contains "a timestamp before the lake is an error" "No snapshot found at or before" "$ERR"
sql "SELECT count(*) FROM l.t"
check_eq "which aborts the transaction too" "count_star()
1" "$OUT"

sql "BEGIN; INSERT INTO l.t VALUES (2, 'y'); SELECT nope FROM l.t; COMMIT;"
contains "a binder error is reported" "Referenced column \"nope\" not found" "$ERR"
sql "SELECT count(*) FROM l.t"
check_eq "and, as in DuckDB, leaves the transaction alive" "count_star()
2" "$OUT"

# ---- negative versions ----
sql "SELECT * FROM l.t AT (VERSION => -1)"
check_eq "AT (VERSION => -1) fails" "1" "$RC"
contains "AT (VERSION => -1) names no snapshot" "No snapshot found at version -1" "$ERR"
sql "SELECT * FROM l.t AT (VERSION => 1 - 5)"
contains "nor does a negative expression" "No snapshot found at version 1 - 5" "$ERR"

# ---- every failure has its message ----
while IFS='|' read -r stmt want; do
    sql "$stmt"
    check_eq "$stmt: fails" "1" "$RC"
    case $ERR in
    *"): ") fail "$stmt: has a message" "nothing after the prefix: $ERR" ;;
    *) contains "$stmt: says why" "$want" "$ERR" ;;
    esac
    no_internal "$stmt: speaks of the user's statement" "$ERR"
done <<'EOF'
INSERT INTO l.t VALUES (1)|has 2 columns but 1 values were supplied
INSERT INTO l.t SELECT 1|table t has 2 columns but 1 values were supplied
INSERT INTO l.t SELECT 1, 'x', 3|table t has 2 columns but 3 values were supplied
INSERT INTO l.t (a, nope) VALUES (1, 2)|does not have a column with name "nope"
INSERT INTO l.t VALUES ('zz', 'y')|Could not convert string 'zz' to INT32
INSERT INTO l.t SELECT 'q', 'r'|Could not convert string 'q' to INT32 for column "a"
DELETE FROM l.t WHERE nope = 1|Referenced column "nope" not found
UPDATE l.t SET a = 'q'|Could not convert string 'q' to INT32
UPDATE l.t SET nope = 1|nope
ALTER TABLE l.t ADD COLUMN a INTEGER|Column with name a already exists
ALTER TABLE l.t ALTER COLUMN a TYPE SMALLINT|Cannot change type of column a
ALTER TABLE l.t ADD COLUMN c INTEGER NOT NULL|Adding columns with constraints not yet supported
ALTER TABLE l.t ADD COLUMN c INTEGER CHECK (c > 0)|Adding columns with constraints not yet supported
EOF
sql "SELECT count(*), sum(a) FROM l.t"
check_eq "no failed statement changed the table" "count_star(),sum(a)
2,3" "$OUT"
sql "SELECT count(*) FROM information_schema.columns WHERE table_catalog = 'l' AND table_name = 't'"
check_eq "  nor added a column (a NOT NULL column over rows that hold none)" "2" "$(tail -n 1 <<<"$OUT")"

finish

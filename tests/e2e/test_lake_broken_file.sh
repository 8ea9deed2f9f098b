#!/usr/bin/env bash
# tests/e2e/test_lake_broken_file.sh — one broken data file breaks one
# table, not the lake. With a table's Parquet file missing, or replaced by
# something that is not Parquet:
#   - ATTACH succeeds and the other tables read as before;
#   - the broken table is still described (DESCRIBE) but reading it fails,
#     naming the table and the file, filtered or not (its files are not
#     pruned);
#   - DROP TABLE of it works, and so does rebuilding it (CREATE OR REPLACE
#     TABLE … AS), after which it reads again;
#   - a model build that replaces it works too.
# A catalog row naming a type DuckLake does not know (written wrong by hand)
# breaks that table the same way, with DuckLake's "unsupported type" error,
# for reads and writes; the other tables and other lakes work.
#
# Run: `bash tests/e2e/test_lake_broken_file.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

ATTACH="ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/');"

# sql DIR SQL — `tarn sql` on DIR's lake: stdout to $OUT, stderr to $ERR, status in $RC.
sql() {
    OUT=$(cd "$1" && "$TARN" sql --format csv "$ATTACH $2" </dev/null 2>"$1/stderr")
    RC=$?
    ERR=$(cat "$1/stderr")
}

contains() {
    case $3 in
    *"$2"*) ok "$1" ;;
    *) fail "$1" "missing: $2" "in: $3" ;;
    esac
}

# lake KIND — a lake with tables s.broken and s.fine (each one Parquet file),
# then s.broken's file removed (KIND=missing) or overwritten (KIND=corrupt).
lake() {
    local d f
    d=$(mktempdir)
    sql "$d" "CREATE SCHEMA l.s; CREATE TABLE l.s.broken AS SELECT range AS a, 'x' || range AS b
              FROM range(3000); CREATE TABLE l.s.fine AS SELECT range AS c FROM range(3000);"
    f=$(find "$d/d" -path '*broken*' -name '*.parquet')
    [ -n "$f" ] || { echo "$d"; return; }
    case $1 in
    missing) rm "$f" ;;
    corrupt) echo "not parquet at all" >"$f" ;;
    esac
    echo "$d"
}

for kind in missing corrupt; do
    d=$(lake "$kind")
    sql "$d" "SELECT count(*), sum(c) FROM l.s.fine"
    check_eq "$kind: the lake attaches and the other table reads" "count_star(),sum(c)
3000,4498500" "$OUT"
    check_eq "$kind: nothing failed" "" "$ERR"
    sql "$d" "SELECT column_name FROM (DESCRIBE l.s.broken)"
    check_eq "$kind: the broken table is still described" "column_name
a
b" "$OUT"
    sql "$d" "SELECT count(*) FROM l.s.broken"
    check_eq "$kind: reading it fails" "1" "$RC"
    contains "$kind: naming the table" "table s.broken cannot be read" "$ERR"
    contains "$kind: and the file" "$d/d/s/broken/ducklake-" "$ERR"
    sql "$d" "SELECT count(*) FROM l.s.fine; SELECT max(b) FROM l.s.broken WHERE a > 5"
    contains "$kind: a filtered read fails too" "cannot be read" "$ERR"
    check_eq "$kind: while the same session still reads the rest" "count_star()
3000" "$(printf '%s\n' "$OUT" | head -n 2)"
    # the statistics exclude the broken file here: reading it still fails
    sql "$d" "SELECT count(*) FROM l.s.broken WHERE a > 100000"
    contains "$kind: a filter its statistics exclude fails the same way" \
        "table s.broken cannot be read" "$ERR"

    cp -r "$d" "$d.drop"
    sql "$d.drop" "DROP TABLE l.s.broken"
    check_eq "$kind: DROP TABLE of the broken table works" "0" "$RC"
    sql "$d.drop" "SELECT table_name FROM information_schema.tables WHERE table_catalog = 'l' ORDER BY 1"
    check_eq "$kind: and it is gone" "table_name
fine" "$OUT"

    sql "$d" "CREATE OR REPLACE TABLE l.s.broken AS SELECT 7 AS a, 'y' AS b"
    check_eq "$kind: rebuilding the broken table works" "0" "$RC"
    sql "$d" "SELECT * FROM l.s.broken"
    check_eq "$kind: and it reads again" "a,b
7,y" "$OUT"
done

# A model build over a broken model table rebuilds it.
p=$(mktempdir)
mkdir -p "$p/config" "$p/models/s"
echo "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/');" >"$p/config/catalog.sql"
echo "SELECT range AS a FROM range(3000)" >"$p/models/s/t.sql"
echo "SELECT count(*) AS n FROM s.other" >"$p/models/s/n.sql"
echo "SELECT 1 AS one" >"$p/models/s/other.sql"
check "the project builds" "$TARN" run -C "$p"
rm "$(find "$p/d" -path '*/t/*' -name '*.parquet')"
echo "SELECT range AS a FROM range(10)" >"$p/models/s/t.sql"
check "a run with a broken model table rebuilds it" "$TARN" run -C "$p"
sql "$p" "SELECT count(*) FROM l.s.t"
check_eq "which then reads" "count_star()
10" "$OUT"

# a column row with a type DuckLake does not know
c=$(mktempdir)
sql "$c" "CREATE TABLE l.bad AS SELECT 1 AS id, 'hello' AS name; CREATE TABLE l.good AS SELECT 42 AS v;
UPDATE __ducklake_metadata_l.main.ducklake_column SET column_type = 'int32varcharvarchar' WHERE column_name = 'id';"
sql "$c" "SELECT * FROM l.good"
check_eq "an unknown column type: the lake attaches, the other tables read" "v
42" "$OUT"
sql "$c" "SELECT * FROM l.bad"
check_eq "reading the table fails with DuckLake's error" \
    "tarn: statement 2 (line 1): Invalid Input Error: Failed to parse DuckLake type - unsupported type 'int32varcharvarchar'" \
    "$(printf '%s\n' "$ERR" | head -n 1)"
sql "$c" "INSERT INTO l.bad VALUES (2, 'x')"
contains "writing it fails the same way" "unsupported type 'int32varcharvarchar'" "$ERR"
sql "$c" "ATTACH 'ducklake:m2.ducklake' AS l2 (DATA_PATH 'd2/'); CREATE TABLE l2.t AS SELECT 7 AS x; SELECT * FROM l2.t"
check_eq "another lake attaches beside it" "0 x
7" "$RC $(printf '%s\n' "$OUT" | tail -n 2 | head -n 1)
$(printf '%s\n' "$OUT" | tail -n 1)"
sql "$c" "DROP TABLE l.bad; SELECT count(*) FROM l.good"
check_eq "DROP TABLE of it works" "count_star()
1" "$OUT"

finish

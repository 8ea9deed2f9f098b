#!/usr/bin/env bash
# test_lake_table_dir.sh — as DuckLake does, an INSERT into a lake table
# creates the table's directory under the data path even when its rows are
# inlined in the catalog, so a user can COPY a file of their own there
# (to register it with ducklake_add_data_files); CREATE TABLE alone makes
# no directory, and a partitioned table's inlined insert makes no
# partition directory.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
lake_sql "$d" "CREATE TABLE l.t (a INTEGER); CREATE TABLE l.untouched (a INTEGER);
    CREATE TABLE l.p (a INTEGER, k INTEGER); ALTER TABLE l.p SET PARTITIONED BY (k);" >/dev/null
[ ! -e "$d/d/main/t" ] && ok "CREATE TABLE makes no directory" ||
    fail "CREATE TABLE makes no directory" "$(ls -R "$d/d")"
check "an inlined INSERT runs" lake_sql "$d" "INSERT INTO l.t VALUES (1); INSERT INTO l.p VALUES (1, 7)"
[ -d "$d/d/main/t" ] && ok "it made the table's directory" ||
    fail "it made the table's directory" "$(ls -R "$d/d" 2>&1)"
check_eq "no file in it, nor a partition directory" "" "$(ls -A "$d/d/main/t"; ls -A "$d/d/main/p")"
check "a COPY of the user's into it works" lake_sql "$d" \
    "COPY (SELECT 2 AS a) TO 'd/main/t/mine.parquet'"
check_eq "the untouched table still has no directory" "p t" "$(ls "$d/d/main" | tr '\n' ' ' | sed 's/ $//')"
(cd "$d" && "$TARN" sql "ATTACH 'ducklake:m2.ducklake' AS l (DATA_PATH 'other');
    CREATE TABLE l.t (a INTEGER); INSERT INTO l.t VALUES (1)") >/dev/null 2>>"$d/err"
[ -d "$d/other/main/t" ] && ok "a data path without a trailing / and not there yet is created" ||
    fail "a data path without a trailing / and not there yet is created" "$(ls "$d")"
finish

#!/usr/bin/env bash
# e2e: long (tests/run.sh starts it among the first)
# test_lake_pruning.sh — a query whose WHERE clause the files' column
# statistics (ducklake_file_column_stats) exclude reads only the files that
# can match (EXPLAIN ANALYZE's "Total Files Read"), and returns exactly what
# an unpruned read returns: comparisons either way round, BETWEEN, IN, OR,
# IS [NOT] NULL, strings, dates, decimals; nothing is pruned on what is not
# a plain conjunct (expressions, NOT, a CASE's ANDs); NULLs, NaN, a column
# added later (old files have no statistics), a renamed and a widened
# column, time travel, deletes, inlined and pending rows, aliases; a DuckDB
# view or prepared statement over the table keeps seeing new files.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
ATT="ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 0)"
sql() { (cd "$d" && "$TARN" sql --format csv "$ATT; $1") </dev/null 2>>"$d/err"; }
q() { sql "$1" | tail -n +2 | grep .; }
# files_read WHERE — the files the filtered read opens (all its scans)
files_read() {
    sql "EXPLAIN ANALYZE SELECT id, s FROM l.t WHERE $1;" |
        grep -o 'Total Files Read: [0-9]*' | awk '{n += $4} END {print n + 0}'
}
# same WHERE — the filtered read equals a read of the whole table filtered
same() {
    local cols="id, v, s, d, k, x"
    check_eq "$1: same rows as an unpruned read" \
        "$(q "SELECT $cols FROM (SELECT * FROM l.t) u WHERE $1 ORDER BY ALL;")" \
        "$(q "SELECT $cols FROM l.t WHERE $1 ORDER BY ALL;")"
}

# ten files, file f holding ids [100f, 100f + 100): disjoint statistics
sql "CREATE TABLE l.t (id INTEGER, v INTEGER, s VARCHAR, d DATE, k DECIMAL(9,2), x DOUBLE);" >/dev/null
for f in $(seq 0 9); do
    sql "INSERT INTO l.t SELECT i, CASE WHEN $f = 3 THEN NULL ELSE i % 7 END, printf('%04d', i),
         DATE '2020-01-01' + i::INTEGER, i / 4, CASE WHEN $f = 8 AND i = 850 THEN 'NaN'::DOUBLE ELSE i END
         FROM range($((f * 100)), $((f * 100 + 100))) r(i);" >/dev/null
done
check_eq "ten data files" "10" "$(q "SELECT count(*) FROM ducklake_list_files('l', 't');")"
check_eq "no filter reads every file" "10" "$(files_read "true")"

check_eq "id = 527 reads one file" "1" "$(files_read "id = 527")"
same "id = 527"
check_eq "527 = id, the other way round" "1" "$(files_read "527 = id")"
check_eq "BETWEEN reads the two files it spans" "2" "$(files_read "id BETWEEN 150 AND 250")"
same "id BETWEEN 150 AND 250"
check_eq "IN reads the files of its values" "2" "$(files_read "id IN (5, 905)")"
same "id IN (5, 905)"
check_eq "two conjuncts: the files both allow" "1" "$(files_read "id > 100 AND id < 200 AND v >= 0")"
same "id > 100 AND id < 200 AND v >= 0"
check_eq "OR of plain comparisons" "2" "$(files_read "id = 5 OR id = 905")"
same "id = 5 OR id = 905"
check_eq "a parenthesized OR among conjuncts" "2" "$(files_read "(id < 10 OR id >= 990) AND s >= '0'")"
check_eq "a string comparison" "1" "$(files_read "s >= '0950'")"
same "s >= '0950'"
check_eq "a date comparison" "1" "$(files_read "d < DATE '2020-02-01'")"
same "d < DATE '2020-02-01'"
check_eq "a decimal equality" "1" "$(files_read "k = 150.25")"
same "k = 150.25"
check_eq "a negative constant excludes every file" "0" "$(files_read "id <= -1")"
check_eq "… and reads no row" "0" "$(q "SELECT count(*) FROM l.t WHERE id <= -1;")"
check_eq "an alias qualifies the columns" "1" \
    "$(sql "EXPLAIN ANALYZE SELECT * FROM l.t AS o WHERE o.id = 5;" | grep -o 'Total Files Read: [0-9]*' | awk '{n += $4} END {print n}')"
check_eq "the table's full name in a column reference still reads" "1" \
    "$(q "SELECT count(*) FROM l.t WHERE l.t.id = 5;")"

# what must not prune
check_eq "a string column compared with a number is cast to it: nothing pruned" "10" \
    "$(files_read "s = 950")"
same "s = 950"
check_eq "an expression on the column prunes nothing" "10" "$(files_read "id + 0 = 527")"
check_eq "NOT prunes nothing" "10" "$(files_read "NOT id = 527")"
check_eq "an OR with an expression prunes nothing" "10" "$(files_read "id = 5 OR id + 0 = 905")"
check_eq "AND OR mixed at the top prunes nothing" "10" "$(files_read "id = 5 AND v = 1 OR id = 905")"
same "id = 5 AND v = 1 OR id = 905"
same "CASE WHEN s = 'zz' AND id = 5 AND true THEN true ELSE true END"
check_eq "the ANDs inside a CASE are not the clause's" "1000" \
    "$(q "SELECT count(*) FROM l.t WHERE CASE WHEN s = 'zz' AND id = 5 AND true THEN true ELSE true END;")"

# NULLs and NaN
check_eq "IS NULL reads only the file with NULLs" "1" "$(files_read "v IS NULL")"
same "v IS NULL"
check_eq "IS NOT NULL skips the file of NULLs only" "9" "$(files_read "v IS NOT NULL")"
same "v IS NOT NULL"
same "v = 3"
check_eq "a NaN is greater than every number: its file stays" "1" \
    "$(q "SELECT count(*) FROM l.t WHERE x > 1e300;")"
same "x > 1e300"

# a column added later: the old files have no statistics for it
sql "ALTER TABLE l.t ADD COLUMN w INTEGER DEFAULT 7;" >/dev/null
sql "INSERT INTO l.t SELECT i, 1, printf('%04d', i), DATE '2020-01-01', 0, 0, 8 FROM range(1000, 1010) r(i);" >/dev/null
check_eq "a column added later reads its default from the old files" "1000" \
    "$(q "SELECT count(*) FROM l.t WHERE w = 7;")"
check_eq "… and the new file, by its statistics, only when it can match" "10" \
    "$(q "SELECT count(*) FROM l.t WHERE w = 8;")"

# renamed and widened columns keep their statistics
sql "ALTER TABLE l.t RENAME COLUMN id TO key;" >/dev/null
check_eq "a renamed column prunes under its new name" "1" \
    "$(sql "EXPLAIN ANALYZE SELECT * FROM l.t WHERE key = 527;" | grep -o 'Total Files Read: [0-9]*' | awk '{n += $4} END {print n}')"
sql "ALTER TABLE l.t ALTER COLUMN v SET DATA TYPE BIGINT;" >/dev/null
check_eq "a widened column compares as its new type" \
    "$(q "SELECT count(*) FROM (SELECT * FROM l.t) u WHERE v = 3;")" "$(q "SELECT count(*) FROM l.t WHERE v = 3;")"
sql "ALTER TABLE l.t RENAME COLUMN key TO id;" >/dev/null

# time travel, deletes, inlined and pending rows
snap=$(q "SELECT max(snapshot_id) FROM ducklake_snapshots('l');")
sql "INSERT INTO l.t (id) SELECT i FROM range(2000, 2100) r(i);" >/dev/null
check_eq "an older snapshot reads its files, pruned" "0" \
    "$(q "SELECT count(*) FROM l.t AT (VERSION => $snap) WHERE id >= 2000;")"
check_eq "… the newest sees the new file" "100" "$(q "SELECT count(*) FROM l.t WHERE id >= 2000;")"
sql "DELETE FROM l.t WHERE id BETWEEN 520 AND 529;" >/dev/null
check_eq "deleted rows stay deleted in a pruned read" "90" \
    "$(q "SELECT count(*) FROM l.t WHERE id BETWEEN 500 AND 599;")"
(cd "$d" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', DATA_INLINING_ROW_LIMIT 100);
    INSERT INTO l.t (id) VALUES (5000), (5001);") </dev/null >/dev/null 2>>"$d/err"
check_eq "inlined rows are read whatever the files' statistics" "2" \
    "$(q "SELECT count(*) FROM l.t WHERE id >= 5000;")"
check_eq "rows pending in a transaction are read" "3" \
    "$(q "BEGIN; INSERT INTO l.t (id) SELECT i FROM range(6000, 6100) r(i); SELECT count(*) FROM l.t WHERE id IN (5000, 6000, 6050); ROLLBACK;" | tail -1)"

# a view or a prepared statement keeps its SQL: it must see later files
check_eq "a DuckDB view over a filtered read sees a later insert" "0 200" \
    "$(q "CREATE VIEW main.few AS SELECT * FROM l.t WHERE id = 7000;
          SELECT count(*) FROM main.few;
          INSERT INTO l.t (id) SELECT 7000 FROM range(200);
          SELECT count(*) FROM main.few;" | sed -n '1p;$p' | tr '\n' ' ' | sed 's/ $//')"
check_eq "a table macro over a filtered read sees a later insert" "0 200" \
    "$(q "CREATE MACRO main.m() AS TABLE SELECT count(*) AS n FROM l.t WHERE id = 8000;
          SELECT n FROM main.m();
          INSERT INTO l.t (id) SELECT 8000 FROM range(200);
          SELECT n FROM main.m();" | sed -n '1p;$p' | tr '\n' ' ' | sed 's/ $//')"

# one session prunes from statistics it read once: each commit's new files and
# changed tables are seen by the next filtered read of the same process
d2=$(mktempdir)
sql2() { (cd "$d2" && "$TARN" sql --format csv "$ATT; $1") </dev/null 2>>"$d/err"; }
sql2 "CREATE TABLE l.c (id INTEGER, s VARCHAR, x DOUBLE);
INSERT INTO l.c SELECT i, 'it''s ' || i, i / 2 FROM range(0, 100) r(i);
INSERT INTO l.c SELECT i, 'it''s ' || i, i / 2 FROM range(100, 200) r(i);" >/dev/null
check_eq "one session: filtered reads before and after an insert, a delete, an update" \
    "$(printf 'R1\nR2\nR1\nR1\nR0\nR0')" \
    "$(sql2 "SELECT 'R' || count(*) FROM l.c WHERE id = 150;
INSERT INTO l.c VALUES (150, 'x', -1);
SELECT 'R' || count(*) FROM l.c WHERE id = 150;
DELETE FROM l.c WHERE id = 150 AND s = 'x';
SELECT 'R' || count(*) FROM l.c WHERE id = 150;
SELECT 'R' || count(*) FROM l.c WHERE x = 75.0;
UPDATE l.c SET id = -5 WHERE id = 150;
SELECT 'R' || count(*) FROM l.c WHERE id = 150;
SELECT 'R' || count(*) FROM l.c WHERE id = 150 AND x > 1e9;" | grep '^R')"
check_eq "a string literal with a quote, negative numbers, and NOT NULL prune as the catalog does" \
    "$(printf 'F1\nF1\nF1\nR0\nR1')" \
    "$(sql2 "EXPLAIN ANALYZE SELECT * FROM l.c WHERE s = 'it''s 20';
EXPLAIN ANALYZE SELECT * FROM l.c WHERE x < 0.25;
EXPLAIN ANALYZE SELECT * FROM l.c WHERE id BETWEEN -10 AND -1;
SELECT 'R' || count(*) FROM l.c WHERE s IS NULL;
SELECT 'R' || count(*) FROM l.c WHERE id BETWEEN -10 AND -1;" |
        grep -o 'Total Files Read: [0-9]*\|^R[0-9]*$' | sed 's/Total Files Read: /F/')"
check "no error was printed" test ! -s "$d/err"

finish

#!/usr/bin/env bash
# test_lake_delete_scan.sh — reading past delete files with the per-file
# deleted-row bitmap (__tarn_deleted, delmask.h) instead of an anti-join:
# the rows left are right with one and with many files carrying delete
# files (each read on its own up to 8, then one read by file index), the
# filter sits inside the Parquet scan and no join is planned for them, a
# read AT an older snapshot sees the rows deleted later, deletions with
# embedded snapshots (a flush of inlined deletions) apply per snapshot, a
# second delete file replacing the first takes effect, and a missing
# delete file fails the read naming it.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
q() { lake_sql "$d" "$1" | tail -n +2 | grep .; }

lake_sql "$d" "CREATE TABLE l.t (id BIGINT, v VARCHAR);
INSERT INTO l.t SELECT i, 'a' || i FROM range(1000) r(i);
INSERT INTO l.t SELECT i, 'b' || i FROM range(1000, 2000) r(i);
INSERT INTO l.t SELECT i, 'c' || i FROM range(2000, 3000) r(i);" >/dev/null
lake_sql "$d" "DELETE FROM l.t WHERE id % 10 = 3 AND id < 2000;" >/dev/null
check_eq "rows left after deletes in two of three files" "2800,4298900" \
    "$(q "SELECT count(*), sum(id) FROM l.t;")"
check_eq "no deleted row is read" "0" "$(q "SELECT count(*) FROM l.t WHERE id % 10 = 3 AND id < 2000;")"
plan=$(lake_sql "$d" "EXPLAIN SELECT count(id) FROM l.t;")
check_eq "the deleted-row test runs inside the Parquet scans" "2" "$(grep -o '__tarn_deleted' <<<"$plan" | wc -l)"
check_eq "no join is planned for the delete files" "0" "$(grep -c 'HASH_JOIN' <<<"$plan")"
check_eq "an older snapshot still sees the deleted rows" "3000" \
    "$(q "SELECT count(*) FROM l.t AT (VERSION => 4);")"

lake_sql "$d" "DELETE FROM l.t WHERE id % 10 = 4 AND id < 1000;" >/dev/null
check_eq "a second delete file for a file replaces the first" "2700" "$(q "SELECT count(*) FROM l.t;")"
check_eq "… and the snapshot between them reads the first" "2800" \
    "$(q "SELECT count(*) FROM l.t AT (VERSION => 5);")"

# more files with delete files than are read one by one
lake_sql "$d" "CREATE TABLE l.m (id BIGINT);" >/dev/null
for i in $(seq 0 11); do
    lake_sql "$d" "INSERT INTO l.m SELECT i FROM range($((i * 100)), $((i * 100 + 100))) r(i);" >/dev/null
done
lake_sql "$d" "DELETE FROM l.m WHERE id % 7 = 0;" >/dev/null
check_eq "twelve files with delete files, one read" "1028,616458" "$(q "SELECT count(*), sum(id) FROM l.m;")"
check_eq "… filtered by file index" "1" \
    "$(lake_sql "$d" "EXPLAIN (FORMAT JSON) SELECT count(*) FROM l.m;" | grep -c "__tarn_deleted(.*, file_index, file_row_number)")"

# deletions of inlined rows, flushed: a delete file with each deletion's snapshot
lake_sql "$d" "CREATE TABLE l.f (id INTEGER);
INSERT INTO l.f VALUES (1), (2), (3), (4);" >/dev/null
lake_sql "$d" "DELETE FROM l.f WHERE id = 2;" >/dev/null
lake_sql "$d" "DELETE FROM l.f WHERE id = 3;" >/dev/null
lake_sql "$d" "CALL ducklake_flush_inlined_data('l', table_name => 'f');" >/dev/null
snap=$(q "SELECT max(snapshot_id) FROM ducklake_snapshots('l');")
check_eq "flushed rows with embedded deletions read right now" "1 4" \
    "$(q "SELECT string_agg(id::VARCHAR, ' ' ORDER BY id) FROM l.f;")"
check_eq "… and at the snapshot between the two deletions" "1 3 4" \
    "$(q "SELECT string_agg(id::VARCHAR, ' ' ORDER BY id) FROM l.f AT (VERSION => $((snap - 2)));")"

# a delete file gone: the read fails naming it
del=$(q "SELECT delete_file FROM ducklake_list_files('l', 't') WHERE delete_file IS NOT NULL LIMIT 1;")
rm -f "$del"
check_fails "a missing delete file fails the read" lake_sql "$d" "SELECT count(*) FROM l.t;"
check "… naming it" grep -q "$(basename "$del")" "$d/err"

finish

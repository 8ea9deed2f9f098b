#!/usr/bin/env bash
# tests/e2e/test_lake_dml_forms.sh — DML forms beyond plain INSERT/UPDATE/DELETE on lake tables,
# each one snapshot, exact CSV:
#   - UPDATE … FROM another table (columns of both named alike; an alias; a row matched twice
#     is updated once), DELETE … USING (a row matched twice is deleted and counted once);
#   - TRUNCATE [TABLE] (a snapshot like DELETE without WHERE; anything after the name is refused);
#   - COPY lake.t FROM a file, with and without a column list; COPY lake.t TO a file.
#
# Run: `bash tests/e2e/test_lake_dml_forms.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
A="ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/');"
q() {
    (cd "$d" && "$TARN" sql --format csv "$A $1") </dev/null 2>"$d/err"
}

q "CREATE TABLE l.t (id INTEGER, v VARCHAR); INSERT INTO l.t VALUES (1, 'a'), (2, 'b'), (3, 'c');
CREATE TABLE l.s (id INTEGER, v VARCHAR); INSERT INTO l.s VALUES (2, 'B'), (3, 'C'), (3, 'C'), (4, 'D');" >/dev/null

check_eq "UPDATE … FROM with same-named columns" "$(printf 'Count\n2\n\nid,v\n1,a\n2,B\n3,C')" \
    "$(q "UPDATE l.t SET v = s.v FROM l.s WHERE t.id = s.id; SELECT * FROM l.t ORDER BY id;")"
check_eq "UPDATE with an alias" "$(printf 'id,v\n1,a\n2,B!\n3,C!')" \
    "$(q "UPDATE l.t AS x SET v = x.v || '!' FROM l.s WHERE x.id = s.id; SELECT * FROM l.t ORDER BY id;" | tail -n +4)"
check_eq "DELETE … USING counts each row once" "$(printf 'Count\n1\n\nid,v\n1,a\n2,B!')" \
    "$(q "DELETE FROM l.t USING l.s WHERE t.id = s.id AND s.v = 'C'; SELECT * FROM l.t ORDER BY id;")"
check_eq "row ids kept by UPDATE … FROM" "$(printf 'rowid,id\n0,1\n1,2')" \
    "$(q "SELECT rowid, id FROM l.t ORDER BY rowid;")"

printf 'id,v\n5,e\n6,f\n' >"$d/in.csv"
check_eq "COPY … FROM a file" "$(printf 'id,v\n1,a\n2,B!\n5,e\n6,f')" \
    "$(q "COPY l.t FROM 'in.csv' (HEADER); SELECT * FROM l.t ORDER BY id;")"
check_eq "COPY with a column list" "$(printf 'n,ids\n6,4')" \
    "$(q "COPY l.t (v) FROM 'in.csv' (HEADER false, SKIP 1); SELECT count(*) AS n, count(id) AS ids FROM l.t;")"
q "COPY l.t TO 'out.csv' (HEADER false);" >/dev/null
check_eq "COPY … TO reads the table" "6" "$(wc -l <"$d/out.csv" | tr -d ' ')"

before=$(q "SELECT max(snapshot_id) FROM ducklake_snapshots('l');" | sed -n 2p)
q "TRUNCATE TABLE l.t WHERE true;" >/dev/null
check_eq "TRUNCATE with trailing words is refused" "1" "$(grep -c 'TRUNCATE takes one table name' "$d/err")"
check_eq "TRUNCATE empties the table in one snapshot" "$(printf 'n\n0\n\nsnapshots\n%s' $((before + 1)))" \
    "$(q "TRUNCATE l.t; SELECT count(*) AS n FROM l.t; SELECT max(snapshot_id) AS snapshots FROM ducklake_snapshots('l');")"
check_eq "and the rows are still there in the past" "6" \
    "$(q "SELECT count(*) FROM l.t AT (VERSION => $before);" | sed -n 2p)"

finish

#!/usr/bin/env bash
# tests/e2e/test_lake_defaults.sh — column defaults as DuckLake keeps them:
#   - ALTER … SET DEFAULT expr keeps a non-literal default as an expression
#     (ducklake_column default_value_type 'expression'): new rows evaluate it, old rows
#     keep their values; a string that looks like a call ('random()') stays a literal;
#     as DuckLake, only on a column whose live row began with the table's (else refused);
#   - ADD COLUMN … DEFAULT expr is refused with DuckLake's error (the existing rows
#     would need its value), and writes nothing; a literal default is fine;
#   - DROP DEFAULT leaves NULL for new rows.
#
# Run: `bash tests/e2e/test_lake_defaults.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)

err() { lake_err "$d" "$1"; }
body() { lake_sql "$d" "$1" | tail -n +2 | sed '/^$/d'; }
defaults() {
    lake_catalog "$d" "SELECT column_name, default_value, default_value_type FROM m.ducklake_column
        WHERE table_id = $(lake_table_id "$d" "$1") ORDER BY column_id, begin_snapshot;" | tail -n +2 | sed "/^$/d"
}

lake_sql "$d" "CREATE TABLE l.t (id INTEGER, v INTEGER DEFAULT 1); INSERT INTO l.t (id) VALUES (0);
ALTER TABLE l.t ALTER v SET DEFAULT round(pi()); INSERT INTO l.t (id) VALUES (1);" >/dev/null
check_eq "SET DEFAULT round(pi()): new rows evaluate it, old rows keep theirs" "$(printf '0,1\n1,3')" \
    "$(body "SELECT * FROM l.t ORDER BY id;")"
check_eq "the expression is a new column row of type expression" \
    "$(printf 'id,NULL,literal\nv,1,literal\nv,round(pi()),expression')" "$(defaults t)"

lake_sql "$d" "CREATE TABLE l.s (a INTEGER, b VARCHAR); ALTER TABLE l.s ALTER b SET DEFAULT 'random()';
INSERT INTO l.s (a) VALUES (1);" >/dev/null
check_eq "a string that looks like a call stays a literal" "1,random()" "$(body "SELECT * FROM l.s;")"
check_eq "... stored as one" "literal" "$(defaults s | tail -n 1 | cut -d, -f3)"

lake_sql "$d" "CREATE TABLE l.ts (id INTEGER, made TIMESTAMP); INSERT INTO l.ts VALUES (1, NULL);
ALTER TABLE l.ts ALTER made SET DEFAULT now(); INSERT INTO l.ts (id) VALUES (2);" >/dev/null
check_eq "SET DEFAULT now(): the new row gets the time, the old one NULL" "$(printf '1,true\n2,false')" \
    "$(body "SELECT id, made IS NULL FROM l.ts ORDER BY id;")"
MSG='Not implemented Error: We cannot add a column with a non-literal default value. Add the column and then explicitly set the default for new values using "ALTER ... SET DEFAULT"'
check_eq "an expression default on a column changed since (DuckLake takes it only on one made with the table)" \
    "$MSG" "$(err "ALTER TABLE l.ts ALTER made SET DEFAULT now() - INTERVAL 1 DAY;")"
lake_sql "$d" "ALTER TABLE l.ts ADD COLUMN later TIMESTAMP;" >/dev/null
check_eq "... or on a column added later" "$MSG" "$(err "ALTER TABLE l.ts ALTER later SET DEFAULT now();")"
check_eq "... a literal is fine there" "" "$(err "ALTER TABLE l.ts ALTER later SET DEFAULT '2001-02-03';")"
check_eq "... as on a table made in the same transaction" "$MSG" \
    "$(err "BEGIN; CREATE TABLE l.fresh (a INTEGER); ALTER TABLE l.fresh ALTER a SET DEFAULT random(); COMMIT;")"

snaps() { lake_catalog "$d" "SELECT count(*) FROM m.ducklake_snapshot;" | sed -n 2p; }
n=$(snaps)
check_eq "ADD COLUMN with a non-literal default: DuckLake's error" "$MSG" \
    "$(err "ALTER TABLE l.s ADD COLUMN j INTEGER DEFAULT random();")"
check_eq "... and nothing was written" "$n" "$(snaps)"
lake_sql "$d" "ALTER TABLE l.s ADD COLUMN k INTEGER DEFAULT 5;" >/dev/null
check_eq "ADD COLUMN with a literal default fills the old rows" "1,random(),5" "$(body "SELECT * FROM l.s;")"

lake_sql "$d" "ALTER TABLE l.t ALTER v DROP DEFAULT; INSERT INTO l.t (id) VALUES (2);" >/dev/null
check_eq "DROP DEFAULT: new rows get NULL" "2," "$(body "SELECT * FROM l.t WHERE id = 2;")"

finish

#!/usr/bin/env bash
# tests/e2e/test_lake_upgrade.sh — lakes written by older DuckLake releases, end to end.
#
# The lakes come from tests/fixtures/make_old_lakes.sh (0.3 and 0.4, plus 0.1, 0.2 and the dev
# strings 0.3-dev1, 0.4-dev1 for the full chain); they hold two tables across 13 snapshots
# (inlined rows, a Parquet file, a delete file or inlined file deletions, an added column with a
# default, an update, a flushed partial file — see that script). For each:
#   - ATTACH without AUTOMATIC_MIGRATION fails naming the version; the catalog is unchanged (a
#     dump of every catalog table, and the file's bytes);
#   - ATTACH with AUTOMATIC_MIGRATION opens it; every table reads, at every snapshot, exactly the
#     rows (and columns) the fixture put there; reading a table before it existed is an error;
#   - `tarn lake upgrade PATH` without --confirm refuses (exit 2, says one-way), --dry-run reports
#     the steps and changes nothing, --confirm upgrades (exit 0, prints 1.0), and again says
#     "already 1.0";
#   - after the upgrade: the catalog has the 28 tables of DuckLake 1.0 with exactly the column
#     lists of ../shared/ducklake-golden/ddl.sql, schema versions per table, partial_max; every
#     snapshot still reads the same; writes work (inlined and Parquet INSERT, UPDATE, DELETE, ADD
#     COLUMN) and read back, at the new and at old snapshots;
#   - an unknown version is refused by name; a migration that fails half-way leaves the catalog
#     as it was (one transaction); AUTOMATIC_MIGRATION inside BEGIN is refused; usage errors.
#
# Run: `bash tests/e2e/test_lake_upgrade.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
SHARED=${TARN_SHARED:-$REPO/../shared}
GOLDEN_DDL=$SHARED/ducklake-golden/ddl.sql
ATTACH="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/')"
AUTO="ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/', AUTOMATIC_MIGRATION)"

# in DIR CMD... — run CMD in DIR; stdout to $d/out, stderr to $d/err, exit status in $rc.
in_dir() {
    local dir=$1
    shift
    (cd "$dir" && "$@") </dev/null >"$d/out" 2>"$d/err"
    rc=$?
}

# sql DIR SQL — `tarn sql --format csv SQL` in DIR (see in_dir).
sql() {
    in_dir "$1" "$TARN" sql --format csv "$2"
}

# check_rc NAME WANT — the last command exited WANT without a sanitizer report.
check_rc() {
    if grep -qE 'Sanitizer|runtime error:' "$d/err"; then
        fail "$1" "sanitizer report:" "$(head -n 30 "$d/err")"
    elif [ "$rc" -ne "$2" ]; then
        fail "$1" "exit status $rc, expected $2" "$(head -n 10 "$d/err")" "$(head -n 10 "$d/out")"
    else
        ok "$1"
    fi
}

# check_has NAME FILE TEXT — FILE ($d/out or $d/err) contains TEXT.
check_has() {
    if grep -qF -- "$3" "$2"; then
        ok "$1"
    else
        fail "$1" "no '$3' in:" "$(head -n 20 "$2")"
    fi
}

# dump DIR — every table of DIR/meta.ducklake (columns, then rows), read with plain DuckDB.
dump() {
    local tables t q
    tables=$(cd "$1" && "$TARN" sql --format csv "ATTACH 'meta.ducklake' AS m (READ_ONLY);
        SELECT table_name FROM duckdb_tables() WHERE database_name = 'm' ORDER BY 1" | tail -n +2)
    q="ATTACH 'meta.ducklake' AS m (READ_ONLY);
SELECT table_name, column_index, column_name, data_type, is_nullable, column_default
FROM duckdb_columns() WHERE database_name = 'm' ORDER BY ALL;"
    for t in $tables; do
        q="$q SELECT '$t' AS tbl, * FROM m.\"$t\" ORDER BY ALL;"
    done
    (cd "$1" && "$TARN" sql --format csv "$q") 2>&1
}

# ---- what the fixture holds, as a model ------------------------------------------------------------

# Every row version of s.items and main.tags with the snapshots [b, e) it is visible in.
MI="(SELECT id::INTEGER AS id, name::VARCHAR AS name, price::DOUBLE AS price, qty::INTEGER AS qty, b, e FROM (VALUES
  (1, 'apple', 1.5, 7, 3, 10), (1, 'apple', 9.0, 7, 10, NULL), (2, 'pear', 2.25, 7, 3, 6),
  (3, 'fig', NULL, 7, 3, NULL), (4, 'kiwi', 0.5, 1, 8, NULL), (5, 'plum', NULL, NULL, 8, NULL)) v(id, name, price, qty, b, e)
  UNION ALL SELECT i, 'bulk' || i, i / 4, 7, 4, CASE WHEN i < 102 THEN 6 END FROM range(100, 120) r(i)) mi"
MT="(SELECT tag::VARCHAR AS tag, n::BIGINT AS n, b FROM (VALUES ('a', 1, 9), ('b', 2, 9), ('c', 3, 11)) v(tag, n, b)) mt"

# reads_lake — the SQL reading items at snapshots 2..12 and tags at 5..12.
reads_lake() {
    local s q=""
    for s in $(seq 2 12); do
        q="$q SELECT * FROM lake.s.items AT (VERSION => $s) ORDER BY ALL;"
    done
    for s in $(seq 5 12); do
        q="$q SELECT * FROM lake.main.tags AT (VERSION => $s) ORDER BY ALL;"
    done
    echo "$q"
}

# reads_model — the same reads from the model (items got qty at snapshot 7).
reads_model() {
    local s q="" cols
    for s in $(seq 2 12); do
        cols="id, name, price"
        [ "$s" -ge 7 ] && cols="$cols, qty"
        q="$q SELECT $cols FROM $MI WHERE b <= $s AND (e IS NULL OR $s < e) ORDER BY ALL;"
    done
    for s in $(seq 5 12); do
        q="$q SELECT tag, n FROM $MT WHERE b <= $s ORDER BY ALL;"
    done
    echo "$q"
}

expected=$(cd "$d" && "$TARN" sql --format csv "$(reads_model)" 2>&1)

# check_reads NAME DIR [ATTACH] — every table at every snapshot equals the model.
check_reads() {
    sql "$2" "${3:-$ATTACH}; $(reads_lake)"
    if [ "$rc" -ne 0 ]; then
        fail "$1" "exit status $rc" "$(head -n 10 "$d/err")"
    else
        check_eq "$1" "$expected" "$(cat "$d/out")"
    fi
}

# ---- fixtures --------------------------------------------------------------------------------------

VERSIONS="0.3 0.4 0.1 0.2 0.3-dev1 0.4-dev1"
fx=$d/fixtures
# shellcheck disable=SC2086
check "fixtures: make_old_lakes.sh builds $VERSIONS" env TARN="$TARN" \
    "$FIXTURES/make_old_lakes.sh" "$fx" $VERSIONS

# fresh VERSION NAME — a new copy of the VERSION fixture lake; prints its directory.
fresh() {
    local dir=$d/$2-$1
    rm -rf "$dir"
    cp -r "$fx/$1" "$dir"
    echo "$dir"
}

# ---- attach: refused without AUTOMATIC_MIGRATION, migrated with it --------------------------------

for v in 0.3 0.4 0.2 0.3-dev1 0.4-dev1; do
    w=$(fresh "$v" refuse)
    before=$(dump "$w")
    sum=$(sha256sum <"$w/meta.ducklake")
    sql "$w" "$ATTACH; SELECT count(*) FROM lake.s.items"
    check_rc "$v: attach without AUTOMATIC_MIGRATION fails" 1
    check_has "$v: the error names version $v" "$d/err" "is a DuckLake $v catalog"
    check_eq "$v: refused attach leaves the catalog unchanged" "$before" "$(dump "$w")"
    check_eq "$v: refused attach leaves the file's bytes unchanged" "$sum" \
        "$(sha256sum <"$w/meta.ducklake")"

    w=$(fresh "$v" auto)
    check_reads "$v: AUTOMATIC_MIGRATION: every table at every snapshot reads the fixture's rows" \
        "$w" "$AUTO"
    check_reads "$v: after AUTOMATIC_MIGRATION a plain attach reads the same" "$w"
    sql "$w" "$ATTACH; SELECT * FROM lake.s.items AT (VERSION => 1)"
    check_rc "$v: items before its CREATE (snapshot 1) is an error" 1
done

# 0.1 has no scope column on ducklake_metadata; the lake layer reads the version with a scope filter
w=$(fresh 0.1 auto)
check_reads "0.1: AUTOMATIC_MIGRATION: every table at every snapshot reads the fixture's rows" \
    "$w" "$AUTO"

# ---- tarn lake upgrade --------------------------------------------------------------------------------

# catalog rows the upgrade computes, for exact checks
UPGRADED_ROWS="ATTACH 'meta.ducklake' AS m (READ_ONLY);
SELECT begin_snapshot, schema_version, table_id FROM m.ducklake_schema_versions ORDER BY ALL;
SELECT data_file_id, table_id, partial_max, mapping_id FROM m.ducklake_data_file ORDER BY ALL;
SELECT DISTINCT default_value_type, default_value_dialect FROM m.ducklake_column;
SELECT \"value\" FROM m.ducklake_metadata WHERE \"key\" = 'version';"

# what each layout's upgrade must leave in those rows
upgraded_rows() {
    local sv files nulls=NULL
    case $1 in
    0.4 | 0.4-dev1)
        sv="2,2,2
5,3,3
7,4,2"
        files="1,2,,
7,3,11,"
        nulls=duckdb
        ;;
    *)
        sv="2,2,2
5,3,2
5,3,3
7,4,2
7,4,3"
        files="0,2,,
2,3,11,"
        ;;
    esac
    [ "$nulls" = NULL ] && nulls=""
    printf '%s\n' "begin_snapshot,schema_version,table_id" "$sv" "" \
        "data_file_id,table_id,partial_max,mapping_id" "$files" "" \
        "default_value_type,default_value_dialect" "literal,$nulls" "" "value" "1.0"
}

# The 28 tables of the golden 1.0 catalog, column by column (name, position, type, nullability).
GOLDEN_TABLES="ATTACH ':memory:' AS g;
$(sed -n '/^CREATE TABLE ducklake_/p;/^-- rows present at creation/q' "$GOLDEN_DDL" |
    sed 's/^CREATE TABLE /CREATE TABLE g./')"
COLS_QUERY="SELECT table_name, column_index, column_name, data_type, is_nullable FROM duckdb_columns()"
golden_cols=$(cd "$d" && "$TARN" sql --format csv "$GOLDEN_TABLES
SELECT count(*) AS tables FROM duckdb_tables() WHERE database_name = 'g';
$COLS_QUERY WHERE database_name = 'g' ORDER BY ALL" 2>&1)
check_eq "golden ddl.sql has 28 ducklake_ tables" "tables
28" "$(echo "$golden_cols" | head -n 2)"

for v in 0.3 0.4 0.1 0.2 0.3-dev1 0.4-dev1; do
    w=$(fresh "$v" upgrade)
    before=$(dump "$w")
    sum=$(sha256sum <"$w/meta.ducklake")

    in_dir "$w" "$TARN" lake upgrade meta.ducklake
    check_rc "$v: lake upgrade without --confirm refuses (exit 2)" 2
    check_has "$v: the refusal says the change is one-way" "$d/err" "one-way"
    check_has "$v: the refusal names --confirm" "$d/err" "--confirm"
    check_has "$v: the refusal prints the current version" "$d/out" "is a DuckLake $v catalog"
    check_eq "$v: refused upgrade changes nothing" "$before" "$(dump "$w")"

    in_dir "$w" "$TARN" lake upgrade meta.ducklake --dry-run
    check_rc "$v: lake upgrade --dry-run succeeds" 0
    check_has "$v: --dry-run reports the last step" "$d/out" "0.4 -> 1.0: version '1.0'"
    check_has "$v: --dry-run says nothing changed" "$d/out" "dry run: nothing was changed"
    check_eq "$v: --dry-run leaves every catalog row as it was" "$before" "$(dump "$w")"
    check_eq "$v: --dry-run leaves the file's bytes as they were" "$sum" \
        "$(sha256sum <"$w/meta.ducklake")"

    in_dir "$w" "$TARN" lake upgrade "ducklake:meta.ducklake" --confirm
    check_rc "$v: lake upgrade --confirm succeeds" 0
    check_has "$v: --confirm prints the new version" "$d/out" "upgraded \"meta.ducklake\" to DuckLake 1.0"
    nsteps=$(grep -c ' -> ' "$d/out")
    case $v in
    0.1) want=4 ;; 0.2 | 0.3-dev1) want=3 ;; 0.3 | 0.4-dev1) want=2 ;; 0.4) want=1 ;;
    esac
    check_eq "$v: one report line per step" "$want" "$nsteps"

    in_dir "$w" "$TARN" lake upgrade meta.ducklake --confirm
    check_rc "$v: upgrading again succeeds" 0
    check_has "$v: upgrading again says already 1.0" "$d/out" "already 1.0"

    sql "$w" "$UPGRADED_ROWS"
    check_eq "$v: upgraded catalog: per-table schema versions, partial_max, literal defaults, 1.0" \
        "$(upgraded_rows "$v")" "$(cat "$d/out")"

    got_cols=$(cd "$w" && "$TARN" sql --format csv "ATTACH 'meta.ducklake' AS m (READ_ONLY);
SELECT count(*) AS tables FROM duckdb_tables() WHERE database_name = 'm' AND NOT regexp_matches(table_name, '^ducklake_inlined_(data|delete)_[0-9]');
$COLS_QUERY WHERE database_name = 'm' AND NOT regexp_matches(table_name, '^ducklake_inlined_(data|delete)_[0-9]') ORDER BY ALL" 2>&1)
    check_eq "$v: upgraded catalog has the 28 tables of DuckLake 1.0 with the exact column lists" \
        "$golden_cols" "$got_cols"

    check_reads "$v: upgraded lake: every table at every snapshot reads the same" "$w"

    # writes after the upgrade: inlined insert, Parquet insert, update, delete, add column
    sql "$w" "$ATTACH;
INSERT INTO lake.s.items VALUES (6, 'lime', 1.25, 2);
INSERT INTO lake.s.items SELECT i, 'new' || i, i, i % 3 FROM range(200, 230) r(i);
UPDATE lake.s.items SET qty = 99 WHERE id IN (3, 6, 110, 205);
DELETE FROM lake.s.items WHERE id IN (4, 111, 206);
ALTER TABLE lake.s.items ADD COLUMN note VARCHAR DEFAULT 'n/a';
INSERT INTO lake.s.items VALUES (7, 'date', 3.5, 1, 'fresh');
INSERT INTO lake.main.tags VALUES ('d', 4);
SELECT max(snapshot_id) AS last FROM ducklake_snapshots('lake');"
    check_rc "$v: writes after the upgrade succeed" 0
    check_eq "$v: the writes made snapshots 13..19" "last
19" "$(grep -A1 '^last$' "$d/out")"
    sql "$w" "$ATTACH;
SELECT count(*) AS n, sum(id) AS ids, sum(qty) AS qty, count(qty) AS nq, sum(price) AS price FROM lake.s.items;
SELECT * FROM lake.s.items WHERE id < 100 OR id IN (110, 205) ORDER BY id;
SELECT note, count(*) AS n FROM lake.s.items GROUP BY ALL ORDER BY ALL;
SELECT * FROM lake.main.tags ORDER BY ALL;"
    check_rc "$v: reading back after the writes" 0
    # 22 rows at 12, +1 lime, +30 new, -3 deleted, +1 date = 51
    check_eq "$v: the writes read back" "n,ids,qty,nq,price
51,8129,543,50,6712.25

id,name,price,qty,note
1,apple,9.0,7,n/a
3,fig,,99,n/a
5,plum,,,n/a
6,lime,1.25,99,n/a
7,date,3.5,1,fresh
110,bulk110,27.5,99,n/a
205,new205,205.0,99,n/a

note,n
fresh,1
n/a,50

tag,n
a,1
b,2
c,3
d,4" "$(cat "$d/out")"
    check_reads "$v: after the writes, snapshots 2..12 still read the fixture's rows" "$w"
done

# ---- refusals and atomicity ----------------------------------------------------------------------

w=$(fresh 0.3 unknown)
sql "$w" "ATTACH 'meta.ducklake' AS m; UPDATE m.ducklake_metadata SET value = '0.9' WHERE key = 'version'"
before=$(dump "$w")
in_dir "$w" "$TARN" lake upgrade meta.ducklake --confirm
check_rc "unknown version 0.9: lake upgrade --confirm fails" 1
check_has "unknown version 0.9: the error names it" "$d/err" "version 0.9 is not supported"
sql "$w" "$AUTO; SELECT 1"
check_rc "unknown version 0.9: attach with AUTOMATIC_MIGRATION fails" 1
check_has "unknown version 0.9: the attach error names it" "$d/err" "0.9"
check_eq "unknown version 0.9: the catalog is unchanged" "$before" "$(dump "$w")"

# A 0.3 catalog that already has a 0.4 table: the strict 0.3 -> 0.4 step fails half-way through,
# after the first statements ran; nothing of it may remain.
w=$(fresh 0.3 halfway)
sql "$w" "ATTACH 'meta.ducklake' AS m; CREATE TABLE m.ducklake_sort_info(x INTEGER)"
before=$(dump "$w")
in_dir "$w" "$TARN" lake upgrade meta.ducklake --confirm
check_rc "failing migration: lake upgrade --confirm fails" 1
check_has "failing migration: the error names the step" "$d/err" "upgrading DuckLake 0.3 to 0.4"
check_eq "failing migration: the catalog is exactly as before (rolled back)" "$before" "$(dump "$w")"
sql "$w" "$AUTO; SELECT 1"
check_rc "failing migration: AUTOMATIC_MIGRATION fails too" 1
check_eq "failing migration: still exactly as before" "$before" "$(dump "$w")"

# Inside an open transaction the upgrade cannot be a transaction of its own: refused, unchanged.
w=$(fresh 0.3 intxn)
before=$(dump "$w")
sql "$w" "BEGIN; $AUTO; SELECT 1"
check_rc "AUTOMATIC_MIGRATION inside BEGIN fails" 1
check_has "... saying it cannot run inside an open transaction" "$d/err" "inside an open transaction"
check_eq "... and leaves the catalog unchanged" "$before" "$(dump "$w")"

# A DuckLake 1.0 lake tarn made: nothing to do.
w=$d/new10
mkdir -p "$w"
sql "$w" "$ATTACH; CREATE TABLE lake.t (a INTEGER)"
in_dir "$w" "$TARN" lake upgrade meta.ducklake
check_rc "a 1.0 lake: lake upgrade exits 0 without --confirm" 0
check_has "a 1.0 lake: says already 1.0" "$d/out" "already 1.0"

in_dir "$d" "$TARN" lake upgrade no-such.ducklake --confirm
check_rc "lake upgrade of a missing file fails" 1
[ ! -e "$d/no-such.ducklake" ] && ok "lake upgrade of a missing file creates nothing" ||
    fail "lake upgrade of a missing file creates nothing" "$(ls -l "$d")"
in_dir "$d" "$TARN" sql "ATTACH 'plain.duckdb' AS p; CREATE TABLE p.x (a INTEGER)"
in_dir "$d" "$TARN" lake upgrade plain.duckdb --confirm
check_rc "lake upgrade of a DuckDB file that is not a catalog fails" 1
check_has "... saying so" "$d/err" "is not a DuckLake catalog"
in_dir "$d" "$TARN" lake upgrade
check_rc "lake upgrade without PATH is a usage error" 2
in_dir "$d" "$TARN" lake upgrade x --dry-run --confirm
check_rc "--dry-run with --confirm is a usage error" 2
in_dir "$d" "$TARN" lake frobnicate x
check_rc "an unknown lake action is a usage error" 2
in_dir "$d" "$TARN" lake --help
check_rc "tarn lake --help" 0
check_has "tarn lake --help shows upgrade" "$d/out" "tarn lake upgrade [PATH]"

finish

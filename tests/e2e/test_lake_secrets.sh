#!/usr/bin/env bash
# tests/e2e/test_lake_secrets.sh — DuckLake secrets: CREATE SECRET (TYPE ducklake, …) and ATTACH
# 'ducklake:' (the default secret) / 'ducklake:name' (a named one), as DuckLake reads them.
#
#   - without a default secret ATTACH 'ducklake:' fails, naming it; an unknown name fails, naming it;
#   - the secret gives the catalog path, the data path and the metadata schema; the ATTACH's own
#     options come over them; the lake reads back after a DETACH and a second ATTACH;
#   - METADATA_PARAMETERS MAP {'TYPE': …} is the catalog's kind, refused unless duckdb;
#   - a secret needs METADATA_PATH; a second one of the same name is refused unless OR REPLACE
#     (IF NOT EXISTS keeps the first); DROP SECRET removes it; other secret types stay DuckDB's;
#   - a path with a '.' or '/' is a path, not a secret.
#
# Run: `bash tests/e2e/test_lake_secrets.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
# run SQL — one `tarn sql` session in $d; stdout (CSV) to $d/out, stderr to $d/err, status in $rc
run() {
    (cd "$d" && "$TARN" sql --format csv "$1") </dev/null >"$d/out" 2>"$d/err"
    rc=$?
}
# the last line of the output
last() { grep . "$d/out" | tail -n 1; }
has_err() { grep -q -- "$1" "$d/err" && ok "$2" || fail "$2" "$(cat "$d/err")"; }

run "ATTACH 'ducklake:' AS l"
has_err "Default secret was not found" "no default secret: ATTACH 'ducklake:' fails"
run "ATTACH 'ducklake:nope' AS l"
has_err 'Secret "nope" was not found' "an unknown secret name fails, naming it"

run "CREATE SECRET (TYPE ducklake, METADATA_PATH 'meta.db', DATA_PATH 'files_default');
    ATTACH 'ducklake:' AS l; CREATE TABLE l.t (i INTEGER); INSERT INTO l.t SELECT range FROM range(20);
    DETACH l; ATTACH 'ducklake:' AS l; SELECT sum(i) AS s FROM l.t;"
check_eq "the default secret gives the catalog and data paths" "0:190" "$rc:$(last)"
check_eq "the files went to the secret's data path, the catalog to its path" "1,1" \
    "$(cd "$d" && ls files_default/main/t/*.parquet | wc -l | tr -d ' '),$([ -f "$d/meta.db" ] && echo 1)"

run "CREATE SECRET my_lake (TYPE ducklake, METADATA_PATH 'named.db', DATA_PATH 'files_named',
        METADATA_SCHEMA 'lake_s');
    ATTACH 'ducklake:my_lake' AS l; CREATE TABLE l.t (s VARCHAR); INSERT INTO l.t VALUES ('x');
    DETACH l; ATTACH 'named.db' AS m (READ_ONLY);
    SELECT table_name FROM m.lake_s.ducklake_table;"
check_eq "a named secret, its METADATA_SCHEMA used" "0:t" "$rc:$(last)"

run "CREATE SECRET my_lake (TYPE ducklake, METADATA_PATH 'named.db', DATA_PATH 'files_named',
        METADATA_SCHEMA 'lake_s');
    ATTACH 'ducklake:my_lake' (DATA_PATH 'files_over', OVERRIDE_DATA_PATH true);
    INSERT INTO my_lake.t SELECT 'y' || range FROM range(30); SELECT count(*) AS n FROM my_lake.t;"
check_eq "the ATTACH's options come over the secret's; the alias is the secret's name" "0:31" \
    "$rc:$(last)"
check_eq "the insert went to the ATTACH's data path" "1" \
    "$(cd "$d" && ls files_over/main/t/*.parquet 2>/dev/null | wc -l | tr -d ' ')"

run "CREATE SECRET p (TYPE ducklake, METADATA_PATH 'p.db', METADATA_PARAMETERS MAP {'TYPE': 'postgresxx'});
    ATTACH 'ducklake:p' AS l;"
has_err "postgresxx" "METADATA_PARAMETERS TYPE other than duckdb is refused, naming it"
run "CREATE SECRET (TYPE ducklake, DATA_PATH 'x')"
has_err "metadata_path must be defined" "a secret without METADATA_PATH is refused"

run "CREATE SECRET s (TYPE ducklake, METADATA_PATH 'a.db'); CREATE SECRET s (TYPE ducklake, METADATA_PATH 'b.db')"
has_err "already exists" "a second secret of the same name is refused"
run "CREATE SECRET s (TYPE ducklake, METADATA_PATH 'a.db', DATA_PATH 'fa');
    CREATE SECRET IF NOT EXISTS s (TYPE ducklake, METADATA_PATH 'b.db', DATA_PATH 'fb');
    ATTACH 'ducklake:s' AS l; CREATE TABLE l.t (i INTEGER); DETACH l;
    CREATE OR REPLACE SECRET s (TYPE ducklake, METADATA_PATH 'c.db', DATA_PATH 'fc');
    ATTACH 'ducklake:s' AS l2; CREATE TABLE l2.t (i INTEGER); DETACH l2;
    DROP SECRET s; ATTACH 'ducklake:s' AS l3;"
check_eq "IF NOT EXISTS keeps the first, OR REPLACE replaces, DROP removes" "1,0,1" \
    "$([ -f "$d/a.db" ] && echo 1),$([ -f "$d/b.db" ] && echo 1 || echo 0),$([ -f "$d/c.db" ] && echo 1)"
has_err 'Secret "s" was not found' "after DROP SECRET the name is unknown"

run "CREATE SECRET other (TYPE http, BEARER_TOKEN 'v'); SELECT name, type FROM duckdb_secrets();
    DROP SECRET other; SELECT count(*) FROM duckdb_secrets();"
check_eq "a secret of another type is DuckDB's" "0:name,type other,http 0" \
    "$rc:$(grep . "$d/out" | tr '\n' ' ' | sed 's/count_star() //; s/ *$//')"

run "ATTACH 'ducklake:plain.ducklake' AS l; CREATE TABLE l.t (i INTEGER); SELECT 1 AS one;"
check_eq "a path with a dot is a catalog path" "0:1" "$rc:$(last)"

finish

#!/usr/bin/env bash
# tests/e2e/test_lake_catalog_listings.sh — a lake table is a table in DuckDB's own listings,
# never the DuckDB view tarn reads its files through:
#   - duckdb_tables().sql is the CREATE TABLE statement DuckDB writes for the same table in a
#     DuckDB database (names quoted only where DuckDB quotes them), with NOT NULL and defaults;
#   - information_schema.views lists the lake's views only, not its tables;
#   - the shell's .schema prints those statements.
#
# Run: `bash tests/e2e/test_lake_catalog_listings.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
COLS='a INT NOT NULL, "name" VARCHAR, st STRUCT(x INT, "we ird" VARCHAR), "two words" INT[], Big DECIMAL(9,2), m MAP(VARCHAR, BIGINT)'
lake_sql "$d" "CREATE SCHEMA l.s; CREATE TABLE l.s.t ($COLS); CREATE TABLE l.plain (id BIGINT DEFAULT 7);
CREATE VIEW l.v AS SELECT id + 1 AS next FROM l.plain;" >/dev/null
ddl() { lake_sql "$d" "$1" | tail -n +2; }
want=$(cd "$d" && "$TARN" sql --format csv -c "ATTACH ':memory:' AS x; CREATE SCHEMA x.s; CREATE TABLE x.s.t ($COLS); SELECT sql FROM duckdb_tables() WHERE database_name = 'x'" | tail -n +2)
check_eq "duckdb_tables().sql of a lake table is DuckDB's CREATE TABLE for it" "$want" \
    "$(ddl "SELECT sql FROM duckdb_tables() WHERE database_name = 'l' AND table_name = 't'")"
check_eq "... with its default" "CREATE TABLE plain(id BIGINT DEFAULT('7'));" \
    "$(ddl "SELECT sql FROM duckdb_tables() WHERE database_name = 'l' AND table_name = 'plain'")"
sqls=$(ddl "SELECT sql FROM duckdb_tables() WHERE database_name = 'l'")
case $sqls in
*read_parquet* | *__ducklake* | *__tarn* | *"CREATE VIEW"*) fail "no file paths or internal names in duckdb_tables().sql" "$sqls" ;;
*) ok "no file paths or internal names in duckdb_tables().sql" ;;
esac
check_eq "information_schema.views lists the lake's views only" "v" \
    "$(ddl "SELECT table_name FROM information_schema.views WHERE table_catalog = 'l' ORDER BY 1")"
check_eq "... as it lists their tables as tables" "plain,BASE TABLE
t,BASE TABLE
v,VIEW" "$(ddl "SELECT table_name, table_type FROM information_schema.tables WHERE table_catalog = 'l' ORDER BY 1")"

# .schema: the lines the shell prints for the same table in a DuckDB database, and the others.
printf "ATTACH ':memory:' AS x;\nUSE x;\nCREATE SCHEMA s;\nCREATE TABLE s.t ($COLS);\n.schema\n" >"$d/duck.sql"
duck=$(cd "$d" && "$TARN" sql -f duck.sql 2>&1)
printf "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/');\nUSE l;\n.schema\n" >"$d/schema.sql"
check_eq ".schema prints each table's and view's CREATE statement" "CREATE TABLE plain(id BIGINT DEFAULT('7'));
CREATE VIEW v AS SELECT (id + 1) AS \"next\" FROM l.plain;
$duck" "$(cd "$d" && "$TARN" sql -f schema.sql 2>&1)"

finish

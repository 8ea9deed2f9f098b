#!/usr/bin/env bash
# tests/e2e/test_lake_listings.sh — a lake in DuckDB's listings, as DuckLake shows it.
#
#   - duckdb_tables(): a lake table's estimated_size is its row count (ducklake_table_stats);
#   - duckdb_views(): the lake's views only, not its tables (views underneath in tarn);
#   - pragma_database_size(): a lake's size is that of its live data and delete files;
#   - duckdb_databases(): the lake carries its data path as tag data_path; the catalog database
#     __ducklake_metadata_<alias> is left out of duckdb_databases(), duckdb_tables(),
#     information_schema.tables and SHOW ALL TABLES (still readable by name), unless it was
#     named with METADATA_CATALOG.
#
# Run: `bash tests/e2e/test_lake_listings.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
last() { lake_sql "$d" "$1" | grep . | tail -n 1; }

lake_sql "$d" "CREATE TABLE l.t AS SELECT range AS i FROM range(1000); CREATE TABLE l.e (i INTEGER);
INSERT INTO l.e VALUES (1), (2), (3); CREATE VIEW l.v AS SELECT * FROM l.t" >/dev/null
check_eq "duckdb_tables() estimated_size" "e,3|t,1000" \
    "$(lake_sql "$d" "SELECT table_name, estimated_size FROM duckdb_tables() WHERE database_name = 'l' ORDER BY ALL" | grep -E '^[et],' | paste -sd'|')"
check_eq "duckdb_views() lists the lake's views, not its tables" "v" \
    "$(last "SELECT string_agg(view_name, ',') FROM duckdb_views() WHERE database_name = 'l'")"
check_eq "pragma_database_size() is the files' size" "true" \
    "$(last "SELECT database_size = format_bytes((SELECT sum(file_size_bytes) FROM __ducklake_metadata_l.ducklake_data_file WHERE end_snapshot IS NULL)::BIGINT) FROM pragma_database_size() WHERE database_name = 'l'")"
check_eq "duckdb_databases() tag data_path" "true" \
    "$(last "SELECT tags['data_path'] LIKE '%/d/' FROM duckdb_databases() WHERE database_name = 'l'")"
check_eq "the catalog database is left out of the listings" "0,0,0,0" \
    "$(last "SELECT (SELECT count(*) FROM duckdb_databases() WHERE database_name = '__ducklake_metadata_l'), (SELECT count(*) FROM duckdb_tables() WHERE database_name = '__ducklake_metadata_l'), (SELECT count(*) FROM information_schema.tables WHERE table_catalog = '__ducklake_metadata_l'), (SELECT count(*) FROM (SHOW ALL TABLES) WHERE database = '__ducklake_metadata_l')")"
check_eq "and still read by name" "true" \
    "$(last "SELECT count(*) > 0 FROM __ducklake_metadata_l.ducklake_snapshot")"
check_eq "named with METADATA_CATALOG it is listed" "1,true" \
    "$( (cd "$d" && "$TARN" sql --format csv "ATTACH 'ducklake:m.ducklake' AS l (DATA_PATH 'd/', METADATA_CATALOG 'mc'); SELECT (SELECT count(*) FROM duckdb_databases() WHERE database_name = 'mc'), (SELECT count(*) > 0 FROM duckdb_tables() WHERE database_name = 'mc')") </dev/null 2>/dev/null | grep . | tail -n 1)"

finish

#!/usr/bin/env bash
# test_lake_metadata_log.sh — DuckLake's DuckLakeMetadata log: with the type
# enabled, every catalog query of a lake is an entry (catalog = the lake's
# name, query, elapsed_ms) in duckdb_logs_parsed('DuckLakeMetadata') and in
# duckdb_logs; enabled in a list with DuckDB's own types those are enabled
# too; disable_logging() stops it, truncate_duckdb_logs() empties it, and a
# level of debug with no types enables it as DuckDB's debug types.
. "$(dirname "$0")/lib.sh"

d=$(mktempdir)
cd "$d" || exit 1
q() { "$TARN" sql --format csv "$1" </dev/null 2>>"$d/err" | grep .; }
lake="ATTACH 'ducklake:m.ducklake' AS lk (DATA_PATH 'd/');"
work="CREATE TABLE lk.t (id INTEGER, v VARCHAR); INSERT INTO lk.t VALUES (1, 'a'), (2, 'b');"
parsed="SELECT count(*) > 0, count(*) FILTER (WHERE catalog <> 'lk'), count(*) FILTER (WHERE elapsed_ms < 0 OR elapsed_ms IS NULL), count(*) FILTER (WHERE query IS NULL OR query = ''), count(*) FILTER (WHERE query LIKE '%ducklake_snapshot%') > 0 FROM duckdb_logs_parsed('DuckLakeMetadata');"

check_eq "enable_logging('DuckLakeMetadata'): the lake's catalog queries, named and timed" \
    "true,0,0,0,true" "$(q "CALL enable_logging('DuckLakeMetadata'); $lake $work $parsed" | tail -n 1)"
rm -rf m.ducklake* d
check_eq "its columns are DuckDB's for a log entry, then the entry's" \
    "context_id|scope|connection_id|transaction_id|query_id|thread_id|timestamp|type|log_level|catalog|query|elapsed_ms" \
    "$(q "SELECT string_agg(column_name, '|') FROM (DESCRIBE FROM duckdb_logs_parsed('DuckLakeMetadata'));" | tail -n 1)"
check_eq "without enable_logging: no entries" "false,0,0,0,false" "$(q "$lake $work $parsed" | tail -n 1)"
rm -rf m.ducklake* d
check_eq "in a list with QueryLog: both logged, duckdb_logs shows both with DuckLake's message" \
    "true,true,true" \
    "$(q "CALL enable_logging(['QueryLog', 'DuckLakeMetadata']); $lake $work SELECT count(*) FILTER (WHERE type = 'QueryLog') > 0, count(*) FILTER (WHERE type = 'DuckLakeMetadata') > 0, bool_and(message LIKE '{''catalog'': lk, ''query'': %, ''elapsed_ms'': %}') FILTER (WHERE type = 'DuckLakeMetadata') FROM duckdb_logs;" | tail -n 1)"
rm -rf m.ducklake* d
check_eq "disable_logging() stops it, truncate_duckdb_logs() empties it" "0,0" \
    "$(q "CALL enable_logging('DuckLakeMetadata'); $lake CALL truncate_duckdb_logs(); SELECT 'n=' || count(*) FROM duckdb_logs_parsed('DuckLakeMetadata'); CALL disable_logging(); $work SELECT 'n=' || count(*) FROM duckdb_logs_parsed('DuckLakeMetadata');" | grep '^n=' | sed 's/^n=//' | tr '\n' ',' | sed 's/,$//')"
rm -rf m.ducklake* d
check_eq "enable_logging(level := 'debug') includes it; a list without it leaves it off" "true,0" \
    "$(q "CALL enable_logging(level := 'debug'); $lake $work SELECT 'n=' || (count(*) > 0) FROM duckdb_logs_parsed('DuckLakeMetadata'); CALL truncate_duckdb_logs(); CALL enable_logging('QueryLog'); INSERT INTO lk.t VALUES (3, 'c'); SELECT 'n=' || count(*) FROM duckdb_logs_parsed('DuckLakeMetadata');" | grep '^n=' | sed 's/^n=//' | tr '\n' ',' | sed 's/,$//')"
check_eq "no errors" "" "$(cat "$d/err")"
finish

#!/usr/bin/env bash
# tests/e2e/test_lake_writer_options.sh — data files written as DuckLake's options say.
#
#   - parquet_compression / _compression_level / _version / _row_group_size / _row_group_size_bytes
#     reach the Parquet writer: codec and encodings, row groups, in the files' own metadata;
#   - the option of a table comes before its schema's, which comes before the global one; they
#     survive a DETACH and ATTACH; maintenance (flush of inlined rows) writes the table's codec;
#   - target_file_size (the option, or the session's ducklake_target_file_size before it) cuts an
#     insert into several files, each a ducklake_data_file row with its own row count, size,
#     row id range and column stats; RESET goes back to the option (512 MiB: one file);
#   - per_thread_output writes a file per thread; a failed insert leaves no file behind;
#   - a column's USING COMPRESSION is refused as DuckLake refuses it.
#
# Run: `bash tests/e2e/test_lake_writer_options.sh` (TARN=build-san/tarn for ASan).

. "$(dirname "$0")/lib.sh"

# meta DIR SQL — SQL over the lake's files (parquet_metadata, glob), run in DIR without the lake
meta() { (cd "$1" && "$TARN" sql --format csv "$2") </dev/null 2>>"$1/err" | grep . | tail -n +2; }
# last DIR SQL / cat_last DIR SQL — the last row of lake_sql's / lake_catalog's output
last() { lake_sql "$1" "$2" | grep . | tail -n 1; }
cat_last() { lake_catalog "$1" "$2" | grep . | tail -n 1; }

# --- codec, level, version and row groups
d=$(mktempdir)
lake_sql "$d" "CALL l.set_option('parquet_compression', 'zstd');
    CALL l.set_option('parquet_compression_level', '9');
    CALL l.set_option('parquet_version', '2');
    CALL l.set_option('parquet_row_group_size', '2048');
    CREATE TABLE l.t AS SELECT i, 'value ' || i AS s FROM range(10000) r(i);" >/dev/null
check_eq "codec and Parquet 2 encodings reach the files" "ZSTD,DELTA_BINARY_PACKED
ZSTD,DELTA_LENGTH_BYTE_ARRAY" \
    "$(meta "$d" "SELECT DISTINCT compression, encodings FROM parquet_metadata('d/main/t/*.parquet') ORDER BY ALL")"
check_eq "parquet_row_group_size: 10000 rows in row groups of 2048" "5" \
    "$(meta "$d" "SELECT count(DISTINCT row_group_id) FROM parquet_metadata('d/main/t/*.parquet')")"
check_eq "the rows read back" "10000,49995000,value 9999" \
    "$(last "$d" "SELECT count(*), sum(i), max(s) FROM l.t")"

d=$(mktempdir)
lake_sql "$d" "CALL l.set_option('parquet_row_group_size_bytes', '20KB');
    SET threads = 1; SET preserve_insertion_order = false;
    CREATE TABLE l.t AS SELECT i, 'hello world ' || i AS s FROM range(100000) r(i);" >/dev/null
n=$(meta "$d" "SELECT count(DISTINCT row_group_id) FROM parquet_metadata('d/main/t/*.parquet')")
[ "${n:-0}" -gt 10 ] && ok "parquet_row_group_size_bytes cuts row groups by size ($n)" ||
    fail "parquet_row_group_size_bytes cuts row groups by size" "row groups: $n" "$(cat "$d/err")"

# --- scopes: table before schema before global, kept across ATTACHes
d=$(mktempdir)
lake_sql "$d" "CREATE TABLE l.t1 (s VARCHAR); CREATE TABLE l.t2 (s VARCHAR);
    CREATE SCHEMA l.s1; CREATE TABLE l.s1.t1 (s VARCHAR); CREATE TABLE l.s1.t2 (s VARCHAR);
    CALL l.set_option('parquet_compression', 'uncompressed');
    CALL l.set_option('parquet_compression', 'zstd', table_name => 't1');
    CALL l.set_option('parquet_compression', 'lz4', schema => 's1');
    CALL l.set_option('parquet_compression', 'gzip', schema => 's1', table_name => 't1');" >/dev/null
codecs() {
    local out="" x
    for x in main/t1 main/t2 s1/t1 s1/t2; do
        out+="$x=$(meta "$d" "SELECT string_agg(DISTINCT compression, '+') FROM parquet_metadata('d/$x/*.parquet')") "
    done
    echo "$out"
}
for round in 1 2; do
    lake_sql "$d" "INSERT INTO l.t1 SELECT 'x' || i FROM range(1000) r(i);
        INSERT INTO l.t2 SELECT 'x' || i FROM range(1000) r(i);
        INSERT INTO l.s1.t1 SELECT 'x' || i FROM range(1000) r(i);
        INSERT INTO l.s1.t2 SELECT 'x' || i FROM range(1000) r(i);" >/dev/null
    check_eq "round $round: table, schema and global codecs" \
        "main/t1=ZSTD main/t2=UNCOMPRESSED s1/t1=GZIP s1/t2=LZ4_RAW " "$(codecs)"
done
check_eq "each table got two files" "8" "$(meta "$d" "SELECT count(*) FROM glob('d/*/*/*.parquet')")"

# maintenance writes the table's codec too: inlined rows flushed to a file
d=$(mktempdir)
lake_sql "$d" "CREATE TABLE l.t (i INTEGER); CALL l.set_option('parquet_compression', 'gzip');
    INSERT INTO l.t VALUES (1), (2), (3);
    SELECT * FROM ducklake_flush_inlined_data('l');" >/dev/null
check_eq "flushed inlined rows are written with the table's codec" "GZIP" \
    "$(meta "$d" "SELECT DISTINCT compression FROM parquet_metadata('d/main/t/*.parquet')")"

# --- target_file_size: an insert cut into files, each registered with its own figures
d=$(mktempdir)
lake_sql "$d" "CREATE TABLE l.t (id INTEGER, s VARCHAR);
    CALL l.set_option('target_file_size', '100KB');
    INSERT INTO l.t SELECT i, concat('thisisalongstring', i) FROM range(200000) r(i);" >/dev/null
nfiles=$(meta "$d" "SELECT count(*) FROM glob('d/main/t/*.parquet')")
[ "${nfiles:-0}" -gt 1 ] && ok "target_file_size: the insert wrote several files ($nfiles)" ||
    fail "target_file_size: the insert wrote several files" "files: $nfiles" "$(cat "$d/err")"
check_eq "every file written is a data file row, no scratch directory left" \
    "$nfiles,$nfiles,200000,0" \
    "$(cat_last "$d" "SELECT count(*), count(DISTINCT data_file_id), sum(record_count),
        (SELECT count(*) FROM glob('d/main/t/.*')) FROM m.ducklake_data_file")"
check_eq "row id ranges follow each other from 0" "0" \
    "$(cat_last "$d" "SELECT count(*) FROM (SELECT row_id_start, record_count,
        lag(row_id_start + record_count, 1, 0) OVER (ORDER BY data_file_id) AS expect
        FROM m.ducklake_data_file) WHERE row_id_start <> expect")"
check_eq "each row's size and count match its file" "0" \
    "$(cat_last "$d" "SELECT count(*) FROM m.ducklake_data_file f JOIN
        (SELECT file_name, sum(num_rows) AS n FROM (SELECT DISTINCT file_name, row_group_id, row_group_num_rows AS num_rows
         FROM parquet_metadata('d/main/t/*.parquet')) GROUP BY file_name) p
        ON p.file_name = 'd/main/t/' || f.path
        JOIN read_blob('d/main/t/*.parquet') b ON b.filename = p.file_name
        WHERE p.n <> f.record_count OR b.size <> f.file_size_bytes")"
check_eq "each file has its own id min/max stats" "0" \
    "$(cat_last "$d" "SELECT count(*) FROM m.ducklake_file_column_stats cs
        JOIN m.ducklake_data_file f USING (data_file_id)
        JOIN (SELECT filename, min(id) AS lo, max(id) AS hi FROM read_parquet('d/main/t/*.parquet', filename = true)
              GROUP BY filename) r ON r.filename = 'd/main/t/' || f.path
        WHERE cs.column_id = 1 AND (cs.min_value::BIGINT <> r.lo OR cs.max_value::BIGINT <> r.hi)")"
check_eq "rows and row ids read back" "200000,0,199999,200000,19999900000" \
    "$(last "$d" "SELECT count(*), min(rowid), max(rowid), count(DISTINCT rowid), sum(id) FROM l.t")"

d=$(mktempdir)
lake_sql "$d" "CREATE TABLE l.a (id INTEGER, s VARCHAR); CREATE TABLE l.b (id INTEGER, s VARCHAR);
    CALL l.set_option('target_file_size', '512MB');
    SET ducklake_target_file_size = '100KB';
    INSERT INTO l.a SELECT i, concat('thisisalongstring', i) FROM range(200000) r(i);
    RESET ducklake_target_file_size;
    INSERT INTO l.b SELECT i, concat('thisisalongstring', i) FROM range(200000) r(i);" >/dev/null
na=$(meta "$d" "SELECT count(*) FROM glob('d/main/a/*.parquet')")
[ "${na:-0}" -gt 1 ] && ok "SET ducklake_target_file_size comes before the option ($na files)" ||
    fail "SET ducklake_target_file_size comes before the option" "files: $na" "$(cat "$d/err")"
check_eq "after RESET the option applies again: one file" "1" \
    "$(meta "$d" "SELECT count(*) FROM glob('d/main/b/*.parquet')")"

# --- per_thread_output
d=$(mktempdir)
lake_sql "$d" "SET threads = 2; SET preserve_insertion_order = false;
    CALL l.set_option('per_thread_output', 'true');
    CREATE TABLE l.base AS SELECT i FROM range(2000000) r(i);
    CREATE TABLE l.per_thread AS FROM l.base;
    CALL l.set_option('per_thread_output', 'false');
    CREATE TABLE l.one AS FROM l.base;" >/dev/null
np=$(last "$d" "SELECT count(*) FROM ducklake_list_files('l', 'per_thread')")
[ "${np:-0}" -gt 1 ] && ok "per_thread_output: a file per thread ($np)" ||
    fail "per_thread_output: a file per thread" "files: $np" "$(cat "$d/err")"
check_eq "without it one file, and the rows are all there" "1,2000000,1999999000000" \
    "$(last "$d" "SELECT (SELECT count(*) FROM ducklake_list_files('l', 'one')), count(*), sum(i)
        FROM l.per_thread")"

# --- a failed insert leaves nothing behind
d=$(mktempdir)
lake_sql "$d" "CREATE TABLE l.t (i INTEGER); CALL l.set_option('target_file_size', '10KB');" >/dev/null
check_fails "an insert whose cast fails midway fails" lake_sql "$d" \
    "INSERT INTO l.t SELECT CASE WHEN i < 150000 THEN i::VARCHAR ELSE 'x' END FROM range(200000) r(i)"
check_eq "and leaves no file or directory in the table's directory" "0,0" \
    "$(meta "$d" "SELECT (SELECT count(*) FROM glob('d/main/t/*')), (SELECT count(*) FROM glob('d/main/t/.*'))")"

# --- USING COMPRESSION
d=$(mktempdir)
for stmt in "CREATE TABLE l.t (s VARCHAR USING COMPRESSION ZSTD)" \
    "CREATE TABLE l.u (i INTEGER); ALTER TABLE l.u ADD COLUMN s VARCHAR USING COMPRESSION zstd"; do
    out=$(lake_sql "$d" "$stmt" 2>&1)
    grep -q "compression type for a column is not supported in DuckLake" "$d/err" &&
        ok "refused: $stmt" || fail "refused: $stmt" "$out" "$(cat "$d/err")"
    : >"$d/err"
done
check_eq "nothing was created with it" "u,i" \
    "$(lake_sql "$d" "SELECT table_name, column_name FROM duckdb_columns() WHERE database_name = 'l'" |
        tail -n +2 | grep . | tr '\n' ' ' | sed 's/ $//')"

finish

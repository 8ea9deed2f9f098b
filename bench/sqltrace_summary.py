#!/usr/bin/env python3
"""bench/sqltrace_summary.py — where the DuckDB time of a traced tarn process goes.

    python3 bench/sqltrace_summary.py TRACE [MODELS]

TRACE is a log written by bench/sqltrace.c (`<ms>\t<state>\t<SQL>` per duckdb_query call). Each
query is put in one category by its text; the output is one line per category: queries, total
ms, and (with MODELS) queries and ms per model, then the top query shapes by time.
"""
import collections
import re
import sys

# (category, regex on the query text), first match wins.
CATEGORIES = [
    ("lake: view rebuild (per table)",
     r'CREATE OR REPLACE VIEW "lake"|DROP SCHEMA "lake"|CREATE SCHEMA "lake"|duckdb_tables\(\)|'
     r'SELECT d\.data_file_id|partition_value FROM|SELECT c\.column_id, c\.column_name|'
     r'ducklake_inlined_data_\d+_\d+" WHERE end_snapshot|duckdb_views\(\)|duckdb_schemas\(\)'),
    ("lake: catalog load at BEGIN",
     r'FROM "__ducklake_metadata_lake"\.ducklake_(snapshot|schema|table|column|inlined_data_tables|view|'
     r'partition_info|tag)\b.*(WHERE|ORDER)|^SELECT COLUMNS\(\*\)::VARCHAR FROM \(SELECT \(\d+\)::BIGINT\)'),
    ("build: run records (tarn_*)", r'tarn_model_run|tarn_run|tarn_partition'),
    ("lake: commit (catalog writes)",
     r'^INSERT INTO "__ducklake_metadata_lake"|^UPDATE "__ducklake_metadata_lake"|^DELETE FROM "__ducklake_metadata_lake"|'
     r'^COMMIT|^BEGIN|^ROLLBACK|CREATE TABLE IF NOT EXISTS "__ducklake_metadata_lake"\.ducklake_inlined|'
     r'^SET VARIABLE|uuidv7\(\)|next_row_id|ducklake_metadata|max\(snapshot_id\)'),
    ("model SQL (DuckDB: COPY, staging, checks)", r'^COPY |__tarn_shape|__tarn_stage|__tarn_match|'
     r'count\(\*\) FROM \(SELECT 1 FROM \(SELECT'),
    ("project: parse (json_serialize_sql)", r'json_serialize_sql'),
]


def category(sql):
    for name, rx in CATEGORIES:
        if re.search(rx, sql):
            return name
    return "other"


def shape(sql):
    s = re.sub(r"'[^']*'", "'?'", sql)
    s = re.sub(r"\b\d+\b", "N", s)
    return re.sub(r'"l\d+"\."m\d+"', "T", s)[:110]


def main():
    path = sys.argv[1]
    models = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    cats = collections.defaultdict(lambda: [0, 0.0])
    shapes = collections.defaultdict(lambda: [0, 0.0])
    total = [0, 0.0]
    main_ms = 0.0  # the first thread's queries: the rest (workers, "/w") overlap it
    for line in open(path, errors="replace"):
        parts = line.rstrip("\n").split("\t", 2)
        if len(parts) < 3:
            continue
        ms = float(parts[0])
        c = cats[category(parts[2])]
        c[0] += 1
        c[1] += ms
        s = shapes[shape(parts[2])]
        s[0] += 1
        s[1] += ms
        total[0] += 1
        total[1] += ms
        if not parts[1].endswith("/w"):
            main_ms += ms
    per = " (per model: queries, ms)" if models else ""
    print(f"# {total[0]} queries, {total[1]:.0f} ms in duckdb_query{per}")
    print(f"# main thread: {main_ms:.0f} ms in duckdb_query")
    for name, (n, ms) in sorted(cats.items(), key=lambda x: -x[1][1]):
        extra = f"  {n / models:8.1f} {ms / models:9.2f}" if models else ""
        print(f"{ms:10.0f} ms {n:8d} q  {name}{extra}")
    print("# top query shapes")
    for k, (n, ms) in sorted(shapes.items(), key=lambda x: -x[1][1])[:12]:
        print(f"{ms:10.0f} ms {n:8d} q  {k}")


main()

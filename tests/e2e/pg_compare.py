#!/usr/bin/env python3
"""pg_compare.py — compare two dumps of a DuckLake catalog's ducklake_* tables, one read from
PostgreSQL with psql --csv, one from a DuckDB-file catalog with tarn sql --format csv, after
normalizing what differs between two runs of the same script (uuids, times, file names) and
between the two databases' text of a value (PostgreSQL's booleans t/f).

    pg_compare.py PG_DIR DUCK_DIR      # each holds TABLE.csv files (a header, then rows)

Prints the differences per table; exits 1 when there are any.
"""
import csv
import os
import re
import sys

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
TIME = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?(\+\d{2}(:\d{2})?)?$")


def norm(v, is_bool):
    if is_bool and v in ("t", "f"):
        return "true" if v == "t" else "false"
    v = UUID.sub("UUID", v)
    if TIME.match(v):
        return "TIME"
    return v


def load(path, bools):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows:
        return [], []
    rows = [r for r in rows if r]  # (tarn separates statements with a blank line)
    head, body = rows[0], rows[1:]
    flags = [h in bools for h in head]
    return head, sorted(tuple(norm(v, flags[i]) for i, v in enumerate(r)) for r in body)


def main():
    pg_dir, duck_dir = sys.argv[1], sys.argv[2]
    bools = {"path_is_relative", "contains_nan", "contains_null", "nulls_allowed", "is_partition"}
    bad = 0
    for name in sorted(os.listdir(duck_dir)):
        if not name.endswith(".csv"):
            continue
        ph, prow = load(os.path.join(pg_dir, name), bools)
        dh, drow = load(os.path.join(duck_dir, name), bools)
        if ph != dh or prow != drow:
            bad += 1
            print(f"{name[:-4]} differs:")
            print(f"  postgres: {ph}")
            for r in prow:
                print(f"    {r}")
            print(f"  duckdb:   {dh}")
            for r in drow:
                print(f"    {r}")
    sys.exit(1 if bad else 0)


main()

#!/usr/bin/env python3
"""golden_pg.py — the DuckLake golden cases (../shared/ducklake-golden) run a second time with
their catalog in PostgreSQL (test_golden_pg.sh starts the cluster and calls this).

    golden_pg.py --tarn TARN --libduckdb LIB --golden DIR --pghost SOCKETDIR [--only PAT] [--keep]

For every cases/NNN-name.sql (the golden checker's check.py is imported for its script, dump and
normalization code, not copied):
  1. the script runs through `tarn sql --format csv -f` as check.py runs it, on a DuckDB file;
  2. the same script with every `ATTACH 'ducklake:meta.ducklake'` rewritten to
     `ATTACH 'ducklake:postgres:dbname=gNNN host=… user=tarn'` (a new database per case) runs in
     another empty folder; its output must equal NNN-name.out byte for byte (for a case of
     --file-xfail, which tarn fails on a DuckDB file too, the DuckDB-file run's output);
  3. the ducklake_* tables are read back from PostgreSQL with psql (COPY … TO STDOUT CSV), each
     value turned into DuckDB's text of it (cast to the column's type in the DuckDB-file catalog:
     PostgreSQL's t/f, bytea's hex, its text of timestamps, nested values, wide integers), then
     dumped with check.py's normalization; the dump must equal the DuckDB-file catalog's dump.

Prints `ok   case NAME` / `FAIL case NAME` (a diff follows) per case and `N passed, N failed`.
The fixtures (lakes DuckLake wrote into DuckDB files) are not run: there is no PostgreSQL
catalog of them to read.
"""
import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile

ATTACH = re.compile(r"'ducklake:meta\.ducklake'")


def psql(host, db, sql):
    p = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", host, "-U", "tarn",
                        "-d", db, "-c", sql], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("psql: " + p.stderr.decode(errors="replace").strip())
    return p.stdout.decode("utf-8", errors="replace")


def pg_rows(host, db, sql, cols=None):
    """The rows of SQL as lists of str / None. With cols (the names of SQL's columns) each value is
    read as 'v' || value::text, so that NULL (an empty field) differs from an empty string."""
    if cols:
        sql = "SELECT %s FROM (%s) q" % (
            ", ".join("'v' || %s::text" % _pgident(c) for c in cols), sql)
    out = psql(host, db, "COPY (%s) TO STDOUT WITH (FORMAT csv, HEADER)" % sql)
    rows = list(csv.reader(io.StringIO(out)))
    if not cols:
        return rows[0], rows[1:]
    return cols, [[v[1:] if v else None for v in r] for r in rows[1:]]


def _pgident(s):
    return '"' + s.replace('"', '""') + '"'


def duck_types(check, conn):
    """{table: {column: DuckDB type}} of the ducklake_* tables of a DuckDB-file catalog."""
    _, rows = conn.raw("SELECT table_name, column_name, data_type FROM duckdb_columns() "
                       "WHERE database_name = current_database() AND schema_name = 'main' "
                       "AND table_name LIKE 'ducklake\\_%' ESCAPE '\\'")
    types = {}
    for t, c, ty in rows:
        types.setdefault(t, {})[c] = ty
    return types


MARK = "@@golden_pg table "


def pg_tables(host, db, check, mem, types):
    """The ducklake_* tables of PostgreSQL database db, as check.read_catalog returns them: every
    value as DuckDB's CAST(x AS VARCHAR) of the value of the DuckDB-file column's type. Two psql
    runs: the columns, then every table (one COPY each, a marker line before each)."""
    _, cols = pg_rows(host, db, "SELECT table_name, column_name, data_type FROM "
                      "information_schema.columns WHERE table_schema = 'public' AND table_name "
                      "LIKE 'ducklake\\_%' ORDER BY table_name, ordinal_position")
    pgcols = {}
    for t, c, ty in cols:
        pgcols.setdefault(t, []).append((c, ty))
    script = []
    for t, cl in pgcols.items():
        sel = ", ".join("'v' || %s::text" % _pgident(c) for c, _ in cl)
        script.append("\\echo '%s%s'" % (MARK, t))
        script.append("COPY (SELECT %s FROM public.%s) TO STDOUT WITH (FORMAT csv);"
                      % (sel, _pgident(t)))
    p = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", host, "-U", "tarn",
                        "-d", db], input="\n".join(script).encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise RuntimeError("psql: " + p.stderr.decode(errors="replace").strip())
    text = p.stdout.decode("utf-8", errors="replace")
    chunks = {}
    for part in text.split(MARK)[1:]:
        t, _, body = part.partition("\n")
        chunks[t] = [[v[1:] if v else None for v in r] for r in csv.reader(io.StringIO(body))]
    tables = {}
    for t, cl in pgcols.items():
        names = [c for c, _ in cl]
        rows = chunks.get(t, [])
        dt = types.get(t, {})
        exprs = [(pgty, dt.get(c)) for c, pgty in cl]
        out = []
        if rows:
            vals = []
            for r in rows:
                vals.append("(" + ", ".join(_expr(check, v, pgty, ty)
                                            for v, (pgty, ty) in zip(r, exprs)) + ")")
            sql = "SELECT COLUMNS(*)::VARCHAR FROM (VALUES %s) v(%s)" % (
                ", ".join(vals), ", ".join(check.sql_ident(c) for c in names))
            _, out = mem.raw(sql)
        tables[t] = (names, out)
    return tables


def _expr(check, v, pgty, ty):
    """A DuckDB expression of the PostgreSQL text v of a pgty value, as DuckDB type ty."""
    if v is None:
        return "NULL" if ty is None else "CAST(NULL AS %s)" % ty
    if pgty == "bytea":
        raw = "from_hex(%s)" % check.sql_str(v[2:] if v.startswith("\\x") else v)
        if ty == "BLOB" or ty is None:
            return raw
        return "CAST(decode(%s) AS %s)" % (raw, ty)
    lit = check.sql_str(v)
    if ty is None:
        return lit
    return "CAST(%s AS %s)" % (lit, ty)


def render(check, norm):
    return "".join("## " + t + "\n" + check.render_table(*norm[t]) for t in sorted(norm))


def run_tarn(tarn, sql_path, cwd, timeout):
    try:
        p = subprocess.run([tarn, "sql", "--format", "csv", "-f", sql_path], cwd=cwd,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout after %ss" % timeout
    note = ""
    if p.returncode < 0 or p.returncode > 125:
        note = "tarn exited abnormally (status %d); stderr tail: %s" % (
            p.returncode, p.stderr.decode("utf-8", errors="replace")[-500:])
    return p.stdout.decode("utf-8", errors="replace"), note


def one_case(a, check, lib, name, work):
    cases = os.path.join(os.path.abspath(a.golden), "cases")
    sql = os.path.join(cases, name + ".sql")
    problems = []
    fdir, pdir = os.path.join(work, "file"), os.path.join(work, "pg")
    os.makedirs(fdir)
    os.makedirs(pdir)
    db = "g" + re.sub(r"[^0-9a-z]", "_", name.lower())
    psql(a.pghost, "postgres", 'CREATE DATABASE "%s"' % db)
    conninfo = "dbname=%s host=%s user=tarn" % (db, a.pghost)
    with open(sql, encoding="utf-8") as f:
        text = f.read()
    psql_sql = os.path.join(work, name + ".pg.sql")
    with open(psql_sql, "w", encoding="utf-8") as f:
        f.write(ATTACH.sub(check.sql_str("ducklake:postgres:" + conninfo), text))

    fout, note = run_tarn(a.tarn, sql, fdir, a.timeout)
    if note:
        problems.append("  duckdb file: " + note)
    out, note = run_tarn(a.tarn, psql_sql, pdir, a.timeout)
    if note:
        problems.append("  postgres: " + note)
    exp = check.read_text(os.path.join(cases, name + ".out"))
    # a case tarn does not pass on a DuckDB file either (tests/golden-expected-failures.txt)
    # must print there what it prints on a DuckDB file
    if ("case " + name) in a.file_xfail and out == fout:
        exp = fout
    if out is None or out != exp:
        problems.append(check.udiff(exp, out or "", name + ".out", "stdout on postgres"))

    meta = os.path.join(fdir, "meta.ducklake")
    if not os.path.exists(meta):
        problems.append("  the DuckDB-file run left no meta.ducklake")
        return problems
    fconn = check.Conn(lib, meta, {"access_mode": "READ_ONLY",
                                   "autoload_known_extensions": "false",
                                   "autoinstall_known_extensions": "false"})
    try:
        types = duck_types(check, fconn)
        fdump = render(check, check.normalize_catalog(fconn, check.read_catalog(fconn), fdir))
    finally:
        fconn.close()
    mem = check.Conn(lib, None, {"autoload_known_extensions": "false",
                                 "autoinstall_known_extensions": "false"})
    try:
        mem.raw("SET TimeZone = 'UTC'")
        try:
            tables = pg_tables(a.pghost, db, check, mem, types)
            pdump = render(check, check.normalize_catalog(mem, tables, pdir))
        except (RuntimeError, check.DuckDBError) as e:
            pdump = "# reading the catalog from postgres failed: %s\n" % e
    finally:
        mem.close()
    if pdump != fdump:
        problems.append(check.udiff(fdump, pdump, name + " catalog (duckdb file)",
                                    "catalog read from postgres", limit=60))
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tarn", required=True)
    ap.add_argument("--libduckdb", required=True)
    ap.add_argument("--golden", required=True, help="the ducklake-golden folder")
    ap.add_argument("--pghost", required=True, help="the cluster's socket folder")
    ap.add_argument("--only", help="a pattern as check.py's --only, or several, comma-separated")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--file-xfail", help="tests/golden-expected-failures.txt: cases whose output "
                    "need only equal the DuckDB-file run's")
    a = ap.parse_args()
    listed = set()
    if a.file_xfail:
        with open(a.file_xfail, encoding="utf-8") as f:
            listed = {ln.strip() for ln in f if ln.strip() and not ln.startswith("#")}
    a.file_xfail = listed
    a.tarn = os.path.abspath(a.tarn)
    sys.path.insert(0, a.golden)
    import check  # the golden checker: its script, dump and normalization code

    lib = check.LibDuckDB(a.libduckdb)
    cases = sorted(f[:-4] for f in os.listdir(os.path.join(a.golden, "cases"))
                   if f.endswith(".sql"))
    passed = failed = 0
    for name in cases:
        if a.only and not any(check.selected(name, p) for p in a.only.split(",")):
            continue
        work = tempfile.mkdtemp(prefix="dlgold-pg-")
        try:
            problems = one_case(a, check, lib, name, work)
        except (RuntimeError, check.DuckDBError) as e:
            problems = ["  " + str(e)]
        if problems:
            failed += 1
            print("FAIL case %s" % name)
            for p in problems:
                print(p)
            if a.keep:
                print("  (kept %s)" % work)
        else:
            passed += 1
            print("ok   case %s" % name)
        sys.stdout.flush()
        if not (a.keep and problems):
            shutil.rmtree(work, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

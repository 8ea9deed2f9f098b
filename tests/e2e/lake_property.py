#!/usr/bin/env python3
"""lake_property.py — property test of schema evolution and time travel on a tarn lake.

For each seed, random steps run against one table `lake.t` of a new lake, one statement (so one
snapshot) per step: column operations (ADD COLUMN with or without a literal default, DROP COLUMN,
RENAME COLUMN, widening ALTER COLUMN ... TYPE int8 -> int16 -> int32 -> int64 and float ->
double, ADD COLUMN s.field on a STRUCT column), interleaved with INSERTs (1-4 rows: inlined;
11-20 rows: Parquet; sometimes with a column list, so omitted columns take their default), DELETEs
and UPDATEs. Names of dropped columns come back now and then (a new column, a new field id).

Seed 0 is not random: a fixed scenario (a struct column with inlined and Parquet rows, a
whole-struct UPDATE, then fields added, renamed and dropped) through the paths most likely to break.
Struct field renames are drawn in every fourth random seed only (see ops_for).

An in-memory model keeps the table (columns by field id, rows by key) and, for every snapshot,
what the table held then: column names, types and rows. After every step, one `tarn sql --format
csv` process runs the step and then reads the table at EVERY snapshot so far
(`SELECT *, typeof(COLUMNS(*)) FROM lake.t AT (VERSION => n) ORDER BY ALL`: names from the
header, types from typeof, rows as DuckDB renders them), and each read must equal the model's
record of that snapshot.

Output: `# seed N` lines, one `ok - ...` / `not ok - ...` line per step (details as `#` lines),
and `N passed, N failed` at the end; exit status 0 iff nothing failed.

Usage: lake_property.py [--seeds 0,1,2,3] [--steps N] [--jobs N] [--keep]
Environment: TARN (the tarn binary; default build/tarn), LAKE_PROPERTY_SEEDS, LAKE_PROPERTY_STEPS.
Standard library only.
"""

import argparse
import concurrent.futures
import copy
import csv
import io
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

ATTACH = "ATTACH 'ducklake:meta.ducklake' AS lake (DATA_PATH 'data/');"

# kind -> (SQL type, the kind it widens to)
KINDS = {
    "int8": ("TINYINT", "int16"),
    "int16": ("SMALLINT", "int32"),
    "int32": ("INTEGER", "int64"),
    "int64": ("BIGINT", None),
    "float": ("FLOAT", "double"),
    "double": ("DOUBLE", None),
    "varchar": ("VARCHAR", None),
    "struct": (None, None),
}
INT_RANGE = {"int8": 100, "int16": 30000, "int32": 2_000_000_000, "int64": 9_000_000_000_000_000}
WORDS = ["ash", "birch", "cedar", "elm", "fir", "oak", "pine", "yew"]


class Col:
    """A column (or struct field) of the model: its field id, name, kind, default, children."""

    def __init__(self, cid, name, kind, default=None, children=None):
        self.id = cid
        self.name = name
        self.kind = kind
        self.default = default  # a Python value, or None for no default
        self.children = children or []

    def sql_type(self):
        if self.kind == "struct":
            return "STRUCT(%s)" % ", ".join("%s %s" % (c.name, c.sql_type()) for c in self.children)
        return KINDS[self.kind][0]


class Model:
    """The table now: columns in order, rows as {field id: value}; ids allocated as DuckLake does
    (per table, pre-order over nested fields, never reused)."""

    def __init__(self):
        self.cols = []
        self.rows = []
        self.next_id = 1
        self.next_k = 1
        self.names_used = 0
        self.dropped = []  # names of dropped columns, to bring back

    def new_id(self):
        self.next_id += 1
        return self.next_id - 1

    def new_col(self, name, kind, default=None, nfields=0, rng=None):
        col = Col(self.new_id(), name, kind, default)
        for _ in range(nfields):
            col.children.append(Col(self.new_id(), self.fresh_name("f"), rng.choice(["int32", "varchar", "int64"])))
        return col

    def fresh_name(self, prefix):
        self.names_used += 1
        return "%s%d" % (prefix, self.names_used)

    def key(self):
        return self.cols[0]  # the key column: never dropped (renaming is fine)

    def col_named(self, name):
        return next(c for c in self.cols if c.name == name)


# ---- values: random ones, their SQL literals, and how DuckDB renders them --------------------------


def random_value(rng, col, allow_null=True):
    if allow_null and rng.random() < 0.15:
        return None
    k = col.kind
    if k in INT_RANGE:
        r = INT_RANGE[k]
        return rng.randint(-r, r)
    if k in ("float", "double"):
        return rng.randint(-4000, 4000) / 4  # exact in FLOAT, so widening keeps it
    if k == "varchar":
        return "%s%d" % (rng.choice(WORDS), rng.randint(0, 999))
    return {c.id: random_value(rng, c) for c in col.children}


def literal(col, v):
    if v is None:
        return "NULL"
    if col.kind == "varchar":
        return "'%s'" % v.replace("'", "''")
    if col.kind == "struct":
        fields = ", ".join("'%s': %s" % (c.name, literal(c, v.get(c.id))) for c in col.children)
        return "{%s}::%s" % (fields, col.sql_type())
    if col.kind in ("float", "double"):
        return repr(float(v))
    return str(v)


def render(col, v, nested=False):
    """DuckDB's VARCHAR rendering of a value, as `--format csv` prints it."""
    if v is None:
        return "NULL" if nested else ""
    if col.kind in ("float", "double"):
        return repr(float(v))
    if col.kind == "struct":
        return "{%s}" % ", ".join("'%s': %s" % (c.name, render(c, v.get(c.id), True)) for c in col.children)
    return str(v)


def expected_state(m):
    """What a read of the table shows now: (names, types, sorted rows)."""
    names = [c.name for c in m.cols]
    types = [c.sql_type() for c in m.cols]
    rows = sorted(tuple(render(c, r.get(c.id)) for c in m.cols) for r in m.rows)
    return names, types, rows


# ---- steps: each returns (summary, SQL) and changes the model as the statement should -------------


def op_insert(rng, m, big):
    n = rng.randint(11, 20) if big else rng.randint(1, 4)
    cols = m.cols
    if rng.random() < 0.3 and len(m.cols) > 1:
        # a column list: the others take their default (or NULL)
        cols = [m.key()] + [c for c in m.cols[1:] if rng.random() < 0.6]
    tuples = []
    for _ in range(n):
        row = {}
        for c in m.cols:
            if c is m.key():
                row[c.id] = m.next_k
                m.next_k += 1
            elif c in cols:
                row[c.id] = random_value(rng, c)
            else:
                row[c.id] = c.default
        m.rows.append(row)
        tuples.append("(%s)" % ", ".join(literal(c, row[c.id]) for c in cols))
    collist = "" if cols is m.cols else " (%s)" % ", ".join(c.name for c in cols)
    where = "Parquet" if big else "inlined"
    sql = "INSERT INTO lake.t%s VALUES %s;" % (collist, ", ".join(tuples))
    return "insert %d rows (%s%s)" % (n, where, ", column list" if collist else ""), sql


def pick_keys(rng, m):
    keys = [r[m.key().id] for r in m.rows]
    return sorted(rng.sample(keys, min(len(keys), rng.randint(1, 5))))


def op_delete(rng, m):
    if not m.rows:
        return None
    kid = m.key().id
    mod, rem = rng.randint(2, 5), rng.randint(0, 1)
    if rng.random() < 0.3 and any(r[kid] % mod == rem for r in m.rows):
        # (a DELETE that matches nothing makes no snapshot, so it is not drawn)
        m.rows = [r for r in m.rows if r[kid] % mod != rem]
        return "delete k %% %d = %d" % (mod, rem), "DELETE FROM lake.t WHERE %s %% %d = %d;" % (m.key().name, mod, rem)
    keys = pick_keys(rng, m)
    m.rows = [r for r in m.rows if r[kid] not in keys]
    inlist = ", ".join(map(str, keys))
    return "delete %d rows" % len(keys), "DELETE FROM lake.t WHERE %s IN (%s);" % (m.key().name, inlist)


def op_update(rng, m):
    targets = m.cols[1:]
    if not m.rows or not targets:
        return None
    col = rng.choice(targets)
    keys = pick_keys(rng, m)
    v = random_value(rng, col)
    for r in m.rows:
        if r[m.key().id] in keys:
            r[col.id] = copy.deepcopy(v)
    inlist = ", ".join(map(str, keys))
    sql = "UPDATE lake.t SET %s = %s WHERE %s IN (%s);" % (col.name, literal(col, v), m.key().name, inlist)
    return "update %s of %d rows" % (col.name, len(keys)), sql


def new_name(rng, m):
    live = {c.name for c in m.cols}
    back = [n for n in m.dropped if n not in live]
    if back and rng.random() < 0.4:
        return rng.choice(back)  # a dropped name comes back: a new column, a new field id
    return m.fresh_name("c")


def op_add_column(rng, m):
    kind = rng.choice(["int8", "int16", "int32", "int64", "float", "double", "varchar", "struct"])
    name = new_name(rng, m)
    col = m.new_col(name, kind, nfields=rng.randint(1, 2) if kind == "struct" else 0, rng=rng)
    sql = "ALTER TABLE lake.t ADD COLUMN %s %s" % (name, col.sql_type())
    if kind != "struct" and rng.random() < 0.5:
        col.default = random_value(rng, col, allow_null=False)
        sql += " DEFAULT %s" % literal(col, col.default)
    m.cols.append(col)
    for r in m.rows:
        r[col.id] = col.default  # rows written before read the initial default
    desc = "add column %s %s%s" % (name, col.sql_type(), " default" if col.default is not None else "")
    return desc, sql + ";"


def op_drop_column(rng, m):
    if len(m.cols) < 3:
        return None
    col = rng.choice(m.cols[1:])
    m.cols.remove(col)
    m.dropped.append(col.name)
    return "drop column %s" % col.name, "ALTER TABLE lake.t DROP COLUMN %s;" % col.name


def op_rename_column(rng, m):
    col = rng.choice(m.cols)
    old = col.name
    col.name = new_name(rng, m)
    if old not in m.dropped:
        m.dropped.append(old)
    return "rename column %s to %s" % (old, col.name), "ALTER TABLE lake.t RENAME COLUMN %s TO %s;" % (old, col.name)


def op_promote(rng, m):
    cands = [c for c in m.cols if KINDS[c.kind][1]]
    if not cands:
        return None
    col = rng.choice(cands)
    old = col.sql_type()
    col.kind = KINDS[col.kind][1]
    sql = "ALTER TABLE lake.t ALTER COLUMN %s TYPE %s;" % (col.name, col.sql_type())
    return "widen %s %s to %s" % (col.name, old, col.sql_type()), sql


def op_add_field(rng, m):
    structs = [c for c in m.cols if c.kind == "struct"]
    if not structs:
        return None
    col = rng.choice(structs)
    field = Col(m.new_id(), m.fresh_name("n"), rng.choice(["int32", "varchar", "int64"]))
    col.children.append(field)
    for r in m.rows:
        if r.get(col.id) is not None:
            r[col.id][field.id] = None
    sql = "ALTER TABLE lake.t ADD COLUMN %s.%s %s;" % (col.name, field.name, field.sql_type())
    return "add field %s.%s %s" % (col.name, field.name, field.sql_type()), sql


def op_set_default(rng, m):
    cands = [c for c in m.cols[1:] if c.kind != "struct"]
    if not cands:
        return None
    col = rng.choice(cands)
    if col.default is not None and rng.random() < 0.4:
        col.default = None  # later inserts that omit it get NULL; existing rows keep their values
        return "drop default of %s" % col.name, "ALTER TABLE lake.t ALTER COLUMN %s DROP DEFAULT;" % col.name
    col.default = random_value(rng, col, allow_null=False)
    sql = "ALTER TABLE lake.t ALTER COLUMN %s SET DEFAULT %s;" % (col.name, literal(col, col.default))
    return "set default of %s" % col.name, sql


def op_drop_field(rng, m):
    structs = [c for c in m.cols if c.kind == "struct" and len(c.children) > 1]
    if not structs:
        return None
    col = rng.choice(structs)
    field = rng.choice(col.children)
    col.children.remove(field)
    return "drop field %s.%s" % (col.name, field.name), "ALTER TABLE lake.t DROP COLUMN %s.%s;" % (col.name, field.name)


def op_rename_field(rng, m):
    structs = [c for c in m.cols if c.kind == "struct"]
    if not structs:
        return None
    col = rng.choice(structs)
    field = rng.choice(col.children)
    old, field.name = field.name, m.fresh_name("g")
    sql = "ALTER TABLE lake.t RENAME COLUMN %s.%s TO %s;" % (col.name, old, field.name)
    return "rename field %s.%s to %s" % (col.name, old, field.name), sql


OPS = [
    (lambda rng, m: op_insert(rng, m, False), 3.0),
    (lambda rng, m: op_insert(rng, m, True), 2.0),
    (op_delete, 1.5),
    (op_update, 1.5),
    (op_add_column, 1.5),
    (op_drop_column, 0.8),
    (op_rename_column, 1.0),
    (op_promote, 1.2),
    (op_add_field, 0.8),
    (op_drop_field, 0.4),
    (op_set_default, 0.6),
]
# Renaming struct fields is drawn in every fourth seed only: on a tarn that gets it wrong the lake
# can become unreadable, which ends the seed, and the other seeds should keep their full length.
NESTED_RENAME = (op_rename_field, 0.6)


def ops_for(seed):
    return OPS + ([NESTED_RENAME] if seed % 4 == 0 else [])


def random_step(rng, m, ops):
    """Picks an applicable operation; returns (new model, summary, SQL)."""
    while True:
        fn = rng.choices([f for f, _ in ops], weights=[w for _, w in ops])[0]
        trial = copy.deepcopy(m)
        got = fn(rng, trial)
        if got:
            return trial, got[0], got[1]


def create_step(rng, m):
    m.cols.append(m.new_col("k", "int64"))
    m.cols.append(m.new_col("a", "int8"))
    m.cols.append(m.new_col("f", "float"))
    m.cols.append(m.new_col("s", "struct", nfields=2, rng=rng))
    defs = ", ".join("%s %s" % (c.name, c.sql_type()) for c in m.cols)
    return "create table (%s)" % defs, "CREATE TABLE lake.t (%s);" % defs


# ---- seed 0: a fixed scenario through the paths most likely to break ---------------------------------


def scenario():
    """The steps of seed 0, each a function of (rng, model) like the random operations: inlined and
    Parquet rows under a struct, a whole-struct UPDATE, then the struct's fields added, renamed and
    dropped while old inlined rows and files still hold the earlier layouts."""

    def create(rng, m):
        m.cols += [m.new_col("k", "int64"), m.new_col("a", "int8")]
        s = m.new_col("s", "struct")
        s.children = [Col(m.new_id(), "x", "int32"), Col(m.new_id(), "y", "varchar")]
        m.cols.append(s)
        defs = ", ".join("%s %s" % (c.name, c.sql_type()) for c in m.cols)
        return "create table (%s)" % defs, "CREATE TABLE lake.t (%s);" % defs

    def update_struct(rng, m):
        s = m.col_named("s")
        keys = [1, 5]
        v = {s.children[0].id: 7, s.children[1].id: "q"}
        for r in m.rows:
            if r[m.key().id] in keys:
                r[s.id] = dict(v)
        sql = "UPDATE lake.t SET s = %s WHERE k IN (1, 5);" % literal(s, v)
        return "update s (a struct literal) of 2 rows", sql

    def add_field(rng, m):
        s = m.col_named("s")
        f = Col(m.new_id(), "z", "int64")
        s.children.append(f)
        for r in m.rows:
            if r.get(s.id) is not None:
                r[s.id][f.id] = None
        return "add field s.z BIGINT", "ALTER TABLE lake.t ADD COLUMN s.z BIGINT;"

    def rename_field(rng, m):
        m.col_named("s").children[0].name = "w"
        return "rename field s.x to w", "ALTER TABLE lake.t RENAME COLUMN s.x TO w;"

    def drop_field(rng, m):
        s = m.col_named("s")
        s.children = [c for c in s.children if c.name != "y"]
        return "drop field s.y", "ALTER TABLE lake.t DROP COLUMN s.y;"

    return [
        create,
        lambda rng, m: op_insert(rng, m, False),
        lambda rng, m: op_insert(rng, m, True),
        update_struct,
        add_field,
        lambda rng, m: op_insert(rng, m, False),
        rename_field,
        lambda rng, m: op_insert(rng, m, True),
        drop_field,
        lambda rng, m: op_insert(rng, m, False),
        op_promote,
    ]


# ---- running a step and reading every snapshot -----------------------------------------------------


def read_sql(n):
    return 'SELECT %d AS "@read"; SELECT *, typeof(COLUMNS(*)) FROM lake.t AT (VERSION => %d) ORDER BY ALL;' % (n, n)


def blocks(text):
    """--format csv output: one block per result, separated by blank lines."""
    out, cur = [], []
    for line in text.split("\n"):
        if line == "":
            if cur:
                out.append(cur)
            cur = []
        else:
            cur.append(line)
    if cur:
        out.append(cur)
    return [list(csv.reader(io.StringIO("\n".join(b) + "\n"))) for b in out]


def parse_reads(stdout):
    """{snapshot: (names, types, sorted rows) or an error string}, and the '@last' snapshot."""
    reads, last, cur = {}, None, None
    for b in blocks(stdout):
        head = b[0]
        if head == ["@last"]:
            last = int(b[1][0]) if len(b) > 1 and b[1][0] else None
        elif head == ["@read"]:
            cur = int(b[1][0])
            reads[cur] = "no result"
        elif cur is not None and reads.get(cur) == "no result":
            if head == ["#error"]:
                reads[cur] = "error"
                continue
            half = len(head) // 2
            rows = sorted(tuple(r[:half]) for r in b[1:])
            types = b[1][half:] if len(b) > 1 else None
            reads[cur] = (head[:half], types, rows)
    return reads, last


def stmt_errors(stderr):
    """{statement number: message} from `tarn: statement N (line L): ...` lines."""
    errs, cur = {}, None
    for line in stderr.split("\n"):
        mt = re.match(r"tarn: statement (\d+) \(line \d+\): (.*)", line)
        if mt:
            cur = int(mt.group(1))
            errs[cur] = mt.group(2)
        elif cur is not None and line.strip():
            errs[cur] += " | " + line.strip()
    return errs


def compare(n, want, got):
    """'' when the read of snapshot n matches the model, else what differs."""
    if isinstance(got, str):
        return "snapshot %d: the read failed (%s)" % (n, got)
    names, types, rows = want
    gnames, gtypes, grows = got
    if gnames != names:
        return "snapshot %d: columns %s, expected %s" % (n, gnames, names)
    if gtypes is not None and gtypes != types:
        return "snapshot %d: types %s, expected %s" % (n, gtypes, types)
    if grows != rows:
        missing = [r for r in rows if r not in grows][:3]
        extra = [r for r in grows if r not in rows][:3]
        return "snapshot %d: %d rows, expected %d; missing %s; unexpected %s" % (n, len(grows), len(rows), missing, extra)
    return ""


class Seed:
    """One seed's run: a lake directory, the model, and the expected state at every snapshot."""

    def __init__(self, seed, steps, tarn, root):
        self.seed = seed
        self.steps = steps
        self.tarn = tarn
        self.dir = os.path.join(root, "seed-%d" % seed)
        os.makedirs(self.dir)
        self.rng = random.Random(seed)
        self.model = Model()
        self.history = {}  # snapshot -> expected (names, types, rows)
        self.last = 0  # snapshot 0 is the empty lake
        self.lines = []
        self.passed = self.failed = 0
        self.failing = set()  # snapshots already reported as wrong

    def emit_ok(self, name):
        self.passed += 1
        self.lines.append("ok - " + name)

    def emit_fail(self, name, details):
        self.failed += 1
        self.lines.append("not ok - " + name)
        self.lines.extend("#   " + d for d in details)

    def run_step(self, i, summary, sql, trial):
        snaps = list(range(1, self.last + 2))
        script = "%s\n%s\nSELECT max(snapshot_id) AS \"@last\" FROM ducklake_snapshots('lake');\n%s" % (
            ATTACH, sql, "\n".join(read_sql(n) for n in snaps))
        p = subprocess.run([self.tarn, "sql", "--format", "csv", script], cwd=self.dir,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        name = "seed %d step %d: %s" % (self.seed, i, summary)
        if p.returncode < 0 or p.returncode >= 126 or "Sanitizer" in p.stderr:
            self.emit_fail(name, ["tarn crashed (exit status %d)" % p.returncode, sql] + p.stderr.splitlines()[:20])
            return False
        errs = stmt_errors(p.stderr)
        reads, last = parse_reads(p.stdout)
        if 2 in errs:
            # the statement failed: it must have made no snapshot, and the model stays as it was
            detail = ["statement failed: " + errs[2], sql]
            if last != self.last:
                detail.append("and yet the lake moved from snapshot %s to %s" % (self.last, last))
            self.emit_fail(name, detail)
            return last == self.last
        if last != self.last + 1:
            self.emit_fail(name, ["expected snapshot %d after the step, the lake is at %s" % (self.last + 1, last), sql])
            return False
        self.model = trial
        self.last = last
        self.history[last] = expected_state(trial)
        problems = []
        for n in snaps:
            diff = compare(n, self.history[n], reads.get(n, "missing"))
            if diff and n not in self.failing:
                problems.append(diff)
            if diff:
                self.failing.add(n)
            else:
                self.failing.discard(n)
        if self.failing:
            head = "snapshots %s differ from the model" % sorted(self.failing)
            self.emit_fail(name + " (%d snapshots read)" % len(snaps), [head, "step: " + sql] + problems[:6])
        else:
            self.emit_ok(name + " (%d snapshots read)" % len(snaps))
        return True

    def run_scenario(self):
        self.lines.append("# seed 0: the fixed scenario (struct update, field add/rename/drop)")
        for i, fn in enumerate(scenario()):
            trial = copy.deepcopy(self.model)
            summary, sql = fn(self.rng, trial)
            if not self.run_step(i, summary, sql, trial):
                self.lines.append("# seed 0: the lake and the model diverged; stopping the scenario")
                break
        return self

    def run(self):
        if self.seed == 0:
            return self.run_scenario()
        ops = ops_for(self.seed)
        self.lines.append("# seed %d%s (rerun alone: LAKE_PROPERTY_SEEDS=%d)" % (
            self.seed, ", with struct field renames" if len(ops) > len(OPS) else "", self.seed))
        trial = copy.deepcopy(self.model)
        summary, sql = create_step(self.rng, trial)
        if not self.run_step(0, summary, sql, trial):
            return self
        for i in range(1, self.steps + 1):
            trial, summary, sql = random_step(self.rng, self.model, ops)
            if not self.run_step(i, summary, sql, trial):
                self.lines.append("# seed %d: the lake and the model diverged; stopping this seed" % self.seed)
                break
        return self


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", default=os.environ.get("LAKE_PROPERTY_SEEDS", "0,1,2,3,4,5,6,7,8"))
    ap.add_argument("--steps", type=int, default=int(os.environ.get("LAKE_PROPERTY_STEPS", "25")))
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("LAKE_PROPERTY_JOBS", "2")))
    ap.add_argument("--keep", action="store_true", help="keep the lakes (path printed)")
    args = ap.parse_args()
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    tarn = os.path.abspath(os.environ.get("TARN", os.path.join(repo, "build", "tarn")))
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    root = tempfile.mkdtemp(prefix="tarn-lake-property.")
    print("# %d seeds (%s), %d steps each, tarn %s" % (len(seeds), ",".join(map(str, seeds)), args.steps, tarn))
    passed = failed = 0
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            runs = [pool.submit(Seed(s, args.steps, tarn, root).run) for s in seeds]
            for fut in runs:  # in seed order, whatever finished first
                res = fut.result()
                print("\n".join(res.lines), flush=True)
                passed += res.passed
                failed += res.failed
    finally:
        if args.keep:
            print("# lakes kept in %s" % root)
        else:
            shutil.rmtree(root, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())

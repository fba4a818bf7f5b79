#!/usr/bin/env python3
"""Measure the standard library against CPython's on the same machine, in the same run.

Two workloads, each timed inside the program (the parse or the inserts only,
not start-up or file reading) and as whole-process wall time:

  json   json.parse of a generated ~10 MB document, untyped and into declared
         record types, against Python's json.loads (the C accelerator);
  sql    100,000 INSERTs in one transaction on a SQLite file, then a query of
         all rows read into records, against Python's sqlite3 (a loop of
         cursor.execute, and executemany).

    python3 scripts/bench_stdlib.py                 # build release, 3 runs each
    python3 scripts/bench_stdlib.py --runs 5 --no-build

Prints medians in milliseconds and the ratio kora/cpython (below 1.0 means Kora
is faster). Benchmarks are not tests: nothing here fails on a time.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

KORA_JSON = """use fs
use json
use time

type Tag:
    name: str
    weight: float

type Item:
    id: int
    sku: str
    price: float
    in_stock: bool
    tags: list[Tag]
    note: str | None = None

def main() -> None:
    text: str = fs.read("doc.json") else (why, kind):
        print(why)
        return
    t0 = time.now()
    untyped = json.parse(text)
    t1 = time.now()
    items: list[Item] = json.parse(text) else (why, kind):
        print(why)
        return
    t2 = time.now()
    match untyped:
        case Ok(v):
            print("untyped", len(v), round(t1.since(t0) * 1000, 1))
        case Err(why):
            print(why)
    print("typed", len(items), round(t2.since(t1) * 1000, 1))

main()
"""

PY_JSON = """import json, time
from dataclasses import dataclass

@dataclass
class Tag:
    name: str
    weight: float

@dataclass
class Item:
    id: int
    sku: str
    price: float
    in_stock: bool
    tags: list
    note: object = None

text = open("doc.json", encoding="utf-8").read()
t0 = time.perf_counter()
untyped = json.loads(text)
t1 = time.perf_counter()
# The nearest Python equivalent of a typed parse: loads, then build and check records.
raw = json.loads(text)
items = []
for d in raw:
    if not isinstance(d["id"], int) or not isinstance(d["price"], (int, float)):
        raise ValueError("bad item")
    items.append(Item(d["id"], d["sku"], float(d["price"]), bool(d["in_stock"]),
                      [Tag(t["name"], float(t["weight"])) for t in d["tags"]], d.get("note")))
t2 = time.perf_counter()
print("untyped", len(untyped), round((t1 - t0) * 1000, 1))
print("typed", len(items), round((t2 - t1) * 1000, 1))
"""

KORA_SQL = """use sql
use time

type Row:
    id: int
    name: str
    amount: float

def main() -> None:
    db: sql.Db = sql.open("bench.db") else (why, kind):
        print(why)
        return
    db.execute("DROP TABLE IF EXISTS t")
    db.execute("CREATE TABLE t (id INTEGER, name TEXT, amount REAL)")
    t0 = time.now()
    db.execute("BEGIN")
    for i in range(100000):
        db.execute("INSERT INTO t VALUES (?, ?, ?)", [i, f"name {i}", i * 0.5])
    db.execute("COMMIT")
    t1 = time.now()
    rows: list[Row] = db.query("SELECT id, name, amount FROM t") else (why, kind):
        print(why)
        return
    t2 = time.now()
    print("insert", 100000, round(t1.since(t0) * 1000, 1))
    print("query", len(rows), round(t2.since(t1) * 1000, 1))

main()
"""

PY_SQL = """import sqlite3, time
from dataclasses import dataclass

@dataclass
class Row:
    id: int
    name: str
    amount: float

con = sqlite3.connect("bench.db", isolation_level=None)
con.execute("DROP TABLE IF EXISTS t")
con.execute("CREATE TABLE t (id INTEGER, name TEXT, amount REAL)")
t0 = time.perf_counter()
con.execute("BEGIN")
cur = con.cursor()
for i in range(100000):
    cur.execute("INSERT INTO t VALUES (?, ?, ?)", (i, f"name {i}", i * 0.5))
con.execute("COMMIT")
t1 = time.perf_counter()
rows = [Row(*r) for r in con.execute("SELECT id, name, amount FROM t")]
t2 = time.perf_counter()
con.execute("DELETE FROM t")
t3 = time.perf_counter()
con.execute("BEGIN")
con.executemany("INSERT INTO t VALUES (?, ?, ?)", ((i, f"name {i}", i * 0.5) for i in range(100000)))
con.execute("COMMIT")
t4 = time.perf_counter()
print("insert", 100000, round((t1 - t0) * 1000, 1))
print("query", len(rows), round((t2 - t1) * 1000, 1))
print("executemany", 100000, round((t4 - t3) * 1000, 1))
"""


def make_doc(path: Path, target_bytes: int) -> None:
    rng = random.Random(7)
    items = []
    size = 2
    i = 0
    while size < target_bytes:
        item = {
            "id": i,
            "sku": f"SKU-{rng.randrange(10**8):08d}",
            "price": round(rng.uniform(1, 500), 2),
            "in_stock": rng.random() < 0.7,
            "tags": [{"name": rng.choice(["red", "blue", "sale", "new", "eco"]), "weight": round(rng.random(), 3)} for _ in range(rng.randrange(1, 5))],
        }
        if i % 3 == 0:
            item["note"] = "fragile; handle with care " * rng.randrange(1, 3)
        items.append(item)
        size += len(json.dumps(item)) + 2
        i += 1
    path.write_text(json.dumps(items), encoding="utf-8")


def run(cmd: list[str], cwd: Path) -> tuple[float, dict[str, float], str]:
    t = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)
    wall = (time.perf_counter() - t) * 1000
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stdout}\n{out.stderr}")
    parts = {}
    for line in out.stdout.splitlines():
        name, count, ms = line.split()
        parts[f"{name} ({count})"] = float(ms)
    return wall, parts, out.stdout


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--no-build", action="store_true")
    ap.add_argument("--mb", type=float, default=10.0, help="size of the JSON document")
    args = ap.parse_args()
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not args.no_build:
        subprocess.run(["cargo", "build", "--release", "-p", "kora-cli"], cwd=ROOT, check=True)
    kora = target / "release" / "kora"
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        make_doc(d / "doc.json", int(args.mb * 1_000_000))
        print(f"JSON document: {(d / 'doc.json').stat().st_size / 1e6:.1f} MB; {sys.version.split()[0]} vs {kora}")
        for name, ko, py in [("bench_json", KORA_JSON, PY_JSON), ("bench_sql", KORA_SQL, PY_SQL)]:
            (d / f"{name}.ko").write_text(ko)
            (d / f"{name}.py").write_text(py)
            k_runs = [run([str(kora), "run", f"{name}.ko"], d) for _ in range(args.runs)]
            p_runs = [run([sys.executable, "-S", f"{name}.py"], d) for _ in range(args.runs)]
            print(f"\n{name}: median of {args.runs} runs, milliseconds")
            print(f"  {'part':<22} {'kora':>9} {'cpython':>9} {'ratio':>7}")
            for part in k_runs[0][1]:
                k = statistics.median(r[1][part] for r in k_runs)
                p = statistics.median(r[1][part] for r in p_runs)
                print(f"  {part:<22} {k:>9.1f} {p:>9.1f} {k / p:>7.2f}")
            for part in p_runs[0][1]:
                if part not in k_runs[0][1]:
                    p = statistics.median(r[1][part] for r in p_runs)
                    print(f"  {part:<22} {'':>9} {p:>9.1f}   (python only)")
            kw = statistics.median(r[0] for r in k_runs)
            pw = statistics.median(r[0] for r in p_runs)
            print(f"  {'whole process':<22} {kw:>9.1f} {pw:>9.1f} {kw / pw:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What durability costs: journaled effects per second, group commit, and `--durable` on printed output.

Three measurements in one run, each the best of --reps, on the release build:

1. 40,000 journaled effects (random draws) with `--durable`, against the same program plain.
2. 400 rows inserted into SQLite from a `parallel for` under `--durable`, with group commit
   (the default) and with every record synced alone (KORA_JOURNAL_SOLO_SYNC=1): wall time,
   rows per second and the number of fsyncs (KORA_JOURNAL_STATS=1), against the same program
   plain. Twice: with SQLite's defaults (its own fsyncs under its write lock usually bound
   the rows per second, durable or not) and with SQLite in WAL mode and
   `synchronous=NORMAL`, where the journal's syncs are what is left to wait for.
3. A program printing 1,000 lines, `--durable` against plain.

    python3 scripts/bench_journal.py                 # builds nothing: run `cargo build --release -p kora-cli` first
    python3 scripts/bench_journal.py --kora target/debug/kora --reps 3

Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

EFFECTS = """\
use random

total = 0.0
for i in range(40000):
    total += random.random()
print(total > 0.0)
"""

ROWS = """\
use sql

def setup() -> None:
    db: sql.Db = sql.open("rows.db") else (why, kind):
        return
    db.execute("CREATE TABLE IF NOT EXISTS r (n INTEGER)")

setup()
done: list[int] = parallel for i in range(400):
    db: sql.Db = sql.open("rows.db") else (why, kind):
        return -1
    db.execute("INSERT INTO r VALUES (?)", [i])
    return i
print(len(done))
"""

ROWS_WAL = """\
use sql

def setup() -> None:
    db: sql.Db = sql.open("rows.db") else (why, kind):
        return
    db.query("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE IF NOT EXISTS r (n INTEGER)")

setup()
done: list[int] = parallel for i in range(400):
    db: sql.Db = sql.open("rows.db") else (why, kind):
        return -1
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("INSERT INTO r VALUES (?)", [i])
    return i
print(len(done))
"""

LINES = """\
for i in range(1000):
    print("line", i)
"""


def run(kora: str, d: Path, prog: str, durable: bool, env: dict[str, str]) -> tuple[float, str]:
    shutil.rmtree(d / ".kora", ignore_errors=True)
    for f in d.glob("rows.db*"):
        f.unlink()
    args = [kora, "run", "--no-trace"] + (["--durable"] if durable else []) + [prog]
    start = time.perf_counter()
    p = subprocess.run(args, cwd=d, env={**os.environ, **env}, capture_output=True, text=True)
    took = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"{prog} failed: {p.stderr}")
    return took, p.stderr


def best(kora: str, d: Path, prog: str, durable: bool, reps: int, env: dict[str, str] | None = None):
    runs = [run(kora, d, prog, durable, env or {}) for _ in range(reps)]
    return min(runs, key=lambda r: r[0])


def syncs(stderr: str) -> str:
    m = re.search(r"(\d+) syncs", stderr)
    return m.group(1) if m else "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kora", default=str(ROOT / "target" / "release" / "kora"))
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    if not Path(a.kora).exists():
        sys.exit(f"no kora binary at {a.kora}; build it with `cargo build --release -p kora-cli`")
    with tempfile.TemporaryDirectory(prefix="kora-journal-bench-") as tmp:
        d = Path(tmp)
        for name, text in [("effects.ko", EFFECTS), ("rows.ko", ROWS), ("rows_wal.ko", ROWS_WAL),
                           ("lines.ko", LINES)]:
            (d / name).write_text(text)
        stats = {"KORA_JOURNAL_STATS": "1"}
        plain, _ = best(a.kora, d, "effects.ko", False, a.reps)
        dur, err = best(a.kora, d, "effects.ko", True, a.reps, stats)
        print(f"40,000 journaled effects: {dur * 1000:.0f} ms durable vs {plain * 1000:.0f} ms plain "
              f"(journal {max(dur - plain, 0) * 1000:.0f} ms, {syncs(err)} syncs)")
        for prog, what in [("rows.ko", "SQLite defaults"), ("rows_wal.ko", "SQLite WAL")]:
            group, gerr = best(a.kora, d, prog, True, a.reps, stats)
            solo, serr = best(a.kora, d, prog, True, a.reps, {**stats, "KORA_JOURNAL_SOLO_SYNC": "1"})
            plain, _ = best(a.kora, d, prog, False, a.reps)
            print(f"400 rows from parallel for ({what}): group commit {group:.2f} s ({400 / group:.0f} rows/s, "
                  f"{syncs(gerr)} syncs); solo syncs {solo:.2f} s ({400 / solo:.0f} rows/s, {syncs(serr)} syncs); "
                  f"{solo / group:.1f}x; plain {plain:.2f} s ({400 / plain:.0f} rows/s)")
        plain, _ = best(a.kora, d, "lines.ko", False, a.reps)
        dur, _ = best(a.kora, d, "lines.ko", True, a.reps)
        print(f"1,000 printed lines: {dur * 1000:.1f} ms durable vs {plain * 1000:.1f} ms plain")
    print(f"(machine load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What durability costs: journaled effects per second, group commit, SQL writes, and `--durable` on printed output.

Four measurements in one run, each the best of --reps, on the release build:

1. 40,000 journaled effects (random draws) with `--durable`, against the same program plain.
2. 400 rows inserted into SQLite from a `parallel for` under `--durable`, with group commit
   (the default) and with every record synced alone (KORA_JOURNAL_SOLO_SYNC=1): wall time,
   rows per second and the number of fsyncs (KORA_JOURNAL_STATS=1), against the same program
   plain. Twice: with SQLite's defaults (its own fsyncs under its write lock usually bound
   the rows per second, durable or not) and with SQLite in WAL mode and
   `synchronous=NORMAL`, where the journal's syncs are what is left to wait for.
3. A program printing 1,000 lines, `--durable` against plain.
4. 1,000 sequential SQLite inserts under `--durable`, with SQLite's defaults and with WAL and
   `synchronous=OFF` (which leaves the journal's syncs and Kora's own work to measure): what a
   durable write costs, including the `_kora_effects` row each write commits with.

With `--before PATH` (a `kora` built from another commit) every measurement runs both
binaries, alternating rep by rep so they share the machine's state, and prints both with the
difference: the before/after of a change in one run.

    python3 scripts/bench_journal.py                 # builds nothing: run `cargo build --release -p kora-cli` first
    python3 scripts/bench_journal.py --kora target/debug/kora --reps 3
    python3 scripts/bench_journal.py --before /tmp/kora-main --only effects,writes

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

WRITES = """\
use sql

def main() -> None:
    db: sql.Db = sql.open("w.db") else (why, kind):
        return
    db.execute("CREATE TABLE IF NOT EXISTS w (n INTEGER)")
    for i in range(1000):
        db.execute("INSERT INTO w VALUES (?)", [i])

main()
"""

WRITES_FAST = """\
use sql

def main() -> None:
    db: sql.Db = sql.open("w.db") else (why, kind):
        return
    db.query("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=OFF")
    db.execute("CREATE TABLE IF NOT EXISTS w (n INTEGER)")
    for i in range(1000):
        db.execute("INSERT INTO w VALUES (?)", [i])

main()
"""


def run(kora: str, d: Path, prog: str, durable: bool, env: dict[str, str]) -> tuple[float, str]:
    shutil.rmtree(d / ".kora", ignore_errors=True)
    for pattern in ("rows.db*", "w.db*"):
        for f in d.glob(pattern):
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


def paired(after: str, before: str, d: Path, prog: str, durable: bool, reps: int,
           env: dict[str, str] | None = None):
    """Best of `reps` for each binary, run alternately."""
    a, b = [], []
    for _ in range(reps):
        a.append(run(after, d, prog, durable, env or {}))
        b.append(run(before, d, prog, durable, env or {}))
    return min(a, key=lambda r: r[0]), min(b, key=lambda r: r[0])


def before_after(a: argparse.Namespace, d: Path) -> None:
    """Each measurement with both binaries, alternating, and the difference."""
    only = set(a.only.split(",")) if a.only else {"effects", "writes", "rows", "lines"}
    stats = {"KORA_JOURNAL_STATS": "1"}
    print(f"after: {a.kora}\nbefore: {a.before}")
    if "effects" in only:
        (t_a, e_a), (t_b, e_b) = paired(a.kora, a.before, d, "effects.ko", True, a.reps, stats)
        (p_a, _), (p_b, _) = paired(a.kora, a.before, d, "effects.ko", False, a.reps)
        print(f"40,000 journaled effects, durable: after {t_a * 1000:.0f} ms ({syncs(e_a)} syncs), "
              f"before {t_b * 1000:.0f} ms ({syncs(e_b)} syncs), {(t_a - t_b) * 1000:+.0f} ms; "
              f"plain after {p_a * 1000:.0f} ms, before {p_b * 1000:.0f} ms")
    if "writes" in only:
        for prog, what in [("writes.ko", "SQLite defaults"), ("writes_fast.ko", "WAL, synchronous=OFF")]:
            (t_a, e_a), (t_b, e_b) = paired(a.kora, a.before, d, prog, True, a.reps, stats)
            (p_a, _), (p_b, _) = paired(a.kora, a.before, d, prog, False, a.reps)
            print(f"1,000 sequential inserts ({what}), durable: after {t_a * 1000:.0f} ms ({syncs(e_a)} syncs), "
                  f"before {t_b * 1000:.0f} ms ({syncs(e_b)} syncs): {(t_a - t_b) * 1000:+.1f} us per write; "
                  f"plain after {p_a * 1000:.0f} ms, before {p_b * 1000:.0f} ms")
    if "rows" in only:
        for prog, what in [("rows.ko", "SQLite defaults"), ("rows_wal.ko", "SQLite WAL")]:
            (t_a, e_a), (t_b, e_b) = paired(a.kora, a.before, d, prog, True, a.reps, stats)
            print(f"400 rows from parallel for ({what}), durable: after {t_a:.2f} s ({syncs(e_a)} syncs), "
                  f"before {t_b:.2f} s ({syncs(e_b)} syncs)")
    if "lines" in only:
        (t_a, _), (t_b, _) = paired(a.kora, a.before, d, "lines.ko", True, a.reps)
        print(f"1,000 printed lines, durable: after {t_a * 1000:.1f} ms, before {t_b * 1000:.1f} ms")


def syncs(stderr: str) -> str:
    m = re.search(r"(\d+) syncs", stderr)
    return m.group(1) if m else "?"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kora", default=str(ROOT / "target" / "release" / "kora"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--before", help="another kora binary: run every measurement with both, alternating")
    ap.add_argument("--only", help="with --before: a comma list of effects,writes,rows,lines")
    ap.add_argument("--tmp", help="make the scratch folder here (a tmpfs such as /dev/shm takes the "
                                  "disk's fsync latency out, leaving Kora's own work to compare)")
    a = ap.parse_args()
    if not Path(a.kora).exists():
        sys.exit(f"no kora binary at {a.kora}; build it with `cargo build --release -p kora-cli`")
    with tempfile.TemporaryDirectory(prefix="kora-journal-bench-", dir=a.tmp) as tmp:
        d = Path(tmp)
        for name, text in [("effects.ko", EFFECTS), ("rows.ko", ROWS), ("rows_wal.ko", ROWS_WAL),
                           ("lines.ko", LINES), ("writes.ko", WRITES), ("writes_fast.ko", WRITES_FAST)]:
            (d / name).write_text(text)
        if a.before:
            before_after(a, d)
            print(f"(machine load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
            return
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
        for prog, what in [("writes.ko", "SQLite defaults"), ("writes_fast.ko", "WAL, synchronous=OFF")]:
            dur, err = best(a.kora, d, prog, True, a.reps, stats)
            plain, _ = best(a.kora, d, prog, False, a.reps)
            print(f"1,000 sequential inserts ({what}): {dur * 1000:.0f} ms durable ({syncs(err)} syncs) "
                  f"vs {plain * 1000:.0f} ms plain")
    print(f"(machine load: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()

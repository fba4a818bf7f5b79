#!/usr/bin/env python3
"""How far does `parallel for` go before it stops working? A probe under a watchdog cage.

Runs `kora run` on generated programs with a growing number of branches (each
branch builds a small list and returns its length) and reports, per size, the
wall time, the peak RSS and how it ended. The cage keeps a probe that finds a
real limit from taking the machine with it:

- an address-space cap on the child (resource.setrlimit RLIMIT_AS, --mem-mb),
- a wall-clock timeout per run (--timeout),
- an abort before the next size when the system has less than --min-free-mb available.

    python3 scripts/stress.py                      # release build, default ladder
    python3 scripts/stress.py --sizes 1000 100000  # only these sizes
    python3 scripts/stress.py --kora target/debug/kora --mem-mb 1024

Standard library only. Exit status 0 when the probe ran (finding a limit is a result, not a failure).
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROGRAM = """\
def branch(n: int) -> int:
    xs = [n, n + 1, n + 2]
    return len(xs)

rs = parallel for n in range({size}):
    return branch(n)
print(len(rs), sum(rs))
"""


def mem_available_mb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("inf")


def caged(mem_mb: int):
    def limit() -> None:
        cap = mem_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    return limit


def probe(kora: str, size: int, mem_mb: int, timeout: float) -> tuple[str, float, float]:
    with tempfile.TemporaryDirectory() as d:
        prog = Path(d) / "stress.ko"
        prog.write_text(PROGRAM.format(size=size))
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        try:
            out = subprocess.run(
                [kora, "run", str(prog)],
                capture_output=True,
                text=True,
                timeout=timeout,
                preexec_fn=caged(mem_mb),
            )
        except subprocess.TimeoutExpired:
            return ("timeout", time.perf_counter() - start, float("nan"))
        wall = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        # ru_maxrss is the largest child so far: it is this run's only when it grew.
        rss_mb = peak / 1024 if peak > before else float("nan")
        want = f"{size} {3 * size}"
        if out.returncode != 0:
            why = (out.stderr.strip().splitlines() or ["?"])[0][:80]
            return (f"exit {out.returncode}: {why}", wall, rss_mb)
        if out.stdout.strip() != want:
            return (f"wrong output {out.stdout.strip()[:40]!r}", wall, rss_mb)
        return ("ok", wall, rss_mb)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kora", default=str(ROOT / "target" / "release" / "kora"))
    ap.add_argument("--sizes", type=int, nargs="*", default=[1_000, 10_000, 100_000, 300_000, 1_000_000, 3_000_000])
    ap.add_argument("--mem-mb", type=int, default=2048, help="address-space cap per run")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per run")
    ap.add_argument("--min-free-mb", type=int, default=1024)
    args = ap.parse_args()
    if not os.path.exists(args.kora):
        print(f"no kora binary at {args.kora}: build it or pass --kora", file=sys.stderr)
        return 2
    print(f"{'branches':>10} {'wall s':>8} {'peak MB':>8}  result")
    for size in args.sizes:
        free = mem_available_mb()
        if free < args.min_free_mb:
            print(f"stopping: only {free:.0f} MB available (< {args.min_free_mb})")
            break
        result, wall, rss = probe(args.kora, size, args.mem_mb, args.timeout)
        print(f"{size:>10} {wall:>8.2f} {rss:>8.0f}  {result}", flush=True)
        if result != "ok":
            print(f"limit: stops working between {size // 3 if size > 3 else 0} and {size} branches ({result})")
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())

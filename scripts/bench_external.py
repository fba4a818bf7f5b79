#!/usr/bin/env python3
"""Measure calls that leave the interpreter: `use python` workers and `use mcp` servers over stdio.

Each number is timed inside the Kora program (`time.now()` around the call), so start-up of
`kora` itself is not in it:

  python   the first call (writing the worker module, starting python3, importing the
           module), the median of N trivial calls (a function returning None), and
           8 CPU-bound calls in a `parallel for` against the same 8 one after another;
  mcp      the first use of a server (start, `initialize`, `tools/list`) and the median of
           N calls of a trivial tool, against the tests' loopback server (python3, `ok`
           mode) and, when installed, the npm reference server-everything's `echo`.

    python3 scripts/bench_external.py                        # target/debug/kora, no build
    python3 scripts/bench_external.py --kora target/release/kora --calls 10000

The cost of the two `time.now()` reads around each call is measured the same way and printed,
not subtracted. Benchmarks are not tests: nothing here fails on a time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADVERSARY = os.path.join(ROOT, "crates/kora-cli/tests/mcp/adversary.py")
EVERYTHING = os.path.join(ROOT, "target/mcp-servers/node_modules/.bin/mcp-server-everything")

MODULE = """import time


def noop():
    return None


def nap(seconds):
    time.sleep(seconds)


def spin(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total
"""

TIMED = """use time

def median_us(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] * 1000000.0

def main() -> None:
    t0 = time.now()
    FIRST
    t1 = time.now()
    print("first call (start and handshake)", round(t1.since(t0) * 1000, 2), "ms")
    clock: list[float] = []
    for i in range(NCALLS):
        a = time.now()
        b = time.now()
        clock.append(b.since(a))
    calls: list[float] = []
    for i in range(NCALLS):
        a = time.now()
        CALL
        b = time.now()
        calls.append(b.since(a))
    print("median of", NCALLS, "calls", round(median_us(calls), 1), "us")
    print("median of the clock reads alone", round(median_us(clock), 2), "us")
EXTRA
main()
"""

PARALLEL = """
def spin_both() -> None:
    # Eight workers started first, so the parallel time is Python's work and not eight starts.
    warm = parallel for i in range(8):
        h.nap(0.3)
    t0 = time.now()
    for i in range(8):
        r = h.spin(SPIN)
    seq = time.now().since(t0)
    t1 = time.now()
    outs = parallel for i in range(8):
        h.spin(SPIN)
    par = time.now().since(t1)
    print("8 spin calls: sequential", round(seq, 2), "s, parallel", round(par, 2), "s, speedup", round(seq / par, 2))
"""


def run(kora: str, d: str, program: str) -> None:
    with open(os.path.join(d, "main.ko"), "w") as f:
        f.write(program)
    r = subprocess.run([kora, "run", "main.ko"], cwd=d, capture_output=True, text=True)
    sys.stdout.write(r.stdout)
    if r.returncode != 0:
        sys.stdout.write(r.stderr)


def program(header: str, first: str, call: str, n: int, extra: str = "") -> str:
    body = TIMED.replace("NCALLS", str(n)).replace("FIRST", first).replace("CALL", call)
    if extra:
        body = body.replace("EXTRA", extra).replace("main()\n", "main()\nspin_both()\n")
    else:
        body = body.replace("EXTRA", "")
    return header + body


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kora", default=os.path.join(ROOT, "target/debug/kora"))
    ap.add_argument("--calls", type=int, default=10000)
    ap.add_argument("--mcp-calls", type=int, default=1000)
    ap.add_argument("--spin", type=int, default=3000000)
    a = ap.parse_args()
    kora = os.path.abspath(a.kora)

    with tempfile.TemporaryDirectory(prefix="kora-bench-ext") as d:
        print("== python (system python3)")
        with open(os.path.join(d, "bench_helpers.py"), "w") as f:
            f.write(MODULE)
        with open(os.path.join(d, "kora.toml"), "w") as f:
            f.write('[python]\nworkers = 8\npath = ["."]\n')
        run(kora, d, program("use python bench_helpers as h\n", "h.noop()", "h.noop()", a.calls,
                             PARALLEL.replace("SPIN", str(a.spin))))

    with tempfile.TemporaryDirectory(prefix="kora-bench-ext") as d:
        print("== mcp, loopback server (python3, stdio)")
        with open(os.path.join(d, "kora.toml"), "w") as f:
            f.write(f'[mcp.adv]\ncommand = "python3"\nargs = ["{ADVERSARY}", "ok", "{d}/state"]\n')
        run(kora, d, program("use mcp adv as adv\n", "n = len(adv.tools)", 'adv.ping(x="a")',
                             a.mcp_calls))

    if os.access(EVERYTHING, os.X_OK):
        with tempfile.TemporaryDirectory(prefix="kora-bench-ext") as d:
            print("== mcp, @modelcontextprotocol/server-everything (node, stdio)")
            with open(os.path.join(d, "kora.toml"), "w") as f:
                f.write(f'[mcp.ev]\ncommand = "node"\nargs = ["{EVERYTHING}", "stdio"]\n')
            run(kora, d, program("use mcp ev as ev\n", "n = len(ev.tools)", 'ev.echo(message="a")',
                                 a.mcp_calls))
    else:
        print("== mcp, server-everything: not installed (scripts/mcp-servers.sh)")


if __name__ == "__main__":
    main()

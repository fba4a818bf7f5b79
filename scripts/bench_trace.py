#!/usr/bin/env python3
"""What tracing costs: a program making CALLS mocked model calls, run with tracing on and off.

The program is a `kora test` whose one test makes CALLS `analyze` calls inside a
`with mock analyze -> Ok(...)` block, in a loop, so each call is as cheap as a model call
can be and the trace's own cost is as visible as it can be. The two variants (default
tracing, and `--no-trace`) are run alternately, ROUNDS times each, in one invocation, so
both see the same machine load; a zero-call program is timed too, so start-up and
checking can be subtracted. The trace folder starts as a project's that has run the
program many times: 200 traces of this run's size and a few spares. Reported, for wall time and for CPU time (user + system, all
threads: steadier than wall time on a busy machine, and it counts any thread
even when it overlaps the run): the median of each variant, the overhead of tracing as a
percentage of the untraced program's own run time and of the whole process, and the cost
per span. Nothing is asserted: this is the trace's cost at its most visible, a microbenchmark.

What a realistic run pays is `--live`: the `trace_overhead` example makes CALLS real calls to
kora-testkit's loopback fake provider from an agent, traced and untraced in shuffled order,
and prints both medians (issue 27: wall time and CPU time of every thread).

    python3 scripts/bench_trace.py                 # 1,000 calls, 21 rounds, release build
    python3 scripts/bench_trace.py --calls 5000 --rounds 31
    python3 scripts/bench_trace.py --kora target/debug/kora   # an already built binary
    python3 scripts/bench_trace.py --live          # 1,000 calls to the loopback fake

Standard library only. Builds `kora` in release mode (CARGO_TARGET_DIR is honoured)
unless `--kora` names a binary.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROGRAM = """type Label:
    name: str
    score: int

def label(i: int) -> int:
    l: Label = analyze(str(i), "Label this.") else:
        return -1
    return l.score

test "mocked calls":
    total = 0
    with mock analyze -> Ok(Label("x", 2)):
        for i in range({calls}):
            total += label(i)
    assert total == {calls} * 2
"""


def build() -> Path | None:
    cmd = ["cargo", "build", "--release", "-p", "kora-cli", "--bin", "kora"]
    if subprocess.run(cmd, cwd=ROOT).returncode != 0:
        return None
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return target / "release" / "kora"


def cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def timed(cmd: list[str], cwd: Path) -> tuple[float, float]:
    """(wall, cpu) seconds of one run."""
    c0, t0 = cpu(), time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t, c = time.perf_counter() - t0, cpu() - c0
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed in {cwd}:\n{r.stderr.decode(errors='replace')}")
    return t, c


def report(what: str, times: dict[str, list[float]], spans: int) -> None:
    med = {k: statistics.median(v) for k, v in times.items()}
    run_off = med["untraced"] - med["empty"]
    extra = med["traced"] - med["untraced"]
    print(f"{what}, medians (min..max):")
    for k, v in times.items():
        print(f"  {k:9} {med[k] * 1e3:8.2f} ms   ({min(v) * 1e3:.2f}..{max(v) * 1e3:.2f})")
    print(f"  program run time without tracing (minus start-up): {run_off * 1e3:.2f} ms")
    print(f"  tracing adds {extra * 1e3:.2f} ms = {extra / spans * 1e6:.2f} us per span")
    if run_off > 0:
        print(f"  overhead vs the program's run time: {extra / run_off * 100:.1f}%")
    print(f"  overhead vs the whole process:      {extra / med['untraced'] * 100:.1f}%")
    # Each round runs the variants back to back, so a round's own difference shares its load.
    paired = statistics.median(a - b for a, b in zip(times["traced"], times["untraced"]))
    print(f"  median of each round's traced minus untraced: {paired * 1e3:.2f} ms = "
          f"{paired / med['untraced'] * 100:.1f}% of the whole process")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=21)
    ap.add_argument("--kora", type=Path, help="use this binary instead of building one")
    ap.add_argument("--live", action="store_true", help="calls to the loopback fake provider instead of mocks")
    args = ap.parse_args()
    if args.live:
        build = ["cargo", "build", "--release", "-p", "kora-cli", "--bin", "kora", "--example", "trace_overhead"]
        if subprocess.run(build, cwd=ROOT).returncode != 0:
            return 1
        run = ["cargo", "run", "--quiet", "--release", "-p", "kora-cli", "--example", "trace_overhead",
               "--", str(args.calls), str(args.rounds)]
        return subprocess.run(run, cwd=ROOT).returncode
    kora = args.kora.resolve() if args.kora else build()
    if kora is None or not kora.exists():
        print("no kora binary", file=sys.stderr)
        return 1

    work = Path(tempfile.mkdtemp(prefix="kora-bench-trace-"))
    try:
        (work / "kora.toml").write_text('[models]\ndefault = "openai:bench-model"\n')
        (work / "calls.ko").write_text(PROGRAM.format(calls=args.calls))
        (work / "empty.ko").write_text(PROGRAM.format(calls=0))
        variants = {
            "traced": [str(kora), "test", "calls.ko"],
            "untraced": [str(kora), "test", "--no-trace", "calls.ko"],
            "empty": [str(kora), "test", "--no-trace", "empty.ko"],
        }
        for cmd in variants.values():
            timed(cmd, work)  # warm the page cache and check the program runs
        # A project that has run this program for a while: its trace folder holds the 200
        # traces kept, each as large as this run's, and spares a prune retired for runs to
        # write over (`recycle.rs`).
        traces = work / ".kora" / "traces"
        one = next(traces.glob("*.json")).read_bytes()
        (traces / "spare").mkdir(exist_ok=True)
        for i in range(200):
            (traces / f"20000101-000000-{i:03}-0000.json").write_bytes(one)
        for i in range(16):
            (traces / "spare" / f"19990101-000000-{i:03}-0000.json").write_bytes(one)
        wall: dict[str, list[float]] = {k: [] for k in variants}
        cpus: dict[str, list[float]] = {k: [] for k in variants}
        for _ in range(args.rounds):
            for name, cmd in variants.items():
                w, c = timed(cmd, work)
                wall[name].append(w)
                cpus[name].append(c)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    # One model-call span per call, plus the run's and the test's.
    spans = args.calls + 2
    print(f"kora: {kora}; {args.calls} mocked calls, {args.rounds} rounds; load average {os.getloadavg()[0]:.1f}")
    report("wall time", wall, spans)
    report("CPU time", cpus, spans)
    return 0


if __name__ == "__main__":
    sys.exit(main())

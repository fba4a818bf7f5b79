#!/usr/bin/env python3
"""Run Kora's benchmark pairs beside their CPython twins and report the ratio.

Each benchmark is a pair in benches/: NAME.ko, run as `kora run benches/NAME.ko`,
and NAME.py, run as `python3 -S benches/NAME.py`. Both must print the same text;
the script times each N times and reports the medians, the ratio kora/cpython per
benchmark, their geometric mean, and the startup time of `kora run` on a
hello-world program.

    python3 scripts/bench.py                    # build release, run every pair
    python3 scripts/bench.py fib sort --runs 3  # only these pairs
    python3 scripts/bench.py --no-build --json  # machine-readable, no cargo
    python3 scripts/bench.py --history          # also append to benches/history.jsonl
    python3 scripts/bench.py --against-history  # compare with the last recorded line

Exit status: 0 when every pair printed identical output (timings never fail a
run: benchmarks are not tests), 1 when some pair's outputs differ or the Kora run
failed, 2 when the build failed or the arguments were wrong.

Standard library only, so it runs on any machine that has python3 and cargo.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHES = ROOT / "benches"
HISTORY = BENCHES / "history.jsonl"
STARTUP_RUNS = 20
# -S skips site: .pth hooks in site-packages are the host's configuration, not CPython's cost,
# and on some machines they add more to every run than a small benchmark takes.
PYTHON_FLAGS = ["-S"]
# The A/B threshold the design record sets for CI; here it only marks rows, it never fails a run.
SLOWER_MARK = 1.25


@dataclass
class Result:
    name: str
    kora_ms: list[float] = field(default_factory=list)
    cpython_ms: list[float] = field(default_factory=list)
    # Why the pair is not comparable (mismatch, crash, timeout); None when it is.
    problem: str | None = None

    @property
    def ok(self) -> bool:
        return self.problem is None and bool(self.kora_ms) and bool(self.cpython_ms)

    @property
    def kora_median(self) -> float | None:
        return statistics.median(self.kora_ms) if self.kora_ms else None

    @property
    def cpython_median(self) -> float | None:
        return statistics.median(self.cpython_ms) if self.cpython_ms else None

    @property
    def ratio(self) -> float | None:
        if not self.ok:
            return None
        return self.kora_median / self.cpython_median


def log(msg: str) -> None:
    # Progress goes to stderr so that --json output on stdout stays parseable.
    print(msg, file=sys.stderr, flush=True)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Time benches/NAME.ko under kora against benches/NAME.py under CPython.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="pairs to run (default: all)")
    p.add_argument("--runs", type=int, default=5, help="timed runs per side (default: 5)")
    p.add_argument("--no-build", action="store_true", help="skip `cargo build --release -p kora-cli`")
    p.add_argument("--history", action="store_true", help="append this run to benches/history.jsonl")
    p.add_argument("--against-history", action="store_true", help="compare with the last line of benches/history.jsonl")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    p.add_argument("--kora", type=Path, help="kora binary (default: target/release/kora)")
    p.add_argument("--python", default="python3", help="CPython interpreter (default: python3)")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds before one run counts as failed (default: 300)")
    args = p.parse_args(argv)
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def discover(names: list[str]) -> list[str] | None:
    """The pairs to run, in order; None (after saying why) when a name has no pair."""
    pairs = sorted(ko.stem for ko in BENCHES.glob("*.ko") if ko.with_suffix(".py").exists())
    if not names:
        return pairs
    unknown = [n for n in names if n not in pairs]
    if unknown:
        log(f"bench.py: no pair benches/NAME.ko + NAME.py for: {', '.join(unknown)}")
        return None
    return names


def resolve_python(python: str) -> tuple[str, str] | None:
    """The interpreter's real path and version: version-manager shims (pyenv) add tens of ms to every run."""
    if shutil.which(python) is None:
        return None
    try:
        proc = subprocess.run(
            [python, "-c", "import sys, platform; print(sys.executable); print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = proc.stdout.split()
    return (lines[0], lines[1]) if proc.returncode == 0 and len(lines) == 2 else None


def build() -> bool:
    log("building: cargo build --release -p kora-cli")
    try:
        # cargo's own output goes to stderr, where a build error is most useful.
        proc = subprocess.run(["cargo", "build", "--release", "-p", "kora-cli"], cwd=ROOT, stdout=sys.stderr)
    except OSError as err:
        log(f"bench.py: cannot run cargo: {err}")
        return False
    return proc.returncode == 0


def default_kora() -> Path:
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    if not target.is_absolute():
        target = ROOT / target
    exe = "kora.exe" if os.name == "nt" else "kora"
    return target / "release" / exe


def timed(cmd: list[str], timeout: float) -> tuple[float, subprocess.CompletedProcess | None]:
    """Runs cmd from the repository root; returns (milliseconds, process), process None on timeout."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return (time.perf_counter() - start) * 1000.0, None
    return (time.perf_counter() - start) * 1000.0, proc


def first_difference(a: str, b: str) -> str:
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb), start=1):
        if x != y:
            return f"line {i}: kora {x!r} vs cpython {y!r}"
    if len(la) != len(lb):
        return f"kora printed {len(la)} lines, cpython {len(lb)}"
    return "outputs differ in trailing whitespace or newlines"


def describe_failure(side: str, proc: subprocess.CompletedProcess | None, timeout: float) -> str:
    if proc is None:
        return f"{side} timed out after {timeout:g}s"
    tail = (proc.stderr.strip().splitlines() or ["(no stderr)"])[-1]
    return f"{side} exited {proc.returncode}: {tail}"


def run_pair(name: str, kora: Path, python: str, runs: int, timeout: float) -> Result:
    result = Result(name)
    kora_cmd = [str(kora), "run", f"benches/{name}.ko"]
    py_cmd = [python, *PYTHON_FLAGS, f"benches/{name}.py"]
    expected: str | None = None
    # Interleaving the two sides spreads machine noise (thermal, other load) across both evenly.
    for _ in range(runs):
        ms, proc = timed(py_cmd, timeout)
        if proc is None or proc.returncode != 0:
            result.problem = describe_failure("cpython", proc, timeout)
            return result
        if expected is not None and proc.stdout != expected:
            result.problem = "cpython output is not deterministic"
            return result
        expected = proc.stdout
        result.cpython_ms.append(ms)

        ms, proc = timed(kora_cmd, timeout)
        if proc is None or proc.returncode != 0:
            result.problem = describe_failure("kora", proc, timeout)
            return result
        if proc.stdout != expected:
            result.problem = "output mismatch: " + first_difference(proc.stdout, expected)
            return result
        result.kora_ms.append(ms)
    return result


def startup(cmd_prefix: list[str], suffix: str, runs: int) -> float | None:
    """Median milliseconds to run a one-line hello-world through cmd_prefix."""
    with tempfile.TemporaryDirectory() as tmp:
        hello = Path(tmp) / f"hello{suffix}"
        hello.write_text('print("hello, world")\n')
        times = []
        for _ in range(runs):
            ms, proc = timed(cmd_prefix + [str(hello)], 60.0)
            if proc is None or proc.returncode != 0 or proc.stdout != "hello, world\n":
                return None
            times.append(ms)
    return statistics.median(times)


def geomean(values: list[float]) -> float | None:
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


def git_commit() -> str | None:
    try:
        proc = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    commit = proc.stdout.strip()
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    # A measurement of uncommitted code must not be mistaken for one of the commit it sits on.
    return commit + ("+dirty" if dirty else "")


def make_record(
    results: list[Result], runs: int, python_version: str, kora_startup: float | None, py_startup: float | None
) -> dict:
    def r3(x: float | None) -> float | None:
        return None if x is None else round(x, 3)

    benches = {}
    for r in results:
        benches[r.name] = {
            "kora_ms": r3(r.kora_median),
            "cpython_ms": r3(r.cpython_median),
            "ratio": r3(r.ratio),
            **({"problem": r.problem} if r.problem else {}),
        }
    ratios = [r.ratio for r in results if r.ratio is not None]
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} cpus",
        "python": python_version,
        "runs": runs,
        "benches": benches,
        "geomean": r3(geomean(ratios)),
        "geomean_of": len(ratios),
        "startup_ms": r3(kora_startup),
        "cpython_startup_ms": r3(py_startup),
    }


def last_history() -> dict | None:
    if not HISTORY.exists():
        return None
    lines = [line for line in HISTORY.read_text().splitlines() if line.strip()]
    return json.loads(lines[-1]) if lines else None


def compare(record: dict, previous: dict) -> dict:
    """Per-bench change of Kora's median time against the previous record (now / then)."""
    changes = {}
    for name, now in record["benches"].items():
        then = previous.get("benches", {}).get(name)
        if not then or now["kora_ms"] is None or not then.get("kora_ms"):
            continue
        changes[name] = {
            "kora_ms_then": then["kora_ms"],
            "kora_ms_now": now["kora_ms"],
            "change": round(now["kora_ms"] / then["kora_ms"], 3),
            "ratio_then": then.get("ratio"),
            "ratio_now": now["ratio"],
        }
    return {
        "against_date": previous.get("date"),
        "against_commit": previous.get("commit"),
        "benches": changes,
        "geomean_then": previous.get("geomean"),
        "geomean_now": record["geomean"],
        "startup_ms_then": previous.get("startup_ms"),
        "startup_ms_now": record["startup_ms"],
    }


def fmt(x: float | None, spec: str, missing: str = "-") -> str:
    return missing if x is None else format(x, spec)


def print_table(results: list[Result], record: dict) -> None:
    print(f"{'bench':<16} {'kora ms':>10} {'cpython ms':>11} {'kora/cpython':>13}")
    for r in results:
        ratio = fmt(r.ratio, ".2f") + "x" if r.ratio is not None else "FAIL"
        print(f"{r.name:<16} {fmt(r.kora_median, '.1f'):>10} {fmt(r.cpython_median, '.1f'):>11} {ratio:>13}")
        if r.problem:
            print(f"    {r.problem}")
    gm = record["geomean"]
    label = f"geomean ({record['geomean_of']} of {len(results)})"
    print(f"{label:<39} {fmt(gm, '.2f', 'n/a') + ('x' if gm else ''):>13}")
    print(
        f"startup (hello world, median of {STARTUP_RUNS}): kora run {fmt(record['startup_ms'], '.1f', 'failed')} ms,"
        f" python3 {fmt(record['cpython_startup_ms'], '.1f', 'failed')} ms"
    )


def print_comparison(cmp: dict) -> None:
    print()
    print(f"against {cmp['against_commit'] or 'unknown commit'} ({cmp['against_date']}):")
    print(f"{'bench':<16} {'kora ms then':>13} {'now':>10} {'now/then':>9} {'ratio then':>11} {'now':>6}")
    for name, c in cmp["benches"].items():
        mark = "  slower" if c["change"] > SLOWER_MARK else ""
        print(
            f"{name:<16} {c['kora_ms_then']:>13.1f} {c['kora_ms_now']:>10.1f} {c['change']:>8.2f}x"
            f" {fmt(c['ratio_then'], '.2f'):>11} {fmt(c['ratio_now'], '.2f'):>6}{mark}"
        )
    print(
        f"geomean {fmt(cmp['geomean_then'], '.2f')} -> {fmt(cmp['geomean_now'], '.2f')};"
        f" startup {fmt(cmp['startup_ms_then'], '.1f')} -> {fmt(cmp['startup_ms_now'], '.1f')} ms"
    )


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    names = discover(args.names)
    if names is None:
        return 2
    if not args.no_build and not build():
        log("bench.py: build failed")
        return 2
    kora = (args.kora or default_kora()).resolve()
    if not kora.exists():
        log(f"bench.py: no kora binary at {kora} (build it, or pass --kora PATH)")
        return 2
    resolved = resolve_python(args.python)
    if resolved is None:
        log(f"bench.py: {args.python} not found or not runnable")
        return 2
    python, python_version = resolved

    results = []
    for name in names:
        log(f"running {name} ({args.runs} runs per side)")
        results.append(run_pair(name, kora, python, args.runs, args.timeout))
    log("measuring startup")
    kora_startup = startup([str(kora), "run"], ".ko", STARTUP_RUNS)
    py_startup = startup([python, *PYTHON_FLAGS], ".py", STARTUP_RUNS)

    record = make_record(results, args.runs, python_version, kora_startup, py_startup)
    # Read the previous line before appending this one, so both flags together compare with the last run.
    previous = last_history() if args.against_history else None
    cmp = compare(record, previous) if previous else None

    if args.json:
        out = dict(record)
        if args.against_history:
            out["against"] = cmp
        print(json.dumps(out, indent=2))
    else:
        print_table(results, record)
        if cmp:
            print_comparison(cmp)
        elif args.against_history:
            print("\nno history to compare against (benches/history.jsonl is empty or missing)")

    if args.history:
        with HISTORY.open("a") as f:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
        log(f"appended to {HISTORY.relative_to(ROOT)}")

    return 0 if all(r.problem is None for r in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
"""What tracing costs in instructions: bench_trace.py's program under callgrind, per thread.

Wall and CPU times on a shared machine move by more than the effect being measured;
instruction counts do not. This runs the same `kora test` program as bench_trace.py
(CALLS mocked `analyze` calls in a loop) traced and with `--no-trace`, plus the zero-call
program, under `valgrind --tool=callgrind --separate-threads=yes`, and prints the
instructions each thread ran. The thread that grows the most when tracing is the
interpreter's (its growth is what a run waits for); any thread only the traced run has
is the trace's encoder (its instructions are CPU a second core spends). Reported per span:
one span per call plus the run's and the test's, as in bench_trace.py.

    python3 scripts/callgrind_trace.py --kora target/release/kora
    python3 scripts/callgrind_trace.py --kora target/release/kora --calls 1000

Standard library and valgrind only. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import glob
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_trace import PROGRAM  # noqa: E402


def threads(kora: Path, args: list[str], cwd: Path, tag: str) -> list[int]:
    """Instructions of each thread of one run, in thread order."""
    out = cwd / f"cg.{tag}"
    cmd = ["valgrind", "--tool=callgrind", "--separate-threads=yes",
           f"--callgrind-out-file={out}.%p", str(kora), *args]
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr.decode(errors='replace')}")
    counts = []
    for f in sorted(glob.glob(f"{out}.*")):
        m = re.search(r"^summary:\s*(\d+)", Path(f).read_text(errors="replace"), re.M)
        if m:
            counts.append(int(m.group(1)))
    shutil.rmtree(cwd / ".kora", ignore_errors=True)
    return counts


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kora", type=Path, required=True)
    ap.add_argument("--calls", type=int, default=10000)
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        print("valgrind is not installed", file=sys.stderr)
        return 1
    kora = args.kora.resolve()
    work = Path(tempfile.mkdtemp(prefix="kora-callgrind-trace-"))
    try:
        (work / "kora.toml").write_text('[models]\ndefault = "openai:bench-model"\n')
        (work / "calls.ko").write_text(PROGRAM.format(calls=args.calls))
        (work / "empty.ko").write_text(PROGRAM.format(calls=0))
        traced = threads(kora, ["test", "calls.ko"], work, "traced")
        untraced = threads(kora, ["test", "--no-trace", "calls.ko"], work, "untraced")
        empty = threads(kora, ["test", "--no-trace", "empty.ko"], work, "empty")
    finally:
        shutil.rmtree(work, ignore_errors=True)

    spans = args.calls + 2
    print(f"kora: {kora}; {args.calls} mocked calls")
    print(f"  threads traced:   {traced}")
    print(f"  threads untraced: {untraced}")
    base, whole = sum(untraced), sum(traced)
    # The threads both runs have, matched in order; the traced run's extra ones encode.
    shared = list(zip(traced, untraced))
    grown = max((t - u for t, u in shared), default=0)
    extra = sum(traced[len(untraced):])
    per_call = (base - sum(empty)) / max(args.calls, 1)
    print(f"  an untraced mocked call:               {per_call:,.0f} instructions")
    print(f"  the interpreter's thread, per span:    {grown / spans:,.0f}"
          f"  ({grown / base * 100:.1f}% of the untraced process)")
    print(f"  other threads (the encoder), per span: {extra / spans:,.0f}")
    print(f"  all threads, per span:                 {(whole - base) / spans:,.0f}"
          f"  ({(whole - base) / base * 100:.1f}% of the untraced process)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

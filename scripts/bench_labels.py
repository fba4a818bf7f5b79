#!/usr/bin/env python3
"""What labels cost: each bench run plain, armed (one classified value exists, so every
label-aware path is live) and, where a one-line change makes its data classified, labelled.

Usage: python3 scripts/bench_labels.py [--kora PATH] [--runs N] [NAME ...]
Prints one row per bench: best-of-N wall milliseconds and the ratios to the plain run.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# bench -> (text in the program, what makes its main input classified)
LABELLED = {
    "fib": ("range(20, 26)", "range(classified(20), 26)"),
    "strings": ('log = ""', 'log = classified("")'),
    "dict_count": ("seed = 12345", "seed = classified(12345)"),
    "sort": ("xs.append(seed % 100000)", "xs.append(classified(seed % 100000))"),
    "loops": None,
    "calls": None,
    "nbody": None,
    "comprehensions": None,
    "string_methods": None,
}


def timed(kora, path, runs):
    best = None
    for _ in range(runs):
        t = time.perf_counter()
        r = subprocess.run([kora, "run", path], capture_output=True, text=True)
        dt = (time.perf_counter() - t) * 1000
        if r.returncode != 0:
            sys.exit(f"{path} failed:\n{r.stderr}")
        best = dt if best is None else min(best, dt)
    return best


def armed(src):
    # After the leading comment block, so the program reads the same.
    return "_armed = classified(0)\n" + src


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kora", default=os.path.join(ROOT, "target/release/kora"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    names = a.names or list(LABELLED)
    print(f"{'bench':<16}{'plain ms':>10}{'armed ms':>10}{'armed/plain':>13}{'labelled ms':>13}{'labelled/plain':>16}")
    with tempfile.TemporaryDirectory() as d:
        for name in names:
            src = open(os.path.join(ROOT, "benches", f"{name}.ko")).read()
            variants = {"plain": src, "armed": armed(src)}
            change = LABELLED.get(name)
            if change and change[0] in src:
                variants["labelled"] = src.replace(change[0], change[1], 1)
            times = {}
            for kind, text in variants.items():
                p = os.path.join(d, f"{name}_{kind}.ko")
                open(p, "w").write(text)
                times[kind] = timed(a.kora, p, a.runs)
            plain = times["plain"]
            lab = times.get("labelled")
            print(
                f"{name:<16}{plain:>10.0f}{times['armed']:>10.0f}{times['armed'] / plain:>13.2f}"
                + (f"{lab:>13.0f}{lab / plain:>16.2f}" if lab else f"{'-':>13}{'-':>16}")
            )


if __name__ == "__main__":
    main()

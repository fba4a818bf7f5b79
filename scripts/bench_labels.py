#!/usr/bin/env python3
"""What labels cost: each bench run plain, armed (one classified value exists, so every
label-aware path is live) and, where a one-line change makes its data classified, labelled.

Usage:
    python3 scripts/bench_labels.py [--kora PATH] [--runs N] [NAME ...]
    python3 scripts/bench_labels.py --callgrind [--save F.json] [--against F.json] [NAME ...]

Wall mode prints one row per bench: best-of-N wall milliseconds and the ratios to the plain
run. `--callgrind` counts instructions instead (valgrind --tool=callgrind, one run per
variant): the count does not move when other processes load the machine, so the ratios are
exact and two builds can be compared run against run. `--save` writes the counts as JSON;
`--against` prints each count's change from a saved file, so "plain must not rise" is a
number rather than a feeling. Every output is checked against the plain run's: a variant
that prints something else is a bug, not a speed.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# bench -> (text in the program, what makes its main input classified)
LABELLED = {
    "fib": ("fib(31)}", "fib(classified(31))}"),
    "strings": ('log = ""', 'log = classified("")'),
    "dict_count": ("seed = 12345", "seed = classified(12345)"),
    "sort": ("xs.append(seed % 100000)", "xs.append(classified(seed % 100000))"),
    "loops": None,
    "calls": None,
    "nbody": None,
    "comprehensions": None,
    "string_methods": None,
    "closures": None,
    "indexing": None,
    "match_tuples": None,
}

KINDS = ("plain", "armed", "labelled")


def run_checked(cmd, path):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{path} failed:\n{r.stderr[-4000:]}")
    return r


def timed(kora, path, runs):
    best = None
    out = None
    for _ in range(runs):
        t = time.perf_counter()
        r = run_checked([kora, "run", path], path)
        dt = (time.perf_counter() - t) * 1000
        out = r.stdout
        best = dt if best is None else min(best, dt)
    return best, out


COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(kora, path):
    # The profile itself is not wanted, only the total callgrind prints when the run ends.
    cmd = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        kora,
        "run",
        path,
    ]
    r = run_checked(cmd, path)
    m = COLLECTED.search(r.stderr)
    if not m:
        sys.exit(f"no instruction count in callgrind's output for {path}:\n{r.stderr[-2000:]}")
    return int(m.group(1)), r.stdout


def armed(src):
    # After the leading comment block, so the program reads the same.
    return "_armed = classified(0)\n" + src


def variants(name):
    src = open(os.path.join(ROOT, "benches", f"{name}.ko")).read()
    out = {"plain": src, "armed": armed(src)}
    change = LABELLED.get(name)
    if change and change[0] in src:
        out["labelled"] = src.replace(change[0], change[1], 1)
    return out


def measure(name, d, one):
    """{kind: number} for the bench's variants; exits when a variant's output differs."""
    numbers = {}
    outputs = {}
    for kind, text in variants(name).items():
        p = os.path.join(d, f"{name}_{kind}.ko")
        with open(p, "w") as f:
            f.write(text)
        numbers[kind], outputs[kind] = one(p)
    for kind, out in outputs.items():
        if not same_output(outputs["plain"], out):
            # Reported, not fatal: the numbers still say what the run cost, and the row
            # says it is not the same computation.
            print(f"{name}: the {kind} run printed something else than the plain run:\n{out}", file=sys.stderr)
            numbers.setdefault("differs", []).append(kind)
    return numbers


PLACEHOLDER = "__CLASSIFIED__"


def same_output(plain, other):
    """Whether `other` prints what `plain` does, a classified part standing for anything."""
    a, b = plain.splitlines(), other.splitlines()
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        pattern = ".*".join(re.escape(part) for part in y.split(PLACEHOLDER))
        if not re.fullmatch(pattern, x):
            return False
    return True


def ratio(numbers, kind):
    v = numbers.get(kind)
    return None if v is None else v / numbers["plain"]


def cell(x, fmt, width):
    # A sign option goes before the width in a format spec ('>+12.2f', not '>12+.2f').
    sign, rest = ("+", fmt[1:]) if fmt.startswith("+") else ("", fmt)
    return f"{'-':>{width}}" if x is None else f"{x:>{sign}{width}{rest}}"


def change(before, name, kind, now):
    was = before.get(name, {}).get(kind)
    if was is None or now is None:
        return None
    return (now - was) / was * 100


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kora", default=os.path.join(ROOT, "target/release/kora"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--callgrind", action="store_true", help="count instructions instead of timing")
    ap.add_argument("--save", help="write the numbers as JSON")
    ap.add_argument("--against", help="a JSON file from --save to compare with")
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    names = a.names or list(LABELLED)
    before = json.load(open(a.against)) if a.against else {}
    if a.callgrind:
        unit, fmt, scale = "Minstr", ".1f", 1e-6
        one = lambda p: instructions(a.kora, p)
    else:
        unit, fmt, scale = "ms", ".0f", 1.0
        one = lambda p: timed(a.kora, p, a.runs)
    head = f"{'bench':<16}" + "".join(f"{k + ' ' + unit:>16}" for k in KINDS)
    head += f"{'armed/plain':>13}{'labelled/plain':>16}"
    if before:
        head += "".join(f"{'Δ' + k + ' %':>12}" for k in KINDS)
    print(head, flush=True)
    saved = {}
    with tempfile.TemporaryDirectory() as d:
        for name in names:
            numbers = measure(name, d, one)
            saved[name] = numbers
            row = f"{name:<16}"
            row += "".join(
                cell(None if numbers.get(k) is None else numbers[k] * scale, fmt, 16) for k in KINDS
            )
            row += cell(ratio(numbers, "armed"), ".3f", 13)
            row += cell(ratio(numbers, "labelled"), ".3f", 16)
            if numbers.get("differs"):
                row += "  (output differs: " + ", ".join(numbers["differs"]) + ")"
            if before:
                row += "".join(cell(change(before, name, k, numbers.get(k)), "+.2f", 12) for k in KINDS)
            print(row, flush=True)
    if a.save:
        with open(a.save, "w") as f:
            json.dump(saved, f, indent=1)


if __name__ == "__main__":
    main()

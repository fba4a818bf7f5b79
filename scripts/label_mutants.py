#!/usr/bin/env python3
"""Removes each rule of docs/labels.md's propagation table from the runtime, one at a time,
and shows which programs of the laundering suite then leak.

A suite that passes proves the rules hold; it does not prove each rule is needed, or that
each rule is tested. This script is the second half: a rule whose removal no case notices
is either dead code or untested, and either way the table overstates what the tests show.

Each mutant is one textual edit (the edit must match exactly once, so a refactor that moves
the rule makes the script say so instead of silently testing nothing). The tree must be a
git checkout with no changes to the mutated files; every file is restored afterwards, even
on Ctrl-C. Slow (one runtime rebuild per mutant): run by hand, never in CI.

    python3 scripts/label_mutants.py            # every mutant
    python3 scripts/label_mutants.py seed sort  # those whose name contains a word
"""

import os
import re
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RT = "crates/kora-runtime/src/"

# (name, the docs/labels.md row it removes, file, text, replacement)
MUTANTS = [
    (
        "size-builtins",
        "size: len/hash read every label inside",
        RT + "eval/label_calls.rs",
        "id::LEN | id::HASH => Mode::Size,",
        "id::LEN | id::HASH => Mode::Through,",
    ),
    (
        "size-len-fast-path",
        "size: the inline len(x) of a plain container holding labels",
        RT + "eval/expr.rs",
        "return Ok(crate::eval::label_calls::sized(&v, n));",
        "return Ok(n);",
    ),
    (
        "size-not",
        "size: `not xs` reads every label inside",
        RT + "eval/expr.rs",
        "(UnaryOp::Not, _) => Ok(crate::eval::label_calls::sized(\n                        &v,\n                        Value::Bool(!v.truthy()),\n                    )),",
        "(UnaryOp::Not, _) => Ok(Value::Bool(!v.truthy())),",
    ),
    (
        "gather",
        "gather: min/max/sum/any/all read every label inside",
        RT + "eval/label_calls.rs",
        "id::MIN | id::MAX | id::SUM | id::ANY | id::ALL => Mode::Gather,",
        "id::MIN | id::MAX | id::SUM | id::ANY | id::ALL => Mode::Through,",
    ),
    (
        "narrow",
        "narrow: int/float/bool parse keeps confidentiality",
        RT + "eval/label_calls.rs",
        "id::INT | id::FLOAT | id::BOOL => Mode::Narrow,",
        "id::INT | id::FLOAT | id::BOOL => Mode::Through,",
    ),
    (
        "flatten",
        "flatten: str/repr carry every label inside",
        RT + "eval/label_calls.rs",
        "id::STR | id::REPR => Mode::Flatten,",
        "id::STR | id::REPR => Mode::Through,",
    ),
    (
        "flatten-methods",
        "flatten: string methods (join, format) read labels inside their arguments",
        RT + "eval/attrs.rs",
        "Mode::Flatten => !crate::eval::label_calls::any_deep(&args, &kw),",
        "Mode::Flatten => crate::eval::label_calls::argument_labels(&args, &kw).is_none(),",
    ),
    (
        "compare-deep",
        "compare: ==, <, in read every label inside both operands",
        RT + "labels/ops.rs",
        "        _ => label::deep(b),\n",
        "        _ => label::tag_of(b),\n",
    ),
    (
        "build-comprehension",
        "build: a comprehension is seen through what it iterates",
        RT + "eval/comprehension.rs",
        "        Ok(crate::labels::label::wrap_opt(built, size))",
        "        Ok(built)",
    ),
    (
        "build-repetition",
        "build/value: `[0] * n` with a labelled count is labelled",
        RT + "labels/ops.rs",
        "        (None, Some(t)) => into_box(r, t, b),",
        "        (None, Some(_)) => r,",
    ),
    (
        "order",
        "order: a sort by labelled keys labels every placed item",
        RT + "eval/methods/sort.rs",
        "    if let Some(tag) = tag {",
        "    if let Some(tag) = tag.filter(|_| false) {",
    ),
    (
        "seed",
        "seed: a generator seeded with a secret labels its draws",
        RT + "stdlib/labels.rs",
        "            Some(seed) if drawn => {",
        "            Some(seed) if drawn && false => {",
    ),
    (
        "sink-exit",
        "sink: exit refuses a classified status or message",
        RT + "eval/builtins.rs",
        "crate::labels::label::deep(&arg).filter(|t| t.is_classified())",
        "crate::labels::label::deep(&arg).filter(|_| false)",
    ),
    (
        "shape",
        "shape: a change in place decided by a secret labels the container",
        RT + "labels/shape.rs",
        "pub fn mark(container: &Value, t: Tag) {",
        "pub fn mark(container: &Value, t: Tag) {\n    if true {\n        return;\n    }",
    ),
    (
        "copies",
        "build: a copy of a container seen through a label is seen through it",
        RT + "eval/label_calls.rs",
        "if builds_from_iterables(b) {",
        "if false && builds_from_iterables(b) {",
    ),
]

TESTS = ["label_laundering", "label_sinks"]


def run_suite():
    # `--workspace` keeps the workspace's feature set, so a tree built by `cargo test
    # --workspace` rebuilds only the runtime and what depends on it, not every dependency.
    cmd = ["cargo", "test", "-q", "--workspace"]
    for t in TESTS:
        cmd += ["--test", t]
    env = dict(os.environ, CARGO_INCREMENTAL="0")
    p = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    out = p.stdout + p.stderr
    if "error[E" in out or "could not compile" in out:
        return None, out
    # The laundering tests list each failing case as `name: ...`; label_sinks fails per test.
    cases = set(re.findall(r"^(\w+): (?:plain v=|exit )", out, re.M))
    tests = set(re.findall(r"^test (\w+) \.\.\. FAILED", out, re.M))
    tests |= set(re.findall(r"^    (\w+)$", out, re.M))
    return (p.returncode, sorted(cases), sorted(tests)), out


def main():
    # A kill must restore the mutated file too: `finally` runs on an exception, not on a
    # bare SIGTERM.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(130))
    words = sys.argv[1:]
    chosen = [m for m in MUTANTS if not words or any(w in m[0] for w in words)]
    rows = []
    for name, rule, path, old, new in chosen:
        full = os.path.join(ROOT, path)
        with open(full, encoding="utf-8") as f:
            src = f.read()
        n = src.count(old)
        if n != 1:
            rows.append((name, rule, f"edit matches {n} times: update the mutant"))
            continue
        try:
            with open(full, "w", encoding="utf-8") as f:
                f.write(src.replace(old, new))
            t0 = time.time()
            got, out = run_suite()
        finally:
            with open(full, "w", encoding="utf-8") as f:
                f.write(src)
        if got is None:
            rows.append((name, rule, "mutant does not compile:\n" + out[-2000:]))
            continue
        code, cases, tests = got
        if code == 0:
            verdict = "SURVIVED: no case notices this rule's removal"
        else:
            caught = cases + [t for t in tests if t not in cases]
            verdict = f"caught by {len(caught)}: " + ", ".join(caught)
        rows.append((name, rule, f"{verdict} ({time.time() - t0:.0f} s)"))
        print(f"{name}: {verdict}", flush=True)
    print()
    for name, rule, verdict in rows:
        print(f"- {name} ({rule}): {verdict}")
    survived = [r for r in rows if not r[2].startswith("caught")]
    sys.exit(1 if survived else 0)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What `analyze` costs beyond the wire: per-call overhead over a raw HTTP exchange, and replayed cassette calls.

Builds the release binary and the `model_overhead` example, then runs it. The example
starts the loopback fake provider (kora-testkit), sends the exact body one `analyze` call
sent as raw HTTP, CALLS times, then times CALLS `analyze` calls through `kora run` (minus a
zero-call run, so start-up and checking are excluded), and CALLS calls replayed from a
cassette with `--replay`. It prints the numbers; nothing is asserted.

    python3 scripts/bench_models.py            # 1,000 calls
    python3 scripts/bench_models.py --calls 200

Standard library only. Uses CARGO_TARGET_DIR when set.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=1000)
    args = ap.parse_args()
    build = ["cargo", "build", "--release", "-p", "kora-cli", "--bin", "kora", "--example", "model_overhead"]
    if subprocess.run(build, cwd=ROOT).returncode != 0:
        return 1
    run = ["cargo", "run", "--quiet", "--release", "-p", "kora-cli", "--example", "model_overhead", "--", str(args.calls)]
    return subprocess.run(run, cwd=ROOT).returncode


if __name__ == "__main__":
    sys.exit(main())

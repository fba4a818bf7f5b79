#!/usr/bin/env python3
"""Measures fetching git packages during `kora check` for issue 32's note (a measurement, not a test).

Makes N local repositories, each a package tagged v1, and a program that uses them all (half
directly, half through a package it uses, so the graph has two levels). Each `git fetch` goes
through a wrapper that first sleeps LATENCY seconds, standing in for a network round trip (a
`file://` fetch alone takes a few milliseconds). Then, for each kora binary given, times
`kora check main.ko` with an empty KORA_HOME (everything fetched and locked), and again with the
cache warm and the lock written.

Usage: python3 scripts/bench_fetch.py --kora NAME=BIN [--kora NAME=BIN ...] [--packages 8]
       [--latency 0.2] [--runs 3]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time


def git(cwd, *args):
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@b", "-c", "init.defaultBranch=main",
         "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false", *args],
        cwd=cwd, check=True, capture_output=True)


def package(root, name, deps, lib):
    d = os.path.join(root, name)
    os.makedirs(d)
    with open(os.path.join(d, "kora.toml"), "w") as f:
        f.write(f'[package]\nname = "{name}"\nversion = "0.1.0"\n\n[dependencies]\n{deps}')
    with open(os.path.join(d, "lib.ko"), "w") as f:
        f.write(lib)
    git(d, "init", "-q")
    git(d, "add", "-A")
    git(d, "commit", "-q", "-m", name)
    git(d, "tag", "v1")


def workspace(root, n):
    """`app/` using n/2 packages `top_i`, each of which uses its own `leaf_i`."""
    uses, deps = [], []
    for i in range(n // 2):
        leaf, top = f"leaf{i}", f"top{i}"
        package(root, leaf, "", f'def name() -> str:\n    return "{leaf}"\n')
        package(root, top, f'{leaf} = {{ git = "file://{root}/{leaf}", tag = "v1" }}\n',
                f'use {leaf}\n\n\ndef name() -> str:\n    return "{top}+" + {leaf}.name()\n')
        uses.append(f"use {top}\n")
        deps.append(f'{top} = {{ git = "file://{root}/{top}", tag = "v1" }}\n')
    app = os.path.join(root, "app")
    os.makedirs(app)
    with open(os.path.join(app, "kora.toml"), "w") as f:
        f.write("[dependencies]\n" + "".join(deps))
    with open(os.path.join(app, "main.ko"), "w") as f:
        f.write("".join(uses) + "\nprint(" + ", ".join(f"top{i}.name()" for i in range(n // 2)) + ")\n")
    return app


def slow_git(root, latency):
    real = shutil.which("git")
    bin_dir = os.path.join(root, "bin")
    os.makedirs(bin_dir)
    path = os.path.join(bin_dir, "git")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\ncase " $* " in *" fetch "*) sleep {latency} ;; esac\nexec "{real}" "$@"\n')
    os.chmod(path, 0o755)
    return bin_dir


def check(kora, app, home, bin_dir):
    env = dict(os.environ, KORA_HOME=home, PATH=bin_dir + os.pathsep + os.environ["PATH"])
    t = time.perf_counter()
    r = subprocess.run([kora, "check", "main.ko"], cwd=app, env=env, capture_output=True, text=True)
    took = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"{kora} check failed:\n{r.stdout}{r.stderr}")
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kora", action="append", required=True, help="NAME=BIN")
    ap.add_argument("--packages", type=int, default=8)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="kora-bench-fetch-")
    try:
        app = workspace(root, a.packages)
        bin_dir = slow_git(root, a.latency)
        print(f"{a.packages} git packages (two levels), {a.latency * 1000:.0f} ms per fetch, "
              f"median of {a.runs}")
        print(f"{'build':<12} {'cold cache':>12} {'warm cache':>12}")
        for spec in a.kora:
            name, kora = spec.split("=", 1)
            cold, warm = [], []
            for _ in range(a.runs):
                home = tempfile.mkdtemp(prefix="kora-home-", dir=root)
                for f in ("kora.lock", "kora.sums"):
                    try:
                        os.remove(os.path.join(app, f))
                    except FileNotFoundError:
                        pass
                cold.append(check(kora, app, home, bin_dir))
                warm.append(check(kora, app, home, bin_dir))
            print(f"{name:<12} {statistics.median(cold):>10.3f} s {statistics.median(warm):>10.3f} s")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()

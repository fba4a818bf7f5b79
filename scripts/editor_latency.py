#!/usr/bin/env python3
"""Measure the editor servers: `kora lsp` latency and `kora dap` overhead.

    python3 scripts/editor_latency.py                 # uses target/release/kora
    python3 scripts/editor_latency.py --kora PATH --lines 1000 5000 --runs 20

LSP: a generated program of N lines is opened, then edited R times; each edit is
timed from sending `didChange` to receiving the `publishDiagnostics` for that
version (this includes the server's quiet period before it checks). Hover is
timed from request to response, at a name near the end of the file.

DAP: a benchmark program is run three ways and timed end to end: `kora run`,
`kora dap` with `noDebug` (no debugger attached) and `kora dap` with the
debugger attached but no breakpoint (every statement asks it whether to stop).

Benchmarks are not tests: nothing here fails on a time. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import queue
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Peer:
    def __init__(self, kora: str, command: str):
        self.p = subprocess.Popen([kora, command], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.q: queue.Queue = queue.Queue()
        self.seq = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        f = self.p.stdout
        while True:
            line = f.readline()
            if not line:
                self.q.put(None)
                return
            line = line.strip()
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":")[1])
                while f.readline().strip():
                    pass
                self.q.put(json.loads(f.read(n)))

    def send(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def wait(self, pred) -> dict:
        while True:
            m = self.q.get(timeout=120)
            if m is None:
                raise SystemExit("the server exited")
            if pred(m):
                return m


def program(lines: int) -> str:
    out = []
    i = 0
    while len(out) < lines:
        out += [
            f"def f{i}(x: int) -> int:",
            f"    y = x * 2 + {i}",
            "    if y > 10:",
            "        return y - 1",
            "    return y",
            "",
            f"v{i} = f{i}({i})",
        ]
        i += 1
    return "\n".join(out[:lines]) + "\n"


def lsp(kora: str, lines: int, runs: int) -> dict:
    text = program(lines)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.ko")
        with open(path, "w") as f:
            f.write(text)
        uri = "file://" + path
        s = Peer(kora, "lsp")
        s.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        s.wait(lambda m: m.get("id") == 0)
        s.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "kora", "version": 1, "text": text}}})
        s.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        edits, hovers = [], []
        target = lines - 8
        for r in range(runs):
            version = r + 2
            # Change one digit on a line near the end: `y = x * 2 + N`.
            line = target - (target % 7) + 1
            t0 = time.perf_counter()
            s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": line, "character": 16},
                                              "end": {"line": line, "character": 17}},
                                    "text": str(r % 10)}]}})
            s.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                   and m["params"].get("version") == version)
            edits.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            s.send({"jsonrpc": "2.0", "id": 1000 + r, "method": "textDocument/hover", "params": {
                "textDocument": {"uri": uri}, "position": {"line": line, "character": 4}}})
            reply = s.wait(lambda m: m.get("id") == 1000 + r)
            hovers.append(time.perf_counter() - t0)
            assert reply.get("result"), reply
        s.send({"jsonrpc": "2.0", "id": 9, "method": "shutdown", "params": None})
        s.wait(lambda m: m.get("id") == 9)
        s.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        s.p.wait(timeout=30)
    ms = lambda xs: round(statistics.median(xs) * 1000, 1)
    return {"lines": lines, "edit_to_diagnostics_ms_median": ms(edits),
            "edit_to_diagnostics_ms_max": round(max(edits) * 1000, 1),
            "hover_ms_median": ms(hovers), "hover_ms_max": round(max(hovers) * 1000, 1)}


def dap_run(kora: str, prog: str, no_debug: bool) -> float:
    s = Peer(kora, "dap")
    seq = iter(range(1, 100))

    def req(cmd, args=None):
        n = next(seq)
        s.send({"seq": n, "type": "request", "command": cmd, "arguments": args or {}})
        return s.wait(lambda m: m.get("type") == "response" and m["request_seq"] == n)

    req("initialize", {"adapterID": "kora"})
    req("launch", {"program": prog, "noDebug": no_debug})
    t0 = time.perf_counter()
    req("configurationDone")
    s.wait(lambda m: m.get("event") == "exited")
    took = time.perf_counter() - t0
    req("disconnect")
    s.p.wait(timeout=30)
    return took


def dap(kora: str, bench: str, runs: int) -> dict:
    prog = os.path.join(ROOT, "benches", bench + ".ko")
    plain, nodebug, attached = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([kora, "run", prog], stdout=subprocess.DEVNULL, check=True)
        plain.append(time.perf_counter() - t0)
        nodebug.append(dap_run(kora, prog, True))
        attached.append(dap_run(kora, prog, False))
    med = lambda xs: round(statistics.median(xs) * 1000, 1)
    return {"bench": bench, "kora_run_ms": med(plain), "dap_no_debugger_ms": med(nodebug),
            "dap_debugger_attached_ms": med(attached),
            "attached_overhead": round(statistics.median(attached) / statistics.median(nodebug) - 1, 3)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kora", default=os.path.join(ROOT, "target", "release", "kora"))
    ap.add_argument("--lines", type=int, nargs="*", default=[1000, 5000])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--bench", nargs="*", default=["loops", "calls"])
    a = ap.parse_args()
    if not os.path.exists(a.kora):
        print(f"no kora binary at {a.kora}: build it with `cargo build --release -p kora-cli`", file=sys.stderr)
        return 2
    for n in a.lines:
        print(json.dumps(lsp(a.kora, n, a.runs)))
    for b in a.bench:
        print(json.dumps(dap(a.kora, b, max(3, a.runs // 3))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

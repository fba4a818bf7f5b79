#!/usr/bin/env python3
"""Measure the front end at scale: `kora check` on generated programs, and `kora lsp` on a large file.

    python3 scripts/bench_frontend.py --kora /tmp/scale-release/release/kora
    python3 scripts/bench_frontend.py --sizes 10000 100000 300000 --lsp-lines 5000 --edits 200

Check: a program of N lines (records, functions with loops, matches,
comprehensions, f-strings and top-level statements, every name distinct) is
written once and checked R times; the median wall time is reported, with the
time per 1,000 lines, which should be flat across sizes (a linear front end).

LSP: a 5,000-line program is opened by a small protocol client of our own and
edited E times (one digit inside a function body); each edit is timed from
`didChange` to the `publishDiagnostics` of that version (this includes the
server's quiet period). After each edit: completion after a `.` typed on a
record value (timed from request to reply) and hover on a name. The server's
RSS is read from /proc after the last edit.

Benchmarks are not tests: nothing here fails on a time. Standard library only.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BLOCK = """\
type Item{i}:
    id: int
    name: str
    tags: list[str] = []


def score{i}(x: int, items: list[Item{i}]) -> int:
    total = x * 2 + {i}
    for it in items:
        if it.id > 10 and "a" in it.tags:
            total = total + it.id
        elif it.id < 0:
            total = total - 1
        else:
            total = total + len(it.name)
    match total % 3:
        case 0:
            return total
        case 1:
            return total + 1
        case _:
            return total - 1


def label{i}(n: int) -> str:
    names = [f"n{{k}}" for k in range(n) if k % 2 == 0]
    return f"label {{n}}: {{len(names)}}"


items{i} = [Item{i}(1, "a"), Item{i}(id=2, name="b", tags=["a"])]
value{i} = score{i}({i}, items{i})
"""

BLOCK_LINES = BLOCK.count("\n") + 1  # each block is followed by a blank line


def program(lines: int) -> str:
    out = []
    n = 0
    i = 0
    while n < lines:
        b = BLOCK.format(i=i) + "\n"
        out.append(b)
        n += BLOCK_LINES
        i += 1
    return "".join(out)


def check(kora: str, lines: int, runs: int) -> dict:
    text = program(lines)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.ko")
        with open(path, "w") as f:
            f.write(text)
        real = text.count("\n")
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            p = subprocess.run([kora, "check", path], capture_output=True, text=True)
            times.append(time.perf_counter() - t0)
            if p.returncode != 0:
                raise SystemExit(f"kora check failed on the generated program:\n{p.stdout[:2000]}{p.stderr[:2000]}")
    med = statistics.median(times)
    return {"lines": real, "check_s_median": round(med, 3),
            "ms_per_1k_lines": round(med * 1000 / (real / 1000), 2)}


class Peer:
    def __init__(self, kora: str):
        self.p = subprocess.Popen([kora, "lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.q: queue.Queue = queue.Queue()
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

    def rss_mb(self) -> float:
        with open(f"/proc/{self.p.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return 0.0


def change(s: Peer, uri: str, version: int, start: tuple, end: tuple, text: str) -> int:
    version += 1
    s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"range": {"start": {"line": start[0], "character": start[1]},
                                      "end": {"line": end[0], "character": end[1]}},
                            "text": text}]}})
    return version


def wait_diagnostics(s: Peer, version: int) -> dict:
    return s.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                  and m["params"].get("version") == version)


def lsp(kora: str, lines: int, edits: int) -> dict:
    text = program(lines)
    src = text.split("\n")
    blocks = len(src) // BLOCK_LINES
    mid = blocks // 2
    # `    total = x * 2 + {i}` inside score{mid}; the digit after `2` is edited.
    rows = BLOCK.split("\n")
    edit_line = mid * BLOCK_LINES + next(i for i, r in enumerate(rows) if r.startswith("    total = x * 2"))
    assert src[edit_line].startswith("    total = x * 2"), src[edit_line]
    # `value{mid} = ...` at the end of the block: completion and hover happen there.
    value_line = mid * BLOCK_LINES + next(i for i, r in enumerate(rows) if r.startswith("value{i}"))
    assert src[value_line].startswith(f"value{mid} ="), src[value_line]
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.ko")
        with open(path, "w") as f:
            f.write(text)
        uri = "file://" + path
        s = Peer(kora)
        s.send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}}})
        s.wait(lambda m: m.get("id") == 0)
        s.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        s.send({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {
            "textDocument": {"uri": uri, "languageId": "kora", "version": 1, "text": text}}})
        first = s.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        if first["params"]["diagnostics"]:
            raise SystemExit(f"the generated program has diagnostics: {first['params']['diagnostics'][:3]}")
        diag, compl, hover = [], [], []
        version = 1
        ident = 1000
        # A new line after `value{mid} = ...` on which `items{mid}[0].` is typed and then removed.
        probe = f"probe = items{mid}[0]"
        for r in range(edits):
            version += 1
            t0 = time.perf_counter()
            s.send({"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": edit_line, "character": 16},
                                              "end": {"line": edit_line, "character": 17}},
                                    "text": str(r % 10)}]}})
            s.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                   and m["params"].get("version") == version)
            diag.append(time.perf_counter() - t0)
            # Type the probe line as an editor sends it: the receiver, then the `.`
            # with a completion request right behind it; then remove the line again.
            version = change(s, uri, version, (value_line + 1, 0), (value_line + 1, 0), probe + "\n")
            wait_diagnostics(s, version)
            version = change(s, uri, version, (value_line + 1, len(probe)), (value_line + 1, len(probe)), ".")
            ident += 1
            t0 = time.perf_counter()
            s.send({"jsonrpc": "2.0", "id": ident, "method": "textDocument/completion", "params": {
                "textDocument": {"uri": uri},
                "position": {"line": value_line + 1, "character": len(probe) + 1}}})
            reply = s.wait(lambda m, i=ident: m.get("id") == i)
            compl.append(time.perf_counter() - t0)
            got = reply.get("result") or []
            got = got.get("items", []) if isinstance(got, dict) else got
            if not any(c.get("label") == "name" for c in got):
                raise SystemExit(f"completion did not offer the record's fields: {reply}")
            version = change(s, uri, version, (value_line + 1, 0), (value_line + 2, 0), "")
            # Hover as an editor sends it: once the pointer rests, after the edit was checked.
            wait_diagnostics(s, version)
            ident += 1
            t0 = time.perf_counter()
            s.send({"jsonrpc": "2.0", "id": ident, "method": "textDocument/hover", "params": {
                "textDocument": {"uri": uri}, "position": {"line": value_line, "character": 2}}})
            reply = s.wait(lambda m, i=ident: m.get("id") == i)
            hover.append(time.perf_counter() - t0)
            if not reply.get("result"):
                raise SystemExit(f"hover returned nothing: {reply}")
        rss = s.rss_mb()
        s.send({"jsonrpc": "2.0", "id": 9, "method": "shutdown", "params": None})
        s.wait(lambda m: m.get("id") == 9)
        s.send({"jsonrpc": "2.0", "method": "exit", "params": None})
        s.p.wait(timeout=30)
    ms = lambda xs: round(statistics.median(xs) * 1000, 1)
    return {"lines": len(src), "edits": edits,
            "edit_to_diagnostics_ms_median": ms(diag), "edit_to_diagnostics_ms_max": round(max(diag) * 1000, 1),
            "completion_ms_median": ms(compl), "completion_ms_max": round(max(compl) * 1000, 1),
            "hover_ms_median": ms(hover), "hover_ms_max": round(max(hover) * 1000, 1),
            "rss_mb_after_edits": round(rss, 1)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kora", default=os.path.join(ROOT, "target", "release", "kora"))
    ap.add_argument("--sizes", type=int, nargs="*", default=[10000, 100000, 300000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--lsp-lines", type=int, default=5000)
    ap.add_argument("--edits", type=int, default=200)
    ap.add_argument("--write", metavar="PATH", help="only write a generated program of --lsp-lines lines to PATH")
    a = ap.parse_args()
    if a.write:
        with open(a.write, "w") as f:
            f.write(program(a.lsp_lines))
        return 0
    if not os.path.exists(a.kora):
        print(f"no kora binary at {a.kora}: build it with `cargo build --release -p kora-cli`", file=sys.stderr)
        return 2
    for n in a.sizes:
        print(json.dumps(check(a.kora, n, a.runs)), flush=True)
    if a.lsp_lines and a.edits:
        print(json.dumps(lsp(a.kora, a.lsp_lines, a.edits)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

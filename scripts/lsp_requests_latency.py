#!/usr/bin/env python3
"""Time `kora lsp`'s requests on one generated program (5,000 lines by default).

    python3 scripts/lsp_requests_latency.py                      # target/release/kora
    python3 scripts/lsp_requests_latency.py --kora target/debug/kora --lines 5000 --runs 20

The program is `editor_latency.py`'s (a function, its call and a global per 7 lines).
After it is opened and checked, each request is sent R times at a name near the end of
the file and timed from request to response: hover, completion after a typed `.` (the
edit is made first, untimed, then reverted), references, prepareRename, rename,
document highlight, signature help, semantic tokens (full, and a delta after an edit),
inlay hints for the visible 60 lines, folding ranges and workspace symbols.
Prints medians and maxima in milliseconds, as JSON. Benchmarks are not tests: nothing
here fails on a time. Standard library only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_spec = importlib.util.spec_from_file_location("editor_latency", os.path.join(ROOT, "scripts", "editor_latency.py"))
editor_latency = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(editor_latency)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kora", default=os.path.join(ROOT, "target", "release", "kora"))
    ap.add_argument("--lines", type=int, default=5000)
    ap.add_argument("--runs", type=int, default=15)
    a = ap.parse_args()
    text = editor_latency.program(a.lines)
    lines = text.split("\n")
    # The last complete `vN = fN(N)` line, and its function's `def` line.
    call_line = max(i for i, l in enumerate(lines) if l.startswith("v"))
    def_line = call_line - 6
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "big.ko")
        with open(path, "w") as f:
            f.write(text)
        uri = "file://" + path
        s = editor_latency.Peer(a.kora, "lsp")
        ids = iter(range(1, 10**9))

        def request(method: str, params: dict) -> tuple[float, dict]:
            i = next(ids)
            t0 = time.perf_counter()
            s.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
            reply = s.wait(lambda m: m.get("id") == i)
            if "error" in reply:
                raise SystemExit(f"{method} failed: {reply['error']}")
            return time.perf_counter() - t0, reply.get("result")

        def notify(method: str, params: dict) -> None:
            s.send({"jsonrpc": "2.0", "method": method, "params": params})

        request("initialize", {"processId": None, "rootUri": "file://" + d, "capabilities": {}})
        notify("initialized", {})
        notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "kora", "version": 1, "text": text}})
        s.wait(lambda m: m.get("method") == "textDocument/publishDiagnostics")
        doc = {"uri": uri}
        at_call = {"textDocument": doc, "position": {"line": call_line, "character": len(lines[call_line]) - 3}}
        at_fn = {"textDocument": doc, "position": {"line": call_line, "character": lines[call_line].index("f") + 1}}
        times: dict[str, list[float]] = {}

        def timed(name: str, method: str, params: dict) -> dict:
            t, r = request(method, params)
            times.setdefault(name, []).append(t)
            return r

        version = 1
        tokens_id = None
        for r in range(a.runs):
            timed("hover", "textDocument/hover", at_fn)
            timed("references", "textDocument/references", {**at_fn, "context": {"includeDeclaration": True}})
            timed("prepareRename", "textDocument/prepareRename", at_fn)
            timed("rename", "textDocument/rename", {**at_fn, "newName": "renamed"})
            timed("documentHighlight", "textDocument/documentHighlight", at_fn)
            timed("signatureHelp", "textDocument/signatureHelp", at_call)
            timed("inlayHint", "textDocument/inlayHint", {"textDocument": doc, "range": {
                "start": {"line": max(0, call_line - 60), "character": 0}, "end": {"line": call_line, "character": 0}}})
            timed("foldingRange", "textDocument/foldingRange", {"textDocument": doc})
            timed("workspaceSymbol", "workspace/symbol", {"query": "f1"})
            full = timed("semanticTokens/full", "textDocument/semanticTokens/full", {"textDocument": doc})
            tokens_id = full.get("resultId")
            # Completion after a typed `.`: `vN.` on a new line at the end.
            version += 1
            end = len(lines) - 1
            notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
                {"range": {"start": {"line": end, "character": 0}, "end": {"line": end, "character": 0}}, "text": "s = \"a\"."}]})
            timed("completion after .", "textDocument/completion", {"textDocument": doc, "position": {"line": end, "character": 8}})
            timed("semanticTokens/delta", "textDocument/semanticTokens/full/delta",
                  {"textDocument": doc, "previousResultId": tokens_id})
            version += 1
            notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [
                {"range": {"start": {"line": end, "character": 0}, "end": {"line": end, "character": 8}}, "text": ""}]})
        request("shutdown", None)
        notify("exit", None)
        s.p.wait(timeout=30)
    ms = lambda xs: round(statistics.median(xs) * 1000, 2)
    out = {"lines": a.lines, "runs": a.runs, "kora": a.kora,
           "median_ms": {k: ms(v) for k, v in times.items()},
           "max_ms": {k: round(max(v) * 1000, 2) for k, v in times.items()}}
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Measures package helpers for issue 33's note (a measurement, not a test).

1. Helper start + one call round trip: `kora-pdf` spoken to directly over stdio/v1 (start,
   one `pages` request, reply), and through `kora run` (a program that calls `pdf.pages` once,
   minus the same program without the call).
2. Text extraction of a 100-page PDF this script writes: every page's `pdf.text` through
   `kora run`, and the same requests sent straight to the helper.

Usage: python3 scripts/bench_helper.py [--kora target/debug/kora] [--helper PATH] [--runs 5]
(the helper defaults to `kora-pdf` beside the kora binary). Report which build you measured.
"""

import argparse
import json
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time


def make_pdf(texts):
    """A well-formed PDF with one Helvetica text page per entry (the tests' generator, in Python)."""
    n = len(texts)
    page_id = lambda i: 4 + i * 2
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        ("<< /Type /Pages /Count %d /Kids [%s] >>" % (n, " ".join("%d 0 R" % page_id(i) for i in range(n)))).encode(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
    ]
    for i, t in enumerate(texts):
        objs.append(
            (
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "
                "/Resources << /Font << /F1 3 0 R >> >> >>" % (page_id(i) + 1)
            ).encode()
        )
        lines = " ".join("(%s) Tj 0 -14 Td" % line for line in t)
        body = ("BT /F1 11 Tf 72 740 Td %s ET" % lines).encode()
        objs.append(b"<< /Length %d >>\nstream\n" % len(body) + body + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for i, o in enumerate(objs):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % (i + 1) + o + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for off in offsets:
        out += b"%010d 00000 n \n" % off
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return bytes(out)


def frame(header, payload=b""):
    head = json.dumps(header).encode()
    return struct.pack(">II", len(head), len(payload)) + head + payload


def read_frame(f):
    prefix = f.read(8)
    hl, pl = struct.unpack(">II", prefix)
    return json.loads(f.read(hl)), f.read(pl)


def direct(helper, pdf, ops):
    """Seconds from spawning the helper to the last reply of `ops` (each `(op, header)`)."""
    t0 = time.perf_counter()
    p = subprocess.Popen([helper], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    for op, header in ops:
        p.stdin.write(frame({"op": op, "header": header}, pdf))
        p.stdin.flush()
        reply, _ = read_frame(p.stdout)
        assert "ok" in reply, reply
    elapsed = time.perf_counter() - t0
    p.stdin.close()
    p.wait()
    return elapsed


def kora_run(kora, d):
    t0 = time.perf_counter()
    r = subprocess.run([kora, "run", "main.ko"], cwd=d, capture_output=True, text=True)
    elapsed = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("kora run failed:\n" + r.stdout + r.stderr)
    return elapsed, r.stdout


PROGRAM = """use fs
use pdf

data: bytes = fs.bytes("doc.pdf") else:
    exit("no doc.pdf")
%s
"""
ONE_CALL = """n: int = pdf.pages(data) else (why, kind):
    exit(why)
print(n)"""
ALL_TEXT = """n: int = pdf.pages(data) else (why, kind):
    exit(why)
chars = 0
for i in range(n):
    t: str = pdf.text(data, i) else (why, kind):
        exit(why)
    chars += len(t)
print(n, chars)"""


def median(f, runs):
    return statistics.median(f() for _ in range(runs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kora", default="target/debug/kora")
    ap.add_argument("--helper")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    kora = os.path.abspath(a.kora)
    helper = os.path.abspath(a.helper or os.path.join(os.path.dirname(kora), "kora-pdf"))
    small = make_pdf([["Hello"]])
    words = "the quick brown fox jumps over the lazy dog".split()
    big = make_pdf([["page %d line %d %s" % (p, l, " ".join(words)) for l in range(40)] for p in range(100)])
    d = tempfile.mkdtemp(prefix="kora-bench-helper-")
    ms = lambda s: "%.1f ms" % (s * 1000)

    one = median(lambda: direct(helper, small, [("pages", {})]), a.runs)
    print("direct: helper start + one `pages` round trip:", ms(one))
    pages = [("text", {"page": i}) for i in range(100)]
    hundred = median(lambda: direct(helper, big, [("pages", {})] + pages), a.runs)
    print("direct: start + text of all 100 pages (%d KiB PDF):" % (len(big) // 1024), ms(hundred))

    def run(program, pdf):
        with open(os.path.join(d, "doc.pdf"), "wb") as f:
            f.write(pdf)
        with open(os.path.join(d, "main.ko"), "w") as f:
            f.write(PROGRAM % program)
        return kora_run(kora, d)

    base = median(lambda: run("print(len(data))", small)[0], a.runs)
    call = median(lambda: run(ONE_CALL, small)[0], a.runs)
    print("kora run: baseline", ms(base), "; with one pdf.pages:", ms(call), "; the call:", ms(call - base))
    base_big = median(lambda: run("print(len(data))", big)[0], a.runs)
    texts, out = run(ALL_TEXT, big)
    texts = median(lambda: run(ALL_TEXT, big)[0], a.runs)
    print("kora run: 100 x pdf.text (%s):" % out.strip(), ms(texts - base_big), "over the baseline")


if __name__ == "__main__":
    main()

"""Kora's Python worker: runs module functions for a Kora program, data in and data out.

Kora writes this file to its cache folder and starts it as `python3 kora_worker.py PATH...`.
Requests and replies are frames on the process's original stdin/stdout: a 4-byte big-endian
length, then that many bytes of UTF-8 JSON. Functions that print write to stderr; stdin is
empty. Values that plain JSON cannot hold are one-key objects: $tuple, $set, $bytes (base64),
$dict ([key, value] pairs), $float ("nan", "inf", "-inf") and $int (decimal text).
"""
import base64
import dataclasses
import importlib
import json
import math
import os
import struct
import sys
import traceback

TAGS = ("$tuple", "$set", "$bytes", "$dict", "$float", "$int")
I64 = 2 ** 63


class Unconvertible(Exception):
    pass


def enc(v, depth=0):
    if depth > 200:
        raise Unconvertible("a value nested deeper than 200 levels")
    d = depth + 1
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v if -I64 <= v < I64 else {"$int": str(v)}
    if isinstance(v, float):
        if math.isnan(v):
            return {"$float": "nan"}
        if math.isinf(v):
            return {"$float": "inf" if v > 0 else "-inf"}
        return v
    if isinstance(v, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(v)).decode("ascii")}
    if isinstance(v, tuple) and hasattr(v, "_asdict"):
        return enc_dict(v._asdict(), d)
    if isinstance(v, tuple):
        return {"$tuple": [enc(x, d) for x in v]}
    if isinstance(v, list):
        return [enc(x, d) for x in v]
    if isinstance(v, dict):
        return enc_dict(v, d)
    if isinstance(v, (set, frozenset)):
        return {"$set": [enc(x, d) for x in v]}
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return enc_dict({f.name: getattr(v, f.name) for f in dataclasses.fields(v)}, d)
    t = type(v)
    name = t.__qualname__ if t.__module__ == "builtins" else t.__module__ + "." + t.__qualname__
    raise Unconvertible(name)


def enc_dict(m, d):
    if all(isinstance(k, str) for k in m) and not (len(m) == 1 and next(iter(m)) in TAGS):
        return {k: enc(x, d) for k, x in m.items()}
    return {"$dict": [[enc(k, d), enc(x, d)] for k, x in m.items()]}


def dec(v):
    if isinstance(v, list):
        return [dec(x) for x in v]
    if isinstance(v, dict):
        if len(v) == 1:
            (k, x), = v.items()
            if k == "$tuple":
                return tuple(dec(i) for i in x)
            if k == "$set":
                return set(dec(i) for i in x)
            if k == "$bytes":
                return base64.b64decode(x)
            if k == "$dict":
                return {dec(a): dec(b) for a, b in x}
            if k == "$float":
                return float(x)
            if k == "$int":
                return int(x)
        return {k: dec(x) for k, x in v.items()}
    return v


def main():
    rfd, wfd = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    rin = os.fdopen(rfd, "rb")
    wout = os.fdopen(wfd, "wb")
    for p in reversed(sys.argv[1:]):
        sys.path.insert(0, p)
    modules = {}

    def send(msg):
        body = json.dumps(msg, ensure_ascii=False, allow_nan=False).encode("utf-8")
        wout.write(struct.pack(">I", len(body)) + body)
        wout.flush()

    send({"hello": 1, "python": sys.version.split()[0], "executable": sys.executable})
    while True:
        head = rin.read(4)
        if len(head) < 4:
            return
        (n,) = struct.unpack(">I", head)
        msg = json.loads(rin.read(n).decode("utf-8"))
        rid = msg.get("id")
        name = msg["module"]
        try:
            mod = modules.get(name)
            if mod is None:
                mod = modules[name] = importlib.import_module(name)
        except BaseException as e:
            send({"id": rid, "import": {"type": type(e).__name__, "message": str(e), "executable": sys.executable}})
            continue
        fn = getattr(mod, msg["func"], None)
        if not callable(fn):
            what = "has no attribute" if fn is None else "has a non-callable attribute"
            send({"id": rid, "exc": {"type": "AttributeError", "message": "module '%s' %s '%s'" % (name, what, msg["func"]), "frame": ""}})
            continue
        try:
            result = fn(*dec(msg.get("args", [])), **dec(msg.get("kwargs", {})))
        except BaseException as e:
            frames = traceback.extract_tb(e.__traceback__)
            where = ""
            if frames:
                f = frames[-1]
                where = "%s:%d in %s" % (f.filename, f.lineno, f.name)
            send({"id": rid, "exc": {"type": type(e).__name__, "message": str(e), "frame": where}})
            continue
        try:
            out = enc(result)
        except Unconvertible as e:
            send({"id": rid, "bad": str(e)})
            continue
        send({"id": rid, "ok": out})


if __name__ == "__main__":
    main()

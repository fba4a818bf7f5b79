"""Functions the `use python` end-to-end tests call (crates/kora-cli/tests/python.rs)."""
import collections
import dataclasses
import os
import time


@dataclasses.dataclass
class Point:
    x: int
    label: str


Pair = collections.namedtuple("Pair", "left right")


def echo(*args, **kwargs):
    return [list(args), kwargs]


def every_kind():
    return {"none": None, "yes": True, "int": -7, "float": 2.5, "str": "héllo", "bytes": b"\x00\xff",
            "list": [1, [2]], "tuple": (1, "a"), "set": {3}, "int_keys": {1: "one"},
            "dataclass": Point(1, "p"), "namedtuple": Pair(1, 2)}


def huge():
    return 2 ** 70


def unconvertible():
    return object()


def divide(a, b):
    return a / b


def die():
    os._exit(9)


def hang():
    time.sleep(120)


def spin(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


def noop():
    return None


def timed_spin(n):
    """spin(n), with this worker's pid and when it ran (CLOCK_MONOTONIC: one clock for all processes)."""
    start = time.monotonic()
    spin(n)
    return [os.getpid(), start, time.monotonic()]


def record(path, text):
    with open(path, "a") as f:
        f.write(text + "\n")
    return text

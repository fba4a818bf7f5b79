"""Regenerates src/value/arith/cases.tsv: `a op b` for ints, floats and bools as CPython 3.11 computes it.

Results outside 64-bit ints are recorded as E1004 (Kora's overflow error). Run from this directory.
"""
import math
import operator

INTS = [0, 1, -1, -7, 7, 63, 2 ** 53 + 1, 2 ** 62, -2 ** 63, 2 ** 63 - 1]
FLOATS = [0.0, -0.0, 0.5, -7.5, 0.1, 1e300, -1e-300, math.inf, math.nan, -8.0]
OPS = {'+': operator.add, '-': operator.sub, '*': operator.mul, '/': operator.truediv,
       '//': operator.floordiv, '%': operator.mod, '**': operator.pow, '&': operator.and_,
       '|': operator.or_, '^': operator.xor, '<<': operator.lshift, '>>': operator.rshift}
CODES = {'ZeroDivisionError': 'E1005', 'TypeError': 'E1008', 'ValueError': 'E1009',
         'OverflowError': 'E1004'}


def result(fn, name, a, b):
    both_int = isinstance(a, int) and isinstance(b, int)
    if name == '**' and both_int and b > 64 and abs(a) > 1:
        return 'E1004'
    if name == '<<' and both_int and b > 64 and a != 0:
        return 'E1004'
    if name == '**' and a < 0 and math.isfinite(b) and b != math.floor(b):
        return None  # complex in Python; Kora has no complex numbers
    try:
        r = fn(a, b)
    except Exception as e:  # noqa: BLE001 - every Python error maps to a Kora code
        n = type(e).__name__
        if n == 'OverflowError' and 'out of range' not in str(e):
            return 'E1004'
        return f"{CODES[n]}: {e}"
    if isinstance(r, complex):
        return None
    if isinstance(r, int) and not isinstance(r, bool) and not -2 ** 63 <= r < 2 ** 63:
        return 'E1004'
    return repr(r)


def main():
    values = [('i', x) for x in INTS] + [('f', x) for x in FLOATS] + [('b', True)]
    lines = ["# op\ta\tb\tresult (repr, or CODE: message; E1004 alone for int overflow) per CPython 3.11"]
    for name, fn in OPS.items():
        for ka, a in values:
            for kb, b in values:
                r = result(fn, name, a, b)
                if r is not None:
                    lines.append(f"{name}\t{ka}:{a!r}\t{kb}:{b!r}\t{r}")
    with open('../src/value/arith/cases.tsv', 'w') as out:
        out.write("\n".join(lines) + "\n")


main()

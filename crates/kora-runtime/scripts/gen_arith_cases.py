"""Regenerates src/value/arith/cases.tsv: `a op b` for ints, floats and bools as CPython 3.11 computes it.

Ints have any size, as in Python; a result past Kora's big-int bound (2**32 bits, see
value/big_int.rs) is recorded as E1019 (out of memory) instead of being computed. Run from this directory.
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
MAX_BITS = 2 ** 32


def result(fn, name, a, b):
    both_int = isinstance(a, int) and isinstance(b, int)
    if name == '**' and both_int and abs(a) > 1 and b > 0 and abs(a).bit_length() * b > MAX_BITS:
        return 'E1019'
    if name == '<<' and both_int and a != 0 and b > 0 and abs(a).bit_length() + b > MAX_BITS:
        return 'E1019'
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
    return repr(r)


def main():
    values = [('i', x) for x in INTS] + [('f', x) for x in FLOATS] + [('b', True)]
    lines = ["# op\ta\tb\tresult (repr, or CODE: message; E1019 alone where the int result would outgrow memory) per CPython 3.11"]
    for name, fn in OPS.items():
        for ka, a in values:
            for kb, b in values:
                r = result(fn, name, a, b)
                if r is not None:
                    lines.append(f"{name}\t{ka}:{a!r}\t{kb}:{b!r}\t{r}")
    with open('../src/value/arith/cases.tsv', 'w') as out:
        out.write("\n".join(lines) + "\n")


main()

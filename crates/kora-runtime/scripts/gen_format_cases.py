"""Regenerates src/value/format/cases.tsv: format(value, spec) and repr(float) as CPython 3.11 prints them.

Run with python3.11 from this directory: python3 gen_format_cases.py
"""
import math

FLOATS = [0.0, -0.0, 1.0, -1.0, 0.1, 0.2, 0.1 + 0.2, 1e16, 1e15, 9999999999999998.0, 1e-5, 1.5e-7,
          0.0001, 5e-324, 1.7976931348623157e308, 123456789012345678.0, 2.5, 1 / 3, 2 / 3, 100.0,
          1e22, 1e-7, 123.456, -123.456, math.inf, -math.inf, math.nan, 3.14159, 2.0 ** 53, 1e100,
          1.23e-100, 0.5, 12345.6789, 1e21, 4.35, 0.001, 299792458.0, 6.02214076e23,
          9007199254740992.0 * 0.1]
FLOAT_VALUES = [0.0, -0.0, 1.5, -1.5, 1234567.891, 0.000123456, 1e16, 2.5, 0.125, 1e-10, 123456.0,
                -0.001, 3.0, math.inf, math.nan, 1e300, 0.1]
FLOAT_SPECS = ['', '.2f', '.0f', 'e', '.3e', 'E', 'g', '.3g', 'G', '%', '.1%', '.0%', '10.2f', '<10',
               '^12.3f', '*>12', '+', ' ', '+.2e', ',', ',.2f', '_.3f', '010.2f', '#', '#.0f', '#g',
               '.10g', 'n', 'z.1f', '08.3f', '=+10.1f', 'F', '.3', '.1', '.0', '#.0e', '.20f', '.17g']
INT_VALUES = [0, 1, -1, 42, -42, 1234567, -1234567, 255, 2 ** 63 - 1, -2 ** 63, 65]
INT_SPECS = ['', 'd', '5d', '<5', '^7', '>8', '05', '+d', ' d', ',', '_', 'x', 'X', '#x', '#X', 'o',
             '#o', 'b', '#b', '_b', '#_x', 'c', 'n', 'e', '.2f', '%', 'g', '010,', '0=12,', '*^9',
             '+08', '=+8', '#010b', '_x', '020_', ',d']
STR_VALUES = ['', 'ab', 'héllo', 'mid']
STR_SPECS = ['', 's', '5', '<6', '>6', '^7', '*^9', '.2', '>5.1', '05', 'x<4']


def kind(v):
    if isinstance(v, bool):
        return 'b', str(v)
    if isinstance(v, int):
        return 'i', str(v)
    if isinstance(v, float):
        return 'f', repr(v)
    return 's', v


def main():
    lines = ["# kind\tvalue\tspec\tformat(value, spec) per CPython 3.11 (scripts/gen_format_cases.py)"]
    groups = [(FLOAT_VALUES, FLOAT_SPECS), (INT_VALUES, INT_SPECS), (STR_VALUES, STR_SPECS),
              ([True, False], ['', 'd', '>5', '.2f', '05', 'x', '%'])]
    for values, specs in groups:
        for v in values:
            for s in specs:
                try:
                    r = format(v, s)
                except (ValueError, TypeError, OverflowError):
                    continue
                k, x = kind(v)
                lines.append(f"{k}\t{x}\t{s}\t{r}")
    for f in FLOATS:
        lines.append(f"r\t{f!r}\t\t{f!r}")
    with open('../src/value/format/cases.tsv', 'w') as out:
        out.write("\n".join(lines) + "\n")


main()

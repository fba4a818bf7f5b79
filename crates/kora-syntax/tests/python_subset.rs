//! The Python 3 subset Kora shares: a broad program parses cleanly, and key tree shapes are exact.

mod common;
use common::{ex, parse_ok, sexp};

const PROGRAM: &str = r#"
# Word statistics, written as plain Python.
from_file = "words.txt"

def count_words(text: str, min_len: int = 1, *extra: str) -> dict[str, int]:
    """Counts words at least `min_len` long."""
    counts: dict[str, int] = {}
    for word in text.split():
        w = word.strip(".,").lower()
        if len(w) < min_len:
            continue
        elif w in extra:
            pass
        else:
            counts[w] = counts.get(w, 0) + 1
    return counts

def top(counts: dict[str, int], n: int = 3) -> list[tuple[str, int]]:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return items[:n]

def fib(n: int) -> int:
    a, b = 0, 1
    while n > 0:
        a, b = b, a + b
        n -= 1
    return a

def make_counter() -> int:
    total = 0
    def bump(by: int = 1) -> int:
        nonlocal total
        total += by
        return total
    bump()
    return bump(2)

text = "the cat and the hat and the bat"
counts = count_words(text)
squares = [x * x for x in range(10) if x % 2 == 0]
evens = {x for x in range(6) if not x & 1}
index = {w: i for i, w in enumerate(["a", "b"])}
total = sum(x * x for x in range(4))
pairs = list(zip([1, 2], ["a", "b"]))
nested = [[i * j for j in range(3)] for i in range(3)]
flags = [a and b or not c for a, b, c in [(True, False, True)]]
mixed = [1, "a", None, 2.5, True, (1,), {}, {1: 2}]
print(f"{len(counts)} words, top: {top(counts)!r}", sep=" ", end="\n")
print(fib(10), make_counter(), 7 // 2, -7 % 3, 2 ** 10, 1e3, 0x1f, 0b101, 0o17)
print(squares[::-1], squares[1:3], squares[-1], text[::2])
print(1 < 2 <= 3 != 4, "a" in "cat", None is None, [] is not None)
print(divmod(7, 2), abs(-3), round(2.5), max([3, 1], key=lambda v: -v))
x = y = 0
x |= 1 << 3
assert x == 8, "bits"
"#;

#[test]
fn broad_program_parses_without_diagnostics() {
    let parsed = parse_ok(PROGRAM);
    assert_eq!(parsed.module.stmts.len(), 23);
}

#[test]
fn precedence_matches_python() {
    assert_eq!(ex("1 + 2 * 3 - 4"), "(- (+ 1 (* 2 3)) 4)");
    assert_eq!(ex("-2 ** 2"), "(- (** 2 2))");
    assert_eq!(ex("2 ** -1"), "(** 2 (- 1))");
    assert_eq!(ex("2 ** 3 ** 2"), "(** 2 (** 3 2))");
    assert_eq!(
        ex("a | b ^ c & d << 1 + 2"),
        "(| a (^ b (& c (<< d (+ 1 2)))))"
    );
    assert_eq!(ex("not a == b"), "(not (cmp a == b))");
    assert_eq!(ex("a or b and not c"), "(or a (and b (not c)))");
    assert_eq!(ex("~x // y % z"), "(% (// (~ x) y) z)");
    assert_eq!(ex("x if c else y or z"), "(ifexp c x (or y z))");
    assert_eq!(ex("lambda: x if c else y"), "(lambda () (ifexp c x y))");
}

#[test]
fn chained_and_keyword_comparisons() {
    assert_eq!(ex("a < b <= c"), "(cmp a < b <= c)");
    assert_eq!(ex("a not in b"), "(cmp a not in b)");
    assert_eq!(ex("a is not None"), "(cmp a is not None)");
    assert_eq!(ex("a is b == c"), "(cmp a is b == c)");
}

#[test]
fn primaries_and_slices() {
    assert_eq!(ex("a.b(c)[d].e"), "(. (index (call (. a b) c) d) e)");
    assert_eq!(ex("xs[1:2:3]"), "(slice xs 1 2 3)");
    assert_eq!(ex("xs[:]"), "(slice xs _ _ _)");
    assert_eq!(ex("xs[::-1]"), "(slice xs _ _ (- 1))");
    assert_eq!(ex("xs[i:]"), "(slice xs i _ _)");
    assert_eq!(ex("grid[i, j]"), "(index grid (tuple i j))");
    assert_eq!(ex("f(a, *rest, k=1, **kw)"), "(call f a *rest k=1 **kw)");
    assert_eq!(ex("f()"), "(call f)");
}

#[test]
fn displays_and_comprehensions() {
    assert_eq!(ex("()"), "(tuple )");
    assert_eq!(ex("(1,)"), "(tuple 1)");
    assert_eq!(ex("(1)"), "1");
    assert_eq!(ex("[1, *xs, 2,]"), "[1 (* xs) 2]");
    assert_eq!(ex("{}"), "(dict )");
    assert_eq!(ex("{1, 2}"), "(set 1 2)");
    assert_eq!(ex("{'a': 1, 'b': 2}"), "(dict \"a\":1 \"b\":2)");
    assert_eq!(
        ex("[x for x in xs if x for y in x]"),
        "(listcomp x for x in xs if x for y in x)"
    );
    assert_eq!(
        ex("{k: v for k, v in d}"),
        "(dictcomp k:v for (tuple k v) in d)"
    );
    assert_eq!(ex("{x for x in xs}"), "(setcomp x for x in xs)");
    assert_eq!(ex("(x for x in xs)"), "(genexp x for x in xs)");
    assert_eq!(
        ex("sum(x * x for x in xs)"),
        "(call sum (genexp (* x x) for x in xs))"
    );
}

#[test]
fn literals() {
    assert_eq!(ex("1_000"), "1000");
    assert_eq!(ex("0xff"), "255");
    assert_eq!(ex(".5"), "0.5");
    assert_eq!(ex("1_0.5"), "10.5");
    assert_eq!(ex("1e10"), "10000000000.0");
    assert_eq!(ex("-9223372036854775808"), "-9223372036854775808");
    assert_eq!(ex("9223372036854775807"), "9223372036854775807");
    assert_eq!(ex("'a' \"b\""), "\"ab\"");
    assert_eq!(ex(r#"'\x41\u00e9\n'"#), "\"Aé\\n\"");
    assert_eq!(ex(r#"r'\n'"#), "\"\\\\n\"");
    assert_eq!(ex("'''a\nb'''"), "\"a\\nb\"");
    // Bytes: escapes name single bytes, `\u` is not an escape, adjacent literals join.
    assert_eq!(ex("b'a\\xff\\n' rb'\\x'"), "(bytes [97, 255, 10, 92, 120])");
    assert_eq!(ex("b'\\u0041'"), "(bytes [92, 117, 48, 48, 52, 49])");
    assert_eq!(ex("True, False, None"), "(tuple True False None)");
}

#[test]
fn fstrings() {
    assert_eq!(ex("f'{x}'"), "(f {x})");
    assert_eq!(ex("f'a{x!r:>{w}}b'"), "(f \"a\" {x !r :\">\" {w}} \"b\")");
    assert_eq!(ex("f'{{x}}'"), "(f \"{x}\")");
    assert_eq!(ex("f'{x=}'"), "(f {x dbg=\"x=\" !r})");
    assert_eq!(ex("f'{x = :.2f}'"), "(f {x dbg=\"x = \" :\".2f\"})");
    assert_eq!(ex("f'{a[1] + f(b)}'"), "(f {(+ (index a 1) (call f b))})");
    assert_eq!(ex("'a' f'{b}' 'c'"), "(f \"a\" {b} \"c\")");
    assert_eq!(ex("f'{n:,}'"), "(f {n :\",\"})");
}

#[test]
fn fstring_field_spans_point_into_the_file() {
    let src = "print(f'ab{value}')";
    let p = parse_ok(src);
    let kora_syntax::ast::StmtKind::Expr { expr, .. } = &p.module.stmts[0].kind else {
        panic!("expected an expression statement");
    };
    let kora_syntax::ast::ExprKind::Call { args, .. } = &expr.kind else {
        panic!("expected a call");
    };
    let kora_syntax::ast::ArgKind::Positional(f) = &args[0].kind else {
        panic!("expected a positional argument");
    };
    let kora_syntax::ast::ExprKind::FString(parts) = &f.kind else {
        panic!("expected an f-string");
    };
    let kora_syntax::ast::FStringPart::Expr { expr: field, .. } = &parts[1] else {
        panic!("expected a field");
    };
    assert_eq!(&src[field.span.range()], "value");
}

#[test]
fn statements() {
    assert_eq!(sexp("a = b = 1"), "(= [a b] 1)");
    assert_eq!(sexp("a, b = b, a"), "(= [(tuple a b)] (tuple b a))");
    assert_eq!(sexp("[a, *b] = xs"), "(= [[a (* b)]] xs)");
    assert_eq!(sexp("x.y[0] = 1"), "(= [(index (. x y) 0)] 1)");
    assert_eq!(sexp("n: int"), "(: n int _)");
    assert_eq!(
        sexp("n: dict[str, list[int]] = {}"),
        "(: n dict[str list[int]] (dict ))"
    );
    assert_eq!(sexp("x //= 2"), "(//= x 2)");
    assert_eq!(sexp("x >>= 1"), "(>>= x 1)");
    assert_eq!(sexp("return"), "(return _)");
    assert_eq!(sexp("return a, b"), "(return (tuple a b))");
    assert_eq!(sexp("a = 1; b = 2;"), "(= [a] 1)\n(= [b] 2)");
    assert_eq!(sexp("assert x, 'why'"), "(assert x \"why\")");
    assert_eq!(sexp("global a, b"), "(global a b)");
    assert_eq!(sexp("if a: b = 1"), "(if a [(= [b] 1)])");
    assert_eq!(
        sexp("if a:\n  pass\nelif b:\n  pass\nelse:\n  pass"),
        "(if a [pass] b [pass] else [pass])"
    );
    assert_eq!(sexp("while x:\n  break"), "(while x [(break _)])");
    assert_eq!(
        sexp("for i, x in enumerate(xs):\n  continue"),
        "(for (tuple i x) (call enumerate xs) [continue])"
    );
    assert_eq!(sexp("for x in 1, 2:\n  pass"), "(for x (tuple 1 2) [pass])");
    assert_eq!(
        sexp("def f(a: int, b: str = 'x', *rest: int) -> T:\n  pass"),
        "(def f (a:int b:str=\"x\" *rest:int) T [pass])"
    );
}

#[test]
fn docstrings_are_kept_in_the_body() {
    let p = parse_ok("def f() -> int:\n    \"\"\"Doc.\"\"\"\n    return 1\n");
    let kora_syntax::ast::StmtKind::Def(f) = &p.module.stmts[0].kind else {
        panic!("expected a def");
    };
    assert_eq!(f.doc.as_deref(), Some("Doc."));
    assert_eq!(f.body.len(), 2);
}

#[test]
fn python_imports_are_kept_for_the_checker() {
    assert_eq!(sexp("import json"), "(import json)");
    assert_eq!(
        sexp("import os.path as p, sys"),
        "(import os.path)\n(import sys)"
    );
    assert_eq!(sexp("from a.b import c, d"), "(from a.b import c d)");
    assert_eq!(sexp("from . import x"), "(from . import x)");
    assert_eq!(
        sexp("from typing import (Callable, Optional as Opt,)"),
        "(from typing import Callable Optional)"
    );
    assert_eq!(sexp("from os import *"), "(from os import *)");
    assert_eq!(
        sexp("from __future__ import annotations"),
        "(from __future__ import annotations)"
    );
    // A broken name list still yields the statement, so the checker can name the Kora form.
    assert_eq!(sexp("from x import 1 2"), "(import x)");
}

#[test]
fn big_int_literals_keep_their_digits() {
    assert_eq!(ex("9223372036854775808"), "9223372036854775808");
    assert_eq!(
        ex("1_000_000_000_000_000_000_000"),
        "1000000000000000000000"
    );
    assert_eq!(ex("0xFFFF_FFFF_FFFF_FFFF_FF"), "0xffffffffffffffffff");
    assert_eq!(ex("-99999999999999999999"), "(- 99999999999999999999)");
}

#[test]
fn sequence_patterns_take_a_star() {
    assert_eq!(
        sexp("match xs:\n    case [a, *rest]:\n        pass"),
        "(match xs (case (seq a *rest) [pass]))"
    );
    assert_eq!(
        sexp("match xs:\n    case (*_, last):\n        pass"),
        "(match xs (case (seq *_ last) [pass]))"
    );
    assert_eq!(
        sexp("match n:\n    case -12345678901234567890:\n        pass"),
        "(match n (case (- 12345678901234567890) [pass]))"
    );
}

#[test]
fn layout_details() {
    assert_eq!(sexp(""), "");
    assert_eq!(sexp("# only a comment\n\n   \n"), "");
    assert_eq!(sexp("x = [\n  1,\n    2,\n]\n"), "(= [x] [1 2])");
    assert_eq!(sexp("x = 1 + \\\n    2\n"), "(= [x] (+ 1 2))");
    assert_eq!(sexp("if a:\n\n    # c\n    b\n"), "(if a [b])");
    assert_eq!(sexp("if a:\r\n    b\r\n"), "(if a [b])");
    assert_eq!(sexp("if a:\n\tb\n"), "(if a [b])");
    assert_eq!(sexp("x = 1"), "(= [x] 1)");
}

#[test]
fn soft_keywords_remain_names() {
    assert_eq!(sexp("type(x)"), "(call type x)");
    assert_eq!(
        sexp("match = re.match(p, s)"),
        "(= [match] (call (. re match) p s))"
    );
    assert_eq!(sexp("match(x)"), "(call match x)");
    assert_eq!(sexp("budget = 3"), "(= [budget] 3)");
    assert_eq!(sexp("test = 'a'"), "(= [test] \"a\")");
    assert_eq!(
        sexp("case, on, first, stream, isolated, context, mock = t"),
        "(= [(tuple case on first stream isolated context mock)] t)"
    );
}

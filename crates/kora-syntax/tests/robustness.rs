//! Property tests: random token soups and mutated programs never panic, never hang, and report in-bounds spans.

use kora_syntax::ast::Block;
use kora_syntax::parse;
use kora_syntax::visit::children::each_stmt;
use proptest::prelude::*;
use std::time::{Duration, Instant};

const SEED_PROGRAM: &str = "\
use json
type Expense:
    amount: float
    note: str = \"\"
def total(xs: list[Expense], *rest: int) -> float:
    s = 0.0
    for i, e in enumerate(xs):
        if e.amount > 0 and not e.note:
            s += e.amount ** 2
        elif e.note in {\"a\", \"b\"}:
            continue
        else:
            s -= [x for x in rest if x % 2][0]
    return s
r: Expense = analyze(data, f\"extract {len(data):>5} items\") else (why, kind):
    print(why)
x = analyze(q, \"p\") on token(piece):
    print(piece)
match r:
    case Ok(Expense(amount=a)) | Failed(a) if a:
        pass
    case _:
        pass
with budget(max_tokens=100):
    parallel for t in xs first:
        break t
test \"sum\":
    with mock analyze -> Ok(Expense(amount=1.0)):
        assert total([r]) == 1.0, \"one\"
";

const VOCAB: &[&str] = &[
    "def",
    "return",
    "if",
    "elif",
    "else",
    "while",
    "for",
    "in",
    "not",
    "and",
    "or",
    "is",
    "break",
    "continue",
    "pass",
    "True",
    "False",
    "None",
    "lambda",
    "use",
    "as",
    "nonlocal",
    "global",
    "assert",
    "with",
    "import",
    "from",
    "tool",
    "agent",
    "analyze",
    "parallel",
    "classified",
    "declassify",
    "ask_human",
    "type",
    "match",
    "case",
    "budget",
    "context",
    "test",
    "mock",
    "first",
    "stream",
    "on",
    "isolated",
    "x",
    "y",
    "_",
    "Ok",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    ";",
    ".",
    "->",
    "=",
    "+",
    "-",
    "*",
    "**",
    "/",
    "//",
    "%",
    "@",
    "&",
    "|",
    "^",
    "~",
    "<<",
    ">>",
    "<",
    ">",
    "<=",
    ">=",
    "==",
    "!=",
    "+=",
    "**=",
    "1",
    "0x1f",
    "1.5",
    "1e9",
    "99999999999999999999",
    "'s'",
    "\"t\"",
    "'''u\n'''",
    "f'{x}'",
    "f'{x!r:>{y}}'",
    "f'{'",
    "r'\\d'",
    "'open",
    "\n",
    "\n    ",
    "\n\t",
    "\n        ",
    "\\\n",
    "#c",
    "$",
    "é",
    "\u{00a0}",
    "\"\"\"",
    "f\"{x=}\"",
    "*",
    "**",
    "f'{x!",
    "f'{x!\u{00a0}}'",
    "f'{x:{y:{z}}}'",
    "f'}'",
    "'\\x4'",
    "'\\N{x}'",
    "\r\n",
    "0b",
    "1__2",
];

fn in_bounds(src: &str, s: kora_syntax::Span) -> bool {
    (s.start as usize) <= src.len()
        && (s.end as usize) <= src.len()
        && s.start <= s.end
        && src.is_char_boundary(s.start as usize)
        && src.is_char_boundary(s.end as usize)
}

/// Every statement, nested blocks included, has a span inside the source.
fn walk(src: &str, b: &Block) {
    each_stmt(b, &mut |s| {
        assert!(
            in_bounds(src, s.span),
            "statement span {:?} out of bounds",
            s.span
        )
    });
}

fn assert_sane(src: &str) {
    let started = Instant::now();
    let p = parse(src);
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(2),
        "parse took {took:?} for {src:?}"
    );
    for d in &p.diagnostics {
        for l in &d.labels {
            assert!(
                in_bounds(src, l.span),
                "diagnostic span {:?} bad in {src:?}: {d:?}",
                l.span
            );
        }
        assert!(!d.message.is_empty());
    }
    walk(src, &p.module.stmts);
    let _ = kora_syntax::ops::number_calls(&p.module);
}

fn soup() -> impl Strategy<Value = String> {
    prop::collection::vec((prop::sample::select(VOCAB), prop::bool::ANY), 0..60).prop_map(|toks| {
        let mut s = String::new();
        for (t, space) in toks {
            s.push_str(t);
            if space {
                s.push(' ');
            }
        }
        s
    })
}

#[derive(Debug, Clone)]
enum Edit {
    Delete(usize, usize),
    Insert(usize, &'static str),
    DupLine(usize),
    SwapLines(usize, usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 1usize..12).prop_map(|(a, n)| Edit::Delete(a, n)),
        (any::<usize>(), prop::sample::select(VOCAB)).prop_map(|(a, t)| Edit::Insert(a, t)),
        any::<usize>().prop_map(Edit::DupLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines(a, b)),
    ]
}

fn boundary(s: &str, i: usize) -> usize {
    let mut i = i % (s.len() + 1);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(src: &str, edits: &[Edit]) -> String {
    let mut s = src.to_string();
    for e in edits {
        match e {
            Edit::Delete(a, n) => {
                let a = boundary(&s, *a);
                let b = boundary(&s, (a + n).min(s.len()));
                if a < b {
                    s.replace_range(a..b, "");
                }
            }
            Edit::Insert(a, t) => {
                let a = boundary(&s, *a);
                s.insert_str(a, t);
            }
            Edit::DupLine(i) => {
                let mut lines: Vec<&str> = s.lines().collect();
                if !lines.is_empty() {
                    let i = i % lines.len();
                    lines.insert(i, lines[i]);
                }
                s = lines.join("\n");
            }
            Edit::SwapLines(i, j) => {
                let mut lines: Vec<&str> = s.lines().collect();
                if !lines.is_empty() {
                    let n = lines.len();
                    lines.swap(i % n, j % n);
                }
                s = lines.join("\n");
            }
        }
    }
    s
}

#[test]
fn the_seed_program_is_valid() {
    let p = parse(SEED_PROGRAM);
    assert!(p.diagnostics.is_empty(), "{:#?}", p.diagnostics);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn token_soup_never_panics(src in soup()) {
        assert_sane(&src);
    }

    #[test]
    fn mutated_programs_never_panic(edits in prop::collection::vec(edit(), 1..6)) {
        assert_sane(&apply(SEED_PROGRAM, &edits));
    }

    #[test]
    fn arbitrary_text_never_panics(src in "\\PC{0,80}") {
        assert_sane(&src);
    }
}

#[test]
fn deep_nesting_is_refused_not_crashed() {
    assert_sane(&"(".repeat(5000));
    assert_sane(&format!("x = {}1{}", "(".repeat(300), ")".repeat(300)));
    assert_sane(&format!("x = {}1", "-".repeat(2000)));
    // Chains deep enough to overflow any recursive walk are refused, not crashed on:
    // 50 000 repetitions exceed the token limit of a statement, 5 000 the depth limit.
    for n in [50_000, 5_000] {
        for src in [
            format!("x = y{}\n", ".a".repeat(n)),
            format!("x = {}y\n", "-".repeat(n)),
            format!("x = {}y\n", "a + ".repeat(n)),
            format!("if x:\n    f([{}y])\n", "a if b else ".repeat(n / 2)),
            format!("x = f'{{{}y}}'\n", "not ".repeat(n / 2)),
        ] {
            let p = parse(&src);
            assert!(
                p.diagnostics.iter().any(|d| d.code == "E0028"),
                "{:?}",
                &src[..40]
            );
            assert_sane(&src);
        }
    }
    assert_eq!(parse("x = f'{a:{b:{c}}}'\n").diagnostics[0].code, "E0008");
    let mut deep = String::new();
    for i in 0..150 {
        deep.push_str(&"    ".repeat(i));
        deep.push_str("if x:\n");
    }
    deep.push_str(&"    ".repeat(150));
    deep.push_str("pass\n");
    assert_sane(&deep);
    assert!(parse(&deep).diagnostics.iter().any(|d| d.code == "E0028"));
}

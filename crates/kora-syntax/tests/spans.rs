//! Spans: every statement's span is exactly its source text, and nested spans nest.

mod common;
use kora_syntax::ast::Stmt;
use kora_syntax::parse;
use kora_syntax::visit::children::child_blocks;

const PROGRAM: &str = "\
use json
# comment
type Expense:
    amount: float
    note: str = \"\"

def total(xs: list[Expense]) -> float:
    s = 0.0   # trailing comment
    for e in xs:
        s += e.amount
    return s

x = analyze(q, \"p\") on token(piece):
    print(piece)
y = analyze(q, \"p\")
    on token(p):
        pass
e: Expense = analyze(d, \"x\") else:
    return None
if a: b = 1; c = 2
match r:
    case Ok(v):
        print(v)
values = [
    1,
    2,
]
";

fn check(src: &str, s: &Stmt, out: &mut Vec<String>) {
    let text = &src[s.span.range()];
    assert_eq!(
        text,
        text.trim(),
        "statement span has surrounding whitespace: {text:?}"
    );
    out.push(text.to_string());
    for b in child_blocks(s) {
        for c in b {
            assert!(
                s.span.start <= c.span.start && c.span.end <= s.span.end,
                "child escapes parent"
            );
            check(src, c, out);
        }
    }
}

#[test]
fn statement_spans_round_trip() {
    let p = common::parse_ok(PROGRAM);
    let top: Vec<&str> = p
        .module
        .stmts
        .iter()
        .map(|s| &PROGRAM[s.span.range()])
        .collect();
    assert_eq!(
        top,
        vec![
            "use json",
            "type Expense:\n    amount: float\n    note: str = \"\"",
            "def total(xs: list[Expense]) -> float:\n    s = 0.0   # trailing comment\n    for e in xs:\n        s += e.amount\n    return s",
            "x = analyze(q, \"p\") on token(piece):\n    print(piece)",
            "y = analyze(q, \"p\")\n    on token(p):\n        pass",
            "e: Expense = analyze(d, \"x\") else:\n    return None",
            "if a: b = 1; c = 2",
            "match r:\n    case Ok(v):\n        print(v)",
            "values = [\n    1,\n    2,\n]",
        ]
    );
    let mut all = Vec::new();
    for s in &p.module.stmts {
        check(PROGRAM, s, &mut all);
    }
    for want in [
        "s = 0.0",
        "s += e.amount",
        "return s",
        "print(piece)",
        "pass",
        "return None",
        "b = 1",
        "c = 2",
        "print(v)",
    ] {
        assert!(all.iter().any(|t| t == want), "missing {want:?} in {all:?}");
    }
}

#[test]
fn error_statements_span_their_line() {
    let src = "x = 1\ny = = 2\nz = 3\n";
    let p = parse(src);
    let texts: Vec<&str> = p
        .module
        .stmts
        .iter()
        .map(|s| &src[s.span.range()])
        .collect();
    assert_eq!(texts, vec!["x = 1", "y = = 2", "z = 3"]);
}

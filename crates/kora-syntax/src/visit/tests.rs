//! The visitor reaches every kind of node, in the documented order, and its shared and mutable walks agree.

use super::children::{child_blocks, each_stmt, stmt_exprs, stmt_parts_mut, sub_exprs};
use super::mutable::{self, VisitorMut};
use super::*;
use crate::ast::*;
use crate::span::Span;
use std::collections::BTreeSet;

/// A program that writes every statement, expression, pattern and type form.
/// A new syntax form belongs here and in the name tables below.
const EVERY_FORM: &str = r#"use json
use "./lib.ko" as lib
use python statistics as stats
import os
type Priority = "low" | "high" | None
type Point:
    x: int = 0
    tags: list[str]
count = 0
def outer(a: int, *rest: int, b: dict[str, int] = {}) -> int:
    global count
    n = 1
    def inner() -> int:
        nonlocal n
        n += 1
        return n
    while n < 3 and not False:
        n = inner()
        if n == 2:
            continue
        elif n > 5:
            break
        else:
            pass
    return -n
agent pick(q: str) -> str: model("vision")
    return q
tool look(q: str) -> str:
    return q
for i in range(3):
    print(i)
results = parallel for t in [1, 2]:
    break t
r: str = analyze("x", "y") stream else (why, kind):
    print(why)
s = analyze("x", "y")
    on token(piece):
        print(piece)
ask_human("who?")
print(f"{s!r:>{count}}", *[1], **{"k": 2}, sep="")
xs = [1, 2.5, "s", True, None, (1,), {1}, {"a": 1}]
ys = [y * 2 for y in xs if y]
zs = {k: v for k, v in {}.items()}
gen = (c for c in "ab")
st = {c for c in "ab"}
f = lambda a, b=1: a if b else a[1:2:1].up
cmp = 1 < 2 <= 3
lst = [*xs][0]
secret = classified("k")
match xs:
    case [1, _] | (2, _):
        pass
    case Point(x, tags=t) as p if p:
        pass
    case "a" | None:
        pass
    case other:
        pass
assert cmp, "msg"
del xs[0], d[k]
budget(max_tokens=10):
    pass
with context(max_input_tokens=4000):
    pass
with model("vision"):
    pass
declassify secret for gpt:
    pass
test "t":
    with mock analyze -> Ok("m"):
        pass
"#;

fn stmt_name(k: &StmtKind) -> &'static str {
    match k {
        StmtKind::Expr { .. } => "Expr",
        StmtKind::Assign { .. } => "Assign",
        StmtKind::AnnAssign { .. } => "AnnAssign",
        StmtKind::AugAssign { .. } => "AugAssign",
        StmtKind::If { .. } => "If",
        StmtKind::While { .. } => "While",
        StmtKind::For { .. } => "For",
        StmtKind::Break(_) => "Break",
        StmtKind::Continue => "Continue",
        StmtKind::Pass => "Pass",
        StmtKind::Return(_) => "Return",
        StmtKind::Def(_) => "Def",
        StmtKind::Record(_) => "Record",
        StmtKind::TypeAlias { .. } => "TypeAlias",
        StmtKind::Match { .. } => "Match",
        StmtKind::Use(_) => "Use",
        StmtKind::Nonlocal(_) => "Nonlocal",
        StmtKind::Global(_) => "Global",
        StmtKind::Assert { .. } => "Assert",
        StmtKind::Del(_) => "Del",
        StmtKind::Budget { .. } => "Budget",
        StmtKind::Context { .. } => "Context",
        StmtKind::ModelBlock { .. } => "ModelBlock",
        StmtKind::Mock { .. } => "Mock",
        StmtKind::Declassify { .. } => "Declassify",
        StmtKind::Test { .. } => "Test",
        StmtKind::PythonImport { .. } => "PythonImport",
        StmtKind::Error => "StmtError",
    }
}

fn expr_name(k: &ExprKind) -> &'static str {
    match k {
        ExprKind::Int(_) => "Int",
        ExprKind::BigInt(_) => "BigInt",
        ExprKind::Float(_) => "Float",
        ExprKind::Str(_) => "Str",
        ExprKind::Bytes(_) => "Bytes",
        ExprKind::FString(_) => "FString",
        ExprKind::Bool(_) => "Bool",
        ExprKind::None => "None",
        ExprKind::Name(_) => "Name",
        ExprKind::List(_) => "List",
        ExprKind::Tuple(_) => "Tuple",
        ExprKind::Set(_) => "Set",
        ExprKind::Dict(_) => "Dict",
        ExprKind::Comp { .. } => "Comp",
        ExprKind::Unary(..) => "Unary",
        ExprKind::Binary(..) => "Binary",
        ExprKind::BoolOp(..) => "BoolOp",
        ExprKind::Compare(..) => "Compare",
        ExprKind::Call { .. } => "Call",
        ExprKind::Attr(..) => "Attr",
        ExprKind::Index(..) => "Index",
        ExprKind::Slice { .. } => "Slice",
        ExprKind::Lambda { .. } => "Lambda",
        ExprKind::IfExp { .. } => "IfExp",
        ExprKind::Analyze { .. } => "Analyze",
        ExprKind::AskHuman(_) => "AskHuman",
        ExprKind::Classified(_) => "Classified",
        ExprKind::Starred(_) => "Starred",
        ExprKind::Error => "ExprError",
    }
}

fn pattern_name(k: &PatternKind) -> &'static str {
    match k {
        PatternKind::Wildcard => "Wildcard",
        PatternKind::Capture(_) => "Capture",
        PatternKind::Literal(_) => "Literal",
        PatternKind::Constructor { .. } => "Constructor",
        PatternKind::Sequence(_) => "Sequence",
        PatternKind::Star(_) => "Star",
        PatternKind::Or(_) => "Or",
        PatternKind::As(..) => "As",
        PatternKind::Error => "PatternError",
    }
}

fn type_name(k: &TypeExprKind) -> &'static str {
    match k {
        TypeExprKind::Named { .. } => "TyNamed",
        TypeExprKind::Literal(_) => "TyLiteral",
        TypeExprKind::None => "TyNone",
        TypeExprKind::Union(_) => "TyUnion",
        TypeExprKind::Error => "TyError",
    }
}

const STMTS: &[&str] = &[
    "Expr",
    "Assign",
    "AnnAssign",
    "AugAssign",
    "If",
    "While",
    "For",
    "Break",
    "Continue",
    "Pass",
    "Return",
    "Def",
    "Record",
    "TypeAlias",
    "Match",
    "Use",
    "Nonlocal",
    "Global",
    "Assert",
    "Del",
    "Budget",
    "Context",
    "ModelBlock",
    "Mock",
    "Declassify",
    "Test",
    "PythonImport",
];
const EXPRS: &[&str] = &[
    "Int",
    "Float",
    "Str",
    "FString",
    "Bool",
    "None",
    "Name",
    "List",
    "Tuple",
    "Set",
    "Dict",
    "Comp",
    "Unary",
    "Binary",
    "BoolOp",
    "Compare",
    "Call",
    "Attr",
    "Index",
    "Slice",
    "Lambda",
    "IfExp",
    "Analyze",
    "AskHuman",
    "Classified",
    "Starred",
];
const PATTERNS: &[&str] = &[
    "Wildcard",
    "Capture",
    "Literal",
    "Constructor",
    "Sequence",
    "Or",
    "As",
];
const TYPES: &[&str] = &["TyNamed", "TyLiteral", "TyNone", "TyUnion"];
/// The nodes that are not a kind of statement, expression, pattern or type.
const PARTS: &[&str] = &[
    "block",
    "func_def",
    "param",
    "arg",
    "handler",
    "else",
    "match_arm",
    "record",
    "field",
    "comp_clause",
    "fstring_part",
];

/// Every node the walk reaches, by kind, in order.
#[derive(Default)]
struct Seen(Vec<&'static str>);

impl<'a> Visitor<'a> for Seen {
    fn visit_block(&mut self, b: &'a [Stmt]) {
        self.0.push("block");
        walk_block(self, b)
    }
    fn visit_stmt(&mut self, s: &'a Stmt) {
        self.0.push(stmt_name(&s.kind));
        walk_stmt(self, s)
    }
    fn visit_expr(&mut self, e: &'a Expr) {
        self.0.push(expr_name(&e.kind));
        walk_expr(self, e)
    }
    fn visit_pattern(&mut self, p: &'a Pattern) {
        self.0.push(pattern_name(&p.kind));
        walk_pattern(self, p)
    }
    fn visit_type_expr(&mut self, t: &'a TypeExpr) {
        self.0.push(type_name(&t.kind));
        walk_type_expr(self, t)
    }
    fn visit_func_def(&mut self, f: &'a FuncDef) {
        self.0.push("func_def");
        walk_func_def(self, f)
    }
    fn visit_param(&mut self, p: &'a Param) {
        self.0.push("param");
        walk_param(self, p)
    }
    fn visit_arg(&mut self, a: &'a Arg) {
        self.0.push("arg");
        walk_arg(self, a)
    }
    fn visit_handler(&mut self, h: &'a Handler) {
        self.0.push("handler");
        walk_handler(self, h)
    }
    fn visit_else(&mut self, e: &'a ElseClause) {
        self.0.push("else");
        walk_else(self, e)
    }
    fn visit_match_arm(&mut self, a: &'a MatchArm) {
        self.0.push("match_arm");
        walk_match_arm(self, a)
    }
    fn visit_record(&mut self, r: &'a RecordDecl) {
        self.0.push("record");
        walk_record(self, r)
    }
    fn visit_field(&mut self, f: &'a FieldDecl) {
        self.0.push("field");
        walk_field(self, f)
    }
    fn visit_comp_clause(&mut self, c: &'a CompClause) {
        self.0.push("comp_clause");
        walk_comp_clause(self, c)
    }
    fn visit_fstring_part(&mut self, p: &'a FStringPart) {
        self.0.push("fstring_part");
        walk_fstring_part(self, p)
    }
}

/// The same record through the mutable walk (statements and expressions only).
#[derive(Default)]
struct SeenMut(Vec<&'static str>);

impl<'a> VisitorMut<'a> for SeenMut {
    fn visit_stmt(&mut self, s: &'a mut Stmt) {
        self.0.push(stmt_name(&s.kind));
        mutable::walk_stmt(self, s)
    }
    fn visit_expr(&mut self, e: &'a mut Expr) {
        self.0.push(expr_name(&e.kind));
        mutable::walk_expr(self, e)
    }
}

fn parse_clean(src: &str) -> Module {
    let p = crate::parse(src);
    assert!(p.diagnostics.is_empty(), "{:?}", p.diagnostics);
    p.module
}

fn seen(m: &Module) -> Vec<&'static str> {
    let mut v = Seen::default();
    v.visit_block(&m.stmts);
    v.0
}

#[test]
fn reaches_every_kind_of_node() {
    let m = parse_clean(EVERY_FORM);
    let got: BTreeSet<&str> = seen(&m).into_iter().collect();
    for list in [STMTS, EXPRS, PATTERNS, TYPES, PARTS] {
        let missing: Vec<&&str> = list.iter().filter(|k| !got.contains(*k)).collect();
        assert!(missing.is_empty(), "never visited: {missing:?}");
    }
    let known: BTreeSet<&str> = [STMTS, EXPRS, PATTERNS, TYPES, PARTS]
        .concat()
        .into_iter()
        .collect();
    let unknown: Vec<&&str> = got.iter().filter(|k| !known.contains(*k)).collect();
    assert!(
        unknown.is_empty(),
        "visited kinds missing from the tables: {unknown:?}"
    );
}

#[test]
fn reaches_error_nodes() {
    let sp = Span::new(0, 1);
    let err_expr = || Expr::new(ExprKind::Error, sp);
    let m = Module {
        stmts: vec![
            Stmt::new(StmtKind::Error, sp),
            Stmt::new(
                StmtKind::Match {
                    subject: err_expr(),
                    arms: vec![MatchArm {
                        pattern: Pattern {
                            kind: PatternKind::Error,
                            span: sp,
                        },
                        guard: None,
                        body: vec![],
                        span: sp,
                    }],
                },
                sp,
            ),
            Stmt::new(
                StmtKind::TypeAlias {
                    name: Ident {
                        name: "T".into(),
                        span: sp,
                    },
                    ty: TypeExpr {
                        kind: TypeExprKind::Error,
                        span: sp,
                    },
                },
                sp,
            ),
        ],
    };
    let got = seen(&m);
    for k in ["StmtError", "ExprError", "PatternError", "TyError"] {
        assert!(got.contains(&k), "{k} not visited: {got:?}");
    }
}

#[test]
fn the_mutable_walk_visits_what_the_shared_one_does_in_the_same_order() {
    let mut m = parse_clean(EVERY_FORM);
    let shared: Vec<&str> = seen(&m)
        .into_iter()
        .filter(|k| STMTS.contains(k) || EXPRS.contains(k))
        .collect();
    let mut v = SeenMut::default();
    v.visit_block(&mut m.stmts);
    assert_eq!(shared, v.0);
}

fn names_in_order(src: &str) -> Vec<String> {
    struct Names(Vec<String>);
    impl<'a> Visitor<'a> for Names {
        fn visit_expr(&mut self, e: &'a Expr) {
            if let ExprKind::Name(n) = &e.kind {
                self.0.push(n.clone());
            }
            walk_expr(self, e)
        }
    }
    let m = parse_clean(src);
    let mut v = Names(Vec::new());
    v.visit_block(&m.stmts);
    v.0
}

#[test]
fn children_come_in_source_order() {
    assert_eq!(
        names_in_order("a(b, k=c)[d:e]\nf = g if h else i\nj = [k for l in m if n]\n"),
        ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"]
    );
}

#[test]
fn a_parallel_loops_target_comes_after_its_body() {
    assert_eq!(
        names_in_order("out = parallel for x in xs:\n    break y\n"),
        ["x", "xs", "y", "out"]
    );
}

#[test]
fn one_level_views_stop_at_the_next_level() {
    let m = parse_clean(
        "def f(a: int = g(1)) -> int:\n    if a:\n        return h(a)\n    return 0\nprint(f\"{x} {y:{w}}\", k=z)\n",
    );
    let def = &m.stmts[0];
    let defaults: Vec<String> = stmt_exprs(def)
        .iter()
        .map(|e| format!("{:?}", e.span))
        .collect();
    assert_eq!(defaults.len(), 1, "only the default belongs to the def");
    let blocks = child_blocks(def);
    assert_eq!(blocks.len(), 1);
    assert_eq!(blocks[0].len(), 2);

    let StmtKind::Expr { expr, .. } = &m.stmts[1].kind else {
        panic!("an expression statement")
    };
    let mut names = Vec::new();
    let mut work = vec![expr];
    while let Some(e) = work.pop() {
        if let ExprKind::Name(n) = &e.kind {
            names.push(n.clone());
        }
        work.extend(sub_exprs(e));
    }
    names.sort();
    assert_eq!(names, ["print", "w", "x", "y", "z"]);

    let mut count = 0;
    each_stmt(&m.stmts, &mut |_| count += 1);
    // def, if, return, return, the print
    assert_eq!(count, 5);
}

#[test]
fn the_mutable_view_can_rewrite_a_statements_expressions() {
    let mut m = parse_clean("x = f(1)\nwhile g():\n    pass\n");
    for s in &mut m.stmts {
        let (exprs, _) = stmt_parts_mut(s);
        for e in exprs {
            e.kind = ExprKind::Error;
        }
    }
    let left: Vec<&str> = seen(&m).into_iter().filter(|k| EXPRS.contains(k)).collect();
    assert!(left.is_empty(), "{left:?}");
}

//! Structural operation ids: every call-like expression numbered within its enclosing function.
//!
//! A durable run journals each effect under an id that must survive edits
//! that do not change the program's structure. A line number would not:
//! adding a comment moves every line below it. So an id is the enclosing
//! function's qualified name plus the call's position among that function's
//! calls, counted in source order (pre-order: a call, then its callee, then
//! its arguments).

use crate::ast::{Arg, ArgKind, Block, Expr, ExprKind, FStringPart, Module, Param, Stmt, StmtKind};
use crate::span::Span;
use std::collections::BTreeMap;

/// Which call this is: `func` is the qualified enclosing function (`"<module>"`,
/// `"outer.inner"`, `"test:NAME"`), `index` its position among that function's calls.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId {
    pub func: String,
    pub index: u32,
}

/// The id of every call-like expression (`Call`, `Analyze`, `AskHuman`), keyed by its span.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OpTable {
    ids: BTreeMap<Span, OpId>,
}

impl OpTable {
    pub fn get(&self, span: Span) -> Option<&OpId> {
        self.ids.get(&span)
    }

    pub fn len(&self) -> usize {
        self.ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// Every (span, id) pair, in source order.
    pub fn iter(&self) -> impl Iterator<Item = (Span, &OpId)> {
        self.ids.iter().map(|(s, id)| (*s, id))
    }
}

pub const MODULE_FUNC: &str = "<module>";

struct Numberer {
    table: OpTable,
    /// The enclosing functions, innermost last, with their next index.
    frames: Vec<(String, u32)>,
}

impl Numberer {
    fn record(&mut self, span: Span) {
        if let Some((func, next)) = self.frames.last_mut() {
            let id = OpId {
                func: func.clone(),
                index: *next,
            };
            *next += 1;
            self.table.ids.insert(span, id);
        }
    }

    fn nested(&self, name: &str) -> String {
        match self.frames.last() {
            Some((outer, _)) if outer != MODULE_FUNC => format!("{outer}.{name}"),
            _ => name.to_string(),
        }
    }

    fn in_frame(&mut self, name: String, body: &Block) {
        self.frames.push((name, 0));
        self.block(body);
        self.frames.pop();
    }

    fn block(&mut self, b: &Block) {
        for s in b {
            self.stmt(s);
        }
    }

    fn opt(&mut self, e: &Option<Expr>) {
        if let Some(e) = e {
            self.expr(e);
        }
    }

    fn args(&mut self, args: &[Arg]) {
        for a in args {
            match &a.kind {
                ArgKind::Positional(e)
                | ArgKind::Keyword(_, e)
                | ArgKind::Star(e)
                | ArgKind::DoubleStar(e) => self.expr(e),
            }
        }
    }

    fn params(&mut self, ps: &[Param]) {
        for p in ps {
            self.opt(&p.default);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Expr { expr, handlers } => {
                self.expr(expr);
                for h in handlers {
                    self.block(&h.body);
                }
            }
            StmtKind::Assign {
                targets,
                value,
                handlers,
            } => {
                for t in targets {
                    self.expr(t);
                }
                self.expr(value);
                for h in handlers {
                    self.block(&h.body);
                }
            }
            StmtKind::AnnAssign {
                value,
                handlers,
                else_,
                ..
            } => {
                self.opt(value);
                for h in handlers {
                    self.block(&h.body);
                }
                if let Some(e) = else_ {
                    self.block(&e.body);
                }
            }
            StmtKind::AugAssign { target, value, .. } => {
                self.expr(target);
                self.expr(value);
            }
            StmtKind::If { branches, orelse } => {
                for (cond, body) in branches {
                    self.expr(cond);
                    self.block(body);
                }
                if let Some(b) = orelse {
                    self.block(b);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.block(body);
            }
            StmtKind::For {
                target,
                iter,
                body,
                into,
                ..
            } => {
                self.expr(target);
                self.expr(iter);
                self.block(body);
                if let Some(i) = into {
                    self.expr(&i.target);
                }
            }
            StmtKind::Break(e) | StmtKind::Return(e) => self.opt(e),
            StmtKind::Def(f) => {
                self.params(&f.params);
                let name = self.nested(&f.name.name);
                self.in_frame(name, &f.body);
            }
            StmtKind::Record(r) => {
                for f in &r.fields {
                    self.opt(&f.default);
                }
            }
            StmtKind::Match { subject, arms } => {
                self.expr(subject);
                for arm in arms {
                    self.opt(&arm.guard);
                    self.block(&arm.body);
                }
            }
            StmtKind::Assert { cond, msg } => {
                self.expr(cond);
                self.opt(msg);
            }
            StmtKind::Budget { args, body }
            | StmtKind::Context { args, body }
            | StmtKind::ModelBlock { args, body } => {
                self.args(args);
                self.block(body);
            }
            StmtKind::Mock { value, body, .. } | StmtKind::Declassify { value, body, .. } => {
                self.expr(value);
                self.block(body);
            }
            StmtKind::Test { name, body } => self.in_frame(format!("test:{name}"), body),
            StmtKind::TypeAlias { .. }
            | StmtKind::Continue
            | StmtKind::Pass
            | StmtKind::Use(_)
            | StmtKind::Nonlocal(_)
            | StmtKind::Global(_)
            | StmtKind::PythonImport { .. }
            | StmtKind::Error => {}
        }
    }

    fn fstring(&mut self, parts: &[FStringPart]) {
        for p in parts {
            if let FStringPart::Expr { expr, spec, .. } = p {
                self.expr(expr);
                self.fstring(spec);
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Call { func, args } => {
                self.record(e.span);
                self.expr(func);
                self.args(args);
            }
            ExprKind::Analyze { args, .. } | ExprKind::AskHuman(args) => {
                self.record(e.span);
                self.args(args);
            }
            ExprKind::FString(parts) => self.fstring(parts),
            ExprKind::List(xs) | ExprKind::Tuple(xs) | ExprKind::Set(xs) => {
                for x in xs {
                    self.expr(x);
                }
            }
            ExprKind::Dict(pairs) => {
                for (k, v) in pairs {
                    self.expr(k);
                    self.expr(v);
                }
            }
            ExprKind::Comp {
                elt,
                value,
                clauses,
                ..
            } => {
                self.expr(elt);
                if let Some(v) = value {
                    self.expr(v);
                }
                for c in clauses {
                    self.expr(&c.target);
                    self.expr(&c.iter);
                    for cond in &c.conds {
                        self.expr(cond);
                    }
                }
            }
            ExprKind::Unary(_, x)
            | ExprKind::Attr(x, _)
            | ExprKind::Classified(x)
            | ExprKind::Starred(x) => self.expr(x),
            ExprKind::Binary(_, a, b) | ExprKind::BoolOp(_, a, b) | ExprKind::Index(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Compare(first, rest) => {
                self.expr(first);
                for (_, x) in rest {
                    self.expr(x);
                }
            }
            ExprKind::Slice {
                value,
                lo,
                hi,
                step,
            } => {
                self.expr(value);
                for part in [lo, hi, step].into_iter().flatten() {
                    self.expr(part);
                }
            }
            ExprKind::Lambda { params, body } => {
                self.params(params);
                self.expr(body);
            }
            ExprKind::IfExp { cond, then, orelse } => {
                self.expr(then);
                self.expr(cond);
                self.expr(orelse);
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Name(_)
            | ExprKind::Error => {}
        }
    }
}

/// Numbers every call-like expression of a module.
pub fn number_calls(module: &Module) -> OpTable {
    let mut n = Numberer {
        table: OpTable::default(),
        frames: vec![(MODULE_FUNC.to_string(), 0)],
    };
    n.block(&module.stmts);
    n.table
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (callee text, id) for every call, in source order.
    fn ids(src: &str) -> Vec<(String, String, u32)> {
        let parsed = crate::parse(src);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        number_calls(&parsed.module)
            .iter()
            .map(|(span, id)| {
                let text = &src[span.range()];
                let callee = text.split('(').next().unwrap_or("").to_string();
                (callee, id.func.clone(), id.index)
            })
            .collect()
    }

    const PROGRAM: &str = "\
x = f(1)
def outer(a: int) -> int:
    y = g(h(a))
    def inner() -> int:
        return k()
    return inner()
test \"adds\":
    assert outer(1) == 2
z = analyze(x, \"summarize\")
";

    #[test]
    fn numbers_per_function_in_preorder() {
        let got = ids(PROGRAM);
        let want = [
            ("f", "<module>", 0),
            ("g", "outer", 0),
            ("h", "outer", 1),
            ("k", "outer.inner", 0),
            ("inner", "outer", 2),
            ("outer", "test:adds", 0),
            ("analyze", "<module>", 1),
        ];
        let want: Vec<(String, String, u32)> = want
            .iter()
            .map(|(c, f, i)| (c.to_string(), f.to_string(), *i))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn comments_and_blank_lines_do_not_change_ids() {
        let edited = PROGRAM
            .replace("def outer", "# a comment\n\ndef outer")
            .replace("    return inner()", "\n    # why\n    return inner()");
        assert_eq!(ids(PROGRAM), ids(&edited));
    }

    #[test]
    fn a_new_call_shifts_only_later_ids_in_its_function() {
        let edited = PROGRAM.replace("    y = g(h(a))", "    log(a)\n    y = g(h(a))");
        let before = ids(PROGRAM);
        let after = ids(&edited);
        let find =
            |v: &[(String, String, u32)], c: &str| v.iter().find(|(n, _, _)| n == c).cloned();
        assert_eq!(find(&after, "log"), Some(("log".into(), "outer".into(), 0)));
        assert_eq!(find(&after, "g").map(|x| x.2), Some(1));
        assert_eq!(find(&after, "inner").map(|x| x.2), Some(3));
        // Other functions are untouched.
        assert_eq!(find(&before, "k"), find(&after, "k"));
        assert_eq!(find(&before, "analyze"), find(&after, "analyze"));
    }

    #[test]
    fn lambda_bodies_belong_to_the_enclosing_function() {
        let got = ids("def f() -> int:\n    g = lambda x: h(x)\n    return g(1)\n");
        assert_eq!(got[0], ("h".into(), "f".into(), 0));
        assert_eq!(got[1], ("g".into(), "f".into(), 1));
    }
}

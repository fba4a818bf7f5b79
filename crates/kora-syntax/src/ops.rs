//! Structural operation ids: every call-like expression numbered within its enclosing function.
//!
//! A durable run journals each effect under an id that must survive edits
//! that do not change the program's structure. A line number would not:
//! adding a comment moves every line below it. So an id is the enclosing
//! function's qualified name plus the call's position among that function's
//! calls, counted in the order `visit` walks the tree (pre-order, source order:
//! a call, then its callee, then its arguments).

use crate::ast::{Block, Expr, ExprKind, FuncDef, Module, Stmt, StmtKind};
use crate::span::Span;
use crate::visit::{walk_expr, walk_stmt, Visitor};
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
        self.visit_block(body);
        self.frames.pop();
    }
}

impl<'a> Visitor<'a> for Numberer {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        match &s.kind {
            StmtKind::Test { name, body } => self.in_frame(format!("test:{name}"), body),
            _ => walk_stmt(self, s),
        }
    }

    /// Defaults belong to the enclosing function (they run where the `def`
    /// stands), the body to a frame of its own. An agent's `model("name")`
    /// is a name, never evaluated, so it holds no call to count.
    fn visit_func_def(&mut self, f: &'a FuncDef) {
        for p in &f.params {
            self.visit_param(p);
        }
        let name = self.nested(&f.name.name);
        self.in_frame(name, &f.body);
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        if matches!(
            e.kind,
            ExprKind::Call { .. } | ExprKind::Analyze { .. } | ExprKind::AskHuman(_)
        ) {
            self.record(e.span);
        }
        walk_expr(self, e);
    }
}

/// Numbers every call-like expression of a module.
pub fn number_calls(module: &Module) -> OpTable {
    let mut n = Numberer {
        table: OpTable::default(),
        frames: vec![(MODULE_FUNC.to_string(), 0)],
    };
    n.visit_block(&module.stmts);
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

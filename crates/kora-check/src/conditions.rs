//! Lowering conditions: an outcome has no truth value, and `isinstance(x, T)` narrows `x`.
//!
//! `if parse(x):` would be true for an `Err` too, so the failure branch would be silently
//! dead; the checker refuses it and names the two forms that handle a failure. A test
//! `isinstance(x, int)` narrows `x` to `int` in the branch it guards (and in the right side
//! of an `and`), and to what remains of a union in the branches after it, as mypy and
//! pyright do. A narrowing lasts until the branch ends or the name is assigned.

use kora_syntax::ast::{self, ArgKind, BoolOp, ExprKind as AE, UnaryOp};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir::{self, TypeTest};
use crate::lower::Lowerer;
use crate::lower_expr::Lowered;
use crate::lower_pattern::test_type;
use crate::types::Ty;

/// What a narrowing is about: a frame slot or a module slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Place {
    Local(u32),
    Global(u32),
}

/// One type `isinstance` tests for.
#[derive(Clone, Debug, PartialEq)]
enum Tested {
    Builtin(TypeTest),
    Record(hir::TypeId, String),
}

impl Tested {
    fn ty(&self) -> Ty {
        match self {
            Tested::Builtin(t) => test_type(*t),
            Tested::Record(id, name) => Ty::Record(*id, name.clone()),
        }
    }

    /// Whether a value of static type `t` passes the test (`bool` passes `int`, as in Python).
    fn admits(&self, t: &Ty) -> bool {
        match (self, t) {
            (Tested::Builtin(TypeTest::Int), Ty::Int | Ty::Bool) => true,
            (Tested::Builtin(TypeTest::Float), Ty::Float) => true,
            (Tested::Builtin(TypeTest::Str), Ty::Str | Ty::Literal(_)) => true,
            (Tested::Builtin(TypeTest::Bool), Ty::Bool) => true,
            (Tested::Builtin(TypeTest::List), Ty::List(_)) => true,
            (Tested::Builtin(TypeTest::Dict), Ty::Dict(..)) => true,
            (Tested::Builtin(TypeTest::Tuple), Ty::Tuple(_) | Ty::TupleOf(_)) => true,
            (Tested::Builtin(TypeTest::Set), Ty::Set(_)) => true,
            (Tested::Record(a, _), Ty::Record(b, _)) => a == b,
            _ => false,
        }
    }
}

/// `isinstance(NAME, T)` or `isinstance(NAME, (T1, T2))`, possibly under `not`.
struct Test<'e> {
    name: &'e str,
    types: Vec<Tested>,
    negated: bool,
}

impl Lowerer<'_> {
    /// Lowers a condition (of `if`, `while`, `assert`, a guard, `not`, `and`/`or`, `x if c
    /// else y`, a comprehension's `if`), refusing an outcome as a truth value.
    pub(crate) fn condition(&mut self, e: &ast::Expr) -> Lowered {
        let lowered = self.expr(e);
        self.refuse_outcome_truth(&lowered.1, e.span);
        lowered
    }

    pub(crate) fn refuse_outcome_truth(&mut self, ty: &Ty, span: Span) {
        if let Ty::Outcome(inner, _) = ty {
            self.err(
                Diagnostic::error(
                    codes::OUTCOME_TRUTH,
                    "an outcome has no truth value",
                    span,
                )
                .with_label(format!(
                    "this is a `Result[{inner}]`: an `Err` would test true too"
                ))
                .with_help(
                    "match it (`case Ok(x):` / `case Err(why):`), or bind its payload and leave on failure: `x: T = ... else:`",
                ),
            );
        }
    }

    /// `if`/`elif`/`else`: each condition narrows its own branch, and every branch after it
    /// sees what the earlier tests ruled out.
    pub(crate) fn if_chain(
        &mut self,
        branches: &[(ast::Expr, ast::Block)],
        orelse: Option<&[ast::Stmt]>,
    ) -> hir::StmtKind {
        let outer = self.fns.last().map_or(0, |f| f.narrowed.len());
        let mut out = Vec::with_capacity(branches.len());
        for (cond, block) in branches {
            let (c, _) = self.condition(cond);
            let test = self.read_test(cond);
            let before = self.f().narrowed.len();
            if let Some(t) = &test {
                self.narrow(t, t.negated);
            }
            let b = self.block(block);
            self.f().narrowed.truncate(before);
            // The branches after this one run only when the test failed.
            if let Some(t) = &test {
                self.narrow(t, !t.negated);
            }
            out.push((c, b));
        }
        let orelse = orelse.map(|b| self.block(b));
        self.f().narrowed.truncate(outer);
        hir::StmtKind::If(out, orelse)
    }

    /// `a and b`: `b` is lowered knowing `a` held.
    pub(crate) fn bool_op(
        &mut self,
        op: BoolOp,
        a: &ast::Expr,
        b: &ast::Expr,
        span: Span,
    ) -> Lowered {
        let (ae, at) = self.condition(a);
        let before = self.f().narrowed.len();
        if op == BoolOp::And {
            if let Some(t) = self.read_test(a) {
                self.narrow(&t, t.negated);
            }
        }
        let (be, bt) = self.expr(b);
        self.f().narrowed.truncate(before);
        self.refuse_outcome_truth(&bt, b.span);
        let ty = if at == bt { at } else { Ty::Any };
        (
            crate::lower_expr::ex(hir::ExprKind::BoolOp(op, Box::new(ae), Box::new(be)), span),
            ty,
        )
    }

    /// The narrowed type of a slot, if an `isinstance` branch is in force.
    pub(crate) fn narrowed(&self, place: Place) -> Option<Ty> {
        let f = self.fns.last()?;
        f.narrowed
            .iter()
            .rev()
            .find(|(p, _)| *p == place)
            .map(|(_, t)| t.clone())
    }

    /// An assignment ends every narrowing of the name it assigns.
    pub(crate) fn forget_narrowing(&mut self, place: Place) {
        if let Some(f) = self.fns.last_mut() {
            if !f.narrowed.is_empty() {
                f.narrowed.retain(|(p, _)| *p != place);
            }
        }
    }

    fn read_test<'e>(&mut self, cond: &'e ast::Expr) -> Option<Test<'e>> {
        match &cond.kind {
            AE::Unary(UnaryOp::Not, inner) => self.read_test(inner).map(|mut t| {
                t.negated = !t.negated;
                t
            }),
            AE::Call { func, args } if matches!(&func.kind, AE::Name(n) if n == "isinstance") => {
                let [a, b] = args.as_slice() else {
                    return None;
                };
                let (ArgKind::Positional(subject), ArgKind::Positional(types)) = (&a.kind, &b.kind)
                else {
                    return None;
                };
                let AE::Name(name) = &subject.kind else {
                    return None;
                };
                let types = self.tested_types(types)?;
                Some(Test {
                    name,
                    types,
                    negated: false,
                })
            }
            _ => None,
        }
    }

    /// The types named by `isinstance`'s second argument, or `None` (and an error) when it
    /// names something that is not a type.
    fn tested_types(&mut self, e: &ast::Expr) -> Option<Vec<Tested>> {
        match &e.kind {
            AE::Name(n) => {
                if let Some(t) = TypeTest::from_name(n) {
                    return Some(vec![Tested::Builtin(t)]);
                }
                if let Some(id) = self.ctx.type_of(self.m, n) {
                    return Some(vec![Tested::Record(id, n.clone())]);
                }
                None
            }
            AE::Tuple(items) => {
                let mut out = Vec::new();
                for i in items {
                    out.extend(self.tested_types(i)?);
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// Checks `isinstance(x, T)`'s second argument where the call is lowered.
    pub(crate) fn check_isinstance(&mut self, args: &[ast::Arg], span: Span) {
        let Some(types) = args.get(1) else {
            return;
        };
        let ArgKind::Positional(t) = &types.kind else {
            return;
        };
        if self.tested_types(t).is_some() {
            return;
        }
        let help = if matches!(t.kind, AE::Binary(ast::BinOp::BitOr, ..)) {
            "write the types as a tuple: `isinstance(x, (int, str))`"
        } else {
            "name a built-in type (`int`, `float`, `str`, `bool`, `list`, `dict`, `tuple`, `set`), a `type` record, or a tuple of them"
        };
        self.err(
            Diagnostic::error(
                codes::NOT_A_TYPE_TEST,
                "`isinstance` needs a type to test for",
                t.span,
            )
            .with_label("not a type Kora can test")
            .with_help(help),
        );
        let _ = span;
    }

    /// Pushes the narrowing a test gives when it held (`passed`) or when it failed.
    fn narrow(&mut self, t: &Test<'_>, failed: bool) {
        let Some((place, current)) = self.place_of(t.name) else {
            return;
        };
        let ty = if failed {
            // What a union has left once the tested types are ruled out.
            match &current {
                Ty::Union(members) => {
                    let left: Vec<Ty> = members
                        .iter()
                        .filter(|m| !t.types.iter().any(|x| x.admits(m)))
                        .cloned()
                        .collect();
                    match left.len() {
                        0 => return,
                        1 => left.into_iter().next().unwrap_or(Ty::Any),
                        _ => Ty::Union(left),
                    }
                }
                _ => return,
            }
        } else {
            let candidates: Vec<Ty> = match &current {
                Ty::Union(members) => members
                    .iter()
                    .filter(|m| t.types.iter().any(|x| x.admits(m)))
                    .cloned()
                    .collect(),
                other if t.types.iter().any(|x| x.admits(other)) => vec![other.clone()],
                _ => Vec::new(),
            };
            match candidates.len() {
                0 if t.types.len() == 1 => t.types[0].ty(),
                0 => return,
                1 => candidates.into_iter().next().unwrap_or(Ty::Any),
                _ => Ty::Union(candidates),
            }
        };
        self.f().narrowed.push((place, ty));
    }

    /// Where a name lives in the current function, and its type now.
    fn place_of(&self, name: &str) -> Option<(Place, Ty)> {
        let f = self.fns.last()?;
        if !f.is_module && !f.global_decl.contains(name) {
            let s = *f.slots.get(name)?;
            let ty = self
                .narrowed(Place::Local(s))
                .unwrap_or_else(|| f.slot_tys[s as usize].clone());
            return Some((Place::Local(s), ty));
        }
        let info = self.info();
        let g = *info.global_ix.get(name)?;
        let ty = self
            .narrowed(Place::Global(g))
            .unwrap_or_else(|| info.global_tys[g as usize].clone());
        Some((Place::Global(g), ty))
    }
}

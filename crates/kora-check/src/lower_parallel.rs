//! Lowering `parallel for`: the branch body, what it reads from the enclosing frame, and what it may not assign.
//!
//! A branch runs in a fresh interpreter on a snapshot, so assigning a variable
//! of the enclosing scope could only ever change the branch's copy: the
//! checker refuses it (E0760) instead of letting it silently do nothing. The
//! slots the body reads are recorded here, so the runtime snapshots those and
//! nothing else (not the list being fanned out, not earlier results).

use rustc_hash::FxHashSet;

use crate::codes;
use crate::hir::{self, Target};
use crate::lower::Lowerer;
use crate::types::Ty;
use kora_syntax::ast::{self, ParallelMode};
use kora_syntax::{Diagnostic, Span};

/// The `parallel for` body being lowered in the current function.
pub(crate) struct Branch {
    /// `loops` of the function inside the body: a `break value` must be at this depth.
    pub loops: u32,
    /// Frame slots bound before the loop: the enclosing variables.
    pub outer: FxHashSet<u32>,
    /// Module slots bound before the loop (a top-level loop's enclosing variables).
    pub outer_globals: FxHashSet<u32>,
    /// Frame slots the body reads.
    pub reads: FxHashSet<u32>,
    /// The branch's answer type, from `results: list[T] = ...` (`Any` otherwise).
    pub answer: Ty,
}

impl Lowerer<'_> {
    pub(crate) fn parallel_for(
        &mut self,
        target: &ast::Expr,
        iter: &ast::Expr,
        body: &[ast::Stmt],
        mode: ParallelMode,
        into: Option<&ast::ParallelInto>,
    ) -> hir::StmtKind {
        let (it, ity) = self.expr(iter);
        let f = self.f();
        let mut outer: FxHashSet<u32> = f.assigned.union(&f.declared).copied().collect();
        let mut outer_globals = f.bound_globals.clone();
        let (t, _) = self.store_target(target, Some(ity.element()));
        // The loop variable belongs to the branch, even when the name was used before.
        let mut own = Vec::new();
        target_slots(&t, &mut own);
        for (global, s) in own {
            if global {
                outer_globals.remove(&s);
            } else {
                outer.remove(&s);
            }
        }
        let declared = into
            .and_then(|i| i.ty.as_ref())
            .map(|ty| self.lower_type(ty));
        let answer = match (&declared, mode) {
            (Some(Ty::List(e)), ParallelMode::Collect) => strip_none(e),
            (Some(t), ParallelMode::First) => strip_none(t),
            _ => Ty::Any,
        };
        let loops = self.f().loops + 1;
        let saved = self.f().branch.replace(Box::new(Branch {
            loops,
            outer,
            outer_globals,
            reads: FxHashSet::default(),
            answer,
        }));
        self.f().loops += 1;
        let b = self.block(body);
        self.f().loops -= 1;
        let branch = std::mem::replace(&mut self.f().branch, saved);
        let mut reads: Vec<u32> = branch
            .map(|b| b.reads.into_iter().collect())
            .unwrap_or_default();
        reads.sort_unstable();
        // A branch nested in a branch reads through the outer branch's snapshot.
        if let Some(outer) = self.f().branch.as_mut() {
            outer.reads.extend(reads.iter().copied());
        }
        let into = into.map(|i| {
            let value_ty = match (&declared, mode) {
                (Some(d), _) => d.clone(),
                (None, ParallelMode::Collect) => Ty::List(Box::new(Ty::Any)),
                (None, ParallelMode::First) => Ty::Any,
            };
            let (t, _) = self.store_target(&i.target, Some(value_ty));
            (t, declared.clone().unwrap_or(Ty::Any))
        });
        hir::StmtKind::ParallelFor(Box::new(hir::ParallelFor {
            target: t,
            iter: it,
            body: b,
            first: mode == ParallelMode::First,
            into,
            reads,
        }))
    }

    /// Refuses assigning an enclosing variable inside a branch (E0760).
    pub(crate) fn check_branch_store(
        &mut self,
        name: &str,
        span: Span,
        slot: Option<u32>,
        global: Option<u32>,
    ) {
        let f = self.fns.last().expect("in a function");
        let Some(b) = f.branch.as_ref() else { return };
        let outer = match (slot, global) {
            (Some(s), _) => b.outer.contains(&s),
            // From inside a `def`, a module variable is always enclosing.
            (None, Some(g)) => !f.is_module || b.outer_globals.contains(&g),
            (None, None) => false,
        };
        if !outer {
            return;
        }
        self.err(
            Diagnostic::error(
                codes::BRANCH_ASSIGNS_OUTER,
                format!("a `parallel for` branch cannot assign `{name}`, a variable of the enclosing scope"),
                span,
            )
            .with_label("each branch runs on its own copy, so this change would be lost")
            .with_help(format!(
                "`return` the value from the branch and read it from the loop's results, or use a new name inside the body instead of `{name}`"
            )),
        );
    }

    /// Whether a `break value` here stops a `parallel for` (it is an error anywhere else).
    pub(crate) fn break_value_allowed(&mut self) -> bool {
        let loops = self.f().loops;
        self.f().branch.as_ref().is_some_and(|b| b.loops == loops)
    }

    /// The type a `return` inside a branch is checked against, when in one.
    pub(crate) fn branch_answer(&mut self) -> Option<Ty> {
        self.f().branch.as_ref().map(|b| b.answer.clone())
    }
}

fn strip_none(t: &Ty) -> Ty {
    match t {
        Ty::Union(ts) => {
            let rest: Vec<Ty> = ts.iter().filter(|t| **t != Ty::None).cloned().collect();
            match rest.len() {
                0 => Ty::Any,
                1 => rest[0].clone(),
                _ => Ty::Union(rest),
            }
        }
        other => other.clone(),
    }
}

/// `(is_global, slot)` of every name a loop target binds.
fn target_slots(t: &Target, out: &mut Vec<(bool, u32)>) {
    match t {
        Target::Local(s) | Target::Cell(s) => out.push((false, *s)),
        Target::Global(g) => out.push((true, *g)),
        Target::Tuple(ts) => ts.iter().for_each(|t| target_slots(t, out)),
        Target::Star(t) => target_slots(t, out),
        Target::Index(..) | Target::Attr(..) | Target::Discard => {}
    }
}

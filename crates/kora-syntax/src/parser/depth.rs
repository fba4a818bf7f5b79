//! The nesting limit for expressions: measured and enforced without recursion.
//!
//! A generated `a + a + ... + a` of a hundred thousand terms parses fine
//! (the grammar folds it iteratively) but yields a tree so deep that any
//! recursive walk over it, including the compiler-generated `Drop`, overflows
//! the stack. CPython refuses such input too. Here a statement holding an
//! expression deeper than `MAX_EXPR_DEPTH` becomes `StmtKind::Error` with a
//! diagnostic, and the deep tree is taken apart iteratively.
//!
//! The visitor is recursive, so it is used here one level at a time: each
//! `walk_expr` only hands over an expression's direct children, which go on a
//! worklist.

use crate::ast::{Expr, ExprKind, Stmt, StmtKind};
use crate::diagnostic::Diagnostic;
use crate::visit::children::{stmt_exprs, stmt_parts_mut, sub_exprs_mut};
use crate::visit::{walk_expr, Visitor};

/// Far beyond any hand-written expression, far below what a recursive pass can survive.
pub const MAX_EXPR_DEPTH: usize = 1000;

/// Puts an expression's direct children on the worklist, one level deeper.
struct Deeper<'a, 'w> {
    work: &'w mut Vec<(&'a Expr, usize)>,
    depth: usize,
}

impl<'a> Visitor<'a> for Deeper<'a, '_> {
    fn visit_expr(&mut self, e: &'a Expr) {
        self.work.push((e, self.depth));
    }
}

fn too_deep(e: &Expr) -> bool {
    let mut work = vec![(e, 1usize)];
    while let Some((e, d)) = work.pop() {
        if d > MAX_EXPR_DEPTH {
            return true;
        }
        walk_expr(
            &mut Deeper {
                work: &mut work,
                depth: d + 1,
            },
            e,
        );
    }
    false
}

fn placeholder(x: &mut Expr) -> Expr {
    let span = x.span;
    std::mem::replace(x, Expr::new(ExprKind::Error, span))
}

/// Drops a possibly very deep expression without recursing: each node's
/// children are swapped for leaves before it is dropped.
fn dismantle(e: Expr) {
    let mut work = vec![e];
    while let Some(mut e) = work.pop() {
        work.extend(sub_exprs_mut(&mut e).into_iter().map(placeholder));
    }
}

fn too_deep_diag(span: crate::span::Span) -> Diagnostic {
    Diagnostic::error("E0028", "expression nested too deeply", span)
        .with_label(format!("this nests more than {MAX_EXPR_DEPTH} levels"))
        .with_help("split the expression into named intermediate values")
}

/// An expression within the limit, or an error node (reported) in its place.
///
/// For f-string fields, which are parsed on their own and copied into the tree.
pub fn guard(e: Expr, diags: &mut Vec<Diagnostic>) -> Expr {
    if !too_deep(&e) {
        return e;
    }
    let span = e.span;
    diags.push(too_deep_diag(span));
    dismantle(e);
    Expr::new(ExprKind::Error, span)
}

/// Replaces statements whose expressions nest beyond the limit, reporting each.
pub fn limit(block: &mut [Stmt], diags: &mut Vec<Diagnostic>) {
    for s in block.iter_mut() {
        for b in stmt_parts_mut(s).1 {
            limit(b, diags);
        }
        if stmt_exprs(s).into_iter().any(too_deep) {
            diags.push(too_deep_diag(s.span));
            for e in stmt_parts_mut(s).0 {
                dismantle(placeholder(e));
            }
            s.kind = StmtKind::Error;
        }
    }
}

//! One level of the tree at a time, read off the visitor's walk: the blocks and expressions a statement holds directly, the parts of an expression, every statement in pre-order.
//!
//! For passes that carry their own worklist or state from a statement to its
//! blocks (the nesting limit must not recurse; the label-flow check keeps
//! per-function facts), a flat list is simpler than a visitor.

use super::mutable::{self, VisitorMut};
use super::{walk_expr, walk_stmt, Visitor};
use crate::ast::{Expr, Stmt};

/// Collects what one `walk_*` call reaches without descending further.
#[derive(Default)]
struct Level<'a> {
    exprs: Vec<&'a Expr>,
    blocks: Vec<&'a [Stmt]>,
}

impl<'a> Visitor<'a> for Level<'a> {
    fn visit_expr(&mut self, e: &'a Expr) {
        self.exprs.push(e);
    }
    fn visit_block(&mut self, b: &'a [Stmt]) {
        self.blocks.push(b);
    }
}

#[derive(Default)]
struct LevelMut<'a> {
    exprs: Vec<&'a mut Expr>,
    blocks: Vec<&'a mut [Stmt]>,
}

impl<'a> VisitorMut<'a> for LevelMut<'a> {
    fn visit_expr(&mut self, e: &'a mut Expr) {
        self.exprs.push(e);
    }
    fn visit_block(&mut self, b: &'a mut [Stmt]) {
        self.blocks.push(b);
    }
}

/// The blocks directly inside one statement: bodies, branches, arms, handlers, `else`.
pub fn child_blocks(s: &Stmt) -> Vec<&[Stmt]> {
    let mut l = Level::default();
    walk_stmt(&mut l, s);
    l.blocks
}

/// The expressions a statement holds itself, not those of its nested blocks.
///
/// A `def`'s parameter defaults are evaluated where the `def` stands, so they
/// belong to it; so do a `match` arm's guard and literal patterns.
pub fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    let mut l = Level::default();
    walk_stmt(&mut l, s);
    l.exprs
}

/// The expressions directly inside `e`, in the visitor's order.
pub fn sub_exprs(e: &Expr) -> Vec<&Expr> {
    let mut l = Level::default();
    walk_expr(&mut l, e);
    l.exprs
}

/// `stmt_exprs` and `child_blocks` at once, mutably.
pub fn stmt_parts_mut(s: &mut Stmt) -> (Vec<&mut Expr>, Vec<&mut [Stmt]>) {
    let mut l = LevelMut::default();
    mutable::walk_stmt(&mut l, s);
    (l.exprs, l.blocks)
}

/// `sub_exprs`, mutably.
pub fn sub_exprs_mut(e: &mut Expr) -> Vec<&mut Expr> {
    let mut l = LevelMut::default();
    mutable::walk_expr(&mut l, e);
    l.exprs
}

/// Calls `f` on every statement, nested blocks included, outer before inner.
pub fn each_stmt<'a>(stmts: &'a [Stmt], f: &mut impl FnMut(&'a Stmt)) {
    struct Each<'f, F>(&'f mut F);
    impl<'a, F: FnMut(&'a Stmt)> Visitor<'a> for Each<'_, F> {
        fn visit_stmt(&mut self, s: &'a Stmt) {
            (self.0)(s);
            walk_stmt(self, s);
        }
        // Statements never sit inside expressions, so there is nothing to find there.
        fn visit_expr(&mut self, _: &'a Expr) {}
    }
    Each(f).visit_block(stmts);
}

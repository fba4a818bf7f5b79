//! Moving a parsed tree along the file: every span in a statement shifted by the same amount.
//!
//! `reparse` reuses the statements an edit did not touch; those after it now
//! stand `delta` bytes later (or earlier) in the new text.

use crate::ast::{
    Arg, ArgKind, ElseClause, Expr, ExprKind, FieldDecl, FuncDef, Handler, Ident, MatchArm, Param,
    Pattern, PatternKind, RecordDecl, Stmt, StmtKind, TypeExpr, UseTarget,
};
use crate::span::Span;
use crate::visit::mutable::{self as walk, VisitorMut};

/// Shifts every span of `stmts` by `delta` bytes.
pub fn shift_stmts(stmts: &mut [Stmt], delta: i64) {
    if delta != 0 {
        Shift { delta }.visit_block(stmts);
    }
}

struct Shift {
    delta: i64,
}

impl Shift {
    fn span(&self, s: &mut Span) {
        let mv = |x: u32| (i64::from(x) + self.delta).clamp(0, i64::from(u32::MAX)) as u32;
        *s = Span::new(mv(s.start), mv(s.end));
    }

    fn ident(&self, i: &mut Ident) {
        self.span(&mut i.span);
    }
}

impl VisitorMut<'_> for Shift {
    fn visit_stmt(&mut self, s: &mut Stmt) {
        self.span(&mut s.span);
        match &mut s.kind {
            StmtKind::AnnAssign { target, .. }
            | StmtKind::TypeAlias { name: target, .. }
            | StmtKind::Mock { target, .. }
            | StmtKind::Declassify { sink: target, .. } => self.ident(target),
            StmtKind::Nonlocal(names)
            | StmtKind::Global(names)
            | StmtKind::PythonImport { names, .. } => {
                for n in names {
                    self.ident(n);
                }
            }
            StmtKind::Use(u) => {
                self.span(&mut u.span);
                if let Some(a) = &mut u.alias {
                    self.ident(a);
                }
                match &mut u.target {
                    UseTarget::Std(n) => self.ident(n),
                    UseTarget::File { span, .. } => self.span(span),
                    UseTarget::Provider { kind, name } => {
                        self.ident(kind);
                        self.ident(name);
                    }
                }
            }
            _ => {}
        }
        walk::walk_stmt(self, s);
    }

    fn visit_expr(&mut self, e: &mut Expr) {
        self.span(&mut e.span);
        if let ExprKind::Attr(_, name) = &mut e.kind {
            self.ident(name);
        }
        walk::walk_expr(self, e);
    }

    fn visit_pattern(&mut self, p: &mut Pattern) {
        self.span(&mut p.span);
        match &mut p.kind {
            PatternKind::Constructor { name, kwargs, .. } => {
                self.ident(name);
                for (k, _) in kwargs {
                    self.ident(k);
                }
            }
            PatternKind::Star(n) | PatternKind::As(_, n) => self.ident(n),
            _ => {}
        }
        walk::walk_pattern(self, p);
    }

    fn visit_type_expr(&mut self, t: &mut TypeExpr) {
        self.span(&mut t.span);
        walk::walk_type_expr(self, t);
    }

    fn visit_func_def(&mut self, f: &mut FuncDef) {
        self.span(&mut f.span);
        self.ident(&mut f.name);
        walk::walk_func_def(self, f);
    }

    fn visit_param(&mut self, p: &mut Param) {
        self.span(&mut p.span);
        self.ident(&mut p.name);
        walk::walk_param(self, p);
    }

    fn visit_arg(&mut self, a: &mut Arg) {
        self.span(&mut a.span);
        if let ArgKind::Keyword(k, _) = &mut a.kind {
            self.ident(k);
        }
        walk::walk_arg(self, a);
    }

    fn visit_handler(&mut self, h: &mut Handler) {
        self.span(&mut h.span);
        self.ident(&mut h.event);
        for p in &mut h.params {
            self.ident(p);
        }
        walk::walk_handler(self, h);
    }

    fn visit_else(&mut self, e: &mut ElseClause) {
        self.span(&mut e.span);
        if let Some((a, b)) = &mut e.binds {
            self.ident(a);
            self.ident(b);
        }
        walk::walk_else(self, e);
    }

    fn visit_match_arm(&mut self, a: &mut MatchArm) {
        self.span(&mut a.span);
        walk::walk_match_arm(self, a);
    }

    fn visit_record(&mut self, r: &mut RecordDecl) {
        self.span(&mut r.span);
        self.ident(&mut r.name);
        walk::walk_record(self, r);
    }

    fn visit_field(&mut self, f: &mut FieldDecl) {
        self.span(&mut f.span);
        self.ident(&mut f.name);
        walk::walk_field(self, f);
    }
}

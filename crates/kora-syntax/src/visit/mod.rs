//! The one traversal of the syntax tree: `Visitor` (shared) and `VisitorMut`, whose default methods walk every child.
//!
//! Every pass that reads the tree (operation ids, the nesting limit, scope
//! analysis, the label-flow check, the audit, the editors' outlines) overrides
//! the few `visit_*` methods it cares about and calls the matching `walk_*`
//! function to go on into the children. So a new statement or expression form
//! is taught to every pass by adding its children to `walk_stmt` or
//! `walk_expr` below, once.
//!
//! The two traits are generated from one macro body so they cannot drift
//! apart: `VisitorMut` exists for the nesting limit, which replaces statements
//! and takes too-deep expressions apart in place.
//!
//! Children are walked in source order, with two exceptions that follow the
//! order a statement runs in: `results = parallel for ...` visits `results`
//! after the loop's body (it is assigned when the loop ends), and `a if c else b`
//! visits `a`, `c`, `b` as written. Operation ids count calls in this order
//! (`ops.rs`), so a change of order here changes journal and cassette keys.

pub mod children;

#[cfg(test)]
mod tests;

/// Writes the visitor trait named `$Visitor` and its `walk_*` functions for
/// shared (`visitor!(Visitor)`) or mutable (`visitor!(VisitorMut, mut)`) references.
macro_rules! visitor {
    ($Visitor:ident $(, $m:tt)?) => {
        use crate::ast::{
            Arg, ArgKind, CompClause, ElseClause, Expr, ExprKind, FStringPart, FieldDecl,
            FuncDef, Handler, MatchArm, Param, ParallelInto, Pattern, PatternKind, RecordDecl,
            Stmt, StmtKind, TypeExpr, TypeExprKind,
        };

        /// A pass over the tree. Each method's default walks the node's children;
        /// override one to act on a node, and call the `walk_*` function of the
        /// same name from it to keep descending (or do not, to prune).
        pub trait $Visitor<'a> {
            fn visit_block(&mut self, b: &'a $($m)? [Stmt]) {
                walk_block(self, b)
            }
            fn visit_stmt(&mut self, s: &'a $($m)? Stmt) {
                walk_stmt(self, s)
            }
            fn visit_expr(&mut self, e: &'a $($m)? Expr) {
                walk_expr(self, e)
            }
            fn visit_pattern(&mut self, p: &'a $($m)? Pattern) {
                walk_pattern(self, p)
            }
            fn visit_type_expr(&mut self, t: &'a $($m)? TypeExpr) {
                walk_type_expr(self, t)
            }
            fn visit_func_def(&mut self, f: &'a $($m)? FuncDef) {
                walk_func_def(self, f)
            }
            fn visit_param(&mut self, p: &'a $($m)? Param) {
                walk_param(self, p)
            }
            fn visit_arg(&mut self, a: &'a $($m)? Arg) {
                walk_arg(self, a)
            }
            fn visit_handler(&mut self, h: &'a $($m)? Handler) {
                walk_handler(self, h)
            }
            fn visit_else(&mut self, e: &'a $($m)? ElseClause) {
                walk_else(self, e)
            }
            fn visit_match_arm(&mut self, a: &'a $($m)? MatchArm) {
                walk_match_arm(self, a)
            }
            fn visit_record(&mut self, r: &'a $($m)? RecordDecl) {
                walk_record(self, r)
            }
            fn visit_field(&mut self, f: &'a $($m)? FieldDecl) {
                walk_field(self, f)
            }
            fn visit_comp_clause(&mut self, c: &'a $($m)? CompClause) {
                walk_comp_clause(self, c)
            }
            fn visit_fstring_part(&mut self, p: &'a $($m)? FStringPart) {
                walk_fstring_part(self, p)
            }
        }

        pub fn walk_block<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, b: &'a $($m)? [Stmt]) {
            for s in b {
                v.visit_stmt(s);
            }
        }

        pub fn walk_stmt<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, s: &'a $($m)? Stmt) {
            match & $($m)? s.kind {
                StmtKind::Expr { expr, handlers } => {
                    v.visit_expr(expr);
                    for h in handlers {
                        v.visit_handler(h);
                    }
                }
                StmtKind::Assign {
                    targets,
                    value,
                    handlers,
                } => {
                    for t in targets {
                        v.visit_expr(t);
                    }
                    v.visit_expr(value);
                    for h in handlers {
                        v.visit_handler(h);
                    }
                }
                StmtKind::AnnAssign {
                    ty,
                    value,
                    handlers,
                    else_,
                    ..
                } => {
                    v.visit_type_expr(ty);
                    if let Some(x) = value {
                        v.visit_expr(x);
                    }
                    for h in handlers {
                        v.visit_handler(h);
                    }
                    if let Some(e) = else_ {
                        v.visit_else(e);
                    }
                }
                StmtKind::AugAssign { target, value, .. } => {
                    v.visit_expr(target);
                    v.visit_expr(value);
                }
                StmtKind::If { branches, orelse } => {
                    for (cond, body) in branches {
                        v.visit_expr(cond);
                        v.visit_block(body);
                    }
                    if let Some(b) = orelse {
                        v.visit_block(b);
                    }
                }
                StmtKind::While { cond, body } => {
                    v.visit_expr(cond);
                    v.visit_block(body);
                }
                StmtKind::For {
                    target,
                    iter,
                    body,
                    into,
                    ..
                } => {
                    v.visit_expr(target);
                    v.visit_expr(iter);
                    v.visit_block(body);
                    if let Some(i) = into {
                        let ParallelInto { target, ty } = & $($m)? **i;
                        v.visit_expr(target);
                        if let Some(t) = ty {
                            v.visit_type_expr(t);
                        }
                    }
                }
                StmtKind::Break(x) | StmtKind::Return(x) => {
                    if let Some(x) = x {
                        v.visit_expr(x);
                    }
                }
                StmtKind::Def(f) => v.visit_func_def(f),
                StmtKind::Record(r) => v.visit_record(r),
                StmtKind::TypeAlias { ty, .. } => v.visit_type_expr(ty),
                StmtKind::Match { subject, arms } => {
                    v.visit_expr(subject);
                    for a in arms {
                        v.visit_match_arm(a);
                    }
                }
                StmtKind::Assert { cond, msg } => {
                    v.visit_expr(cond);
                    if let Some(m) = msg {
                        v.visit_expr(m);
                    }
                }
                StmtKind::Del(items) => {
                    for x in items {
                        v.visit_expr(x);
                    }
                }
                StmtKind::Budget { args, body }
                | StmtKind::Context { args, body }
                | StmtKind::ModelBlock { args, body } => {
                    for a in args {
                        v.visit_arg(a);
                    }
                    v.visit_block(body);
                }
                StmtKind::Mock { value, body, .. } | StmtKind::Declassify { value, body, .. } => {
                    v.visit_expr(value);
                    v.visit_block(body);
                }
                StmtKind::Test { body, .. } => v.visit_block(body),
                StmtKind::Continue
                | StmtKind::Pass
                | StmtKind::Use(_)
                | StmtKind::Nonlocal(_)
                | StmtKind::Global(_)
                | StmtKind::PythonImport { .. }
                | StmtKind::Error => {}
            }
        }

        pub fn walk_expr<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, e: &'a $($m)? Expr) {
            match & $($m)? e.kind {
                ExprKind::FString(parts) => {
                    for p in parts {
                        v.visit_fstring_part(p);
                    }
                }
                ExprKind::List(xs) | ExprKind::Tuple(xs) | ExprKind::Set(xs) => {
                    for x in xs {
                        v.visit_expr(x);
                    }
                }
                ExprKind::Dict(pairs) => {
                    for (k, x) in pairs {
                        v.visit_expr(k);
                        v.visit_expr(x);
                    }
                }
                ExprKind::Comp {
                    elt,
                    value,
                    clauses,
                    ..
                } => {
                    v.visit_expr(elt);
                    if let Some(x) = value {
                        v.visit_expr(x);
                    }
                    for c in clauses {
                        v.visit_comp_clause(c);
                    }
                }
                ExprKind::Unary(_, x)
                | ExprKind::Attr(x, _)
                | ExprKind::Classified(x)
                | ExprKind::Starred(x) => v.visit_expr(x),
                ExprKind::Binary(_, a, b) | ExprKind::BoolOp(_, a, b) | ExprKind::Index(a, b) => {
                    v.visit_expr(a);
                    v.visit_expr(b);
                }
                ExprKind::Compare(first, rest) => {
                    v.visit_expr(first);
                    for (_, x) in rest {
                        v.visit_expr(x);
                    }
                }
                ExprKind::Call { func, args } => {
                    v.visit_expr(func);
                    for a in args {
                        v.visit_arg(a);
                    }
                }
                ExprKind::Analyze { args, .. } | ExprKind::AskHuman(args) => {
                    for a in args {
                        v.visit_arg(a);
                    }
                }
                ExprKind::Slice {
                    value,
                    lo,
                    hi,
                    step,
                } => {
                    v.visit_expr(value);
                    for part in [lo, hi, step].into_iter().flatten() {
                        v.visit_expr(part);
                    }
                }
                ExprKind::Lambda { params, body } => {
                    for p in params {
                        v.visit_param(p);
                    }
                    v.visit_expr(body);
                }
                ExprKind::IfExp { cond, then, orelse } => {
                    v.visit_expr(then);
                    v.visit_expr(cond);
                    v.visit_expr(orelse);
                }
                ExprKind::Int(_)
                | ExprKind::BigInt(_)
                | ExprKind::Float(_)
                | ExprKind::Str(_)
                | ExprKind::Bytes(_)
                | ExprKind::Bool(_)
                | ExprKind::None
                | ExprKind::Name(_)
                | ExprKind::Error => {}
            }
        }

        pub fn walk_pattern<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, p: &'a $($m)? Pattern) {
            match & $($m)? p.kind {
                PatternKind::Literal(e) => v.visit_expr(e),
                PatternKind::Constructor { args, kwargs, .. } => {
                    for a in args {
                        v.visit_pattern(a);
                    }
                    for (_, a) in kwargs {
                        v.visit_pattern(a);
                    }
                }
                PatternKind::Sequence(ps) | PatternKind::Or(ps) => {
                    for a in ps {
                        v.visit_pattern(a);
                    }
                }
                PatternKind::As(inner, _) => v.visit_pattern(inner),
                PatternKind::Wildcard
                | PatternKind::Capture(_)
                | PatternKind::Star(_)
                | PatternKind::Error => {}
            }
        }

        pub fn walk_type_expr<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, t: &'a $($m)? TypeExpr) {
            match & $($m)? t.kind {
                TypeExprKind::Named { args: ts, .. } | TypeExprKind::Union(ts) => {
                    for x in ts {
                        v.visit_type_expr(x);
                    }
                }
                TypeExprKind::Literal(_) | TypeExprKind::None | TypeExprKind::Error => {}
            }
        }

        /// Parameters (their defaults are evaluated where the `def` stands), the
        /// return type, an agent's `model(...)`, then the body.
        pub fn walk_func_def<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, f: &'a $($m)? FuncDef) {
            let FuncDef {
                params,
                ret,
                model,
                body,
                ..
            } = f;
            for p in params {
                v.visit_param(p);
            }
            if let Some(t) = ret {
                v.visit_type_expr(t);
            }
            if let Some(m) = model {
                v.visit_expr(m);
            }
            v.visit_block(body);
        }

        pub fn walk_param<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, p: &'a $($m)? Param) {
            let Param { ty, default, .. } = p;
            if let Some(t) = ty {
                v.visit_type_expr(t);
            }
            if let Some(d) = default {
                v.visit_expr(d);
            }
        }

        pub fn walk_arg<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, a: &'a $($m)? Arg) {
            match & $($m)? a.kind {
                ArgKind::Positional(x)
                | ArgKind::Keyword(_, x)
                | ArgKind::Star(x)
                | ArgKind::DoubleStar(x) => v.visit_expr(x),
            }
        }

        pub fn walk_handler<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, h: &'a $($m)? Handler) {
            v.visit_block(& $($m)? h.body);
        }

        pub fn walk_else<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, e: &'a $($m)? ElseClause) {
            v.visit_block(& $($m)? e.body);
        }

        pub fn walk_match_arm<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, a: &'a $($m)? MatchArm) {
            let MatchArm {
                pattern,
                guard,
                body,
                ..
            } = a;
            v.visit_pattern(pattern);
            if let Some(g) = guard {
                v.visit_expr(g);
            }
            v.visit_block(body);
        }

        pub fn walk_record<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, r: &'a $($m)? RecordDecl) {
            for f in & $($m)? r.fields {
                v.visit_field(f);
            }
        }

        pub fn walk_field<'a, V: $Visitor<'a> + ?Sized>(v: &mut V, f: &'a $($m)? FieldDecl) {
            let FieldDecl { ty, default, .. } = f;
            v.visit_type_expr(ty);
            if let Some(d) = default {
                v.visit_expr(d);
            }
        }

        pub fn walk_comp_clause<'a, V: $Visitor<'a> + ?Sized>(
            v: &mut V,
            c: &'a $($m)? CompClause,
        ) {
            let CompClause {
                target,
                iter,
                conds,
            } = c;
            v.visit_expr(target);
            v.visit_expr(iter);
            for x in conds {
                v.visit_expr(x);
            }
        }

        /// A field's expression, then the fields nested in its format spec.
        pub fn walk_fstring_part<'a, V: $Visitor<'a> + ?Sized>(
            v: &mut V,
            p: &'a $($m)? FStringPart,
        ) {
            if let FStringPart::Expr { expr, spec, .. } = p {
                v.visit_expr(expr);
                for s in spec {
                    v.visit_fstring_part(s);
                }
            }
        }
    };
}

visitor!(Visitor);

/// The same walk over `&mut` nodes, for passes that rewrite the tree in place.
pub mod mutable {
    visitor!(VisitorMut, mut);
}

pub use mutable::VisitorMut;

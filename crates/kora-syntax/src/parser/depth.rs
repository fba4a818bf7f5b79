//! The nesting limit for expressions: measured and enforced without recursion.
//!
//! A generated `a + a + ... + a` of a hundred thousand terms parses fine
//! (the grammar folds it iteratively) but yields a tree so deep that any
//! recursive walk over it, including the compiler-generated `Drop`, overflows
//! the stack. CPython refuses such input too. Here a statement holding an
//! expression deeper than `MAX_EXPR_DEPTH` becomes `StmtKind::Error` with a
//! diagnostic, and the deep tree is taken apart iteratively.

use crate::ast::{Arg, ArgKind, Block, Expr, ExprKind, FStringPart, Stmt, StmtKind};
use crate::diagnostic::Diagnostic;

/// Far beyond any hand-written expression, far below what a recursive pass can survive.
pub const MAX_EXPR_DEPTH: usize = 1000;

fn arg_exprs(args: &[Arg]) -> impl Iterator<Item = &Expr> {
    args.iter().map(|a| match &a.kind {
        ArgKind::Positional(e)
        | ArgKind::Keyword(_, e)
        | ArgKind::Star(e)
        | ArgKind::DoubleStar(e) => e,
    })
}

fn fstring_exprs<'e>(parts: &'e [FStringPart], out: &mut Vec<&'e Expr>) {
    for p in parts {
        if let FStringPart::Expr { expr, spec, .. } = p {
            out.push(expr);
            fstring_exprs(spec, out);
        }
    }
}

/// The direct sub-expressions of `e`.
fn children(e: &Expr) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    match &e.kind {
        ExprKind::List(xs) | ExprKind::Tuple(xs) | ExprKind::Set(xs) => out.extend(xs.iter()),
        ExprKind::Dict(kvs) => {
            for (k, v) in kvs {
                out.push(k);
                out.push(v);
            }
        }
        ExprKind::Comp {
            elt,
            value,
            clauses,
            ..
        } => {
            out.push(elt);
            out.extend(value.as_deref());
            for c in clauses {
                out.push(&c.target);
                out.push(&c.iter);
                out.extend(c.conds.iter());
            }
        }
        ExprKind::Unary(_, x)
        | ExprKind::Attr(x, _)
        | ExprKind::Classified(x)
        | ExprKind::Starred(x) => out.push(x),
        ExprKind::Binary(_, a, b) | ExprKind::BoolOp(_, a, b) | ExprKind::Index(a, b) => {
            out.push(a);
            out.push(b);
        }
        ExprKind::Compare(a, rest) => {
            out.push(a);
            out.extend(rest.iter().map(|(_, x)| x));
        }
        ExprKind::Call { func, args } => {
            out.push(func);
            out.extend(arg_exprs(args));
        }
        ExprKind::Analyze { args, .. } | ExprKind::AskHuman(args) => out.extend(arg_exprs(args)),
        ExprKind::Slice {
            value,
            lo,
            hi,
            step,
        } => {
            out.push(value);
            out.extend([lo, hi, step].into_iter().flatten().map(|b| &**b));
        }
        ExprKind::Lambda { params, body } => {
            out.extend(params.iter().filter_map(|p| p.default.as_ref()));
            out.push(body);
        }
        ExprKind::IfExp { cond, then, orelse } => {
            out.push(cond);
            out.push(then);
            out.push(orelse);
        }
        ExprKind::FString(parts) => fstring_exprs(parts, &mut out),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Name(_)
        | ExprKind::Error => {}
    }
    out
}

fn too_deep(e: &Expr) -> bool {
    let mut work = vec![(e, 1usize)];
    while let Some((e, d)) = work.pop() {
        if d > MAX_EXPR_DEPTH {
            return true;
        }
        work.extend(children(e).into_iter().map(|c| (c, d + 1)));
    }
    false
}

fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    let mut out = Vec::new();
    match &s.kind {
        StmtKind::Expr { expr, .. } => out.push(expr),
        StmtKind::Assign { targets, value, .. } => {
            out.extend(targets.iter());
            out.push(value);
        }
        StmtKind::AnnAssign { value, .. } => out.extend(value.iter()),
        StmtKind::AugAssign { target, value, .. } => {
            out.push(target);
            out.push(value);
        }
        StmtKind::If { branches, .. } => out.extend(branches.iter().map(|(c, _)| c)),
        StmtKind::While { cond, .. } => out.push(cond),
        StmtKind::For {
            target, iter, into, ..
        } => {
            out.push(target);
            out.push(iter);
            out.extend(into.iter().map(|i| &i.target));
        }
        StmtKind::Break(e) | StmtKind::Return(e) => out.extend(e.iter()),
        StmtKind::Def(f) => out.extend(f.params.iter().filter_map(|p| p.default.as_ref())),
        StmtKind::Record(r) => out.extend(r.fields.iter().filter_map(|f| f.default.as_ref())),
        StmtKind::Match { subject, arms } => {
            out.push(subject);
            out.extend(arms.iter().filter_map(|a| a.guard.as_ref()));
        }
        StmtKind::Assert { cond, msg } => {
            out.push(cond);
            out.extend(msg.iter());
        }
        StmtKind::Budget { args, .. }
        | StmtKind::Context { args, .. }
        | StmtKind::ModelBlock { args, .. } => out.extend(arg_exprs(args)),
        StmtKind::Mock { value, .. } | StmtKind::Declassify { value, .. } => out.push(value),
        _ => {}
    }
    out
}

fn blocks_mut(s: &mut Stmt) -> Vec<&mut Block> {
    match &mut s.kind {
        StmtKind::If { branches, orelse } => {
            let mut v: Vec<&mut Block> = branches.iter_mut().map(|(_, b)| b).collect();
            v.extend(orelse.iter_mut());
            v
        }
        StmtKind::While { body, .. }
        | StmtKind::For { body, .. }
        | StmtKind::Budget { body, .. }
        | StmtKind::Context { body, .. }
        | StmtKind::ModelBlock { body, .. }
        | StmtKind::Mock { body, .. }
        | StmtKind::Declassify { body, .. }
        | StmtKind::Test { body, .. } => vec![body],
        StmtKind::Def(f) => vec![&mut f.body],
        StmtKind::Match { arms, .. } => arms.iter_mut().map(|a| &mut a.body).collect(),
        StmtKind::Expr { handlers, .. } | StmtKind::Assign { handlers, .. } => {
            handlers.iter_mut().map(|h| &mut h.body).collect()
        }
        StmtKind::AnnAssign {
            handlers, else_, ..
        } => {
            let mut v: Vec<&mut Block> = handlers.iter_mut().map(|h| &mut h.body).collect();
            v.extend(else_.iter_mut().map(|e| &mut e.body));
            v
        }
        _ => Vec::new(),
    }
}

fn placeholder(x: &mut Expr) -> Expr {
    let span = x.span;
    std::mem::replace(x, Expr::new(ExprKind::Error, span))
}

fn take_args(args: &mut Vec<Arg>, out: &mut Vec<Expr>) {
    out.extend(args.drain(..).map(|a| match a.kind {
        ArgKind::Positional(x)
        | ArgKind::Keyword(_, x)
        | ArgKind::Star(x)
        | ArgKind::DoubleStar(x) => x,
    }));
}

fn take_fstring(parts: &mut Vec<FStringPart>, out: &mut Vec<Expr>) {
    for p in parts.drain(..) {
        if let FStringPart::Expr { expr, mut spec, .. } = p {
            out.push(*expr);
            take_fstring(&mut spec, out);
        }
    }
}

/// Moves every sub-expression out of `e` so that dropping `e` does not recurse.
fn take_children(e: &mut Expr, out: &mut Vec<Expr>) {
    match &mut e.kind {
        ExprKind::List(xs) | ExprKind::Tuple(xs) | ExprKind::Set(xs) => out.append(xs),
        ExprKind::Dict(kvs) => {
            for (k, v) in kvs.drain(..) {
                out.push(k);
                out.push(v);
            }
        }
        ExprKind::Comp {
            elt,
            value,
            clauses,
            ..
        } => {
            out.push(placeholder(elt));
            out.extend(value.take().map(|v| *v));
            for c in clauses.drain(..) {
                out.push(c.target);
                out.push(c.iter);
                out.extend(c.conds);
            }
        }
        ExprKind::Unary(_, x)
        | ExprKind::Attr(x, _)
        | ExprKind::Classified(x)
        | ExprKind::Starred(x) => out.push(placeholder(x)),
        ExprKind::Binary(_, a, b) | ExprKind::BoolOp(_, a, b) | ExprKind::Index(a, b) => {
            out.push(placeholder(a));
            out.push(placeholder(b));
        }
        ExprKind::Compare(a, rest) => {
            out.push(placeholder(a));
            out.extend(rest.drain(..).map(|(_, x)| x));
        }
        ExprKind::Call { func, args } => {
            out.push(placeholder(func));
            take_args(args, out);
        }
        ExprKind::Analyze { args, .. } | ExprKind::AskHuman(args) => take_args(args, out),
        ExprKind::Slice {
            value,
            lo,
            hi,
            step,
        } => {
            out.push(placeholder(value));
            for part in [lo, hi, step] {
                out.extend(part.take().map(|b| *b));
            }
        }
        ExprKind::Lambda { params, body } => {
            out.extend(params.drain(..).filter_map(|p| p.default));
            out.push(placeholder(body));
        }
        ExprKind::IfExp { cond, then, orelse } => {
            out.push(placeholder(cond));
            out.push(placeholder(then));
            out.push(placeholder(orelse));
        }
        ExprKind::FString(parts) => take_fstring(parts, out),
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::None
        | ExprKind::Name(_)
        | ExprKind::Error => {}
    }
}

/// Drops a possibly very deep expression without recursing.
fn dismantle(e: Expr) {
    let mut work = vec![e];
    while let Some(mut e) = work.pop() {
        take_children(&mut e, &mut work);
    }
}

fn stmt_exprs_mut(s: &mut Stmt) -> Vec<&mut Expr> {
    let mut out = Vec::new();
    match &mut s.kind {
        StmtKind::Expr { expr, .. } => out.push(expr),
        StmtKind::Assign { targets, value, .. } => {
            out.extend(targets.iter_mut());
            out.push(value);
        }
        StmtKind::AnnAssign { value, .. } => out.extend(value.iter_mut()),
        StmtKind::AugAssign { target, value, .. } => {
            out.push(target);
            out.push(value);
        }
        StmtKind::If { branches, .. } => out.extend(branches.iter_mut().map(|(c, _)| c)),
        StmtKind::While { cond, .. } => out.push(cond),
        StmtKind::For {
            target, iter, into, ..
        } => {
            out.push(target);
            out.push(iter);
            out.extend(into.iter_mut().map(|i| &mut i.target));
        }
        StmtKind::Break(e) | StmtKind::Return(e) => out.extend(e.iter_mut()),
        StmtKind::Def(f) => out.extend(f.params.iter_mut().filter_map(|p| p.default.as_mut())),
        StmtKind::Record(r) => out.extend(r.fields.iter_mut().filter_map(|f| f.default.as_mut())),
        StmtKind::Match { subject, arms } => {
            out.push(subject);
            out.extend(arms.iter_mut().filter_map(|a| a.guard.as_mut()));
        }
        StmtKind::Assert { cond, msg } => {
            out.push(cond);
            out.extend(msg.iter_mut());
        }
        StmtKind::Budget { args, .. }
        | StmtKind::Context { args, .. }
        | StmtKind::ModelBlock { args, .. } => {
            out.extend(args.iter_mut().map(|a| match &mut a.kind {
                ArgKind::Positional(e)
                | ArgKind::Keyword(_, e)
                | ArgKind::Star(e)
                | ArgKind::DoubleStar(e) => e,
            }))
        }
        StmtKind::Mock { value, .. } | StmtKind::Declassify { value, .. } => out.push(value),
        _ => {}
    }
    out
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
pub fn limit(block: &mut Block, diags: &mut Vec<Diagnostic>) {
    for s in block.iter_mut() {
        for b in blocks_mut(s) {
            limit(b, diags);
        }
        if stmt_exprs(s).into_iter().any(too_deep) {
            diags.push(too_deep_diag(s.span));
            for e in stmt_exprs_mut(s) {
                dismantle(placeholder(e));
            }
            s.kind = StmtKind::Error;
        }
    }
}

//! The children of a syntax-tree node: the blocks inside a statement, the expressions it holds, the parts of an expression.
//!
//! The passes that read the tree rather than the lowered program (`audit`,
//! `label_flow`) share these so a new statement or expression form is taught
//! to them in one place.

use kora_syntax::ast::{Arg, ArgKind, Expr, ExprKind, FStringPart, Stmt, StmtKind};

/// The blocks directly inside one statement (handlers, `else`, branches, bodies).
pub fn child_blocks(s: &Stmt) -> Vec<&[Stmt]> {
    let mut out: Vec<&[Stmt]> = Vec::new();
    match &s.kind {
        StmtKind::Expr { handlers, .. } | StmtKind::Assign { handlers, .. } => {
            out.extend(handlers.iter().map(|h| h.body.as_slice()));
        }
        StmtKind::AnnAssign {
            handlers, else_, ..
        } => {
            out.extend(handlers.iter().map(|h| h.body.as_slice()));
            if let Some(e) = else_ {
                out.push(&e.body);
            }
        }
        StmtKind::If { branches, orelse } => {
            out.extend(branches.iter().map(|(_, b)| b.as_slice()));
            if let Some(b) = orelse {
                out.push(b);
            }
        }
        StmtKind::While { body, .. }
        | StmtKind::For { body, .. }
        | StmtKind::Budget { body, .. }
        | StmtKind::Context { body, .. }
        | StmtKind::ModelBlock { body, .. }
        | StmtKind::Mock { body, .. }
        | StmtKind::Declassify { body, .. }
        | StmtKind::Test { body, .. } => out.push(body),
        StmtKind::Def(d) => out.push(&d.body),
        StmtKind::Match { arms, .. } => out.extend(arms.iter().map(|a| a.body.as_slice())),
        StmtKind::Break(_)
        | StmtKind::Continue
        | StmtKind::Pass
        | StmtKind::Return(_)
        | StmtKind::AugAssign { .. }
        | StmtKind::Record(_)
        | StmtKind::TypeAlias { .. }
        | StmtKind::Use(_)
        | StmtKind::Nonlocal(_)
        | StmtKind::Global(_)
        | StmtKind::Assert { .. }
        | StmtKind::PythonImport { .. }
        | StmtKind::Error => {}
    }
    out
}

/// The expressions a statement holds itself, not those of its nested blocks.
///
/// A `def`'s parameter defaults are evaluated where the `def` stands, so they
/// belong to the enclosing statement's expressions.
pub fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    match &s.kind {
        StmtKind::Expr { expr, .. } => out.push(expr),
        StmtKind::Assign { targets, value, .. } => {
            out.extend(targets);
            out.push(value);
        }
        StmtKind::AnnAssign { value, .. } => out.extend(value),
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
            if let Some(i) = into {
                out.push(&i.target);
            }
        }
        StmtKind::Break(e) | StmtKind::Return(e) => out.extend(e),
        StmtKind::Def(d) => out.extend(d.params.iter().filter_map(|p| p.default.as_ref())),
        StmtKind::Record(r) => out.extend(r.fields.iter().filter_map(|f| f.default.as_ref())),
        StmtKind::Match { subject, arms } => {
            out.push(subject);
            out.extend(arms.iter().filter_map(|a| a.guard.as_ref()));
        }
        StmtKind::Assert { cond, msg } => {
            out.push(cond);
            out.extend(msg);
        }
        StmtKind::Budget { args, .. }
        | StmtKind::Context { args, .. }
        | StmtKind::ModelBlock { args, .. } => {
            out.extend(args.iter().map(arg_expr));
        }
        StmtKind::Mock { value, .. } | StmtKind::Declassify { value, .. } => out.push(value),
        StmtKind::Continue
        | StmtKind::Pass
        | StmtKind::TypeAlias { .. }
        | StmtKind::Use(_)
        | StmtKind::Nonlocal(_)
        | StmtKind::Global(_)
        | StmtKind::Test { .. }
        | StmtKind::PythonImport { .. }
        | StmtKind::Error => {}
    }
    out
}

/// The expression an argument passes, whatever its form.
pub fn arg_expr(a: &Arg) -> &Expr {
    match &a.kind {
        ArgKind::Positional(x)
        | ArgKind::Keyword(_, x)
        | ArgKind::Star(x)
        | ArgKind::DoubleStar(x) => x,
    }
}

/// The expressions directly inside `e`, in source order.
pub fn sub_exprs(e: &Expr) -> Vec<&Expr> {
    let mut out: Vec<&Expr> = Vec::new();
    match &e.kind {
        ExprKind::Call { func, args } => {
            out.push(func);
            out.extend(args.iter().map(arg_expr));
        }
        ExprKind::Analyze { args, .. } | ExprKind::AskHuman(args) => {
            out.extend(args.iter().map(arg_expr));
        }
        ExprKind::FString(parts) => fstring_exprs(parts, &mut out),
        ExprKind::List(xs) | ExprKind::Tuple(xs) | ExprKind::Set(xs) => out.extend(xs),
        ExprKind::Dict(pairs) => {
            for (k, v) in pairs {
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
            if let Some(v) = value {
                out.push(v);
            }
            for c in clauses {
                out.push(&c.target);
                out.push(&c.iter);
                out.extend(&c.conds);
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
        ExprKind::Compare(first, rest) => {
            out.push(first);
            out.extend(rest.iter().map(|(_, x)| x));
        }
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
            out.push(then);
            out.push(cond);
            out.push(orelse);
        }
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

/// The `{...}` fields of an f-string, format specs included.
pub fn fstring_exprs<'a>(parts: &'a [FStringPart], out: &mut Vec<&'a Expr>) {
    for p in parts {
        if let FStringPart::Expr { expr, spec, .. } = p {
            out.push(expr);
            fstring_exprs(spec, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_stmts(stmts: &[Stmt]) -> usize {
        stmts
            .iter()
            .map(|s| 1 + child_blocks(s).into_iter().map(count_stmts).sum::<usize>())
            .sum()
    }

    #[test]
    fn blocks_reach_every_nested_statement() {
        let src = "def f(x: int) -> None:\n    if x:\n        for y in [1]:\n            pass\n    else:\n        pass\n";
        let m = kora_syntax::parse(src).module;
        // def, if, for, pass, pass
        assert_eq!(count_stmts(&m.stmts), 5);
    }

    #[test]
    fn fstring_fields_and_call_arguments_are_children() {
        let m = kora_syntax::parse("print(f\"{a} and {b:{w}}\", k=c)\n").module;
        let StmtKind::Expr { expr, .. } = &m.stmts[0].kind else {
            panic!("an expression statement")
        };
        let mut names = Vec::new();
        let mut stack = vec![expr];
        while let Some(e) = stack.pop() {
            if let ExprKind::Name(n) = &e.kind {
                names.push(n.clone());
            }
            stack.extend(sub_exprs(e));
        }
        names.sort();
        assert_eq!(names, ["a", "b", "c", "print", "w"]);
    }
}

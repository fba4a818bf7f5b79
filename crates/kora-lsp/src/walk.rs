//! Walking a syntax tree's statements, nested blocks included, for the features that look for declarations.

use kora_syntax::ast::{FuncDef, RecordDecl, Stmt, StmtKind};
use kora_syntax::Span;

/// The blocks directly inside one statement.
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
        _ => {}
    }
    out
}

/// Calls `f` on every statement, outer before inner.
pub fn each_stmt<'a>(stmts: &'a [Stmt], f: &mut impl FnMut(&'a Stmt)) {
    for s in stmts {
        f(s);
        for b in child_blocks(s) {
            each_stmt(b, f);
        }
    }
}

/// The `def` whose name is written at `name`.
pub fn def_named_at(stmts: &[Stmt], name: Span) -> Option<&FuncDef> {
    let mut found = None;
    each_stmt(stmts, &mut |s| {
        if let StmtKind::Def(d) = &s.kind {
            if d.name.span == name {
                found = Some(d);
            }
        }
    });
    found
}

/// A top-level `type Name:` declaration.
pub fn record_named<'a>(stmts: &'a [Stmt], name: &str) -> Option<&'a RecordDecl> {
    stmts.iter().find_map(|s| match &s.kind {
        StmtKind::Record(r) if r.name.name == name => Some(r),
        _ => None,
    })
}

/// Is `span` a parameter name of some `def` (or lambda) in the tree?
pub fn is_parameter(stmts: &[Stmt], span: Span) -> bool {
    let mut yes = false;
    each_stmt(stmts, &mut |s| {
        if let StmtKind::Def(d) = &s.kind {
            if d.params.iter().any(|p| p.name.span == span) {
                yes = true;
            }
        }
    });
    yes
}

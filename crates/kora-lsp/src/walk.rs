//! Finding declarations in a syntax tree (a `def` by where its name is written, a record by name, a parameter), nested blocks included.

use kora_syntax::ast::{FuncDef, Ident, RecordDecl, Stmt, StmtKind, TypeExpr, UseTarget};
use kora_syntax::visit::children::each_stmt;
use kora_syntax::Span;

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

/// A top-level `type Name = T` alias.
pub fn alias_named<'a>(stmts: &'a [Stmt], name: &str) -> Option<(&'a Ident, &'a TypeExpr)> {
    stmts.iter().find_map(|s| match &s.kind {
        StmtKind::TypeAlias { name: n, ty } if n.name == name => Some((n, ty)),
        _ => None,
    })
}

/// The standard module a top-level `use json` (or `use json as j`) binds to `name`.
pub fn std_alias(stmts: &[Stmt], name: &str) -> Option<String> {
    stmts.iter().find_map(|s| match &s.kind {
        StmtKind::Use(u) => match &u.target {
            UseTarget::Std(m) if u.alias.as_ref().map_or(&m.name, |a| &a.name) == name => {
                Some(m.name.clone())
            }
            _ => None,
        },
        _ => None,
    })
}

//! The outline: functions (with the functions nested in them), record types and their fields, aliases, top-level variables, `use`s and tests.

use kora_syntax::ast::{Expr, ExprKind, FuncKind, Stmt, StmtKind, UseTarget};
use kora_syntax::visit::children::child_blocks;
use kora_syntax::Span;
use tower_lsp_server::ls_types::{DocumentSymbol, SymbolKind};

use crate::analysis::FileAnalysis;

pub fn document_symbols(f: &FileAnalysis) -> Vec<DocumentSymbol> {
    block(f, &f.ast.stmts, true)
}

fn block(f: &FileAnalysis, stmts: &[Stmt], top: bool) -> Vec<DocumentSymbol> {
    let mut out = Vec::new();
    for s in stmts {
        match &s.kind {
            StmtKind::Def(d) => {
                let detail = match d.kind {
                    FuncKind::Def => "def",
                    FuncKind::Tool => "tool",
                    FuncKind::Agent => "agent",
                };
                let children = block(f, &d.body, false);
                out.push(symbol(
                    f,
                    &d.name.name,
                    detail,
                    SymbolKind::FUNCTION,
                    s.span,
                    d.name.span,
                    children,
                ));
            }
            StmtKind::Record(r) => {
                let fields = r
                    .fields
                    .iter()
                    .map(|fd| {
                        let ty = f.slice(fd.ty.span);
                        symbol(
                            f,
                            &fd.name.name,
                            ty,
                            SymbolKind::FIELD,
                            fd.span,
                            fd.name.span,
                            Vec::new(),
                        )
                    })
                    .collect();
                out.push(symbol(
                    f,
                    &r.name.name,
                    "type",
                    SymbolKind::STRUCT,
                    s.span,
                    r.name.span,
                    fields,
                ));
            }
            StmtKind::TypeAlias { name, ty } if top => out.push(symbol(
                f,
                &name.name,
                f.slice(ty.span),
                SymbolKind::INTERFACE,
                s.span,
                name.span,
                Vec::new(),
            )),
            StmtKind::Assign { targets, .. } if top => {
                for t in targets {
                    names_in(t, &mut |name, span| {
                        out.push(symbol(
                            f,
                            name,
                            "",
                            SymbolKind::VARIABLE,
                            s.span,
                            span,
                            Vec::new(),
                        ))
                    });
                }
            }
            StmtKind::AnnAssign { target, ty, .. } if top => out.push(symbol(
                f,
                &target.name,
                f.slice(ty.span),
                SymbolKind::VARIABLE,
                s.span,
                target.span,
                Vec::new(),
            )),
            StmtKind::Use(u) => {
                if let (Some(alias), UseTarget::File { path, .. }) = (&u.alias, &u.target) {
                    out.push(symbol(
                        f,
                        &alias.name,
                        path,
                        SymbolKind::MODULE,
                        s.span,
                        alias.span,
                        Vec::new(),
                    ));
                }
            }
            StmtKind::Test { name, body } => {
                let children = block(f, body, false);
                out.push(symbol(
                    f,
                    &format!("test {name:?}"),
                    "test",
                    SymbolKind::EVENT,
                    s.span,
                    s.span,
                    children,
                ));
            }
            _ => {
                // Functions declared inside `if`/`for`/... blocks still belong in the outline.
                for b in child_blocks(s) {
                    out.extend(
                        block(f, b, false)
                            .into_iter()
                            .filter(|d| d.kind == SymbolKind::FUNCTION),
                    );
                }
            }
        }
    }
    out
}

fn names_in(e: &Expr, f: &mut impl FnMut(&str, Span)) {
    match &e.kind {
        ExprKind::Name(n) => f(n, e.span),
        ExprKind::Tuple(xs) | ExprKind::List(xs) => xs.iter().for_each(|x| names_in(x, f)),
        ExprKind::Starred(x) => names_in(x, f),
        _ => {}
    }
}

#[allow(deprecated)] // `DocumentSymbol::deprecated` must be written, though the protocol retired it.
fn symbol(
    f: &FileAnalysis,
    name: &str,
    detail: &str,
    kind: SymbolKind,
    range: Span,
    selection: Span,
    children: Vec<DocumentSymbol>,
) -> DocumentSymbol {
    // The selection must lie inside the range, even in a tree recovered from a syntax error.
    let range = range.to(selection);
    DocumentSymbol {
        name: if name.is_empty() { "?" } else { name }.to_string(),
        detail: (!detail.is_empty()).then(|| detail.to_string()),
        kind,
        tags: None,
        deprecated: None,
        range: f.lines.range(&f.text, range),
        selection_range: f.lines.range(&f.text, selection),
        children: (!children.is_empty()).then_some(children),
    }
}

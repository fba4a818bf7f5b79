//! Inlay hints: the inferred type after a variable's first assignment (`total: int = ...` shown
//! for `total = ...`), and parameter names before positional arguments at calls of the program's
//! own functions and record constructors.

use std::collections::HashSet;

use kora_check::facts::Binding;
use kora_syntax::ast::{ArgKind, Expr, ExprKind, Stmt, StmtKind};
use kora_syntax::visit::{walk_stmt, Visitor};
use kora_syntax::Span;
use tower_lsp_server::ls_types::{InlayHint, InlayHintKind, InlayHintLabel};

use crate::analysis::{Analysis, FileAnalysis};
use crate::definition::binding_site;
use crate::refs::collect;
use crate::walk::def_named_at;

/// The names bound by plain assignments and `for` targets: where a type hint may go.
#[derive(Default)]
struct Targets(HashSet<Span>);

impl Targets {
    fn names(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(_) => {
                self.0.insert(e.span);
            }
            ExprKind::Tuple(xs) | ExprKind::List(xs) => xs.iter().for_each(|x| self.names(x)),
            _ => {}
        }
    }
}

impl<'a> Visitor<'a> for Targets {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        match &s.kind {
            StmtKind::Assign { targets, .. } => targets.iter().for_each(|t| self.names(t)),
            StmtKind::For { target, .. } => self.names(target),
            _ => {}
        }
        walk_stmt(self, s)
    }
}

fn hint(f: &FileAnalysis, at: u32, label: String, kind: InlayHintKind) -> InlayHint {
    let type_hint = kind == InlayHintKind::TYPE;
    InlayHint {
        position: f.lines.position(&f.text, at as usize),
        label: InlayHintLabel::String(label),
        kind: Some(kind),
        text_edits: None,
        tooltip: None,
        padding_left: Some(false),
        padding_right: Some(!type_hint),
        data: None,
    }
}

/// The hints for the byte range `range` of the document.
pub fn inlay_hints(a: &Analysis, range: Span) -> Vec<InlayHint> {
    let Some(f) = a.entry() else {
        return Vec::new();
    };
    let inside = |s: Span| range.start <= s.start && s.end <= range.end;
    let mut out = Vec::new();
    let mut targets = Targets::default();
    targets.visit_block(&f.ast.stmts);
    let mut seen: HashSet<&Binding> = HashSet::new();
    for n in f.names.iter().filter(|n| n.write) {
        let first = seen.insert(&n.binding);
        let local = matches!(n.binding, Binding::Local { .. } | Binding::Global(..));
        if first && local && targets.0.contains(&n.span) && inside(n.span) && n.ty.is_known() {
            out.push(hint(
                f,
                n.span.end,
                format!(": {}", n.ty),
                InlayHintKind::TYPE,
            ));
        }
    }
    let refs = collect(&f.text, &f.ast.stmts);
    for call in refs.calls.iter().filter(|c| inside(c.span)) {
        let Some(n) = f.names.iter().find(|n| n.span == call.callee) else {
            continue;
        };
        let params: Vec<String> = match &n.binding {
            Binding::Type(t) => match a.types.get(t.0 as usize) {
                Some(r) => r.fields.iter().map(|(n, _)| n.clone()).collect(),
                None => continue,
            },
            Binding::Local { .. } | Binding::Global(..) => {
                let Some(site) = binding_site(a, f, n) else {
                    continue;
                };
                let g = &a.files[site.file];
                match def_named_at(&g.ast.stmts, site.span) {
                    Some(d) => d
                        .params
                        .iter()
                        .take_while(|p| !p.star)
                        .map(|p| p.name.name.clone())
                        .collect(),
                    None => continue,
                }
            }
            _ => continue,
        };
        for (arg, param) in call.args.iter().zip(&params) {
            let ArgKind::Positional(e) = &arg.kind else {
                break;
            };
            // A variable already named like the parameter says it all.
            if matches!(&e.kind, ExprKind::Name(x) if x == param) {
                continue;
            }
            out.push(hint(
                f,
                e.span.start,
                format!("{param}:"),
                InlayHintKind::PARAMETER,
            ));
        }
    }
    out.sort_by_key(|h| (h.position.line, h.position.character));
    out
}

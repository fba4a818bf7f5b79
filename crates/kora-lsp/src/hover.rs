//! Hover: the type of what is under the cursor, a function's signature and docstring, a record's fields.

use kora_check::facts::Binding;
use kora_check::hir::builtin_name;
use kora_check::types::Ty;
use kora_syntax::ast::{FuncDef, FuncKind};
use kora_syntax::Span;

use crate::analysis::{Analysis, FileAnalysis, RecordInfo};
use crate::definition::binding_site;
use crate::member_docs::{builtin_type, method, std_member};
use crate::refs::collect;
use crate::symbol::{record_of, resolve_type, symbol_at, Symbol};
use crate::walk::{alias_named, def_named_at, is_parameter, std_alias};

/// Markdown for the hover at `offset`, and the span it describes.
pub fn hover(a: &Analysis, offset: usize) -> Option<(String, Span)> {
    let entry = a.entry()?;
    if let Some(n) = entry.name_at(offset) {
        let name = entry.slice(n.span);
        let text = match &n.binding {
            Binding::Type(t) => record_block(a.types.get(t.0 as usize)?),
            Binding::Builtin(b) => format!("```kora\n{}\n```\nbuilt-in", builtin_name(*b)),
            Binding::Module(m) => {
                let f = a.file_of(*m)?;
                format!("```kora\nmodule {name}\n```\n`{}`", f.path.display())
            }
            Binding::Local { .. } | Binding::Global(..) => {
                let site = binding_site(a, entry, n);
                let def = site.and_then(|p| {
                    let f = &a.files[p.file];
                    def_named_at(&f.ast.stmts, p.span).map(|d| (f, d))
                });
                match def {
                    Some((f, d)) => signature(f, d),
                    None => {
                        let param = site.is_some_and(|p| {
                            let f = &a.files[p.file];
                            is_parameter(&f.ast.stmts, p.span)
                        });
                        let ty = shown_type(a, &n.ty, site.map(|p| (p.file, p.span)));
                        let what = if param { "parameter" } else { "variable" };
                        format!("```kora\n{name}: {ty}\n```\n{what}")
                    }
                }
            }
        };
        return Some((text, n.span));
    }
    if let Some(found) = syntax_hover(a, entry, offset) {
        return Some(found);
    }
    let (span, ty) = entry.expr_at(offset)?;
    ty.is_known()
        .then(|| (format!("```kora\n{ty}\n```"), *span))
}

/// What the checker keeps no name fact for: type names in annotations and patterns, record
/// fields (`r.category`, `Order(sku=...)`), methods of built-in types and standard members.
fn syntax_hover(a: &Analysis, entry: &FileAnalysis, offset: usize) -> Option<(String, Span)> {
    if let Some((sym, span)) = symbol_at(a, offset) {
        match sym {
            Symbol::Type(t) => return Some((record_block(a.types.get(t)?), span)),
            Symbol::Field(t, field) => {
                let info = a.types.get(t)?;
                let (_, fty) = info.fields.iter().find(|(n, _)| *n == field)?;
                let text = format!("```kora\n{field}: {fty}\n```\nfield of `{}`", info.name);
                return Some((text, span));
            }
            Symbol::Name { .. } => {}
        }
    }
    let off = offset as u32;
    let within = |s: Span| s.start <= off && off <= s.end;
    let refs = collect(&entry.text, &entry.ast.stmts);
    if let Some(t) = refs.types.iter().find(|t| within(t.span)) {
        if resolve_type(a, entry, &refs, t).is_some() {
            return None;
        }
        if t.qualifier.is_none() {
            if let Some((name, ty)) = alias_named(&entry.ast.stmts, &t.name) {
                let text = format!(
                    "```kora\ntype {} = {}\n```",
                    name.name,
                    entry.slice(ty.span)
                );
                return Some((text, t.span));
            }
            let doc = builtin_type(&t.name)?;
            return Some((format!("```kora\n{}\n```\n{doc}", t.name), t.span));
        }
        let full = format!("{}.{}", t.qualifier.as_deref().unwrap_or(""), t.name);
        return kora_check::std_api::StdType::from_name(&full).map(|_| {
            (
                format!("```kora\n{full}\n```\nstandard-library type"),
                t.span,
            )
        });
    }
    let m = refs.members.iter().find(|m| within(m.span))?;
    if record_of(entry, m.receiver).is_some() {
        return None;
    }
    let receiver = entry.slice(m.receiver);
    let sig = match std_alias(&entry.ast.stmts, receiver) {
        Some(module) if entry.name_at(m.receiver.start as usize).is_none() => {
            std_member(&module, &m.name)?
        }
        _ => {
            let (_, ty) = entry.exprs.iter().rev().find(|(s, _)| *s == m.receiver)?;
            method(ty, &m.name)?
        }
    };
    Some((sig.markdown(), m.span))
}

/// The type to show for a name: where it is read, else where it was bound.
fn shown_type(a: &Analysis, here: &Ty, site: Option<(usize, Span)>) -> Ty {
    if here.is_known() {
        return here.clone();
    }
    site.and_then(|(file, span)| {
        a.files[file]
            .names
            .iter()
            .find(|n| n.write && n.span == span)
            .map(|n| n.ty.clone())
    })
    .unwrap_or(Ty::Any)
}

fn record_block(r: &RecordInfo) -> String {
    let mut s = format!("```kora\ntype {}:\n", r.name);
    for (n, t) in &r.fields {
        s.push_str(&format!("    {n}: {t}\n"));
    }
    s.push_str("```");
    if let Some(d) = &r.doc {
        s.push_str("\n\n");
        s.push_str(d.trim());
    }
    s
}

/// `def name(a: int, b: str = "x") -> T`, as written, followed by the docstring.
pub fn signature(f: &FileAnalysis, d: &FuncDef) -> String {
    let kw = match d.kind {
        FuncKind::Def => "def",
        FuncKind::Tool => "tool",
        FuncKind::Agent => "agent",
    };
    let params: Vec<String> = d
        .params
        .iter()
        .map(|p| f.slice(p.span).trim().to_string())
        .collect();
    let mut s = format!("```kora\n{kw} {}({})", d.name.name, params.join(", "));
    if let Some(r) = &d.ret {
        s.push_str(" -> ");
        s.push_str(f.slice(r.span));
    }
    s.push_str("\n```");
    if let Some(doc) = &d.doc {
        s.push_str("\n\n");
        s.push_str(doc.trim());
    }
    s
}

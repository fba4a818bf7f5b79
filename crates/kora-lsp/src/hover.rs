//! Hover: the type of what is under the cursor, a function's signature and docstring, a record's fields.

use kora_check::facts::Binding;
use kora_check::hir::builtin_name;
use kora_check::types::Ty;
use kora_syntax::ast::{FuncDef, FuncKind};
use kora_syntax::Span;

use crate::analysis::{Analysis, FileAnalysis, RecordInfo};
use crate::definition::binding_site;
use crate::text::word_at;
use crate::walk::{def_named_at, is_parameter};

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
    if let Some(word) = word_at(&entry.text, offset) {
        if entry.text[..word.start].ends_with('.') {
            if let Some(Ty::Record(t, rname)) = entry.receiver_type(word.start - 1) {
                let field = &entry.text[word.clone()];
                let info = a.types.get(t.0 as usize)?;
                let (_, fty) = info.fields.iter().find(|(n, _)| n == field)?;
                let span = Span::new(word.start as u32, word.end as u32);
                return Some((
                    format!("```kora\n{field}: {fty}\n```\nfield of `{rname}`"),
                    span,
                ));
            }
        }
    }
    let (span, ty) = entry.expr_at(offset)?;
    ty.is_known()
        .then(|| (format!("```kora\n{ty}\n```"), *span))
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

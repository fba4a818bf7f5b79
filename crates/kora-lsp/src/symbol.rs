//! What a position names (a variable or function, a record type, a record field) and every place
//! that names the same thing, in the document and the modules it uses: the base of references,
//! rename, document highlight and hover/definition on annotations and fields.

use std::collections::HashMap;

use kora_check::facts::{Binding, NameFact};
use kora_check::hir::ModId;
use kora_check::types::Ty;
use kora_syntax::Span;

use crate::analysis::{Analysis, FileAnalysis};
use crate::definition::{binding_site, Place};
use crate::refs::{collect, FileRefs, TypeRef};
use crate::walk::record_named;

/// One named thing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Symbol {
    /// A variable, parameter or function, known by where it is bound and its name.
    Name { site: Place, name: String },
    /// A record type (an index into `Analysis::types`).
    Type(usize),
    /// A record's field: the record's index and the field's name.
    Field(usize, String),
}

/// One place a symbol is named; `write` when it binds or declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Occurrence {
    pub file: usize,
    pub span: Span,
    pub write: bool,
}

/// The symbol under `offset` in the entry file, and the span of the name there.
pub fn symbol_at(a: &Analysis, offset: usize) -> Option<(Symbol, Span)> {
    let entry = a.entry()?;
    let off = offset as u32;
    let within = |s: Span| s.start <= off && off <= s.end;
    if let Some(n) = entry.name_at(offset) {
        return name_symbol(a, entry, n).map(|s| (s, n.span));
    }
    let refs = collect(&entry.text, &entry.ast.stmts);
    if let Some(t) = refs.types.iter().find(|t| within(t.span)) {
        return resolve_type(a, entry, &refs, t).map(|i| (Symbol::Type(i), t.span));
    }
    if let Some(m) = refs.members.iter().find(|m| within(m.span)) {
        let field = record_of(entry, m.receiver)
            .and_then(|t| has_field(a, t, &m.name).then_some(Symbol::Field(t, m.name.clone())));
        return field.map(|f| (f, m.span));
    }
    if let Some(k) = refs.keywords.iter().find(|k| within(k.span)) {
        let t = type_called(a, entry, &refs, k.callee)?;
        return has_field(a, t, &k.name).then(|| (Symbol::Field(t, k.name.clone()), k.span));
    }
    // A record's own declaration: its name or one of its fields.
    for (i, r) in a.types.iter().enumerate() {
        if r.module != entry.module {
            continue;
        }
        let Some(decl) = record_named(&entry.ast.stmts, &r.name) else {
            continue;
        };
        if within(decl.name.span) {
            return Some((Symbol::Type(i), decl.name.span));
        }
        if let Some(f) = decl.fields.iter().find(|f| within(f.name.span)) {
            return Some((Symbol::Field(i, f.name.name.clone()), f.name.span));
        }
    }
    None
}

fn name_symbol(a: &Analysis, file: &FileAnalysis, n: &NameFact) -> Option<Symbol> {
    match &n.binding {
        Binding::Type(t) => Some(Symbol::Type(t.0 as usize)),
        Binding::Local { .. } | Binding::Global(..) => Some(Symbol::Name {
            site: binding_site(a, file, n)?,
            name: file.slice(n.span).to_string(),
        }),
        Binding::Builtin(_) | Binding::Module(_) => None,
    }
}

/// The record type of the expression written at `span`, if the checker knows it.
pub fn record_of(f: &FileAnalysis, span: Span) -> Option<usize> {
    f.exprs
        .iter()
        .filter(|(s, _)| *s == span)
        .find_map(|(_, t)| match t {
            Ty::Record(id, _) => Some(id.0 as usize),
            _ => None,
        })
}

fn has_field(a: &Analysis, t: usize, name: &str) -> bool {
    a.types
        .get(t)
        .is_some_and(|r| r.fields.iter().any(|(n, _)| n == name))
}

/// The module a `use "./x.ko" as alias` in `f` names.
fn module_of_alias(f: &FileAnalysis, refs: &FileRefs, alias: &str) -> Option<ModId> {
    let (_, path) = refs.aliases.iter().find(|(n, _)| n == alias)?;
    f.uses
        .iter()
        .find(|(s, _)| s.start < path.end && path.start < s.end)
        .map(|(_, m)| *m)
}

/// The record a type name written in `f` denotes.
pub fn resolve_type(a: &Analysis, f: &FileAnalysis, refs: &FileRefs, t: &TypeRef) -> Option<usize> {
    let module = match &t.qualifier {
        None => Some(f.module),
        Some(q) => module_of_alias(f, refs, q),
    };
    let full = t
        .qualifier
        .as_ref()
        .map(|q| format!("{q}.{}", t.name))
        .unwrap_or_default();
    a.types
        .iter()
        .position(|r| module.is_some_and(|m| r.module == m) && r.name == t.name)
        .or_else(|| a.types.iter().position(|r| r.name == full))
}

/// The record whose constructor is named at `callee` (a call or a constructor pattern).
fn type_called(a: &Analysis, f: &FileAnalysis, refs: &FileRefs, callee: Span) -> Option<usize> {
    if let Some(n) = f.names.iter().find(|n| n.span == callee) {
        return match n.binding {
            Binding::Type(t) => Some(t.0 as usize),
            _ => None,
        };
    }
    let t = refs.types.iter().find(|t| t.span == callee)?;
    resolve_type(a, f, refs, t)
}

/// Every occurrence of `sym` in the analysis's files, declarations first within each file.
pub fn occurrences(a: &Analysis, sym: &Symbol) -> Vec<Occurrence> {
    let mut out = Vec::new();
    for (fi, f) in a.files.iter().enumerate() {
        let refs = collect(&f.text, &f.ast.stmts);
        let at = |span: Span, write: bool| Occurrence {
            file: fi,
            span,
            write,
        };
        match sym {
            Symbol::Name { site, name } => {
                let mut sites: HashMap<&Binding, Option<Place>> = HashMap::new();
                for n in f.names.iter().filter(|n| f.slice(n.span) == name) {
                    let found = *sites
                        .entry(&n.binding)
                        .or_insert_with(|| binding_site(a, f, n));
                    if found == Some(*site) {
                        out.push(at(n.span, n.write));
                    }
                }
            }
            Symbol::Type(t) => {
                let Some(info) = a.types.get(*t) else {
                    return out;
                };
                if info.module == f.module {
                    if let Some(d) = record_named(&f.ast.stmts, &info.name) {
                        out.push(at(d.name.span, true));
                    }
                }
                for n in &f.names {
                    if n.binding == Binding::Type(kora_check::hir::TypeId(*t as u32)) {
                        out.push(at(n.span, false));
                    }
                }
                for r in &refs.types {
                    if r.name == info.name
                        && !out.iter().any(|o| o.file == fi && o.span == r.span)
                        && resolve_type(a, f, &refs, r) == Some(*t)
                    {
                        out.push(at(r.span, false));
                    }
                }
            }
            Symbol::Field(t, field) => {
                let Some(info) = a.types.get(*t) else {
                    return out;
                };
                if info.module == f.module {
                    if let Some(d) = record_named(&f.ast.stmts, &info.name) {
                        if let Some(fd) = d.fields.iter().find(|fd| &fd.name.name == field) {
                            out.push(at(fd.name.span, true));
                        }
                    }
                }
                for m in refs.members.iter().filter(|m| &m.name == field) {
                    if record_of(f, m.receiver) == Some(*t) {
                        out.push(at(m.span, false));
                    }
                }
                for k in refs.keywords.iter().filter(|k| &k.name == field) {
                    if type_called(a, f, &refs, k.callee) == Some(*t) {
                        out.push(at(k.span, false));
                    }
                }
            }
        }
    }
    out.sort_by_key(|o| (o.file, o.span.start));
    out.dedup();
    out
}

//! Go to definition: from a name, field or `use` path in the analysed document to where it is declared, in any file it reaches.

use kora_check::facts::{Binding, NameFact};
use kora_syntax::Span;

use crate::analysis::{Analysis, FileAnalysis};
use crate::refs::collect;
use crate::symbol::{occurrences, symbol_at};
use crate::walk::{alias_named, record_named};

/// A place in one of the analysis's files (`file` indexes `Analysis::files`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub file: usize,
    pub span: Span,
}

pub fn definition(a: &Analysis, offset: usize) -> Option<Place> {
    let entry = a.entry()?;
    let off = offset as u32;
    if let Some((_, m)) = entry.uses.iter().find(|(s, _)| s.contains(off)) {
        let file = a.files.iter().position(|f| f.module == *m)?;
        return Some(Place {
            file,
            span: Span::new(0, 0),
        });
    }
    if let Some(n) = entry.name_at(offset) {
        return binding_site(a, entry, n);
    }
    if let Some((sym, _)) = symbol_at(a, offset) {
        if let Some(o) = occurrences(a, &sym).into_iter().find(|o| o.write) {
            return Some(Place {
                file: o.file,
                span: o.span,
            });
        }
    }
    alias_site(entry, offset)
}

/// A name in an annotation that names a `type X = ...` alias of this file.
fn alias_site(entry: &FileAnalysis, offset: usize) -> Option<Place> {
    let off = offset as u32;
    let refs = collect(&entry.text, &entry.ast.stmts);
    let t = refs
        .types
        .iter()
        .find(|t| t.qualifier.is_none() && t.span.start <= off && off <= t.span.end)?;
    let (name, _) = alias_named(&entry.ast.stmts, &t.name)?;
    Some(Place {
        file: 0,
        span: name.span,
    })
}

/// Where the name occurrence `n` (in `file`) was bound.
pub fn binding_site(a: &Analysis, file: &FileAnalysis, n: &NameFact) -> Option<Place> {
    let index_of = |f: &FileAnalysis| a.files.iter().position(|g| g.module == f.module);
    match &n.binding {
        Binding::Local { scope, .. } => {
            if let Some(w) = file.first_write(&n.binding) {
                return Some(Place {
                    file: index_of(file)?,
                    span: w.span,
                });
            }
            // A variable captured from an enclosing function is a slot of its
            // own in the inner one; find the binding of that name outside.
            let name = file.slice(n.span);
            let outer = file
                .names
                .iter()
                .filter(|w| w.write && file.slice(w.span) == name)
                .filter_map(|w| match &w.binding {
                    Binding::Local { scope: s, .. }
                        if s != scope && s.start <= scope.start && scope.end <= s.end =>
                    {
                        Some((s.len(), w))
                    }
                    Binding::Global(m, _) if *m == file.module => Some((u32::MAX, w)),
                    _ => None,
                })
                .min_by_key(|(size, w)| (*size, w.span.start))?;
            Some(Place {
                file: index_of(file)?,
                span: outer.1.span,
            })
        }
        Binding::Global(m, _) => {
            let owner = a.file_of(*m)?;
            let w = owner.first_write(&n.binding)?;
            Some(Place {
                file: index_of(owner)?,
                span: w.span,
            })
        }
        Binding::Type(t) => {
            let info = a.types.get(t.0 as usize)?;
            let owner = a.file_of(info.module)?;
            let decl = record_named(&owner.ast.stmts, &info.name)?;
            Some(Place {
                file: index_of(owner)?,
                span: decl.name.span,
            })
        }
        Binding::Module(m) => Some(Place {
            file: a.files.iter().position(|f| f.module == *m)?,
            span: Span::new(0, 0),
        }),
        Binding::Builtin(_) => None,
    }
}

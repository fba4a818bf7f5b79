//! References and renames that reach upward: the workspace files that `use` the file a symbol is
//! declared in. An analysis only sees the document and what it uses, so renaming `total` from
//! `lib.ko` would leave `main.ko`'s `lib.total(...)` behind; here every workspace file that reads
//! the declaring file is analysed as an entry of its own and searched for the same symbol.
//!
//! A symbol is carried from one analysis to another by where it is declared (file path, and the
//! span or record name there), never by the index an analysis gave it: indices differ between
//! analyses. Locals never leave their file, so only module-level names, records and fields do.

use std::path::{Path, PathBuf};

use kora_check::facts::Binding;
use kora_syntax::Span;

use std::sync::Arc;

use tower_lsp_server::ls_types::Uri;

use crate::analysis::Analysis;
use crate::definition::Place;
use crate::documents::Documents;
use crate::symbol::{occurrences, Occurrence, Symbol};
use crate::workspace_symbols::kora_files;

/// Bounds the work of one request in a large workspace: each candidate is parsed and checked.
const MAX_IMPORTERS: usize = 200;

/// A symbol known by its declaration, independent of any one analysis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Anchor {
    pub path: PathBuf,
    kind: Kind,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Kind {
    Global { span: Span, name: String },
    Record { name: String },
    Field { record: String, field: String },
}

/// The declaration of `sym`, when other files can name it.
pub fn anchor_of(a: &Analysis, sym: &Symbol) -> Option<Anchor> {
    let record = |t: usize| {
        let info = a.types.get(t)?;
        // A standard-library record (`http.Response`) is declared in no workspace file.
        if info.name.contains('.') {
            return None;
        }
        Some((a.file_of(info.module)?.path.clone(), info.name.clone()))
    };
    match sym {
        Symbol::Name { site, name } => {
            let owner = a.files.get(site.file)?;
            let global = owner
                .names
                .iter()
                .any(|n| n.span == site.span && matches!(n.binding, Binding::Global(..)));
            global.then(|| Anchor {
                path: owner.path.clone(),
                kind: Kind::Global {
                    span: site.span,
                    name: name.clone(),
                },
            })
        }
        Symbol::Type(t) => record(*t).map(|(path, name)| Anchor {
            path,
            kind: Kind::Record { name },
        }),
        Symbol::Field(t, field) => record(*t).map(|(path, record)| Anchor {
            path,
            kind: Kind::Field {
                record,
                field: field.clone(),
            },
        }),
    }
}

/// The same symbol in another analysis, if that analysis read the declaring file.
pub fn resolve(a: &Analysis, anchor: &Anchor) -> Option<Symbol> {
    let file = a.files.iter().position(|f| f.path == anchor.path)?;
    let module = a.files.get(file)?.module;
    let record = |name: &str| {
        a.types
            .iter()
            .position(|r| r.module == module && r.name == name)
    };
    match &anchor.kind {
        Kind::Global { span, name } => Some(Symbol::Name {
            site: Place { file, span: *span },
            name: name.clone(),
        }),
        Kind::Record { name } => record(name).map(Symbol::Type),
        Kind::Field { record: r, field } => record(r).map(|t| Symbol::Field(t, field.clone())),
    }
}

/// The workspace's `.ko` files that may `use` another file: those with a `use` line, other than
/// `skip` (the files the request's own analysis already covers).
pub fn candidates(
    files: &[PathBuf],
    skip: &[&Path],
    text: impl Fn(&Path) -> Option<String>,
) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for f in files {
        if out.len() >= MAX_IMPORTERS {
            break;
        }
        if skip.contains(&f.as_path()) || out.contains(f) {
            continue;
        }
        // `use` is a top-level statement: it starts its line.
        let uses = text(f).is_some_and(|t| t.lines().any(|l| l.starts_with("use ")));
        if uses {
            out.push(f.clone());
        }
    }
    out
}

/// The occurrences of the anchored symbol in `a`, when `a` reads its declaring file.
pub fn occurrences_in(a: &Analysis, anchor: &Anchor) -> Vec<Occurrence> {
    match resolve(a, anchor) {
        Some(sym) => occurrences(a, &sym),
        None => Vec::new(),
    }
}

/// Occurrences found outside one analysis: the entry's URI, the analysis, and the places.
pub type Found = Vec<(Uri, Arc<Analysis>, Vec<Occurrence>)>;

/// Every occurrence of `sym` (a symbol of `a`) in the workspace files that use its declaring file
/// and that `a` does not already cover.
pub fn upward(docs: &Documents, roots: &[PathBuf], a: &Analysis, sym: &Symbol) -> Found {
    let Some(anchor) = anchor_of(a, sym) else {
        return Vec::new();
    };
    let mut files = docs.open_paths();
    files.sort();
    for r in roots {
        kora_files(r, &mut files);
    }
    let covered: Vec<&Path> = a.files.iter().map(|f| f.path.as_path()).collect();
    let read = |p: &Path| docs.text(p).or_else(|| std::fs::read_to_string(p).ok());
    let mut out = Vec::new();
    for path in candidates(&files, &covered, read) {
        let Some(other) = docs.analysis_of_path(&path) else {
            continue;
        };
        let found = occurrences_in(&other, &anchor);
        if found.is_empty() {
            continue;
        }
        let Some(uri) = docs.uri(&path).or_else(|| Uri::from_file_path(&path)) else {
            continue;
        };
        out.push((uri, other, found));
    }
    out
}

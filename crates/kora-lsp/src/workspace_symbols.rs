//! Workspace symbols: the functions, record types (and their fields), type aliases and top-level
//! variables of every `.ko` file under the workspace folders and of every open document, matched
//! against the query as a case-insensitive subsequence (`pord` finds `parse_order`).
//!
//! Files are only parsed, not checked, so a large workspace answers quickly.

use std::path::{Path, PathBuf};

use kora_syntax::ast::{ExprKind, Stmt, StmtKind};
use kora_syntax::Span;
use tower_lsp_server::ls_types::{Location, SymbolInformation, SymbolKind, Uri};

use crate::text::Lines;

/// Enough for any real project; a home folder opened by mistake stops here instead of hanging.
const MAX_FILES: usize = 5_000;

/// Folders never searched: build output, dependencies, version control, caches.
const SKIPPED: &[&str] = &["target", "node_modules", "__pycache__", "venv"];

/// Every `.ko` file under `root`, depth first, hidden and skipped folders left out.
pub fn kora_files(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if out.len() >= MAX_FILES {
            return;
        }
        let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name.starts_with('.') || SKIPPED.contains(&name) {
            continue;
        }
        if p.is_dir() {
            kora_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "ko") {
            out.push(p);
        }
    }
}

/// Does `query` occur in `name` as a subsequence, ignoring case?
pub fn matches(query: &str, name: &str) -> bool {
    let mut it = name.chars().flat_map(char::to_lowercase);
    query
        .chars()
        .flat_map(char::to_lowercase)
        .all(|q| it.any(|c| c == q))
}

/// The symbols of one file's text that match `query`.
#[allow(deprecated)] // `SymbolInformation::deprecated` must be written, though the protocol retired it.
pub fn file_symbols(uri: &Uri, text: &str, query: &str, out: &mut Vec<SymbolInformation>) {
    let parsed = kora_syntax::parse(text);
    let lines = Lines::new(text);
    let mut found: Vec<(String, SymbolKind, Span, Option<String>)> = Vec::new();
    collect(&parsed.module.stmts, None, true, &mut found);
    for (name, kind, span, container) in found {
        if !matches(query, &name) {
            continue;
        }
        out.push(SymbolInformation {
            name,
            kind,
            tags: None,
            deprecated: None,
            location: Location::new(uri.clone(), lines.range(text, span)),
            container_name: container,
        });
    }
}

type Found = Vec<(String, SymbolKind, Span, Option<String>)>;

fn collect(stmts: &[Stmt], container: Option<&str>, top: bool, out: &mut Found) {
    let within = || container.map(str::to_string);
    for s in stmts {
        match &s.kind {
            StmtKind::Def(d) => {
                out.push((
                    d.name.name.clone(),
                    SymbolKind::FUNCTION,
                    d.name.span,
                    within(),
                ));
                collect(&d.body, Some(&d.name.name), false, out);
            }
            StmtKind::Record(r) => {
                out.push((
                    r.name.name.clone(),
                    SymbolKind::STRUCT,
                    r.name.span,
                    within(),
                ));
                for f in &r.fields {
                    out.push((
                        f.name.name.clone(),
                        SymbolKind::FIELD,
                        f.name.span,
                        Some(r.name.name.clone()),
                    ));
                }
            }
            StmtKind::TypeAlias { name, .. } => out.push((
                name.name.clone(),
                SymbolKind::INTERFACE,
                name.span,
                within(),
            )),
            StmtKind::Assign { targets, .. } if top => {
                for t in targets {
                    if let ExprKind::Name(n) = &t.kind {
                        out.push((n.clone(), SymbolKind::VARIABLE, t.span, None));
                    }
                }
            }
            StmtKind::AnnAssign { target, .. } if top => {
                out.push((target.name.clone(), SymbolKind::VARIABLE, target.span, None))
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn queries_match_as_subsequences() {
        assert!(matches("pord", "parse_order"));
        assert!(matches("", "x"));
        assert!(matches("PO", "parse_order"));
        assert!(!matches("op", "po"));
    }
}

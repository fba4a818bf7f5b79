//! One analysis of a document: parse + check of it and every file it `use`s, kept as plain thread-safe data.
//!
//! The checker's own results hold `Rc`s; they are converted here, on the
//! thread that checked, into tables every request can read from any thread.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use kora_check::facts::{Binding, NameFact};
use kora_check::hir::{ExtId, External, ModId};
use kora_check::lower_external::ExtTool;
use kora_check::types::Ty;
use kora_check::{check_program_with, Options, Sources};
use kora_syntax::ast;
use kora_syntax::{Diagnostic, Span};

use crate::text::Lines;

/// Source text: open editor buffers first, the disk for everything else.
pub struct Overlay<'a> {
    pub open: &'a HashMap<PathBuf, String>,
    /// Packages resolve as `kora check` resolves them (kora-pkg's resolver).
    pub packages: Option<&'a dyn kora_check::Packages>,
}

impl Sources for Overlay<'_> {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        match self.open.get(path) {
            Some(t) => Ok(t.clone()),
            None => kora_check::loader::read_source(path),
        }
    }

    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        match std::fs::canonicalize(path) {
            Ok(p) => Ok(p),
            // An unsaved buffer has no file yet; it is known by the path the editor gave.
            Err(e) => match self.open.contains_key(path) {
                true => Ok(path.to_path_buf()),
                false => Err(e),
            },
        }
    }

    fn packages(&self) -> Option<&dyn kora_check::Packages> {
        self.packages
    }
}

/// A record type as hover and completion show it.
#[derive(Clone, Debug)]
pub struct RecordInfo {
    pub name: String,
    pub module: ModId,
    pub fields: Vec<(String, Ty)>,
    pub doc: Option<String>,
}

/// One file reached by the analysis.
pub struct FileAnalysis {
    pub path: PathBuf,
    pub module: ModId,
    pub text: Arc<str>,
    pub lines: Lines,
    pub diagnostics: Vec<Diagnostic>,
    pub ast: ast::Module,
    pub exprs: Vec<(Span, Ty)>,
    pub names: Vec<NameFact>,
    pub uses: Vec<(Span, ModId)>,
    /// Each `alias` of `alias.member` on an external module, and which one (`Analysis::externals`).
    pub externals: Vec<(Span, ExtId)>,
}

impl FileAnalysis {
    pub fn slice(&self, span: Span) -> &str {
        self.text.get(span.range()).unwrap_or("")
    }

    /// The innermost name occurrence at `offset` (the end of a name counts, as editors place the cursor there).
    pub fn name_at(&self, offset: usize) -> Option<&NameFact> {
        let off = offset as u32;
        self.names
            .iter()
            .filter(|n| n.span.start <= off && off <= n.span.end)
            .min_by_key(|n| n.span.len())
    }

    /// The innermost expression covering `offset`, with its type.
    pub fn expr_at(&self, offset: usize) -> Option<&(Span, Ty)> {
        let off = offset as u32;
        self.exprs
            .iter()
            .filter(|(s, _)| s.contains(off))
            .min_by_key(|(s, _)| s.len())
    }

    /// The type of the outermost expression that ends where a `.` at `dot` begins.
    pub fn receiver_type(&self, dot: usize) -> Option<&Ty> {
        let before = self.text.get(..dot)?.trim_end().len() as u32;
        self.exprs
            .iter()
            .filter(|(s, _)| s.end == before && !s.is_empty())
            .max_by_key(|(s, _)| s.len())
            .map(|(_, t)| t)
    }

    /// Where a binding is first bound in this file.
    pub fn first_write(&self, binding: &Binding) -> Option<&NameFact> {
        self.names
            .iter()
            .filter(|n| n.write && &n.binding == binding)
            .min_by_key(|n| n.span.start)
    }
}

/// Everything known about one document version.
pub struct Analysis {
    /// The analysed document first, then every file it reaches.
    pub files: Vec<FileAnalysis>,
    /// Record types by `TypeId`.
    pub types: Vec<RecordInfo>,
    /// Why the document could not be read at all.
    pub unreadable: Option<String>,
    /// The external modules used (`use mcp`, `use python`), by `ExtId`, with an MCP server's
    /// cached tools when `.kora/mcp/NAME.json` exists.
    pub externals: Vec<(External, Option<Vec<ExtTool>>)>,
}

impl Analysis {
    pub fn entry(&self) -> Option<&FileAnalysis> {
        self.files.first()
    }

    pub fn file_of(&self, m: ModId) -> Option<&FileAnalysis> {
        self.files.iter().find(|f| f.module == m)
    }

    /// Every path this analysis read, so an edit to one of them re-checks this document.
    pub fn depends_on(&self, path: &Path) -> bool {
        self.files.iter().any(|f| f.path == path)
    }
}

/// Parses and checks `entry` (and what it uses), reading open buffers from `open`.
pub fn analyze(entry: &Path, open: &HashMap<PathBuf, String>) -> Analysis {
    let project = kora_pkg::Project::for_entry(entry);
    let overlay = Overlay {
        open,
        packages: Some(&project.resolver),
    };
    let checked = match check_program_with(
        entry,
        &overlay,
        Options {
            facts: true,
            ..Options::default()
        },
    ) {
        Ok(c) => c,
        Err(e) => {
            return Analysis {
                files: Vec::new(),
                types: Vec::new(),
                unreadable: Some(format!("cannot read `{}`: {}", e.path.display(), e.error)),
                externals: Vec::new(),
            }
        }
    };
    let Some(facts) = checked.facts else {
        return Analysis {
            files: Vec::new(),
            types: Vec::new(),
            unreadable: Some("the checker kept no facts".into()),
            externals: Vec::new(),
        };
    };
    let names = facts.names;
    let types = facts
        .types
        .iter()
        .map(|r| RecordInfo {
            name: r.name.clone(),
            module: r.module,
            fields: r
                .fields
                .iter()
                .map(|f| {
                    let n = names.get(f.name.0 as usize).cloned().unwrap_or_default();
                    (n, f.ty.clone())
                })
                .collect(),
            doc: r.doc.clone(),
        })
        .collect();
    let files = checked
        .files
        .into_iter()
        .zip(facts.files)
        .map(|(report, ff)| {
            let text: Arc<str> = Arc::from(&*report.source);
            FileAnalysis {
                path: report.path,
                module: ff.module,
                lines: Lines::new(&text),
                text,
                diagnostics: report.diagnostics,
                ast: ff.ast,
                exprs: ff.facts.exprs,
                names: ff.facts.names,
                uses: ff.uses,
                externals: ff.facts.externals,
            }
        })
        .collect();
    let externals = checked
        .externals
        .into_iter()
        .zip(
            facts
                .external_tools
                .into_iter()
                .chain(std::iter::repeat(None)),
        )
        .collect();
    Analysis {
        files,
        types,
        unreadable: None,
        externals,
    }
}

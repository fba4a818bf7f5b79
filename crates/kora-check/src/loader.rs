//! Finds every file a program reaches through `use "./x.ko" as x`, parses each once, and refuses cycles.
//!
//! Paths resolve against the importing file, never the working directory;
//! a file is identified by its canonical path, so a diamond is one module.

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;

use kora_syntax::ast::{Module, StmtKind, UseTarget};
use kora_syntax::{Diagnostic, Span};

use crate::codes;

/// Where source text comes from: the disk for the CLI, open buffers for the language server.
pub trait Sources {
    fn read(&self, path: &Path) -> std::io::Result<String>;
    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        std::fs::canonicalize(path)
    }
    /// The package resolver, when the caller has one (the CLI and the language server do).
    fn packages(&self) -> Option<&dyn Packages> {
        None
    }
    /// The tree of `text`, just read from `path`. The language server answers from the trees
    /// it kept for earlier versions (`kora_syntax::reparse`); any answer must equal `parse`'s.
    fn parse(&self, _path: &Path, text: &str) -> kora_syntax::Parsed {
        kora_syntax::parse(text)
    }
}

/// Where `use NAME` and `use NAME.module` find a package: the seam kora-pkg fills. The
/// answer depends on the importing file, because names resolve against the manifest that
/// wrote them, never a global table.
pub trait Packages {
    fn resolve(&self, importer: &Path, name: &str, module: Option<&str>) -> PackageLookup;
    /// Called once before a load walks from `entry` (reading through `sources`): a resolver
    /// that fetches may fetch everything the walk is about to ask for at once.
    fn prepare(&self, _entry: &Path, _sources: &dyn Sources) {}
}

/// What a manifest says about one `use NAME[.module]`.
pub enum PackageLookup {
    /// The importing file's manifest declares no dependency by that name.
    NotDeclared,
    Found(PackageModule),
    /// Declared, but unusable (missing directory, a failed fetch, a refused grant): why.
    Failed(String),
}

/// One module of a resolved package.
pub struct PackageModule {
    /// The `.ko` file (canonical).
    pub path: PathBuf,
    /// The package's directory (canonical): its own `use "..."` may not leave it.
    pub root: PathBuf,
    /// The package's identity in operation ids and records: its name, made unique when two
    /// sources share one name.
    pub id: String,
    /// Whether its manifest declares `[package.helper]` (so its code may `use helper`).
    pub helper: bool,
}

pub struct Disk;

impl Sources for Disk {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        read_source(path)
    }
}

/// Reads a source file; text that is not UTF-8 is refused with the byte offset and line of
/// the first bad byte, so the user can find it.
pub fn read_source(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let good = &e.as_bytes()[..at];
        let line = good.iter().filter(|b| **b == b'\n').count() + 1;
        let col = match good.iter().rposition(|b| *b == b'\n') {
            // Columns count characters; everything before `at` is valid UTF-8.
            Some(nl) => String::from_utf8_lossy(&good[nl + 1..]).chars().count() + 1,
            None => String::from_utf8_lossy(good).chars().count() + 1,
        };
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "invalid UTF-8 at byte {at} (line {line}, column {col}): save the file as UTF-8"
            ),
        )
    })
}

/// One parsed file of the program.
pub struct LoadedFile {
    pub path: PathBuf,
    pub display: String,
    pub source: std::sync::Arc<str>,
    pub ast: Module,
    pub diagnostics: Vec<Diagnostic>,
    /// For each `use "..."` in the file: the span of the path literal and the file it names.
    pub uses: FxHashMap<Span, usize>,
    /// The package the file belongs to (`None`: the program itself) and that package's root.
    pub package: Option<(String, PathBuf)>,
}

pub struct Loaded {
    pub files: Vec<LoadedFile>,
    /// Dependencies before dependents; the entry is last.
    pub order: Vec<usize>,
    pub entry: usize,
    /// The ids of the packages whose manifest declares `[package.helper]`.
    pub helpers: std::collections::BTreeSet<String>,
}

/// Why the entry file itself could not be read.
#[derive(Debug)]
pub struct EntryError {
    pub path: PathBuf,
    pub error: std::io::Error,
}

pub fn load(entry: &Path, sources: &dyn Sources) -> Result<Loaded, EntryError> {
    if let Some(p) = sources.packages() {
        p.prepare(entry, sources);
    }
    let text = sources.read(entry).map_err(|error| EntryError {
        path: entry.to_path_buf(),
        error,
    })?;
    let canonical = sources
        .canonicalize(entry)
        .unwrap_or_else(|_| entry.to_path_buf());
    let mut l = Loader {
        sources,
        files: Vec::new(),
        by_path: FxHashMap::default(),
        order: Vec::new(),
        stack: Vec::new(),
        helpers: Default::default(),
    };
    let entry_idx = l.add(canonical, entry.display().to_string(), text, None);
    l.visit(entry_idx);
    Ok(Loaded {
        files: l.files,
        order: l.order,
        entry: entry_idx,
        helpers: l.helpers,
    })
}

struct Loader<'a> {
    sources: &'a dyn Sources,
    files: Vec<LoadedFile>,
    by_path: FxHashMap<PathBuf, usize>,
    order: Vec<usize>,
    stack: Vec<usize>,
    helpers: std::collections::BTreeSet<String>,
}

impl Loader<'_> {
    fn add(
        &mut self,
        path: PathBuf,
        display: String,
        text: String,
        package: Option<(String, PathBuf)>,
    ) -> usize {
        let parsed = self.sources.parse(&path, &text);
        let idx = self.files.len();
        self.by_path.insert(path.clone(), idx);
        self.files.push(LoadedFile {
            path,
            display,
            source: text.into(),
            ast: parsed.module,
            diagnostics: parsed.diagnostics,
            uses: FxHashMap::default(),
            package,
        });
        idx
    }

    fn visit(&mut self, idx: usize) {
        self.stack.push(idx);
        let mut wanted: Vec<(String, Span)> = Vec::new();
        let mut packages: Vec<(String, Span)> = Vec::new();
        for s in &self.files[idx].ast.stmts {
            if let StmtKind::Use(u) = &s.kind {
                match &u.target {
                    UseTarget::File { path, span } => wanted.push((path.clone(), *span)),
                    UseTarget::Std(n) if !is_std(&n.name) => {
                        packages.push((n.name.clone(), n.span))
                    }
                    _ => {}
                }
            }
        }
        for (name, span) in packages {
            self.package_use(idx, &name, span);
        }
        let dir = self.files[idx]
            .path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        let display_dir = Path::new(&self.files[idx].display)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        for (rel, span) in wanted {
            let joined = dir.join(&rel);
            let display = normalize(&display_dir.join(&rel));
            let canonical = match self.sources.canonicalize(&joined) {
                Ok(c) => c,
                Err(_) => {
                    self.files[idx].diagnostics.push(
                        Diagnostic::error(
                            codes::USE_NOT_FOUND,
                            format!("cannot find `{rel}`"),
                            span,
                        )
                        .with_label(format!("looked for {}", joined.display()))
                        .with_help(
                            "paths in `use` are relative to the file that contains the `use`",
                        ),
                    );
                    continue;
                }
            };
            if let Some((id, root)) = self.files[idx].package.clone() {
                if !canonical.starts_with(&root) {
                    self.files[idx].diagnostics.push(
                        Diagnostic::error(
                            codes::PACKAGE_ESCAPE,
                            format!("package `{id}` may not `use` a file outside its directory"),
                            span,
                        )
                        .with_label(format!(
                            "{} is outside {}",
                            canonical.display(),
                            root.display()
                        ))
                        .with_help(
                            "a package reaches other code only through its own `[dependencies]`",
                        ),
                    );
                    continue;
                }
            }
            if let Some(&existing) = self.by_path.get(&canonical) {
                if let Some(pos) = self.stack.iter().position(|&s| s == existing) {
                    let mut chain: Vec<String> = self.stack[pos..]
                        .iter()
                        .map(|&s| self.files[s].display.clone())
                        .collect();
                    chain.push(self.files[existing].display.clone());
                    self.files[idx].diagnostics.push(
                        Diagnostic::error(
                            codes::USE_CYCLE,
                            format!("`use` cycle: {}", chain.join(" → ")),
                            span,
                        )
                        .with_label("this `use` closes the cycle")
                        .with_help(
                            "move what both files need into a third file that neither imports back",
                        ),
                    );
                    continue;
                }
                self.files[idx].uses.insert(span, existing);
                continue;
            }
            match self.sources.read(&canonical) {
                Ok(text) => {
                    let package = self.files[idx].package.clone();
                    let child = self.add(canonical, display, text, package);
                    self.files[idx].uses.insert(span, child);
                    self.visit(child);
                }
                Err(e) => {
                    self.files[idx].diagnostics.push(
                        Diagnostic::error(
                            codes::USE_NOT_FOUND,
                            format!("cannot read `{rel}`: {e}"),
                            span,
                        )
                        .with_label("named here"),
                    );
                }
            }
        }
        self.stack.pop();
        self.order.push(idx);
    }
}

impl Loader<'_> {
    /// `use pkg` / `use pkg.module`: asks the importing file's manifest (through `Packages`).
    fn package_use(&mut self, idx: usize, dotted: &str, span: Span) {
        let (name, module) = match dotted.split_once('.') {
            Some((n, m)) => (n, Some(m)),
            None => (dotted, None),
        };
        let found = match self.sources.packages() {
            Some(p) => p.resolve(&self.files[idx].path, name, module),
            None => PackageLookup::NotDeclared,
        };
        let m = match found {
            // A bare unknown name is left to the checker's "no standard module" message.
            PackageLookup::NotDeclared if module.is_none() => return,
            PackageLookup::NotDeclared => {
                self.files[idx].diagnostics.push(
                    Diagnostic::error(
                        codes::PACKAGE_NOT_DECLARED,
                        format!("no package `{name}` is declared for this file"),
                        span,
                    )
                    .with_label("not in `[dependencies]`")
                    .with_help(format!(
                        "add it to the `kora.toml` beside this program: `kora add {name} --path DIR`"
                    )),
                );
                return;
            }
            PackageLookup::Failed(why) => {
                self.files[idx].diagnostics.push(
                    Diagnostic::error(codes::PACKAGE_UNUSABLE, why, span)
                        .with_label(format!("package `{name}` is needed here")),
                );
                return;
            }
            PackageLookup::Found(m) => m,
        };
        if let Some(&existing) = self.by_path.get(&m.path) {
            if self.stack.contains(&existing) {
                self.files[idx].diagnostics.push(
                    Diagnostic::error(
                        codes::USE_CYCLE,
                        format!("`use` cycle through package `{name}`"),
                        span,
                    )
                    .with_label("this `use` closes the cycle"),
                );
                return;
            }
            self.files[idx].uses.insert(span, existing);
            return;
        }
        if m.helper {
            self.helpers.insert(m.id.clone());
        }
        match self.sources.read(&m.path) {
            Ok(text) => {
                let display = std::env::current_dir()
                    .ok()
                    .and_then(|cwd| m.path.strip_prefix(cwd).ok().map(Path::to_path_buf))
                    .unwrap_or_else(|| m.path.clone())
                    .display()
                    .to_string();
                let child = self.add(m.path.clone(), display, text, Some((m.id, m.root)));
                self.files[idx].uses.insert(span, child);
                self.visit(child);
            }
            Err(e) => {
                self.files[idx].diagnostics.push(
                    Diagnostic::error(
                        codes::PACKAGE_UNUSABLE,
                        format!("cannot read {}: {e}", m.path.display()),
                        span,
                    )
                    .with_label(format!("package `{name}` is needed here"))
                    .with_help(match module {
                        Some(md) => {
                            format!("`use {name}.{md}` reads `{md}.ko` in the package's directory")
                        }
                        None => "`use NAME` reads the package's `lib.ko`".to_string(),
                    }),
                );
            }
        }
    }
}

/// Whether `use NAME` names the standard library rather than a package.
fn is_std(name: &str) -> bool {
    crate::std_api::StdMod::from_name(name).is_some() || crate::std_api::PLANNED.contains(&name)
}

/// `a/./b/../c.ko` → `a/c.ko`, lexically: for showing paths, never for opening them.
fn normalize(p: &Path) -> String {
    use std::path::Component;
    let mut out: Vec<Component> = Vec::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir if matches!(out.last(), Some(Component::Normal(_))) => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out.iter().collect::<PathBuf>().display().to_string()
}

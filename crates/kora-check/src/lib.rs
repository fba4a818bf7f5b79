//! Kora's checker: loads a program's files, resolves every name to a slot, checks types, and lowers to `hir`.
//!
//! Pure: it reads sources through the `Sources` trait and never runs
//! anything. The runtime walks the `hir::Program` it produces; the language
//! server uses the same diagnostics.

pub mod audit;
pub mod codes;
pub mod facts;
pub mod hir;
mod label_flow;
pub mod literal_labels;
pub mod loader;
mod lower;
mod lower_budget;
mod lower_call;
mod lower_eval;
mod lower_expr;
mod lower_fn;
mod lower_model;
mod lower_parallel;
mod lower_pattern;
mod lower_std;
mod lower_stmt;
mod lower_store;
mod lower_test;
mod lower_tools;
pub mod names;
pub mod scope;
pub mod std_api;
pub mod suggest;
pub mod typeexpr;
pub mod types;

use std::path::Path;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use kora_syntax::ast::{self, StmtKind};
use kora_syntax::Diagnostic;

pub use loader::{Disk, EntryError, Sources};
use lower::{Ctx, ModInfo, Sig};
use types::Ty;

/// One file's diagnostics, with what is needed to render them.
#[derive(Debug)]
pub struct FileReport {
    pub display: String,
    pub path: std::path::PathBuf,
    pub source: Arc<str>,
    pub diagnostics: Vec<Diagnostic>,
}

pub struct Checked {
    /// The program, when no file has an error.
    pub program: Option<Arc<hir::Program>>,
    /// Every file reached, entry first.
    pub files: Vec<FileReport>,
    /// With `Options::facts`: what the checker learned, for the language server.
    pub facts: Option<ProgramFacts>,
}

/// What to keep beyond diagnostics and the program.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Keep every file's tree, expression types and name resolutions (`ProgramFacts`).
    pub facts: bool,
}

/// The language server's view of a checked program; `files[i]` belongs to `Checked::files[i]`.
pub struct ProgramFacts {
    pub files: Vec<FileFacts>,
    /// Every record type, indexed by `TypeId`, even when the program has errors.
    pub types: Vec<hir::RecordType>,
    /// Interned names: a field's `Sym(i)` is `names[i]`.
    pub names: Vec<String>,
}

pub struct FileFacts {
    pub module: hir::ModId,
    pub ast: ast::Module,
    /// Each `use "..."` path literal and the module it names.
    pub uses: Vec<(kora_syntax::Span, hir::ModId)>,
    pub facts: facts::Facts,
}

impl Checked {
    pub fn error_count(&self) -> usize {
        self.files
            .iter()
            .flat_map(|f| &f.diagnostics)
            .filter(|d| d.is_error())
            .count()
    }
}

/// Loads, checks and lowers the program whose entry file is `entry`.
pub fn check_program(entry: &Path, sources: &dyn Sources) -> Result<Checked, EntryError> {
    check_program_with(entry, sources, Options::default())
}

/// `check_program`, keeping what `options` asks for.
pub fn check_program_with(
    entry: &Path,
    sources: &dyn Sources,
    options: Options,
) -> Result<Checked, EntryError> {
    let loaded = loader::load(entry, sources)?;
    let scopes: Vec<scope::ScopeTable> = loaded
        .files
        .iter()
        .map(|f| scope::ScopeTable::build(&f.ast))
        .collect();
    let mut ctx = Ctx {
        names: names::Interner::default(),
        strings: Vec::new(),
        string_ix: FxHashMap::default(),
        types: Vec::new(),
        type_ix: FxHashMap::default(),
        aliases: FxHashMap::default(),
        mods: Vec::new(),
    };
    let mut diags: Vec<Vec<Diagnostic>> =
        loaded.files.iter().map(|f| f.diagnostics.clone()).collect();
    for (i, f) in loaded.files.iter().enumerate() {
        let sc = &scopes[i];
        let mut info = ModInfo {
            display: f.display.clone(),
            globals: sc.globals.clone(),
            ..ModInfo::default()
        };
        for (gi, g) in sc.globals.iter().enumerate() {
            info.global_ix.insert(g.clone(), gi as u32);
        }
        info.global_tys = vec![Ty::Any; sc.globals.len()];
        for (span, target) in &f.uses {
            info.uses.insert(*span, hir::ModId(*target as u32));
        }
        for s in &f.ast.stmts {
            if let StmtKind::Use(u) = &s.kind {
                if let ast::UseTarget::Std(n) = &u.target {
                    if let Some(m) = std_api::StdMod::from_name(&n.name) {
                        let name = u.alias.as_ref().unwrap_or(n).name.clone();
                        info.std_aliases.insert(name, m);
                    }
                }
                if let (ast::UseTarget::File { span, .. }, Some(alias)) = (&u.target, &u.alias) {
                    if let Some(t) = f.uses.get(span) {
                        info.mod_aliases
                            .insert(alias.name.clone(), hir::ModId(*t as u32));
                    }
                }
            }
        }
        ctx.mods.push(info);
    }
    lower_std::register_std_records(&mut ctx, hir::ModId(loaded.entry as u32));
    collect_types(&loaded, &mut ctx, &mut diags);
    let any_eval = loaded.files.iter().any(|f| lower_eval::uses_eval(&f.ast));
    lower_eval::register_judgement(&mut ctx, any_eval, hir::ModId(loaded.entry as u32));
    collect_sigs(&loaded, &mut ctx, &mut diags);

    let mut modules: Vec<Option<hir::Module>> = (0..loaded.files.len()).map(|_| None).collect();
    let mut file_facts: Vec<facts::Facts> = (0..loaded.files.len())
        .map(|_| Default::default())
        .collect();
    for &i in &loaded.order {
        let f = &loaded.files[i];
        let m = hir::ModId(i as u32);
        let ops = kora_syntax::ops::number_calls(&f.ast);
        let site_file = site_name(&f.path, &loaded.files[loaded.entry].path);
        let mut l = lower::Lowerer::new(&mut ctx, m, &scopes[i], f.source.clone(), ops, site_file);
        l.uses_eval = lower_eval::uses_eval(&f.ast);
        if i != loaded.entry {
            l.module_name = f
                .path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
        }
        if options.facts {
            l.facts = Some(facts::Facts::default());
        }
        let body = l.module_body(&f.ast.stmts, "<module>");
        let tests = std::mem::take(&mut l.tests);
        if let Some(recorded) = l.facts.take() {
            file_facts[i] = recorded;
        }
        // After a syntax error the tree has holes; names and types read across
        // them would only report the same mistake again in other words.
        let has_syntax_errors = diags[i]
            .iter()
            .any(|d| d.is_error() && d.code.starts_with("E00"));
        if !has_syntax_errors {
            diags[i].extend(l.diags);
            diags[i].extend(label_flow::check(&f.ast, &f.source));
        }
        modules[i] = Some(hir::Module {
            id: m,
            path: f.path.clone(),
            display: f.display.clone(),
            source: f.source.clone(),
            globals: scopes[i].globals.clone(),
            body,
            tests,
        });
    }

    let mut files = Vec::new();
    for (i, f) in loaded.files.iter().enumerate() {
        let mut ds = std::mem::take(&mut diags[i]);
        ds.sort_by_key(|d| (d.span().start, d.span().end));
        ds.dedup();
        files.push(FileReport {
            display: f.display.clone(),
            path: f.path.clone(),
            source: f.source.clone(),
            diagnostics: ds,
        });
    }
    // Entry first: it is what the user asked about.
    files.swap(0, loaded.entry);
    let names_snapshot = options.facts.then(|| ctx.names.names().to_vec());
    let has_errors = files
        .iter()
        .any(|f| f.diagnostics.iter().any(Diagnostic::is_error));
    let mut kept_types = None;
    let program = if has_errors {
        kept_types = Some(ctx.types);
        None
    } else {
        Some(Arc::new(hir::Program {
            modules: modules
                .into_iter()
                .map(|m| m.expect("every file lowered"))
                .collect(),
            entry: hir::ModId(loaded.entry as u32),
            types: ctx.types,
            names: ctx.names.into_names(),
            strings: ctx.strings,
        }))
    };
    let facts = names_snapshot.map(|names| {
        let types = match (&program, kept_types) {
            (_, Some(t)) => t,
            (Some(p), None) => p.types.iter().map(copy_record).collect(),
            (None, None) => Vec::new(),
        };
        let entry = loaded.entry;
        let mut fs: Vec<FileFacts> = loaded
            .files
            .into_iter()
            .zip(file_facts)
            .enumerate()
            .map(|(i, (f, facts))| FileFacts {
                module: hir::ModId(i as u32),
                ast: f.ast,
                uses: f
                    .uses
                    .iter()
                    .map(|(s, t)| (*s, hir::ModId(*t as u32)))
                    .collect(),
                facts,
            })
            .collect();
        fs.swap(0, entry);
        ProgramFacts {
            files: fs,
            types,
            names,
        }
    });
    Ok(Checked {
        program,
        files,
        facts,
    })
}

/// A record type's description without its default expressions (the server never runs them).
fn copy_record(r: &hir::RecordType) -> hir::RecordType {
    hir::RecordType {
        id: r.id,
        name: r.name.clone(),
        module: r.module,
        fields: r
            .fields
            .iter()
            .map(|f| hir::FieldDef {
                name: f.name,
                ty: f.ty.clone(),
                default: None,
            })
            .collect(),
        doc: r.doc.clone(),
        span: r.span,
    }
}

/// Registers every `type` declaration of every file: types are global across a package.
fn collect_types(loaded: &loader::Loaded, ctx: &mut Ctx, diags: &mut [Vec<Diagnostic>]) {
    let mut decls: Vec<(usize, &ast::RecordDecl)> = Vec::new();
    for (i, f) in loaded.files.iter().enumerate() {
        for s in &f.ast.stmts {
            match &s.kind {
                StmtKind::Record(r) => {
                    if let Some(&prev) = ctx.type_ix.get(&r.name.name) {
                        let p = &ctx.types[prev.0 as usize];
                        diags[i].push(
                            Diagnostic::error(
                                codes::DUPLICATE_TYPE,
                                format!("type `{}` is declared twice", r.name.name),
                                r.name.span,
                            )
                            .with_label("second declaration")
                            .with_note(format!(
                                "first declared in {}",
                                loaded.files[p.module.0 as usize].display
                            ))
                            .with_help("a type is one thing across the files of a program: rename one of them"),
                        );
                        continue;
                    }
                    let id = hir::TypeId(ctx.types.len() as u32);
                    ctx.type_ix.insert(r.name.name.clone(), id);
                    ctx.types.push(hir::RecordType {
                        id,
                        name: r.name.name.clone(),
                        module: hir::ModId(i as u32),
                        fields: Vec::new(),
                        doc: r.doc.clone(),
                        span: r.span,
                    });
                    decls.push((i, r));
                }
                StmtKind::TypeAlias { name, .. } => {
                    ctx.aliases.insert(name.name.clone(), Ty::Any);
                }
                _ => {}
            }
        }
    }
    // Aliases may name records and each other: resolve after every name exists.
    for (i, f) in loaded.files.iter().enumerate() {
        for s in &f.ast.stmts {
            if let StmtKind::TypeAlias { name, ty } = &s.kind {
                let mut d = Vec::new();
                let t = ctx.type_scope().lower(ty, &mut d);
                diags[i].extend(d);
                ctx.aliases.insert(name.name.clone(), t);
            }
        }
    }
    for (i, r) in decls {
        let id = ctx.type_ix[&r.name.name];
        let mut fields = Vec::new();
        for f in &r.fields {
            let mut d = Vec::new();
            let ty = ctx.type_scope().lower(&f.ty, &mut d);
            diags[i].extend(d);
            fields.push(hir::FieldDef {
                name: ctx.names.intern(&f.name.name),
                ty,
                default: None,
            });
        }
        ctx.types[id.0 as usize].fields = fields;
    }
}

/// Signatures of top-level functions bound exactly once, so calls to them can be checked.
fn collect_sigs(loaded: &loader::Loaded, ctx: &mut Ctx, diags: &mut [Vec<Diagnostic>]) {
    for (i, f) in loaded.files.iter().enumerate() {
        let mut count: FxHashMap<&str, u32> = FxHashMap::default();
        for s in &f.ast.stmts {
            match &s.kind {
                StmtKind::Def(d) => *count.entry(d.name.name.as_str()).or_default() += 1,
                StmtKind::Assign { targets, .. } => {
                    for t in targets {
                        let mut ns = Vec::new();
                        scope::collect_target_names(t, &mut ns);
                        for n in ns {
                            if let Some(name) = leak_name(f, &n) {
                                *count.entry(name).or_default() += 1;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for s in &f.ast.stmts {
            let StmtKind::Def(d) = &s.kind else { continue };
            if count.get(d.name.name.as_str()) != Some(&1) {
                continue;
            }
            let mut sink = Vec::new();
            let params = d
                .params
                .iter()
                .filter(|p| !p.star)
                .map(|p| {
                    let ty =
                        p.ty.as_ref()
                            .map(|t| ctx.type_scope().lower(t, &mut sink))
                            .unwrap_or(Ty::Any);
                    (p.name.name.clone(), ty, p.default.is_some())
                })
                .collect();
            let ret = d
                .ret
                .as_ref()
                .map(|t| ctx.type_scope().lower(t, &mut sink))
                .unwrap_or(Ty::Any);
            let star = d.params.iter().any(|p| p.star);
            let info = &mut ctx.mods[i];
            if let Some(&g) = info.global_ix.get(&d.name.name) {
                info.sigs.insert(
                    g,
                    Arc::new(Sig {
                        name: d.name.name.clone(),
                        kind: d.kind,
                        params,
                        star,
                        ret: ret.clone(),
                    }),
                );
                info.global_tys[g as usize] = Ty::Func;
            }
        }
        let _ = &diags[i];
    }
}

/// A name as a `&str` borrowed from the file's tree, when the tree holds it.
fn leak_name<'f>(f: &'f loader::LoadedFile, name: &str) -> Option<&'f str> {
    for s in &f.ast.stmts {
        if let StmtKind::Def(d) = &s.kind {
            if d.name.name == name {
                return Some(d.name.name.as_str());
            }
        }
    }
    None
}

/// A module's name in effect sites: its path relative to the entry file's folder,
/// so a cassette recorded in one checkout replays in another.
fn site_name(path: &Path, entry: &Path) -> String {
    let base = entry.parent().unwrap_or(Path::new(""));
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.to_string_lossy().replace('\\', "/")
}

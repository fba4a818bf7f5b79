//! Kora's checker: loads a program's files, resolves every name to a slot, checks types, and lowers to `hir`.
//!
//! Pure: it reads sources through the `Sources` trait and never runs
//! anything. The runtime walks the `hir::Program` it produces; the language
//! server uses the same diagnostics.

pub mod audit;
pub mod codes;
mod conditions;
mod exhaustive;
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
pub mod lower_external;
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
mod outcome_tags;
mod python_aliases;
mod python_imports;
pub mod scope;
pub mod session;
pub mod std_api;
pub mod suggest;
pub mod typeexpr;
pub mod types;
mod unbound_local;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use kora_syntax::ast::{self, StmtKind};
use kora_syntax::Diagnostic;

pub use loader::{Disk, EntryError, PackageLookup, PackageModule, Packages, Sources};
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
    /// The external modules the program uses (`use mcp`, `use python`), even with errors.
    pub externals: Vec<hir::External>,
    /// Wall time of each phase, in order, for `KORA_TIMINGS`.
    pub timings: Vec<(&'static str, Duration)>,
}

/// What to keep beyond diagnostics and the program.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Keep every file's tree, expression types and name resolutions (`ProgramFacts`).
    pub facts: bool,
    /// Load the entry file as a module, as `kora test` does: its `__name__` is its stem, so
    /// an `if __name__ == "__main__":` block does not run.
    pub entry_as_module: bool,
}

/// The language server's view of a checked program; `files[i]` belongs to `Checked::files[i]`.
pub struct ProgramFacts {
    pub files: Vec<FileFacts>,
    /// Every record type, indexed by `TypeId`, even when the program has errors.
    pub types: Vec<hir::RecordType>,
    /// Interned names: a field's `Sym(i)` is `names[i]`.
    pub names: Vec<String>,
    /// Per external module (`Checked::externals`), its cached MCP tools, when a listing exists.
    pub external_tools: Vec<Option<Vec<lower_external::ExtTool>>>,
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
    let mut clock = Instant::now();
    let mut timings = Vec::new();
    let mut lap = |name: &'static str| {
        let now = Instant::now();
        timings.push((name, now - clock));
        clock = now;
    };
    let loaded = loader::load(entry, sources)?;
    lap("read and parse");
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
        mod_pkgs: Vec::new(),
        pkg_helpers: Default::default(),
        externals: Default::default(),
    };
    let mut diags: Vec<Vec<Diagnostic>> =
        loaded.files.iter().map(|f| f.diagnostics.clone()).collect();
    for (i, f) in loaded.files.iter().enumerate() {
        let mut info = mod_info(f, &scopes[i]);
        let mut ext_aliases = FxHashMap::default();
        lower_external::register_top_level(
            &mut ctx,
            &f.ast,
            &f.display,
            &f.source,
            &mut ext_aliases,
        );
        info.ext_aliases = ext_aliases;
        ctx.mods.push(info);
    }
    read_tool_caches(&mut ctx, &loaded.files[loaded.entry].path, sources);
    lower_std::register_std_records(&mut ctx, hir::ModId(loaded.entry as u32));
    let parts: Vec<(usize, &[ast::Stmt])> = loaded
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (i, f.ast.stmts.as_slice()))
        .collect();
    let displays: Vec<String> = loaded.files.iter().map(|f| f.display.clone()).collect();
    ctx.pkg_helpers = loaded.helpers.clone();
    ctx.mod_pkgs = loaded
        .files
        .iter()
        .map(|f| f.package.as_ref().map(|(id, _)| id.clone()))
        .collect();
    collect_types(&parts, &displays, &mut ctx, &mut diags);
    let any_eval = loaded.files.iter().any(|f| lower_eval::uses_eval(&f.ast));
    lower_eval::register_judgement(&mut ctx, any_eval, hir::ModId(loaded.entry as u32));
    let sig_parts: Vec<SigPart<'_>> = parts.iter().map(|&(i, s)| (i, s, s)).collect();
    collect_sigs(&sig_parts, &mut ctx);
    outcome_tags::infer(&loaded, &mut ctx);
    lap("scopes, types and signatures");

    let mut modules: Vec<Option<hir::Module>> = (0..loaded.files.len()).map(|_| None).collect();
    let mut file_facts: Vec<facts::Facts> = (0..loaded.files.len())
        .map(|_| Default::default())
        .collect();
    for &i in &loaded.order {
        let f = &loaded.files[i];
        let m = hir::ModId(i as u32);
        let ops = kora_syntax::ops::number_calls(&f.ast);
        let site_file = match &f.package {
            // A package's operation ids name the package, not where a machine keeps it.
            Some((id, root)) => format!("[{id}]/{}", site_name(&f.path, &root.join("_"))),
            None => site_name(&f.path, &loaded.files[loaded.entry].path),
        };
        let mut l = lower::Lowerer::new(&mut ctx, m, &scopes[i], f.source.clone(), ops, site_file);
        l.uses_eval = lower_eval::uses_eval(&f.ast);
        if i != loaded.entry || options.entry_as_module {
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
    lap("lower and check");

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
    let externals = std::mem::take(&mut ctx.externals.list);
    let external_tools = std::mem::take(&mut ctx.externals.tools);
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
            externals: externals.clone(),
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
            external_tools,
        }
    });
    lap("assemble");
    Ok(Checked {
        program,
        files,
        facts,
        externals,
        timings,
    })
}

/// Reads the cached tool listing of each MCP server used at top level (see `lower_external.rs`).
fn read_tool_caches(ctx: &mut Ctx, entry: &Path, sources: &dyn Sources) {
    for i in 0..ctx.externals.list.len() {
        if ctx.externals.list[i].kind != "mcp" {
            continue;
        }
        let name = ctx.externals.list[i].name.clone();
        ctx.externals.tools[i] = lower_external::cache_paths(entry, &name)
            .iter()
            .find_map(|p| sources.read(p).ok())
            .and_then(|text| lower_external::parse_cache(&text));
    }
}

/// What other modules may know of one file before it is lowered: its globals and its `use`s.
pub(crate) fn mod_info(f: &loader::LoadedFile, sc: &scope::ScopeTable) -> ModInfo {
    let mut info = ModInfo {
        display: f.display.clone(),
        globals: sc.globals.clone(),
        ..ModInfo::default()
    };
    for (gi, g) in sc.globals.iter().enumerate() {
        info.global_ix.insert(g.clone(), gi as u32);
    }
    info.global_tys = vec![Ty::Any; sc.globals.len()];
    note_uses(&mut info, &f.uses, &f.ast.stmts);
    info
}

/// Records the top-level `use`s among `stmts` (`uses` maps each path literal to its file).
pub(crate) fn note_uses(
    info: &mut ModInfo,
    uses: &FxHashMap<kora_syntax::Span, usize>,
    stmts: &[ast::Stmt],
) {
    for (span, target) in uses {
        info.uses.insert(*span, hir::ModId(*target as u32));
    }
    for s in stmts {
        if let StmtKind::Use(u) = &s.kind {
            if let ast::UseTarget::Std(n) = &u.target {
                if let Some(m) = std_api::StdMod::from_name(&n.name) {
                    let name = u.alias.as_ref().unwrap_or(n).name.clone();
                    info.std_aliases.insert(name, m);
                }
            }
            if let ast::UseTarget::Std(n) = &u.target {
                if let Some(t) = uses.get(&n.span) {
                    let bound = u.alias.as_ref().map_or_else(
                        || n.name.rsplit('.').next().unwrap_or(&n.name).to_string(),
                        |a| a.name.clone(),
                    );
                    info.mod_aliases.insert(bound, hir::ModId(*t as u32));
                }
            }
            if let (ast::UseTarget::File { span, .. }, Some(alias)) = (&u.target, &u.alias) {
                if let Some(t) = uses.get(span) {
                    info.mod_aliases
                        .insert(alias.name.clone(), hir::ModId(*t as u32));
                }
            }
        }
    }
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
/// `parts` are (file index, statements); `displays[i]` names file `i` in messages.
pub(crate) fn collect_types(
    parts: &[(usize, &[ast::Stmt])],
    displays: &[String],
    ctx: &mut Ctx,
    diags: &mut [Vec<Diagnostic>],
) {
    let mut decls: Vec<(usize, &ast::RecordDecl)> = Vec::new();
    for &(i, stmts) in parts {
        for s in stmts {
            match &s.kind {
                StmtKind::Record(r) => {
                    let key = ctx.type_key(hir::ModId(i as u32), &r.name.name);
                    if let Some(&prev) = ctx.type_ix.get(&key) {
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
                                displays
                                    .get(p.module.0 as usize)
                                    .map_or("another file", String::as_str)
                            ))
                            .with_help("a type is one thing across the files of a program: rename one of them"),
                        );
                        continue;
                    }
                    let id = hir::TypeId(ctx.types.len() as u32);
                    ctx.type_ix.insert(key, id);
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
                _ => {
                    if let Some((name, _)) = python_aliases::alias_of(s) {
                        ctx.aliases.insert(name.to_string(), Ty::Any);
                    }
                }
            }
        }
    }
    // Aliases may name records and each other: resolve after every name exists.
    for &(i, stmts) in parts {
        for s in stmts {
            if let StmtKind::TypeAlias { name, ty } = &s.kind {
                let mut d = Vec::new();
                let t = ctx.type_scope(hir::ModId(i as u32)).lower(ty, &mut d);
                diags[i].extend(d);
                ctx.aliases.insert(name.name.clone(), t);
            } else if let Some((name, ty)) = python_aliases::alias_of(s) {
                let mut d = Vec::new();
                let t = ctx.type_scope(hir::ModId(i as u32)).lower(&ty, &mut d);
                diags[i].extend(d);
                ctx.aliases.insert(name.to_string(), t);
            }
        }
    }
    for (i, r) in decls {
        let id = ctx.type_ix[&ctx.type_key(hir::ModId(i as u32), &r.name.name)];
        let mut fields = Vec::new();
        for f in &r.fields {
            let mut d = Vec::new();
            let ty = ctx.type_scope(hir::ModId(i as u32)).lower(&f.ty, &mut d);
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

/// (file index, every top-level statement of the file, the statements whose `def`s to register).
pub(crate) type SigPart<'a> = (usize, &'a [ast::Stmt], &'a [ast::Stmt]);

/// Signatures of top-level functions bound exactly once, so calls to them can be checked.
/// A name bound more than once loses any signature it had: a call checks nothing then.
pub(crate) fn collect_sigs(parts: &[SigPart<'_>], ctx: &mut Ctx) {
    for &(i, all, new) in parts {
        let mut count: FxHashMap<String, u32> = FxHashMap::default();
        let defs: rustc_hash::FxHashSet<&str> = all
            .iter()
            .filter_map(|s| match &s.kind {
                StmtKind::Def(d) => Some(d.name.name.as_str()),
                _ => None,
            })
            .collect();
        for s in all {
            match &s.kind {
                StmtKind::Def(d) => *count.entry(d.name.name.clone()).or_default() += 1,
                StmtKind::Assign { targets, .. } => {
                    for t in targets {
                        let mut ns = Vec::new();
                        scope::collect_target_names(t, &mut ns);
                        for n in ns {
                            if defs.contains(n.as_str()) {
                                *count.entry(n).or_default() += 1;
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        for s in new {
            let StmtKind::Def(d) = &s.kind else { continue };
            if count.get(&d.name.name) != Some(&1) {
                if let Some(&g) = ctx.mods[i].global_ix.get(&d.name.name) {
                    ctx.mods[i].sigs.remove(&g);
                }
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
                            .map(|t| ctx.type_scope(hir::ModId(i as u32)).lower(t, &mut sink))
                            .unwrap_or(Ty::Any);
                    (p.name.name.clone(), ty, p.default.is_some())
                })
                .collect();
            let ret = d
                .ret
                .as_ref()
                .map(|t| ctx.type_scope(hir::ModId(i as u32)).lower(t, &mut sink))
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
    }
}

/// A module's name in effect sites: its path relative to the entry file's folder,
/// so a cassette recorded in one checkout replays in another.
pub(crate) fn site_name(path: &Path, entry: &Path) -> String {
    let base = entry.parent().unwrap_or(Path::new(""));
    let rel = path.strip_prefix(base).unwrap_or(path);
    rel.to_string_lossy().replace('\\', "/")
}

//! A program that grows one entry at a time: what `kora repl` checks each entry against.
//!
//! The session is one module, `<repl>`, whose text is every accepted entry in
//! order. An entry is checked against everything defined before it: the
//! checker's tables (names, strings, types, each module's globals and their
//! types, signatures) persist, and an entry only appends to them, so every id
//! an earlier entry was lowered with keeps its meaning. The result is the whole
//! program so far plus the entry's own statements as a function, which the
//! interpreter runs against the module state it already has: nothing an earlier
//! entry did runs again. An entry that fails its check changes nothing.
//!
//! Files it `use`s are read once, when first used, and lowered then.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use kora_syntax::ast::{self, ExprKind, StmtKind};
use kora_syntax::{Diagnostic, Span};

use crate::hir::{self, ModId};
use crate::loader::{self, Sources};
use crate::lower::{Ctx, Lowerer};
use crate::names::Interner;
use crate::scope::ScopeTable;
use crate::types::Ty;
use crate::{label_flow, lower_eval, lower_std, FileReport};

/// How the session's own module is named in messages and effect sites.
pub const REPL_NAME: &str = "<repl>";

/// An accepted entry: the program so far, and the entry's statements to run.
pub struct Entry {
    pub program: Arc<hir::Program>,
    /// The entry's statements as a function of the `<repl>` module.
    pub body: Arc<hir::Function>,
    /// The entry ends with an expression: `body` returns its value.
    pub echo: bool,
}

/// Why an entry was refused: each file's diagnostics. `<repl>`'s text is the whole
/// session with the entry at its end: its line numbers count the session's lines, as the
/// stack traces of run-time errors do.
pub struct Refused {
    pub files: Vec<FileReport>,
}

impl Refused {
    fn internal(message: String) -> Refused {
        Refused {
            files: vec![FileReport {
                display: REPL_NAME.into(),
                path: PathBuf::from(REPL_NAME),
                source: Arc::from(""),
                diagnostics: vec![Diagnostic::error(
                    crate::codes::SESSION_ENTRY,
                    message,
                    Span::default(),
                )
                .with_label("this entry")
                .with_help("leave with `:quit` and start a new `kora repl`")],
            }],
        }
    }
}

pub struct Session {
    ctx: Ctx,
    /// Where the `<repl>` module notionally lives: `use "./x.ko"` resolves from its folder.
    home: PathBuf,
    /// Every accepted entry, in order.
    source: String,
    /// Each module's canonical path and the text it was checked with, by `ModId`.
    files: Vec<(PathBuf, Arc<str>)>,
    modules: Vec<hir::Module>,
}

/// The session's text for `<repl>`, files already read as they were, the disk otherwise.
struct Overlay<'a> {
    home: &'a Path,
    text: &'a str,
    frozen: &'a [(PathBuf, Arc<str>)],
}

impl Sources for Overlay<'_> {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        if path == Path::new(REPL_NAME) || path == self.home {
            return Ok(self.text.to_string());
        }
        if let Some((_, t)) = self.frozen.iter().find(|(p, _)| p == path) {
            return Ok(t.to_string());
        }
        std::fs::read_to_string(path)
    }

    fn canonicalize(&self, path: &Path) -> std::io::Result<PathBuf> {
        if path == Path::new(REPL_NAME) {
            return Ok(self.home.to_path_buf());
        }
        std::fs::canonicalize(path)
    }
}

/// Everything one checked entry would add, before it is committed.
struct Checked {
    ctx: Ctx,
    text: String,
    files: Vec<(PathBuf, Arc<str>)>,
    modules: Vec<hir::Module>,
    body: Arc<hir::Function>,
    echo: Option<Ty>,
}

/// The entry's last statement, when it is an expression whose value to show.
fn echoed(stmts: &[ast::Stmt]) -> Option<&ast::Expr> {
    match stmts.last().map(|s| &s.kind) {
        Some(StmtKind::Expr { expr, handlers }) if handlers.is_empty() => {
            // A docstring-like bare string is still a value to show, as in Python.
            Some(expr).filter(|e| !matches!(e.kind, ExprKind::Error))
        }
        _ => None,
    }
}

impl Session {
    /// An empty session whose `use "./x.ko"` paths resolve from `dir`.
    pub fn new(dir: &Path) -> Session {
        let mut ctx = Ctx {
            names: Interner::default(),
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
        lower_std::register_std_records(&mut ctx, ModId(0));
        Session {
            ctx,
            home: dir.join(REPL_NAME),
            source: String::new(),
            files: Vec::new(),
            modules: Vec::new(),
        }
    }

    /// Checks `text` against every entry before it and, when it passes, makes it part
    /// of the session. Nothing changes when it is refused.
    pub fn check(&mut self, text: &str) -> Result<Entry, Refused> {
        let c = self.lower(text)?;
        self.ctx = c.ctx;
        self.source = c.text;
        self.files = c.files;
        self.modules = c.modules;
        Ok(Entry {
            program: self.program(),
            body: c.body,
            echo: c.echo.is_some(),
        })
    }

    /// The type the checker gives `expr` where the next entry would stand; `None` when
    /// the text is a statement, not an expression. Commits nothing.
    pub fn type_of(&self, expr: &str) -> Result<Option<String>, Refused> {
        Ok(self.lower(expr)?.echo.map(|t| t.to_string()))
    }

    /// The program as of the last accepted entry.
    pub fn program(&self) -> Arc<hir::Program> {
        Arc::new(hir::Program {
            modules: self.modules.clone(),
            entry: ModId(0),
            types: self.ctx.types.clone(),
            names: self.ctx.names.names().to_vec(),
            strings: self.ctx.strings.clone(),
            externals: self.ctx.externals.list.clone(),
        })
    }

    fn lower(&self, entry: &str) -> Result<Checked, Refused> {
        let offset = self.source.len();
        let mut text = self.source.clone();
        text.push_str(entry);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let overlay = Overlay {
            home: &self.home,
            text: &text,
            frozen: &self.files,
        };
        let loaded = loader::load(Path::new(REPL_NAME), &overlay)
            .map_err(|e| Refused::internal(format!("cannot read the session: {}", e.error)))?;
        let known = self.files.len();
        if loaded.entry != 0
            || self
                .files
                .iter()
                .zip(&loaded.files)
                .any(|((p, _), f)| *p != f.path)
        {
            return Err(Refused::internal(
                "the files this session uses changed order; start a new session".into(),
            ));
        }
        let mut diags: Vec<Vec<Diagnostic>> =
            loaded.files.iter().map(|f| f.diagnostics.clone()).collect();
        let repl_ast = &loaded.files[0].ast;
        let new_stmts: Vec<ast::Stmt> = repl_ast
            .stmts
            .iter()
            .filter(|s| s.span.start as usize >= offset)
            .cloned()
            .collect();
        if diags.iter().flatten().any(Diagnostic::is_error) {
            return Err(self.refused(&loaded, diags));
        }

        let mut ctx = self.ctx.clone();
        let scopes: Vec<ScopeTable> = loaded
            .files
            .iter()
            .map(|f| ScopeTable::build(&f.ast))
            .collect();
        // The module's globals so far keep their slots; an entry only adds new ones.
        if let Some(info) = ctx.mods.first() {
            if !scopes[0].globals.starts_with(&info.globals) {
                return Err(Refused::internal(
                    "this entry would renumber the session's variables; start a new session".into(),
                ));
            }
        }
        for (i, f) in loaded.files.iter().enumerate() {
            if i < ctx.mods.len() && i != 0 {
                continue;
            }
            if i == 0 && !ctx.mods.is_empty() {
                let info = &mut ctx.mods[0];
                for g in &scopes[0].globals[info.globals.len()..] {
                    info.global_ix.insert(g.clone(), info.globals.len() as u32);
                    info.globals.push(g.clone());
                    info.global_tys.push(Ty::Any);
                }
                crate::note_uses(info, &f.uses, &new_stmts);
            } else {
                ctx.mods.push(crate::mod_info(f, &scopes[i]));
            }
        }
        let any_eval = loaded.files.iter().any(|f| lower_eval::uses_eval(&f.ast));
        lower_eval::register_judgement(&mut ctx, any_eval, ModId(0));
        let mut parts: Vec<(usize, &[ast::Stmt])> = vec![(0, new_stmts.as_slice())];
        parts.extend(
            loaded.files[known.max(1)..]
                .iter()
                .enumerate()
                .map(|(k, f)| (k + known.max(1), f.ast.stmts.as_slice())),
        );
        let displays: Vec<String> = loaded.files.iter().map(|f| f.display.clone()).collect();
        crate::collect_types(&parts, &displays, &mut ctx, &mut diags);
        let sig_parts: Vec<crate::SigPart<'_>> = parts
            .iter()
            .map(|&(i, s)| {
                let all = if i == 0 { repl_ast.stmts.as_slice() } else { s };
                (i, all, s)
            })
            .collect();
        crate::collect_sigs(&sig_parts, &mut ctx);

        let mut modules = self.modules.clone();
        for &i in loaded.order.iter().filter(|&&i| i >= known.max(1)) {
            let f = &loaded.files[i];
            let m = ModId(i as u32);
            let ops = kora_syntax::ops::number_calls(&f.ast);
            let site = crate::site_name(&f.path, &self.home);
            let mut l = Lowerer::new(&mut ctx, m, &scopes[i], f.source.clone(), ops, site);
            l.uses_eval = lower_eval::uses_eval(&f.ast);
            l.module_name = f
                .path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
            let body = l.module_body(&f.ast.stmts, "<module>");
            let tests = std::mem::take(&mut l.tests);
            diags[i].extend(std::mem::take(&mut l.diags));
            diags[i].extend(label_flow::check(&f.ast, &f.source));
            let module = hir::Module {
                id: m,
                path: f.path.clone(),
                display: f.display.clone(),
                source: f.source.clone(),
                globals: scopes[i].globals.clone(),
                body,
                tests,
            };
            if modules.len() <= i {
                modules.resize_with(i, || module.clone());
                modules.push(module);
            } else {
                modules[i] = module;
            }
        }

        let repl = &loaded.files[0];
        let ops = kora_syntax::ops::number_calls(repl_ast);
        let mut l = Lowerer::new(
            &mut ctx,
            ModId(0),
            &scopes[0],
            repl.source.clone(),
            ops,
            REPL_NAME.into(),
        );
        l.uses_eval = lower_eval::uses_eval(repl_ast);
        let tail = echoed(&new_stmts);
        let init = if tail.is_some() {
            &new_stmts[..new_stmts.len() - 1]
        } else {
            &new_stmts[..]
        };
        let (body, echo) = l.module_body_with(init, tail, "<module>");
        diags[0].extend(std::mem::take(&mut l.diags));
        let entry_module = ast::Module {
            stmts: new_stmts.clone(),
        };
        diags[0].extend(label_flow::check(&entry_module, &repl.source));
        if diags.iter().flatten().any(Diagnostic::is_error) {
            return Err(self.refused(&loaded, diags));
        }
        let repl_module = hir::Module {
            id: ModId(0),
            path: self.home.clone(),
            display: REPL_NAME.into(),
            source: repl.source.clone(),
            globals: scopes[0].globals.clone(),
            body: body.clone(),
            tests: Vec::new(),
        };
        if modules.is_empty() {
            modules.push(repl_module);
        } else {
            modules[0] = repl_module;
        }
        let files = loaded
            .files
            .iter()
            .map(|f| (f.path.clone(), f.source.clone()))
            .collect();
        Ok(Checked {
            ctx,
            text,
            files,
            modules,
            body,
            echo,
        })
    }

    /// The diagnostics of a refused entry, each file with its text.
    fn refused(&self, loaded: &loader::Loaded, mut diags: Vec<Vec<Diagnostic>>) -> Refused {
        let mut files = Vec::new();
        for (i, f) in loaded.files.iter().enumerate() {
            let mut ds = std::mem::take(&mut diags[i]);
            if ds.is_empty() {
                continue;
            }
            ds.sort_by_key(|d| (d.span().start, d.span().end));
            ds.dedup();
            files.push(FileReport {
                display: f.display.clone(),
                path: f.path.clone(),
                source: f.source.clone(),
                diagnostics: ds,
            });
        }
        Refused { files }
    }
}

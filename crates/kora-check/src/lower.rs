//! Lowering a module's statements to the resolved tree, checking as it goes.
//!
//! One walk does both jobs: the checker needs the same name resolution the
//! runtime needs, and doing it twice is how the two drift apart.

use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use kora_syntax::ast::{self, ExprKind as AE, FuncKind, StmtKind as AS};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir::{self, ModId, Sym};
use crate::names::Interner;
use crate::scope::ScopeTable;
use crate::typeexpr::TypeScope;
use crate::types::Ty;

/// A function's checked signature, for calls that resolve to it statically.
#[derive(Debug, Clone)]
pub struct Sig {
    pub name: String,
    /// `def`, `tool` or `agent`: only the last two may be offered to a model as tools.
    pub kind: ast::FuncKind,
    pub params: Vec<(String, Ty, bool)>,
    pub star: bool,
    pub ret: Ty,
}

/// Program-wide tables shared by every module's lowering.
#[derive(Clone)]
pub struct Ctx {
    pub names: Interner,
    pub strings: Vec<String>,
    pub string_ix: FxHashMap<String, u32>,
    pub types: Vec<hir::RecordType>,
    pub type_ix: FxHashMap<String, hir::TypeId>,
    pub aliases: FxHashMap<String, Ty>,
    pub mods: Vec<ModInfo>,
    /// Each module's package id (`None`: the program's own files): a package's record types
    /// are keyed `ID::Name` in `type_ix`, so two packages may each declare `Config`.
    pub mod_pkgs: Vec<Option<String>>,
    /// The packages that declare `[package.helper]`: only their code may `use helper`.
    pub pkg_helpers: std::collections::BTreeSet<String>,
    /// The external modules used anywhere (`use mcp` / `use python`), and what is known of them.
    pub(crate) externals: crate::lower_external::Externals,
}

/// What other modules may know of one module before it is lowered.
#[derive(Default, Clone)]
pub struct ModInfo {
    pub display: String,
    pub globals: Vec<String>,
    pub global_ix: FxHashMap<String, u32>,
    pub global_tys: Vec<Ty>,
    pub sigs: FxHashMap<u32, Arc<Sig>>,
    /// `use "..." as alias` at top level: alias → module.
    pub mod_aliases: FxHashMap<String, ModId>,
    pub uses: FxHashMap<Span, ModId>,
    /// `use json` (or `use json as j`) at top level: name → standard module.
    pub std_aliases: FxHashMap<String, crate::std_api::StdMod>,
    /// `use mcp fs as fs` / `use python m as m` at top level: alias → external module.
    pub ext_aliases: FxHashMap<String, hir::ExtId>,
}

impl Ctx {
    pub fn string(&mut self, s: &str) -> u32 {
        if let Some(i) = self.string_ix.get(s) {
            return *i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_string());
        self.string_ix.insert(s.to_string(), i);
        i
    }

    pub fn type_scope(&self, m: ModId) -> TypeScope<'_> {
        TypeScope {
            records: &self.type_ix,
            aliases: &self.aliases,
            package: self.package_of(m),
            modules: self.mods.get(m.0 as usize).map(|i| &i.mod_aliases),
            mod_pkgs: &self.mod_pkgs,
        }
    }

    fn package_of(&self, m: ModId) -> Option<&str> {
        self.mod_pkgs.get(m.0 as usize)?.as_deref()
    }

    /// The `type_ix` key of record `name` declared in module `m`.
    pub fn type_key(&self, m: ModId, name: &str) -> String {
        match self.package_of(m) {
            Some(p) => format!("{p}::{name}"),
            None => name.to_string(),
        }
    }

    /// The type of a value of record `tid`, named as messages show it (`a.Config` for
    /// package a's).
    pub fn record_ty(&self, tid: hir::TypeId) -> Ty {
        let rec = &self.types[tid.0 as usize];
        Ty::Record(
            tid,
            crate::typeexpr::record_display(&self.type_key(rec.module, &rec.name)),
        )
    }

    /// The record `name` written in module `m`: its package's own first, then the program-wide
    /// ones (the standard library's, the evaluation judgement).
    pub fn type_of(&self, m: ModId, name: &str) -> Option<hir::TypeId> {
        if self.package_of(m).is_some() {
            if let Some(&t) = self.type_ix.get(&self.type_key(m, name)) {
                return Some(t);
            }
        }
        self.type_ix.get(name).copied()
    }
}

/// Per-function lowering state.
pub(crate) struct FnState {
    pub name: String,
    /// The function's span: the scope of its slots in `facts`.
    pub scope: Span,
    pub slots: FxHashMap<String, u32>,
    pub slot_names: Vec<String>,
    pub slot_tys: Vec<Ty>,
    pub is_cell: Vec<bool>,
    pub declared: FxHashSet<u32>,
    pub assigned: FxHashSet<u32>,
    pub free_slots: Vec<(u32, u32)>,
    pub comp: Vec<FxHashMap<String, u32>>,
    pub ret: Ty,
    pub loops: u32,
    pub is_module: bool,
    pub global_decl: FxHashSet<String>,
    /// Comprehension slots captured by a lambda: boxed in cells at frame entry.
    pub extra_cells: Vec<u32>,
    /// `use json` inside this function: name → standard module.
    pub std_aliases: FxHashMap<String, crate::std_api::StdMod>,
    /// `use mcp` / `use python` inside this function: alias → external module.
    pub ext_aliases: FxHashMap<String, hir::ExtId>,
    /// Module slots assigned so far (the top level only): what a branch may not assign.
    pub bound_globals: FxHashSet<u32>,
    /// The `parallel for` body being lowered, if any (see `lower_parallel.rs`).
    pub branch: Option<Box<crate::lower_parallel::Branch>>,
    /// Slots a pattern (`case int(n):`) has given a type: a second arm binding another type
    /// leaves the name untyped.
    pub pattern_typed: FxHashSet<u32>,
    /// `isinstance` narrowings in force, innermost last: a slot and its type inside the branch.
    pub narrowed: Vec<(crate::conditions::Place, Ty)>,
}

impl FnState {
    pub fn new_slot(&mut self, name: &str, ty: Ty, cell: bool) -> u32 {
        let s = self.slot_names.len() as u32;
        self.slot_names.push(name.to_string());
        self.slot_tys.push(ty);
        self.is_cell.push(cell);
        s
    }
}

pub(crate) struct Lowerer<'a> {
    pub source: std::sync::Arc<str>,
    /// Structural ids of this module's calls, and the module's name in effect sites.
    pub ops: kora_syntax::ops::OpTable,
    pub site_file: String,
    /// What `__name__` reads in this file: `"__main__"` in the file being run, the file's
    /// stem in a module it uses, so Python's `if __name__ == "__main__":` works unchanged.
    pub module_name: String,
    /// The annotated type of the assignment whose value is being lowered.
    pub expect: Option<Ty>,
    pub ctx: &'a mut Ctx,
    pub m: ModId,
    pub scopes: &'a ScopeTable,
    pub fns: Vec<FnState>,
    pub diags: Vec<Diagnostic>,
    /// The module's `test "name":` blocks, lowered to functions (see `lower_test.rs`).
    pub tests: Vec<(String, Arc<hir::Function>)>,
    /// How many `test` bodies enclose the code being lowered.
    pub in_test: u32,
    /// The file says `use eval`: `eval.metric(...)` is a judge call (see `lower_eval.rs`).
    pub uses_eval: bool,
    /// Recorded for the language server only (`Options::facts`).
    pub facts: Option<crate::facts::Facts>,
    /// `on ...` handlers of the statement being lowered, until its `analyze` claims them.
    pub pending_handlers: Vec<ast::Handler>,
    /// Inside an `on tool_call`/`on tool_result` body: the function depth it runs at and
    /// the type its `return` must have.
    pub handler_ret: Option<(usize, Ty)>,
    /// Inside an `on token` body: the function depth it runs at (its `return` is refused).
    pub token_handler: Option<usize>,
    /// Literal limits of the `budget` blocks enclosing the code being lowered, outermost first.
    pub budget_literals: Vec<crate::lower_budget::LiteralLimit>,
}

impl<'a> Lowerer<'a> {
    pub fn new(
        ctx: &'a mut Ctx,
        m: ModId,
        scopes: &'a ScopeTable,
        source: std::sync::Arc<str>,
        ops: kora_syntax::ops::OpTable,
        site_file: String,
    ) -> Lowerer<'a> {
        Lowerer {
            source,
            ops,
            site_file,
            module_name: "__main__".to_string(),
            expect: None,
            ctx,
            m,
            scopes,
            fns: Vec::new(),
            diags: Vec::new(),
            tests: Vec::new(),
            in_test: 0,
            uses_eval: false,
            facts: None,
            pending_handlers: Vec::new(),
            handler_ret: None,
            token_handler: None,
            budget_literals: Vec::new(),
        }
    }

    pub fn info(&self) -> &ModInfo {
        &self.ctx.mods[self.m.0 as usize]
    }

    /// The module and function scope that facts are recorded against.
    pub(crate) fn fact_scope(&self) -> (ModId, Span) {
        (self.m, self.fns.last().map(|f| f.scope).unwrap_or_default())
    }

    pub fn f(&mut self) -> &mut FnState {
        self.fns
            .last_mut()
            .expect("a function is always being lowered")
    }

    pub fn err(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    pub fn sym(&mut self, name: &str) -> Sym {
        self.ctx.names.intern(name)
    }

    pub fn lower_type(&mut self, t: &ast::TypeExpr) -> Ty {
        let mut d = Vec::new();
        let ty = self.ctx.type_scope(self.m).lower(t, &mut d);
        self.diags.extend(d);
        ty
    }

    /// Lowers the module's top level into its body function.
    pub fn module_body(&mut self, stmts: &[ast::Stmt], name: &str) -> Arc<hir::Function> {
        self.module_body_with(stmts, None, name).0
    }

    /// `module_body`, then `tail`'s value returned from the body (a REPL entry's echo),
    /// with its type.
    pub fn module_body_with(
        &mut self,
        stmts: &[ast::Stmt],
        tail: Option<&ast::Expr>,
        name: &str,
    ) -> (Arc<hir::Function>, Option<Ty>) {
        self.fns.push(FnState {
            name: "<module>".into(),
            scope: Span::new(0, self.source.len() as u32),
            slots: FxHashMap::default(),
            slot_names: Vec::new(),
            slot_tys: Vec::new(),
            is_cell: Vec::new(),
            declared: FxHashSet::default(),
            assigned: FxHashSet::default(),
            free_slots: Vec::new(),
            comp: Vec::new(),
            ret: Ty::Any,
            loops: 0,
            is_module: true,
            global_decl: FxHashSet::default(),
            extra_cells: Vec::new(),
            std_aliases: FxHashMap::default(),
            ext_aliases: FxHashMap::default(),
            bound_globals: FxHashSet::default(),
            branch: None,
            pattern_typed: FxHashSet::default(),
            narrowed: Vec::new(),
        });
        let mut body = self.block(stmts);
        let tail_ty = tail.map(|e| {
            let (x, t) = self.expr(e);
            body.push(hir::Stmt {
                kind: hir::StmtKind::Return(Some(x)),
                span: e.span,
            });
            t
        });
        let f = self.fns.pop().expect("pushed above");
        let function = Arc::new(hir::Function {
            name: name.to_string(),
            kind: FuncKind::Def,
            module: self.m,
            params: Vec::new(),
            star: None,
            ret: Ty::Any,
            ret_quick: crate::types::Quick::Any,
            nlocals: f.slot_names.len() as u32,
            no_boxes: f.extra_cells.is_empty(),
            cell_slots: f.extra_cells,
            free_slots: Vec::new(),
            captures: Vec::new(),
            slot_names: f.slot_names,
            body,
            doc: None,
            isolated: false,
            model: None,
            span: Span::default(),
        });
        (function, tail_ty)
    }

    pub fn block(&mut self, stmts: &[ast::Stmt]) -> Vec<hir::Stmt> {
        let mut out = Vec::with_capacity(stmts.len());
        for s in stmts {
            if let Some(kind) = self.stmt(s) {
                out.push(hir::Stmt { kind, span: s.span });
            }
        }
        out
    }

    /// The first line of a statement: block statements point there, not at their whole body.
    pub fn header(&self, span: Span) -> Span {
        let src = &self.source;
        let start = span.start as usize;
        let end = src
            .get(start..span.end as usize)
            .and_then(|t| t.find('\n'))
            .map(|i| start + i)
            .unwrap_or(span.end as usize);
        let trimmed = src.get(start..end).map(|t| t.trim_end().len()).unwrap_or(0);
        Span::new(span.start, span.start + trimmed as u32)
    }

    pub(crate) fn not_yet(&mut self, what: &str, span: Span) {
        let span = self.header(span);
        self.err(
            Diagnostic::error(codes::NOT_YET, format!("{what} is not available yet"), span)
                .with_label("parsed, but this build cannot run it")
                .with_help("this part of Kora is being built; see the issue list in the README"),
        );
    }

    pub fn mismatch(&mut self, want: &Ty, got: &Ty, span: Span, what: &str) {
        self.err(
            Diagnostic::error(
                codes::TYPE_MISMATCH,
                format!("type mismatch: expected `{want}`, found `{got}`"),
                span,
            )
            .with_label(format!("this is `{got}`"))
            .with_help(format!(
                "{what} is `{want}`: convert the value or change the annotation"
            )),
        );
    }

    /// Whether `name` already has a known or declared type in the current scope.
    pub(crate) fn is_bound(&self, name: &str) -> bool {
        let f = self.fns.last().expect("in a function");
        if f.is_module || f.global_decl.contains(name) {
            return self
                .info()
                .global_ix
                .get(name)
                .is_some_and(|g| self.info().global_tys[*g as usize].is_known());
        }
        f.slots
            .get(name)
            .is_some_and(|s| f.assigned.contains(s) || f.declared.contains(s))
    }

    pub(crate) fn declare(&mut self, name: &str, span: Span, ty: Ty) {
        let _ = self.declare_store(
            &ast::Ident {
                name: name.to_string(),
                span,
            },
            ty,
        );
    }
}

/// Whether a block always leaves (so a name bound after it is always defined).
pub fn diverges(block: &[ast::Stmt]) -> bool {
    match block.last().map(|s| &s.kind) {
        Some(AS::Return(_)) | Some(AS::Break(_)) | Some(AS::Continue) => true,
        Some(AS::Expr { expr, .. }) => is_exit_call(expr),
        Some(AS::If {
            branches,
            orelse: Some(e),
        }) => branches.iter().all(|(_, b)| diverges(b)) && diverges(e),
        Some(AS::Match { arms, .. }) => {
            arms.iter().all(|a| diverges(&a.body))
                && arms.iter().any(|a| {
                    a.guard.is_none() && matches!(a.pattern.kind, ast::PatternKind::Wildcard)
                })
        }
        _ => false,
    }
}

/// `exit(...)`: ends the program, so a block ending in it leaves.
pub fn is_exit_call(e: &ast::Expr) -> bool {
    matches!(&e.kind, AE::Call { func, .. } if matches!(&func.kind, AE::Name(n) if n == "exit"))
}

pub(crate) fn is_mutable_display(e: &ast::Expr) -> bool {
    // Only displays of constants: they are rebuilt in the callee's frame, where
    // the defining scope's names are not visible.
    pub(crate) fn constant(e: &ast::Expr) -> bool {
        matches!(
            &e.kind,
            AE::Int(_) | AE::Float(_) | AE::Str(_) | AE::Bool(_) | AE::None
        ) || matches!(&e.kind, AE::Unary(_, x) if constant(x))
            || matches!(&e.kind, AE::Tuple(xs) if xs.iter().all(constant))
    }
    match &e.kind {
        AE::List(xs) | AE::Set(xs) => xs.iter().all(constant),
        AE::Dict(kvs) => kvs.iter().all(|(k, v)| constant(k) && constant(v)),
        AE::Call { func, args } => {
            args.is_empty()
                && matches!(&func.kind, AE::Name(n) if n == "list" || n == "dict" || n == "set")
        }
        _ => false,
    }
}

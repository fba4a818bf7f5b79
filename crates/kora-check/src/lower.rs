//! Lowering a module's statements to the resolved tree, checking as it goes.
//!
//! One walk does both jobs: the checker needs the same name resolution the
//! runtime needs, and doing it twice is how the two drift apart.

use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet};

use kora_syntax::ast::{self, ExprKind as AE, FuncKind, StmtKind as AS};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir::{self, Capture, ModId, Sym, Target};
use crate::names::Interner;
use crate::scope::ScopeTable;
use crate::typeexpr::TypeScope;
use crate::types::Ty;

/// A function's checked signature, for calls that resolve to it statically.
#[derive(Debug, Clone)]
pub struct Sig {
    pub name: String,
    pub params: Vec<(String, Ty, bool)>,
    pub star: bool,
    pub ret: Ty,
}

/// Program-wide tables shared by every module's lowering.
pub struct Ctx {
    pub names: Interner,
    pub strings: Vec<String>,
    pub string_ix: FxHashMap<String, u32>,
    pub types: Vec<hir::RecordType>,
    pub type_ix: FxHashMap<String, hir::TypeId>,
    pub aliases: FxHashMap<String, Ty>,
    pub mods: Vec<ModInfo>,
}

/// What other modules may know of one module before it is lowered.
#[derive(Default)]
pub struct ModInfo {
    pub display: String,
    pub globals: Vec<String>,
    pub global_ix: FxHashMap<String, u32>,
    pub global_tys: Vec<Ty>,
    pub sigs: FxHashMap<u32, Rc<Sig>>,
    /// `use "..." as alias` at top level: alias → module.
    pub mod_aliases: FxHashMap<String, ModId>,
    pub uses: FxHashMap<Span, ModId>,
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

    pub fn type_scope(&self) -> TypeScope<'_> {
        TypeScope {
            records: &self.type_ix,
            aliases: &self.aliases,
        }
    }
}

/// Per-function lowering state.
pub(crate) struct FnState {
    pub name: String,
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
    pub source: std::rc::Rc<str>,
    /// Structural ids of this module's calls, and the module's name in effect sites.
    pub ops: kora_syntax::ops::OpTable,
    pub site_file: String,
    /// The annotated type of the assignment whose value is being lowered.
    pub expect: Option<Ty>,
    pub ctx: &'a mut Ctx,
    pub m: ModId,
    pub scopes: &'a ScopeTable,
    pub fns: Vec<FnState>,
    pub diags: Vec<Diagnostic>,
}

impl<'a> Lowerer<'a> {
    pub fn new(
        ctx: &'a mut Ctx,
        m: ModId,
        scopes: &'a ScopeTable,
        source: std::rc::Rc<str>,
        ops: kora_syntax::ops::OpTable,
        site_file: String,
    ) -> Lowerer<'a> {
        Lowerer {
            source,
            ops,
            site_file,
            expect: None,
            ctx,
            m,
            scopes,
            fns: Vec::new(),
            diags: Vec::new(),
        }
    }

    pub fn info(&self) -> &ModInfo {
        &self.ctx.mods[self.m.0 as usize]
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
        let ty = self.ctx.type_scope().lower(t, &mut d);
        self.diags.extend(d);
        ty
    }

    /// Lowers the module's top level into its body function.
    pub fn module_body(&mut self, stmts: &[ast::Stmt], name: &str) -> Rc<hir::Function> {
        self.fns.push(FnState {
            name: "<module>".into(),
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
        });
        let body = self.block(stmts);
        let f = self.fns.pop().expect("pushed above");
        Rc::new(hir::Function {
            name: name.to_string(),
            kind: FuncKind::Def,
            module: self.m,
            params: Vec::new(),
            star: None,
            ret: Ty::Any,
            nlocals: f.slot_names.len() as u32,
            cell_slots: f.extra_cells,
            free_slots: Vec::new(),
            captures: Vec::new(),
            slot_names: f.slot_names,
            body,
            doc: None,
            isolated: false,
            span: Span::default(),
        })
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

    fn not_yet(&mut self, what: &str, span: Span) {
        let span = self.header(span);
        self.err(
            Diagnostic::error(codes::NOT_YET, format!("{what} is not available yet"), span)
                .with_label("parsed, but this build cannot run it")
                .with_help("this part of Kora is being built; see the issue list in the README"),
        );
    }

    fn stmt(&mut self, s: &ast::Stmt) -> Option<hir::StmtKind> {
        use hir::StmtKind as H;
        Some(match &s.kind {
            AS::Expr { expr, handlers } => {
                self.handlers(handlers);
                H::Expr(self.expr(expr).0)
            }
            AS::Assign {
                targets,
                value,
                handlers,
            } => {
                self.handlers(handlers);
                return Some(self.assign(targets, value));
            }
            AS::AnnAssign {
                target,
                ty,
                value,
                handlers,
                else_,
            } => {
                self.handlers(handlers);
                return self.ann_assign(target, ty, value.as_ref(), else_.as_ref(), s.span);
            }
            AS::AugAssign { target, op, value } => {
                let (v, vt) = self.expr(value);
                let (t, tt) = self.store_target(target, None);
                self.check_binop(*op, &tt, &vt, s.span);
                H::AugAssign(t, *op, v)
            }
            AS::If { branches, orelse } => {
                let bs = branches
                    .iter()
                    .map(|(c, b)| (self.expr(c).0, self.block(b)))
                    .collect();
                H::If(bs, orelse.as_ref().map(|b| self.block(b)))
            }
            AS::While { cond, body } => {
                let c = self.expr(cond).0;
                self.f().loops += 1;
                let b = self.block(body);
                self.f().loops -= 1;
                H::While(c, b)
            }
            AS::For {
                target,
                iter,
                body,
                parallel,
            } => {
                if parallel.is_some() {
                    self.not_yet("`parallel for`", s.span);
                }
                let (it, ity) = self.expr(iter);
                let (t, _) = self.store_target(target, Some(ity.element()));
                self.f().loops += 1;
                let b = self.block(body);
                self.f().loops -= 1;
                H::For(t, it, b)
            }
            AS::Break(v) => {
                if let Some(v) = v {
                    self.err(
                        Diagnostic::error(
                            codes::BREAK_VALUE,
                            "`break` with a value is only allowed in a `parallel for` body",
                            v.span,
                        )
                        .with_label("an ordinary loop has nowhere to put this value")
                        .with_help(
                            "assign the value to a variable before `break`, or use `parallel for`",
                        ),
                    );
                }
                if self.f().loops == 0 {
                    self.outside_loop("break", s.span);
                }
                H::Break
            }
            AS::Continue => {
                if self.f().loops == 0 {
                    self.outside_loop("continue", s.span);
                }
                H::Continue
            }
            AS::Pass => H::Pass,
            AS::Return(v) => {
                if self.f().is_module {
                    self.err(
                        Diagnostic::error(
                            codes::RETURN_OUTSIDE,
                            "`return` outside a function",
                            s.span,
                        )
                        .with_label("the top level of a file cannot return")
                        .with_help("put this code in a `def`, or end the loop with `break`"),
                    );
                }
                let ret = self.f().ret.clone();
                let v = v.as_ref().map(|v| {
                    let (e, t) = self.expr(v);
                    if !ret.accepts(&t) {
                        self.mismatch(&ret, &t, v.span, "the function's declared return type");
                    }
                    e
                });
                if v.is_none() && ret.is_known() && !ret.accepts(&Ty::None) {
                    self.mismatch(
                        &ret,
                        &Ty::None,
                        s.span,
                        "the function's declared return type",
                    );
                }
                H::Return(v)
            }
            AS::Def(def) => {
                let f = self.function(def);
                let (t, _) = self.store_name(&def.name.name, def.name.span, Some(Ty::Func));
                H::Def(t, f)
            }
            AS::Record(r) => {
                self.record_defaults(r);
                return None;
            }
            AS::TypeAlias { .. } | AS::Nonlocal(_) | AS::Global(_) | AS::Error => return None,
            AS::Match { subject, arms } => {
                let (subj, sty) = self.expr(subject);
                let arms = arms.iter().map(|a| self.arm(a, &sty)).collect();
                H::Match(subj, arms)
            }
            AS::Use(u) => return self.use_decl(u, s.span),
            AS::Assert { cond, msg } => {
                let c = self.expr(cond).0;
                H::Assert(c, msg.as_ref().map(|m| self.expr(m).0))
            }
            AS::Budget { .. } => {
                self.not_yet("`budget`", s.span);
                return None;
            }
            AS::Context { .. } => {
                self.not_yet("`with context`", s.span);
                return None;
            }
            AS::Mock { .. } => {
                self.not_yet("`with mock`", s.span);
                return None;
            }
            AS::Declassify { .. } => {
                self.not_yet("`declassify`", s.span);
                return None;
            }
            AS::Test { .. } => return None,
            AS::PythonImport { module } => {
                let first = module.split('.').next().unwrap_or(module);
                self.err(
                    Diagnostic::error(
                        codes::PYTHON_IMPORT,
                        format!("`import` is Python: Kora writes `use {first}`"),
                        s.span,
                    )
                    .with_label("Python import syntax")
                    .with_help(format!(
                        "write `use {first}` for a standard module, or `use \"./{first}.ko\" as {first}` for a file"
                    )),
                );
                return None;
            }
        })
    }

    fn outside_loop(&mut self, word: &str, span: Span) {
        self.err(
            Diagnostic::error(
                codes::LOOP_CONTROL_OUTSIDE,
                format!("`{word}` outside a loop"),
                span,
            )
            .with_label("not inside `for` or `while`")
            .with_help("use `return` to leave a function"),
        );
    }

    fn handlers(&mut self, hs: &[ast::Handler]) {
        if let Some(h) = hs.first() {
            self.not_yet(&format!("the `on {}` handler", h.event.name), h.span);
        }
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

    fn assign(&mut self, targets: &[ast::Expr], value: &ast::Expr) -> hir::StmtKind {
        // `x = x + y` on a plain name appends in place when the value is unshared.
        if let [t] = targets {
            if let (AE::Name(n), AE::Binary(ast::BinOp::Add, l, r)) = (&t.kind, &value.kind) {
                if matches!(&l.kind, AE::Name(m) if m == n) {
                    let (rhs, rty) = self.expr(r);
                    let (tgt, tty) = self.store_target(t, None);
                    self.check_binop(ast::BinOp::Add, &tty, &rty, value.span);
                    return hir::StmtKind::ConcatAssign(tgt, rhs);
                }
            }
        }
        let (v, vty) = self.expr(value);
        if targets.len() == 1 {
            if let AE::Name(n) = &targets[0].kind {
                self.check_empty_display(n, value, &vty);
            }
            let (t, _) = self.store_target(&targets[0], Some(vty));
            hir::StmtKind::Assign(t, v)
        } else {
            let ts = targets
                .iter()
                .map(|t| self.store_target(t, Some(vty.clone())).0)
                .collect();
            hir::StmtKind::AssignMulti(ts, v)
        }
    }

    /// An empty display gives no element type: the first assignment must be annotated.
    fn check_empty_display(&mut self, name: &str, value: &ast::Expr, _vty: &Ty) {
        let empty = match &value.kind {
            AE::List(xs) | AE::Set(xs) => xs.is_empty(),
            AE::Dict(kvs) => kvs.is_empty(),
            _ => false,
        };
        if !empty || self.is_bound(name) {
            return;
        }
        let (what, example) = match &value.kind {
            AE::List(_) => ("list", format!("{name}: list[int] = []")),
            AE::Dict(_) => ("dict", format!("{name}: dict[str, int] = {{}}")),
            _ => ("set", format!("{name}: set[str] = set()")),
        };
        self.err(
            Diagnostic::error(
                codes::EMPTY_NEEDS_TYPE,
                format!("an empty {what} needs a type annotation"),
                value.span,
            )
            .with_label("the element type cannot be inferred from an empty literal")
            .with_help(format!("annotate the first assignment, e.g. `{example}`")),
        );
    }

    /// Whether `name` already has a known or declared type in the current scope.
    fn is_bound(&self, name: &str) -> bool {
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

    fn ann_assign(
        &mut self,
        target: &ast::Ident,
        ty: &ast::TypeExpr,
        value: Option<&ast::Expr>,
        else_: Option<&ast::ElseClause>,
        span: Span,
    ) -> Option<hir::StmtKind> {
        let declared = self.lower_type(ty);
        let Some(value) = value else {
            self.declare(&target.name, target.span, declared);
            return None;
        };
        if matches!(value.kind, AE::Analyze { .. }) {
            self.expect = Some(declared.clone());
        }
        let (v, vty) = self.expr(value);
        self.expect = None;
        if let Some(e) = else_ {
            let ok_ty = match &vty {
                Ty::Outcome(inner) => (**inner).clone(),
                Ty::Any => Ty::Any,
                other => {
                    self.err(
                        Diagnostic::error(
                            codes::ELSE_NOT_OUTCOME,
                            format!("`else` needs an outcome on the right, found `{other}`"),
                            value.span,
                        )
                        .with_label("this always succeeds, so the `else` block could never run")
                        .with_help(
                            "drop the `else` block, or call something that returns `Ok`/`Err`/...",
                        ),
                    );
                    Ty::Any
                }
            };
            if !declared.accepts(&ok_ty) {
                self.mismatch(&declared, &ok_ty, value.span, "the annotation");
            }
            if !diverges(&e.body) {
                let last = e.body.last().map(|s| s.span).unwrap_or(e.span);
                self.err(
                    Diagnostic::error(
                        codes::ELSE_MUST_DIVERGE,
                        "the `else` block must leave: end it with `return`, `break` or `continue`",
                        last,
                    )
                    .with_label("execution would fall through here")
                    .with_secondary(target.span, format!("`{}` would be undefined after the block", target.name))
                    .with_help("add `return` (or `break`/`continue` in a loop) as the block's last statement"),
                );
            }
            let binds = e.binds.as_ref().map(|(why, kind)| {
                let a = self.store_name(&why.name, why.span, Some(Ty::Any)).0;
                let b = self.store_name(&kind.name, kind.span, Some(Ty::Str)).0;
                (a, b)
            });
            let orelse = self.block(&e.body);
            let (t, _) = self.declare_store(target, declared.clone());
            return Some(hir::StmtKind::Unwrap {
                target: t,
                ty: declared,
                value: v,
                binds,
                orelse,
            });
        }
        let _ = span;
        if !declared.accepts(&vty) {
            self.mismatch(&declared, &vty, value.span, "the annotation");
        }
        let (t, _) = self.declare_store(target, declared.clone());
        Some(hir::StmtKind::AnnAssign(t, declared, v))
    }

    fn declare(&mut self, name: &str, span: Span, ty: Ty) {
        let _ = self.declare_store(
            &ast::Ident {
                name: name.to_string(),
                span,
            },
            ty,
        );
    }

    fn declare_store(&mut self, target: &ast::Ident, ty: Ty) -> (Target, Ty) {
        let t = self.store_name(&target.name, target.span, None).0;
        match &t {
            Target::Local(s) | Target::Cell(s) => {
                let f = self.f();
                f.slot_tys[*s as usize] = ty.clone();
                f.declared.insert(*s);
            }
            Target::Global(g) => {
                let m = self.m.0 as usize;
                self.ctx.mods[m].global_tys[*g as usize] = ty.clone();
            }
            _ => {}
        }
        (t, ty)
    }

    fn use_decl(&mut self, u: &ast::UseDecl, span: Span) -> Option<hir::StmtKind> {
        match &u.target {
            ast::UseTarget::Std(name) => {
                const STD: &[&str] = &[
                    "json", "fs", "http", "sql", "time", "re", "csv", "yaml", "xml", "env",
                    "notes", "random", "pdf", "eval",
                ];
                if STD.contains(&name.name.as_str()) {
                    self.not_yet(&format!("the standard module `{}`", name.name), span);
                } else {
                    let mut d = Diagnostic::error(
                        codes::UNKNOWN_STD_MODULE,
                        format!("there is no standard module `{}`", name.name),
                        name.span,
                    )
                    .with_label("not in the standard library");
                    d = match crate::suggest::closest(&name.name, STD.iter().copied()) {
                        Some(s) => d.with_help(format!("did you mean `use {s}`?")),
                        None => d.with_help(
                            "a file is imported with a quoted path: `use \"./name.ko\" as name`",
                        ),
                    };
                    self.err(d);
                }
                None
            }
            ast::UseTarget::Provider { kind, .. } => {
                self.not_yet(&format!("`use {}`", kind.name), span);
                None
            }
            ast::UseTarget::File { path, span: pspan } => {
                let Some(alias) = &u.alias else {
                    self.err(
                        Diagnostic::error(codes::USE_NEEDS_AS, "a file `use` needs `as NAME`", span)
                            .with_label("no name given")
                            .with_help(format!(
                                "write `use \"{path}\" as name`: Kora never invents a name from the file stem"
                            )),
                    );
                    return None;
                };
                let target_mod = *self.info().uses.get(pspan)?;
                let (t, _) = self.store_name(&alias.name, alias.span, Some(Ty::Module));
                Some(hir::StmtKind::Use(t, target_mod))
            }
        }
    }

    fn record_defaults(&mut self, r: &ast::RecordDecl) {
        let Some(&tid) = self.ctx.type_ix.get(&r.name.name) else {
            return;
        };
        if self.ctx.types[tid.0 as usize].module != self.m {
            return;
        }
        for (i, f) in r.fields.iter().enumerate() {
            if let Some(d) = &f.default {
                let (e, ety) = self.expr(d);
                let fty = self.ctx.types[tid.0 as usize].fields[i].ty.clone();
                if !fty.accepts(&ety) {
                    self.mismatch(&fty, &ety, d.span, "the field's declared type");
                }
                self.ctx.types[tid.0 as usize].fields[i].default = Some(e);
            }
        }
    }

    /// Lowers a `def`, `tool` or `agent`.
    pub fn function(&mut self, def: &ast::FuncDef) -> Rc<hir::Function> {
        let mut params = Vec::new();
        for p in &def.params {
            if p.ty.is_none() {
                self.err(
                    Diagnostic::error(
                        codes::MISSING_PARAM_TYPE,
                        format!(
                            "parameter `{}` of `{}` needs a type annotation",
                            p.name.name, def.name.name
                        ),
                        p.span,
                    )
                    .with_label("no type")
                    .with_help(format!(
                        "write `{}: int` (or the type it takes)",
                        p.name.name
                    )),
                );
            }
            params.push(p.clone());
        }
        let ret = match &def.ret {
            Some(t) => self.lower_type(t),
            None => {
                self.err(
                    Diagnostic::error(
                        codes::MISSING_RETURN_TYPE,
                        format!("function `{}` needs a return type", def.name.name),
                        def.name.span,
                    )
                    .with_label("no `-> Type` after the parameters")
                    .with_help(
                        "add `-> None` if it returns nothing, or `-> int` (the type it returns)",
                    ),
                );
                Ty::Any
            }
        };
        let qual = match self.fns.last() {
            Some(f) if !f.is_module => format!("{}.{}", f.name, def.name.name),
            _ => def.name.name.clone(),
        };
        self.lower_function(
            def.span,
            &qual,
            def.kind,
            &params,
            ret,
            def.doc.clone(),
            def.isolated,
            |l| l.block(&def.body),
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn lower_function(
        &mut self,
        span: Span,
        name: &str,
        kind: FuncKind,
        params: &[ast::Param],
        ret: Ty,
        doc: Option<String>,
        isolated: bool,
        body: impl FnOnce(&mut Self) -> Vec<hir::Stmt>,
    ) -> Rc<hir::Function> {
        let scope_idx = self.scopes.by_span.get(&span).copied();
        // Defaults are evaluated in the defining scope.
        let mut hparams = Vec::new();
        let mut param_tys = Vec::new();
        for p in params {
            let ty = p.ty.as_ref().map(|t| self.lower_type(t)).unwrap_or(Ty::Any);
            let (default, fresh) = match &p.default {
                Some(d) => {
                    let (e, dty) = self.expr(d);
                    if !ty.accepts(&dty) {
                        self.mismatch(&ty, &dty, d.span, "the parameter's declared type");
                    }
                    (Some(e), is_mutable_display(d))
                }
                None => (None, false),
            };
            param_tys.push(ty.clone());
            hparams.push((p, ty, default, fresh));
        }
        let mut st = FnState {
            name: name.to_string(),
            slots: FxHashMap::default(),
            slot_names: Vec::new(),
            slot_tys: Vec::new(),
            is_cell: Vec::new(),
            declared: FxHashSet::default(),
            assigned: FxHashSet::default(),
            free_slots: Vec::new(),
            comp: Vec::new(),
            ret: ret.clone(),
            loops: 0,
            is_module: false,
            global_decl: FxHashSet::default(),
            extra_cells: Vec::new(),
        };
        let mut captures = Vec::new();
        let mut cell_slots = Vec::new();
        if let Some(si) = scope_idx {
            let sc = &self.scopes.scopes[si];
            st.global_decl = sc.declared_global.clone();
            for (n, nspan) in &sc.nonlocal_spans {
                if !sc.free.contains(n) {
                    self.diags.push(
                        Diagnostic::error(
                            codes::NONLOCAL_UNBOUND,
                            format!("`nonlocal {n}`: no enclosing function binds `{n}`"),
                            *nspan,
                        )
                        .with_label("not assigned in any enclosing `def`")
                        .with_help(format!(
                            "assign `{n}` in the enclosing function first, or use `global {n}` for a module variable"
                        )),
                    );
                }
            }
            for name in &sc.locals {
                let cell = sc.cells.contains(name);
                let slot = st.new_slot(name, Ty::Any, cell);
                st.slots.insert(name.clone(), slot);
                if cell {
                    cell_slots.push(slot);
                }
            }
            for (ci, name) in sc.free.iter().enumerate() {
                let slot = st.new_slot(name, Ty::Any, true);
                st.slots.insert(name.clone(), slot);
                st.free_slots.push((slot, ci as u32));
                // Where the defining function keeps it.
                let outer = self.fns.last().and_then(|f| {
                    f.comp
                        .iter()
                        .rev()
                        .find_map(|c| c.get(name).copied())
                        .or_else(|| f.slots.get(name).copied())
                });
                match outer {
                    Some(s) => captures.push(Capture::Slot(s)),
                    None => {
                        let sp = span;
                        self.err(
                            Diagnostic::error(
                                codes::NONLOCAL_UNBOUND,
                                format!("no enclosing function binds `{name}`"),
                                sp,
                            )
                            .with_help("`nonlocal` names a variable of an enclosing `def`; use `global` for a module variable"),
                        );
                        captures.push(Capture::Slot(0));
                    }
                }
            }
        }
        for (p, ty, _, _) in &hparams {
            if let Some(&s) = st.slots.get(&p.name.name) {
                st.slot_tys[s as usize] = if p.star {
                    Ty::TupleOf(Box::new(ty.clone()))
                } else {
                    ty.clone()
                };
                st.declared.insert(s);
            }
        }
        let star = hparams
            .iter()
            .find(|(p, ..)| p.star)
            .and_then(|(p, ..)| st.slots.get(&p.name.name).copied());
        let hir_params: Vec<hir::Param> = hparams
            .into_iter()
            .filter(|(p, ..)| !p.star)
            .map(|(p, ty, default, fresh)| hir::Param {
                name: self.ctx.names.intern(&p.name.name),
                slot: st.slots.get(&p.name.name).copied().unwrap_or(0),
                ty,
                default,
                fresh_default: fresh,
            })
            .collect();
        self.fns.push(st);
        let body = body(self);
        let st = self.fns.pop().expect("pushed above");
        cell_slots.extend(st.extra_cells.iter().copied());
        Rc::new(hir::Function {
            name: name.to_string(),
            kind,
            module: self.m,
            params: hir_params,
            star,
            ret,
            nlocals: st.slot_names.len() as u32,
            cell_slots,
            free_slots: st.free_slots,
            captures,
            slot_names: st.slot_names,
            body,
            doc,
            isolated,
            span,
        })
    }

    /// Resolves a name being assigned; `ty` is the assigned value's type when known.
    pub fn store_name(&mut self, name: &str, span: Span, ty: Option<Ty>) -> (Target, Ty) {
        let f = self.fns.last().expect("in a function");
        for comp in f.comp.iter().rev() {
            if let Some(&s) = comp.get(name) {
                let cell = f.is_cell[s as usize];
                if let Some(t) = ty {
                    self.f().slot_tys[s as usize] = t;
                }
                return (
                    if cell {
                        Target::Cell(s)
                    } else {
                        Target::Local(s)
                    },
                    Ty::Any,
                );
            }
        }
        if !f.is_module && !f.global_decl.contains(name) {
            if let Some(&s) = f.slots.get(name) {
                let cell = f.is_cell[s as usize];
                let cur = f.slot_tys[s as usize].clone();
                let declared = f.declared.contains(&s);
                self.note_assignment_type(&cur, declared, ty.as_ref(), span, |l, t| {
                    l.f().slot_tys[s as usize] = t
                });
                self.f().assigned.insert(s);
                let t = if cell {
                    Target::Cell(s)
                } else {
                    Target::Local(s)
                };
                let now = self.f().slot_tys[s as usize].clone();
                return (t, now);
            }
        }
        let m = self.m.0 as usize;
        match self.ctx.mods[m].global_ix.get(name).copied() {
            Some(g) => {
                let cur = self.ctx.mods[m].global_tys[g as usize].clone();
                let declared = false;
                self.note_assignment_type(&cur, declared, ty.as_ref(), span, |l, t| {
                    let m = l.m.0 as usize;
                    l.ctx.mods[m].global_tys[g as usize] = t
                });
                let now = self.ctx.mods[m].global_tys[g as usize].clone();
                (Target::Global(g), now)
            }
            None => {
                // Scope analysis binds every assigned name, so this is a name the
                // parser produced from a recovered error.
                (Target::Discard, Ty::Any)
            }
        }
    }

    /// The first assignment fixes a variable's type; later ones must fit it.
    fn note_assignment_type(
        &mut self,
        cur: &Ty,
        declared: bool,
        new: Option<&Ty>,
        span: Span,
        set: impl FnOnce(&mut Self, Ty),
    ) {
        let Some(new) = new else { return };
        if !cur.is_known() {
            if !declared {
                set(self, new.clone());
            }
            return;
        }
        if cur.accepts(new) {
            return;
        }
        if !declared {
            // Python code widens freely between numbers (`total = 0; total += 0.5`).
            if cur.is_numeric() && new.is_numeric() {
                set(self, Ty::Float);
                return;
            }
            if !new.is_known() || matches!(cur, Ty::None) || matches!(new, Ty::None) {
                set(self, Ty::Any);
                return;
            }
        }
        if declared {
            self.mismatch(cur, new, span, "the variable's declared type");
        } else {
            self.err(
                Diagnostic::error(
                    codes::TYPE_MISMATCH,
                    format!("this variable was first assigned a `{cur}`, now a `{new}`"),
                    span,
                )
                .with_label(format!("this is `{new}`"))
                .with_help("a variable keeps the type of its first assignment: use a new name, or annotate it with a union like `x: int | str`"),
            );
        }
    }

    /// Lowers an assignment target (name, tuple, index or attribute).
    pub fn store_target(&mut self, t: &ast::Expr, ty: Option<Ty>) -> (Target, Ty) {
        match &t.kind {
            AE::Name(n) => self.store_name(n, t.span, ty),
            AE::Tuple(xs) | AE::List(xs) => {
                let elem_tys: Vec<Option<Ty>> = match &ty {
                    Some(Ty::Tuple(ts)) if ts.len() == xs.len() => {
                        ts.iter().cloned().map(Some).collect()
                    }
                    Some(other) => {
                        let e = other.element();
                        vec![if e.is_known() { Some(e) } else { Some(Ty::Any) }; xs.len()]
                    }
                    None => vec![None; xs.len()],
                };
                let ts = xs
                    .iter()
                    .zip(elem_tys)
                    .map(|(x, et)| self.store_target(x, et).0)
                    .collect();
                (Target::Tuple(ts), Ty::Any)
            }
            AE::Index(o, i) => {
                let (oe, oty) = self.expr(o);
                let (ie, _) = self.expr(i);
                let elem = match &oty {
                    Ty::List(e) => (**e).clone(),
                    Ty::Dict(_, v) => (**v).clone(),
                    _ => Ty::Any,
                };
                if let (Some(v), true) = (&ty, elem.is_known()) {
                    if !elem.accepts(v) {
                        self.mismatch(&elem, v, t.span, "the container's element type");
                    }
                }
                (Target::Index(Box::new(oe), Box::new(ie)), elem)
            }
            AE::Attr(o, name) => {
                let (oe, oty) = self.expr(o);
                let fty = self.field_type(&oty, name);
                if let (Some(v), Some(f)) = (&ty, &fty) {
                    if !f.accepts(v) {
                        self.mismatch(f, v, t.span, "the field's declared type");
                    }
                }
                let s = self.sym(&name.name);
                (Target::Attr(Box::new(oe), s), fty.unwrap_or(Ty::Any))
            }
            _ => {
                self.err(
                    Diagnostic::error(codes::BAD_TARGET, "cannot assign to this expression", t.span)
                        .with_label("not a variable, element or field")
                        .with_help("the left side of `=` must be a name, `x[i]`, `x.field` or a tuple of those"),
                );
                (Target::Discard, Ty::Any)
            }
        }
    }
}

/// Whether a block always leaves (so a name bound after it is always defined).
pub fn diverges(block: &[ast::Stmt]) -> bool {
    match block.last().map(|s| &s.kind) {
        Some(AS::Return(_)) | Some(AS::Break(_)) | Some(AS::Continue) => true,
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

fn is_mutable_display(e: &ast::Expr) -> bool {
    // Only displays of constants: they are rebuilt in the callee's frame, where
    // the defining scope's names are not visible.
    fn constant(e: &ast::Expr) -> bool {
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

//! Scope analysis (the symbol table): which names each function binds, reads and captures.
//!
//! Run over a whole module before lowering, because whether a local must live
//! in a shared cell is only known once every nested function has been seen.

use rustc_hash::{FxHashMap, FxHashSet};

use kora_syntax::ast::*;
use kora_syntax::Span;

/// What one function (or lambda) scope binds and needs.
#[derive(Debug, Default)]
pub struct FuncScope {
    /// Names bound in this scope, in first-binding order (parameters first).
    pub locals: Vec<String>,
    pub local_set: FxHashSet<String>,
    pub declared_global: FxHashSet<String>,
    pub declared_nonlocal: FxHashSet<String>,
    /// Where each `nonlocal` name was declared, for the error when nothing binds it.
    pub nonlocal_spans: Vec<(String, Span)>,
    /// Names read or written here that are not bound here.
    pub uses: FxHashSet<String>,
    /// Locals that inner functions capture: they live in cells.
    pub cells: FxHashSet<String>,
    /// Names this scope receives from enclosing functions, in capture order.
    pub free: Vec<String>,
    /// Names bound by comprehensions directly in this scope (private slots, but
    /// a lambda inside the comprehension may capture them).
    pub comp_locals: FxHashSet<String>,
    pub parent: Option<usize>,
}

/// Every function scope of a module, keyed by the span of its `def` or `lambda`.
#[derive(Debug, Default)]
pub struct ScopeTable {
    pub scopes: Vec<FuncScope>,
    pub by_span: FxHashMap<Span, usize>,
    /// Names bound at module level, in first-binding order.
    pub globals: Vec<String>,
    pub global_set: FxHashSet<String>,
    /// Comprehension variables at module level, and those of them a lambda captures.
    pub module_comp_locals: FxHashSet<String>,
    pub module_cells: FxHashSet<String>,
}

impl ScopeTable {
    pub fn build(module: &Module) -> ScopeTable {
        let mut t = ScopeTable::default();
        let mut b = Builder {
            t: &mut t,
            stack: Vec::new(),
        };
        b.block(&module.stmts);
        t.resolve_free();
        t
    }

    fn bind_global(&mut self, name: &str) {
        if self.global_set.insert(name.to_string()) {
            self.globals.push(name.to_string());
        }
    }

    /// Marks, for every scope, which names come from an enclosing function,
    /// and turns the binding locals into cells.
    fn resolve_free(&mut self) {
        for i in 0..self.scopes.len() {
            let mut wanted: Vec<String> = self.scopes[i]
                .uses
                .iter()
                .filter(|n| !self.scopes[i].local_set.contains(*n))
                .filter(|n| !self.scopes[i].declared_global.contains(*n))
                .cloned()
                .collect();
            wanted.sort();
            for name in wanted {
                // Find the nearest enclosing function that binds it.
                let mut chain = vec![i];
                let mut cur = self.scopes[i].parent;
                let mut owner = None;
                while let Some(p) = cur {
                    if self.scopes[p].local_set.contains(&name)
                        || self.scopes[p].comp_locals.contains(&name)
                    {
                        owner = Some(p);
                        break;
                    }
                    if self.scopes[p].declared_global.contains(&name) {
                        break;
                    }
                    chain.push(p);
                    cur = self.scopes[p].parent;
                }
                let module_owned = owner.is_none()
                    && cur.is_none()
                    && self.module_comp_locals.contains(&name)
                    && !self.global_set.contains(&name);
                if module_owned {
                    self.module_cells.insert(name.clone());
                    for s in chain {
                        if !self.scopes[s].free.contains(&name) {
                            self.scopes[s].free.push(name.clone());
                        }
                    }
                } else if let Some(owner) = owner {
                    self.scopes[owner].cells.insert(name.clone());
                    for s in chain {
                        if !self.scopes[s].free.contains(&name) {
                            self.scopes[s].free.push(name.clone());
                        }
                    }
                }
            }
        }
    }
}

struct Builder<'a> {
    t: &'a mut ScopeTable,
    /// Indexes of the function scopes being walked; empty at module level.
    stack: Vec<usize>,
}

impl Builder<'_> {
    fn cur(&mut self) -> Option<&mut FuncScope> {
        let i = *self.stack.last()?;
        Some(&mut self.t.scopes[i])
    }

    fn bind(&mut self, name: &str) {
        match self.cur() {
            None => self.t.bind_global(name),
            Some(s) => {
                if s.declared_global.contains(name) || s.declared_nonlocal.contains(name) {
                    s.uses.insert(name.to_string());
                    return;
                }
                if s.local_set.insert(name.to_string()) {
                    s.locals.push(name.to_string());
                }
            }
        }
    }

    fn use_name(&mut self, name: &str) {
        if let Some(s) = self.cur() {
            s.uses.insert(name.to_string());
        }
    }

    fn enter(&mut self, span: Span) -> usize {
        let parent = self.stack.last().copied();
        let idx = self.t.scopes.len();
        self.t.scopes.push(FuncScope {
            parent,
            ..FuncScope::default()
        });
        self.t.by_span.insert(span, idx);
        self.stack.push(idx);
        idx
    }

    fn block(&mut self, stmts: &[Stmt]) {
        // Declarations apply to the whole function, wherever they are written.
        for s in stmts {
            self.declarations(s);
        }
        for s in stmts {
            self.stmt(s);
        }
    }

    fn declarations(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Global(names) => {
                if let Some(sc) = self.cur() {
                    for n in names {
                        sc.declared_global.insert(n.name.clone());
                    }
                }
                for n in names {
                    self.t.bind_global(&n.name);
                }
            }
            StmtKind::Nonlocal(names) => {
                if let Some(sc) = self.cur() {
                    for n in names {
                        sc.declared_nonlocal.insert(n.name.clone());
                        sc.nonlocal_spans.push((n.name.clone(), n.span));
                        sc.uses.insert(n.name.clone());
                    }
                }
            }
            StmtKind::If { branches, orelse } => {
                for (_, b) in branches {
                    b.iter().for_each(|s| self.declarations(s));
                }
                if let Some(b) = orelse {
                    b.iter().for_each(|s| self.declarations(s));
                }
            }
            StmtKind::While { body, .. } | StmtKind::For { body, .. } => {
                body.iter().for_each(|s| self.declarations(s))
            }
            _ => {}
        }
    }

    fn target(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) => self.bind(n),
            ExprKind::Tuple(xs) | ExprKind::List(xs) => xs.iter().for_each(|x| self.target(x)),
            ExprKind::Starred(x) => self.target(x),
            ExprKind::Attr(o, _) => self.expr(o),
            ExprKind::Index(o, i) => {
                self.expr(o);
                self.expr(i);
            }
            _ => self.expr(e),
        }
    }

    fn stmts(&mut self, b: &[Stmt]) {
        for s in b {
            self.stmt(s);
        }
    }

    fn handlers(&mut self, hs: &[Handler]) {
        for h in hs {
            for p in &h.params {
                self.bind(&p.name);
            }
            self.stmts(&h.body);
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Expr { expr, handlers } => {
                self.expr(expr);
                self.handlers(handlers);
            }
            StmtKind::Assign {
                targets,
                value,
                handlers,
            } => {
                self.expr(value);
                for t in targets {
                    self.target(t);
                }
                self.handlers(handlers);
            }
            StmtKind::AnnAssign {
                target,
                value,
                handlers,
                else_,
                ..
            } => {
                if let Some(v) = value {
                    self.expr(v);
                }
                self.bind(&target.name);
                self.handlers(handlers);
                if let Some(e) = else_ {
                    if let Some((a, b)) = &e.binds {
                        self.bind(&a.name);
                        self.bind(&b.name);
                    }
                    self.stmts(&e.body);
                }
            }
            StmtKind::AugAssign { target, value, .. } => {
                self.expr(value);
                if let ExprKind::Name(n) = &target.kind {
                    self.use_name(n);
                }
                self.target(target);
            }
            StmtKind::If { branches, orelse } => {
                for (c, b) in branches {
                    self.expr(c);
                    self.stmts(b);
                }
                if let Some(b) = orelse {
                    self.stmts(b);
                }
            }
            StmtKind::While { cond, body } => {
                self.expr(cond);
                self.stmts(body);
            }
            StmtKind::For {
                target,
                iter,
                body,
                into,
                ..
            } => {
                self.expr(iter);
                self.target(target);
                self.stmts(body);
                if let Some(i) = into {
                    self.target(&i.target);
                }
            }
            StmtKind::Break(v) | StmtKind::Return(v) => {
                if let Some(v) = v {
                    self.expr(v);
                }
            }
            StmtKind::Def(f) => {
                for p in &f.params {
                    if let Some(d) = &p.default {
                        self.expr(d);
                    }
                }
                self.bind(&f.name.name);
                self.function(f.span, &f.params, |b| b.block(&f.body));
            }
            StmtKind::Record(r) => {
                for f in &r.fields {
                    if let Some(d) = &f.default {
                        self.expr(d);
                    }
                }
            }
            StmtKind::Match { subject, arms } => {
                self.expr(subject);
                for a in arms {
                    self.pattern(&a.pattern);
                    if let Some(g) = &a.guard {
                        self.expr(g);
                    }
                    self.stmts(&a.body);
                }
            }
            StmtKind::Use(u) => {
                if let Some(a) = &u.alias {
                    self.bind(&a.name);
                } else if let UseTarget::Std(n) = &u.target {
                    self.bind(&n.name);
                }
            }
            StmtKind::Assert { cond, msg } => {
                self.expr(cond);
                if let Some(m) = msg {
                    self.expr(m);
                }
            }
            StmtKind::Budget { args, body }
            | StmtKind::Context { args, body }
            | StmtKind::ModelBlock { args, body } => {
                for a in args {
                    self.arg(a);
                }
                self.stmts(body);
            }
            StmtKind::Mock { value, body, .. } => {
                self.expr(value);
                self.stmts(body);
            }
            StmtKind::Declassify { value, body, .. } => {
                self.expr(value);
                self.stmts(body);
            }
            StmtKind::Test { body, .. } => {
                // A test body is a function of its own: its names are its locals.
                self.function(s.span, &[], |b| b.block(body));
            }
            StmtKind::TypeAlias { .. }
            | StmtKind::Nonlocal(_)
            | StmtKind::Global(_)
            | StmtKind::Continue
            | StmtKind::Pass
            | StmtKind::PythonImport { .. }
            | StmtKind::Error => {}
        }
    }

    fn function(&mut self, span: Span, params: &[Param], body: impl FnOnce(&mut Self)) {
        self.enter(span);
        for p in params {
            self.bind(&p.name.name);
        }
        body(self);
        self.stack.pop();
    }

    fn pattern(&mut self, p: &Pattern) {
        match &p.kind {
            PatternKind::Capture(n) => self.bind(n),
            PatternKind::Constructor { args, kwargs, .. } => {
                args.iter().for_each(|a| self.pattern(a));
                kwargs.iter().for_each(|(_, a)| self.pattern(a));
            }
            PatternKind::Sequence(ps) | PatternKind::Or(ps) => {
                ps.iter().for_each(|a| self.pattern(a))
            }
            PatternKind::As(inner, n) => {
                self.pattern(inner);
                self.bind(&n.name);
            }
            PatternKind::Literal(e) => self.expr(e),
            PatternKind::Wildcard | PatternKind::Error => {}
        }
    }

    fn arg(&mut self, a: &Arg) {
        match &a.kind {
            ArgKind::Positional(e)
            | ArgKind::Keyword(_, e)
            | ArgKind::Star(e)
            | ArgKind::DoubleStar(e) => self.expr(e),
        }
    }

    fn expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) => self.use_name(n),
            ExprKind::FString(parts) => self.fparts(parts),
            ExprKind::List(xs) | ExprKind::Tuple(xs) | ExprKind::Set(xs) => {
                xs.iter().for_each(|x| self.expr(x))
            }
            ExprKind::Dict(kvs) => kvs.iter().for_each(|(k, v)| {
                self.expr(k);
                self.expr(v);
            }),
            ExprKind::Comp {
                elt,
                value,
                clauses,
                ..
            } => {
                // Comprehension variables get private slots during lowering; here we
                // only record what the comprehension reads from its surroundings.
                let mut bound: Vec<String> = Vec::new();
                for c in clauses {
                    self.expr_except(&c.iter, &bound);
                    collect_target_names(&c.target, &mut bound);
                    self.comp_bind(&bound);
                    for cond in &c.conds {
                        self.expr_except(cond, &bound);
                    }
                }
                self.expr_except(elt, &bound);
                if let Some(v) = value {
                    self.expr_except(v, &bound);
                }
            }
            ExprKind::Unary(_, x) | ExprKind::Starred(x) | ExprKind::Classified(x) => self.expr(x),
            ExprKind::Binary(_, a, b) | ExprKind::BoolOp(_, a, b) | ExprKind::Index(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Compare(a, rest) => {
                self.expr(a);
                rest.iter().for_each(|(_, x)| self.expr(x));
            }
            ExprKind::Call { func, args } => {
                self.expr(func);
                args.iter().for_each(|a| self.arg(a));
            }
            ExprKind::Analyze { args, .. } | ExprKind::AskHuman(args) => {
                args.iter().for_each(|a| self.arg(a))
            }
            ExprKind::Attr(o, _) => self.expr(o),
            ExprKind::Slice {
                value,
                lo,
                hi,
                step,
            } => {
                self.expr(value);
                for x in [lo, hi, step].into_iter().flatten() {
                    self.expr(x);
                }
            }
            ExprKind::Lambda { params, body } => {
                for p in params {
                    if let Some(d) = &p.default {
                        self.expr(d);
                    }
                }
                self.function(e.span, params, |b| b.expr(body));
            }
            ExprKind::IfExp { cond, then, orelse } => {
                self.expr(cond);
                self.expr(then);
                self.expr(orelse);
            }
            ExprKind::Int(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_)
            | ExprKind::Bool(_)
            | ExprKind::None
            | ExprKind::Error => {}
        }
    }

    /// Comprehension variables are private to the comprehension; a lambda created
    /// inside may still capture them, so the enclosing scope records them.
    fn comp_bind(&mut self, names: &[String]) {
        match self.cur() {
            Some(s) => s.comp_locals.extend(names.iter().cloned()),
            None => self.t.module_comp_locals.extend(names.iter().cloned()),
        }
    }

    /// Walks an expression inside a comprehension, ignoring the comprehension's own variables.
    fn expr_except(&mut self, e: &Expr, bound: &[String]) {
        let before: Option<FxHashSet<String>> = self.cur().map(|s| s.uses.clone());
        self.expr(e);
        if let (Some(before), Some(s)) = (before, self.cur()) {
            s.uses.retain(|n| before.contains(n) || !bound.contains(n));
        }
    }

    fn fparts(&mut self, parts: &[FStringPart]) {
        for p in parts {
            if let FStringPart::Expr { expr, spec, .. } = p {
                self.expr(expr);
                self.fparts(spec);
            }
        }
    }
}

/// The names a target (or comprehension variable) binds.
pub fn collect_target_names(e: &Expr, out: &mut Vec<String>) {
    match &e.kind {
        ExprKind::Name(n) => out.push(n.clone()),
        ExprKind::Tuple(xs) | ExprKind::List(xs) => {
            xs.iter().for_each(|x| collect_target_names(x, out))
        }
        ExprKind::Starred(x) => collect_target_names(x, out),
        _ => {}
    }
}

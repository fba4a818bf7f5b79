//! Scope analysis (the symbol table): which names each function binds, reads and captures.
//!
//! Run over a whole module before lowering, because whether a local must live
//! in a shared cell is only known once every nested function has been seen.

use rustc_hash::{FxHashMap, FxHashSet};

use kora_syntax::ast::*;
use kora_syntax::visit::{walk_else, walk_expr, walk_handler, walk_pattern, walk_stmt, Visitor};
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
    /// Every name that some function binds in a comprehension and an inner function
    /// captures; built once, as asking each scope per comprehension variable was
    /// quadratic in the number of functions of a file.
    pub comp_cells: FxHashSet<String>,
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
        t.comp_cells = t
            .scopes
            .iter()
            .flat_map(|s| s.comp_locals.intersection(&s.cells).cloned())
            .collect();
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
        self.visit_block(stmts);
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

    /// An assignment target: its names are bound, the rest of it is read.
    fn target(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) => self.bind(n),
            ExprKind::Tuple(xs) | ExprKind::List(xs) => xs.iter().for_each(|x| self.target(x)),
            ExprKind::Starred(x) => self.target(x),
            ExprKind::Attr(o, _) => self.visit_expr(o),
            ExprKind::Index(o, i) => {
                self.visit_expr(o);
                self.visit_expr(i);
            }
            _ => self.visit_expr(e),
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
        self.visit_expr(e);
        if let (Some(before), Some(s)) = (before, self.cur()) {
            s.uses.retain(|n| before.contains(n) || !bound.contains(n));
        }
    }
}

/// Statements and expressions that bind or open a scope are spelled out; the
/// rest only read names, so the visitor's walk finds the names in them.
impl<'a> Visitor<'a> for Builder<'_> {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        match &s.kind {
            StmtKind::Assign {
                targets,
                value,
                handlers,
            } => {
                self.visit_expr(value);
                for t in targets {
                    self.target(t);
                }
                for h in handlers {
                    self.visit_handler(h);
                }
            }
            StmtKind::AnnAssign {
                target,
                value,
                handlers,
                else_,
                ..
            } => {
                if let Some(v) = value {
                    self.visit_expr(v);
                }
                self.bind(&target.name);
                for h in handlers {
                    self.visit_handler(h);
                }
                if let Some(e) = else_ {
                    self.visit_else(e);
                }
            }
            StmtKind::AugAssign { target, value, .. } => {
                self.visit_expr(value);
                if let ExprKind::Name(n) = &target.kind {
                    self.use_name(n);
                }
                self.target(target);
            }
            StmtKind::For {
                target,
                iter,
                body,
                into,
                ..
            } => {
                self.visit_expr(iter);
                self.target(target);
                self.visit_block(body);
                if let Some(i) = into {
                    self.target(&i.target);
                }
            }
            StmtKind::Def(f) => {
                // Defaults are read where the `def` stands; an agent's `model(...)`
                // is a name, never evaluated, so it reads nothing.
                for p in &f.params {
                    self.visit_param(p);
                }
                self.bind(&f.name.name);
                self.function(f.span, &f.params, |b| b.block(&f.body));
            }
            StmtKind::Use(u) => {
                if let Some(a) = &u.alias {
                    self.bind(&a.name);
                } else if let UseTarget::Std(n) = &u.target {
                    // `use pkg.module` binds `module`.
                    self.bind(n.name.rsplit('.').next().unwrap_or(&n.name));
                } else if let UseTarget::Provider { name, .. } = &u.target {
                    if !name.name.contains('.') {
                        self.bind(&name.name);
                    }
                }
            }
            StmtKind::Test { body, .. } => {
                // A test body is a function of its own: its names are its locals.
                self.function(s.span, &[], |b| b.block(body));
            }
            _ => walk_stmt(self, s),
        }
    }

    fn visit_handler(&mut self, h: &'a Handler) {
        for p in &h.params {
            self.bind(&p.name);
        }
        walk_handler(self, h);
    }

    fn visit_else(&mut self, e: &'a ElseClause) {
        if let Some((a, b)) = &e.binds {
            self.bind(&a.name);
            self.bind(&b.name);
        }
        walk_else(self, e);
    }

    fn visit_pattern(&mut self, p: &'a Pattern) {
        match &p.kind {
            PatternKind::Capture(n) => self.bind(n),
            PatternKind::Star(n) if n.name != "_" => self.bind(&n.name),
            PatternKind::As(inner, n) => {
                self.visit_pattern(inner);
                self.bind(&n.name);
            }
            _ => walk_pattern(self, p),
        }
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        match &e.kind {
            ExprKind::Name(n) => self.use_name(n),
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
            ExprKind::Lambda { params, body } => {
                for p in params {
                    self.visit_param(p);
                }
                self.function(e.span, params, |b| b.visit_expr(body));
            }
            ExprKind::IfExp { cond, then, orelse } => {
                // In the order it runs, which numbers the scopes of lambdas inside it
                // as they always were (the slot order of captured names follows).
                self.visit_expr(cond);
                self.visit_expr(then);
                self.visit_expr(orelse);
            }
            _ => walk_expr(self, e),
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

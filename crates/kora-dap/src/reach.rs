//! Which top-level functions a `parallel for` branch can run: their lines cannot stop, because branches run on worker interpreters with no debugger.
//!
//! Conservative by design: a function counts as reached wherever its name
//! is read, not only where it is called, so one passed as a value (a tool, a
//! callback) is reached too. A function is reached "sequentially" from the
//! module top levels and tests, and "in a branch" from `parallel for` bodies.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kora_check::hir::{
    Args, ExprKind as E, FPart, Function, ModId, Pattern, Program, Stmt, StmtKind as S, Target,
};

type Key = (ModId, u32);

/// A top-level function a branch can reach, and whether code outside any branch can reach it too.
#[derive(Debug, Clone)]
pub struct BranchOnly {
    pub name: String,
    pub module: ModId,
    /// Byte range of the whole `def`.
    pub span: kora_syntax::Span,
    /// Also reached outside a `parallel for`, where it does stop.
    pub also_sequential: bool,
}

/// The top-level functions some `parallel for` branch can run.
pub fn reached_from_branches(prog: &Program) -> Vec<BranchOnly> {
    let mut defs: HashMap<Key, Arc<Function>> = HashMap::new();
    for m in &prog.modules {
        for s in &m.body.body {
            if let S::Def(Target::Global(g), f) = &s.kind {
                defs.insert((m.id, *g), f.clone());
            }
        }
    }
    let mut w = Walk {
        defs: &defs,
        seen: [HashSet::new(), HashSet::new()],
        todo: Vec::new(),
    };
    for m in &prog.modules {
        w.stmts(&m.body.body, m.id, false, true);
        for (_, t) in &m.tests {
            w.stmts(&t.body, m.id, false, false);
        }
    }
    while let Some((key, branch)) = w.todo.pop() {
        if let Some(f) = defs.get(&key) {
            w.function(f, key.0, branch);
        }
    }
    let mut out: Vec<BranchOnly> = w.seen[1]
        .iter()
        .filter_map(|k| {
            let f = defs.get(k)?;
            Some(BranchOnly {
                name: f.name.clone(),
                module: k.0,
                span: f.span,
                also_sequential: w.seen[0].contains(k),
            })
        })
        .collect();
    out.sort_by_key(|b| (b.module.0, b.span.start));
    out
}

struct Walk<'a> {
    defs: &'a HashMap<Key, Arc<Function>>,
    /// [sequentially, in a branch]
    seen: [HashSet<Key>; 2],
    todo: Vec<(Key, bool)>,
}

impl Walk<'_> {
    fn reach(&mut self, key: Key, branch: bool) {
        if self.defs.contains_key(&key) && self.seen[usize::from(branch)].insert(key) {
            self.todo.push((key, branch));
        }
    }

    fn function(&mut self, f: &Function, m: ModId, branch: bool) {
        for p in &f.params {
            if let Some(d) = &p.default {
                self.expr(d, m, branch);
            }
        }
        self.stmts(&f.body, m, branch, false);
    }

    /// `top`: a module's top level, whose `def`s run only when something reaches them.
    fn stmts(&mut self, body: &[Stmt], m: ModId, branch: bool, top: bool) {
        for s in body {
            self.stmt(s, m, branch, top);
        }
    }

    fn stmt(&mut self, s: &Stmt, m: ModId, branch: bool, top: bool) {
        match &s.kind {
            S::Expr(e) | S::Return(Some(e)) | S::BreakValue(e) => self.expr(e, m, branch),
            S::Assign(t, e)
            | S::ConcatAssign(t, e)
            | S::AugAssign(t, _, e)
            | S::AnnAssign(t, _, e) => {
                self.target(t, m, branch);
                self.expr(e, m, branch);
            }
            S::AssignMulti(ts, e) => {
                ts.iter().for_each(|t| self.target(t, m, branch));
                self.expr(e, m, branch);
            }
            S::Unwrap {
                target,
                value,
                orelse,
                ..
            } => {
                self.target(target, m, branch);
                self.expr(value, m, branch);
                self.stmts(orelse, m, branch, false);
            }
            S::If(arms, orelse) => {
                for (c, b) in arms {
                    self.expr(c, m, branch);
                    self.stmts(b, m, branch, false);
                }
                if let Some(b) = orelse {
                    self.stmts(b, m, branch, false);
                }
            }
            S::While(c, b) => {
                self.expr(c, m, branch);
                self.stmts(b, m, branch, false);
            }
            S::For(t, e, b) => {
                self.target(t, m, branch);
                self.expr(e, m, branch);
                self.stmts(b, m, branch, false);
            }
            S::Def(_, f) if top => {
                // Defaults run where the `def` runs; the body only when the function is reached.
                for p in &f.params {
                    if let Some(d) = &p.default {
                        self.expr(d, m, branch);
                    }
                }
            }
            S::Def(_, f) => self.function(f, m, branch),
            S::Match(e, arms) => {
                self.expr(e, m, branch);
                for a in arms {
                    self.pattern(&a.pattern, m, branch);
                    if let Some(g) = &a.guard {
                        self.expr(g, m, branch);
                    }
                    self.stmts(&a.body, m, branch, false);
                }
            }
            S::Assert(e, msg) => {
                self.expr(e, m, branch);
                if let Some(x) = msg {
                    self.expr(x, m, branch);
                }
            }
            S::Del(xs) => xs.iter().for_each(|x| self.expr(x, m, branch)),
            S::Mock(e, b) | S::ModelBlock { name: e, body: b } => {
                self.expr(e, m, branch);
                self.stmts(b, m, branch, false);
            }
            S::MockExternal { value, body, .. } => {
                self.expr(value, m, branch);
                self.stmts(body, m, branch, false);
            }
            S::Context {
                max_input,
                reserve_output,
                body,
            } => {
                self.expr(max_input, m, branch);
                if let Some(r) = reserve_output {
                    self.expr(r, m, branch);
                }
                self.stmts(body, m, branch, false);
            }
            S::ParallelFor(p) => {
                self.target(&p.target, m, branch);
                self.expr(&p.iter, m, branch);
                if let Some((t, _)) = &p.into {
                    self.target(t, m, branch);
                }
                self.stmts(&p.body, m, true, false);
            }
            S::Budget(b) => {
                for (_, e) in &b.limits {
                    self.expr(e, m, branch);
                }
                self.stmts(&b.body, m, branch, false);
            }
            S::Declassify { value, body, .. } => {
                self.expr(value, m, branch);
                self.stmts(body, m, branch, false);
            }
            S::Break | S::Continue | S::Return(None) | S::Pass | S::Use(..) => {}
        }
    }

    fn target(&mut self, t: &Target, m: ModId, branch: bool) {
        match t {
            Target::Index(a, b) => {
                self.expr(a, m, branch);
                self.expr(b, m, branch);
            }
            Target::Attr(a, _) => self.expr(a, m, branch),
            Target::Slice(a, parts) => {
                self.expr(a, m, branch);
                parts.iter().flatten().for_each(|x| self.expr(x, m, branch));
            }
            Target::Tuple(ts) => ts.iter().for_each(|t| self.target(t, m, branch)),
            Target::Star(t) => self.target(t, m, branch),
            Target::Local(_) | Target::Cell(_) | Target::Global(_) | Target::Discard => {}
        }
    }

    fn pattern(&mut self, p: &Pattern, m: ModId, branch: bool) {
        match p {
            Pattern::Literal(e) => self.expr(e, m, branch),
            Pattern::Outcome(_, Some(p)) | Pattern::Class(_, Some(p)) | Pattern::As(p, _) => {
                self.pattern(p, m, branch)
            }
            Pattern::Record(_, ps) => ps.iter().for_each(|(_, p)| self.pattern(p, m, branch)),
            Pattern::Sequence(ps) | Pattern::Or(ps) => {
                ps.iter().for_each(|p| self.pattern(p, m, branch))
            }
            Pattern::SequenceStar(a, _, b) => {
                a.iter().chain(b).for_each(|p| self.pattern(p, m, branch))
            }
            Pattern::Wildcard
            | Pattern::Bind(_)
            | Pattern::Outcome(_, None)
            | Pattern::Class(_, None) => {}
        }
    }

    fn args(&mut self, a: &Args, m: ModId, branch: bool) {
        a.positional.iter().for_each(|x| self.expr(x, m, branch));
        a.keywords.iter().for_each(|(_, x)| self.expr(x, m, branch));
        a.star.iter().for_each(|(_, x)| self.expr(x, m, branch));
    }

    fn handler(&mut self, h: &Option<kora_check::hir::ToolHandler>, m: ModId, branch: bool) {
        if let Some(h) = h {
            self.stmts(&h.body, m, branch, false);
        }
    }

    fn expr(&mut self, e: &kora_check::hir::Expr, m: ModId, branch: bool) {
        match &e.kind {
            E::Global(g) => self.reach((m, *g), branch),
            E::ModuleGlobal(other, g) => self.reach((*other, *g), branch),
            E::FString(parts) => self.fparts(parts, m, branch),
            E::List(xs) | E::Tuple(xs) | E::Set(xs) => {
                xs.iter().for_each(|x| self.expr(x, m, branch))
            }
            E::Dict(kv) => kv.iter().for_each(|(k, v)| {
                self.expr(k, m, branch);
                self.expr(v, m, branch);
            }),
            E::ListStar(xs) | E::TupleStar(xs) => {
                xs.iter().for_each(|(_, x)| self.expr(x, m, branch))
            }
            E::Comp(c) => {
                self.expr(&c.elt, m, branch);
                if let Some(v) = &c.value {
                    self.expr(v, m, branch);
                }
                for cl in &c.clauses {
                    self.target(&cl.target, m, branch);
                    self.expr(&cl.iter, m, branch);
                    cl.conds.iter().for_each(|x| self.expr(x, m, branch));
                }
            }
            E::Unary(_, x)
            | E::Attr(x, _)
            | E::Remaining(x, _)
            | E::Classified(x, _)
            | E::Unverified(x, _) => self.expr(x, m, branch),
            E::Binary(_, a, b) | E::BoolOp(_, a, b) | E::Index(a, b) => {
                self.expr(a, m, branch);
                self.expr(b, m, branch);
            }
            E::Compare(a, rest) => {
                self.expr(a, m, branch);
                rest.iter().for_each(|(_, x)| self.expr(x, m, branch));
            }
            E::Call(f, a) => {
                self.expr(f, m, branch);
                self.args(a, m, branch);
            }
            E::MethodCall(r, _, a) => {
                self.expr(r, m, branch);
                self.args(a, m, branch);
            }
            E::Slice(v, a, b, c) => {
                self.expr(v, m, branch);
                [a, b, c]
                    .into_iter()
                    .flatten()
                    .for_each(|x| self.expr(x, m, branch));
            }
            E::Lambda(f) => self.function(f, m, branch),
            E::IfExp(a, b, c) => {
                self.expr(a, m, branch);
                self.expr(b, m, branch);
                self.expr(c, m, branch);
            }
            E::Analyze(a) => {
                self.expr(&a.data, m, branch);
                self.expr(&a.prompt, m, branch);
                [&a.model, &a.tools]
                    .into_iter()
                    .flatten()
                    .for_each(|x| self.expr(x, m, branch));
                self.handler(&a.on_tool_call, m, branch);
                self.handler(&a.on_tool_result, m, branch);
                self.handler(&a.on_token, m, branch);
            }
            E::StdCall(c) => {
                if let Some(r) = &c.recv {
                    self.expr(r, m, branch);
                }
                c.args
                    .iter()
                    .flatten()
                    .for_each(|x| self.expr(x, m, branch));
            }
            E::AskHuman(a) => self.expr(&a.question, m, branch),
            E::ExternalCall(c) => self.args(&c.args, m, branch),
            E::Int(_)
            | E::BigInt(_)
            | E::Float(_)
            | E::Bool(_)
            | E::None
            | E::Str(_)
            | E::Bytes(_)
            | E::Local(_)
            | E::Cell(_)
            | E::Builtin(_)
            | E::Type(_)
            | E::Module(_)
            | E::ExternalMember(..) => {}
        }
    }

    fn fparts(&mut self, parts: &[FPart], m: ModId, branch: bool) {
        for p in parts {
            if let FPart::Field { expr, spec, .. } = p {
                self.expr(expr, m, branch);
                self.fparts(spec, m, branch);
            }
        }
    }
}

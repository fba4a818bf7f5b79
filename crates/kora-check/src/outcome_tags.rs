//! Which outcomes a function declared `-> Result[T]` can return, read from its `return`s.
//!
//! A written `Result[T]` may be any of the five outcomes, but a function that only returns
//! `Ok(...)` and `Err(...)` never answers `Uncertain`, and one that returns what `analyze`
//! gave never answers `Err`. A `match` on the call must cover what can come back, so the
//! signatures the checker uses carry these tags (`Ty::Outcome(T, tags)`).
//!
//! The reading is syntactic and runs before any body is lowered, so a call may come before
//! the function it calls: each top-level function's tags start empty and grow until no
//! function's tags change. Anything it cannot follow (a parameter, a method of an unknown
//! value, a global) counts as all five, so the result only ever over-approximates.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use kora_syntax::ast::{self, ExprKind as AE, StmtKind as AS};

use crate::loader::Loaded;
use crate::lower::Ctx;
use crate::types::{Tags, Ty};

/// Rounds of the fixpoint before giving up on precision (each round can only add tags, and
/// there are five, so a chain of calls settles in a few).
const MAX_ROUNDS: usize = 12;

/// Narrows the `Result` tags of every top-level function signature in the program.
pub(crate) fn infer(loaded: &Loaded, ctx: &mut Ctx) {
    for &i in &loaded.order {
        let file = &loaded.files[i];
        let defs: Vec<(u32, &ast::FuncDef)> = file
            .ast
            .stmts
            .iter()
            .filter_map(|s| match &s.kind {
                AS::Def(d) => Some(d),
                _ => None,
            })
            .filter_map(|d| {
                let g = *ctx.mods[i].global_ix.get(&d.name.name)?;
                let sig = ctx.mods[i].sigs.get(&g)?;
                matches!(sig.ret, Ty::Outcome(..)).then_some((g, d))
            })
            .collect();
        if defs.is_empty() {
            continue;
        }
        let mut tags: FxHashMap<String, Tags> = defs
            .iter()
            .map(|(_, d)| (d.name.name.clone(), Tags::NONE))
            .collect();
        for _ in 0..MAX_ROUNDS {
            let mut changed = false;
            for (_, d) in &defs {
                let reader = Reader {
                    ctx,
                    module: i,
                    fns: &tags,
                    def: d,
                };
                let found = reader.returns(&d.body);
                let entry = tags.entry(d.name.name.clone()).or_insert(Tags::NONE);
                if found.union(*entry) != *entry {
                    *entry = found.union(*entry);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for (g, d) in defs {
            let found = tags.get(&d.name.name).copied().unwrap_or(Tags::ALL);
            // A function that returns no outcome at all still declares one: keep its word.
            let found = if found.is_empty() { Tags::ALL } else { found };
            let info = &mut ctx.mods[i];
            if let Some(sig) = info.sigs.get(&g) {
                if let Ty::Outcome(t, _) = &sig.ret {
                    let mut narrowed = (**sig).clone();
                    narrowed.ret = Ty::Outcome(t.clone(), found);
                    info.sigs.insert(g, Arc::new(narrowed));
                }
            }
        }
    }
}

struct Reader<'r> {
    ctx: &'r Ctx,
    module: usize,
    /// The current estimate for each `Result` function of this module.
    fns: &'r FxHashMap<String, Tags>,
    def: &'r ast::FuncDef,
}

impl Reader<'_> {
    /// The union of what the `return`s of a block give, nested functions aside.
    fn returns(&self, block: &[ast::Stmt]) -> Tags {
        let mut acc = Tags::NONE;
        for s in block {
            acc = acc.union(match &s.kind {
                AS::Return(Some(e)) => self.expr(e, 0),
                other => self.nested(other),
            });
        }
        acc
    }

    fn nested(&self, s: &AS) -> Tags {
        match s {
            AS::If { branches, orelse } => {
                let mut t = Tags::NONE;
                for (_, b) in branches {
                    t = t.union(self.returns(b));
                }
                orelse.as_ref().map_or(t, |b| t.union(self.returns(b)))
            }
            // A `return` in a `parallel for` body answers the branch, not the function.
            AS::While { body, .. }
            | AS::For {
                body,
                parallel: None,
                ..
            }
            | AS::Budget { body, .. }
            | AS::Context { body, .. }
            | AS::ModelBlock { body, .. }
            | AS::Declassify { body, .. } => self.returns(body),
            AS::Match { arms, .. } => arms
                .iter()
                .fold(Tags::NONE, |t, a| t.union(self.returns(&a.body))),
            AS::AnnAssign { else_: Some(e), .. } => self.returns(&e.body),
            _ => Tags::NONE,
        }
    }

    /// What an expression can be, if it is an outcome.
    fn expr(&self, e: &ast::Expr, depth: u32) -> Tags {
        if depth > 8 {
            return Tags::ALL;
        }
        match &e.kind {
            AE::Analyze { .. } => Tags::MODEL,
            AE::IfExp { then, orelse, .. } => self
                .expr(then, depth + 1)
                .union(self.expr(orelse, depth + 1)),
            AE::Call { func, .. } => self.call(func),
            AE::Name(n) => self.variable(n, depth),
            _ => Tags::ALL,
        }
    }

    fn call(&self, func: &ast::Expr) -> Tags {
        match &func.kind {
            AE::Name(n) => {
                if let Some(t) = Tags::of_name(n) {
                    return t;
                }
                if let Some(t) = self.fns.get(n) {
                    return *t;
                }
                let info = &self.ctx.mods[self.module];
                match info.global_ix.get(n).and_then(|g| info.sigs.get(g)) {
                    Some(sig) => match &sig.ret {
                        Ty::Outcome(_, t) => *t,
                        _ => Tags::ALL,
                    },
                    None => Tags::ALL,
                }
            }
            AE::Attr(obj, name) => {
                let AE::Name(owner) = &obj.kind else {
                    // A method of a standard-library value (`db.query(...)`).
                    return Tags::OK_ERR;
                };
                let info = &self.ctx.mods[self.module];
                if owner == "eval" {
                    return Tags::MODEL;
                }
                if info.std_aliases.contains_key(owner) {
                    return Tags::OK_ERR;
                }
                if let Some(m) = info.mod_aliases.get(owner) {
                    let other = &self.ctx.mods[m.0 as usize];
                    if let Some(Ty::Outcome(_, t)) = other
                        .global_ix
                        .get(&name.name)
                        .and_then(|g| other.sigs.get(g))
                        .map(|s| &s.ret)
                    {
                        return *t;
                    }
                    return Tags::ALL;
                }
                Tags::OK_ERR
            }
            _ => Tags::ALL,
        }
    }

    /// A local: every value the function assigns it. A parameter or a name it never
    /// assigns may hold anything.
    fn variable(&self, name: &str, depth: u32) -> Tags {
        if self.def.params.iter().any(|p| p.name.name == name) {
            return Tags::ALL;
        }
        let mut values = Vec::new();
        assigned_values(&self.def.body, name, &mut values);
        if values.is_empty() {
            return Tags::ALL;
        }
        values
            .iter()
            .fold(Tags::NONE, |t, v| t.union(self.expr(v, depth + 1)))
    }
}

/// The values a block assigns to `name` with `name = v` or `name: T = v`, nested functions aside.
fn assigned_values<'a>(block: &'a [ast::Stmt], name: &str, out: &mut Vec<&'a ast::Expr>) {
    for s in block {
        match &s.kind {
            AS::Assign { targets, value, .. }
                if targets
                    .iter()
                    .any(|t| matches!(&t.kind, AE::Name(n) if n == name)) =>
            {
                out.push(value);
            }
            AS::AnnAssign {
                target,
                value: Some(v),
                else_,
                ..
            } => {
                // `x: T = outcome else:` binds the payload, not the outcome.
                if target.name == name && else_.is_none() {
                    out.push(v);
                }
                if let Some(e) = else_ {
                    assigned_values(&e.body, name, out);
                }
            }
            AS::If { branches, orelse } => {
                for (_, b) in branches {
                    assigned_values(b, name, out);
                }
                if let Some(b) = orelse {
                    assigned_values(b, name, out);
                }
            }
            AS::While { body, .. }
            | AS::For { body, .. }
            | AS::Budget { body, .. }
            | AS::Context { body, .. }
            | AS::ModelBlock { body, .. }
            | AS::Declassify { body, .. } => assigned_values(body, name, out),
            AS::Match { arms, .. } => {
                for a in arms {
                    assigned_values(&a.body, name, out);
                }
            }
            _ => {}
        }
    }
}

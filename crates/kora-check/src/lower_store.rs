//! Lowering assignments: annotated declarations, store targets and the types they fix, and
//! the targets of `del`.

use crate::codes;
use crate::hir::{self, Target};
use crate::lower::{diverges, Lowerer};
use crate::types::Ty;
use kora_syntax::ast::{self, ExprKind as AE};
use kora_syntax::{Diagnostic, Span};

impl Lowerer<'_> {
    pub(crate) fn assign(&mut self, targets: &[ast::Expr], value: &ast::Expr) -> hir::StmtKind {
        // `x = x + y` on a plain name appends in place when the value is unshared.
        if let [t] = targets {
            if let (AE::Name(n), AE::Binary(ast::BinOp::Add, l, r)) = (&t.kind, &value.kind) {
                if matches!(&l.kind, AE::Name(m) if m == n) {
                    let (rhs, rty) = self.expr(r);
                    self.check_augmented_local(t);
                    let (tgt, tty) = self.store_target(t, None);
                    // The left `x` is read through the target, never lowered: note it for the editor.
                    if self.facts.is_some() {
                        let at = self.fact_scope();
                        if let Some(f) = self.facts.as_mut() {
                            f.read_through(l.span, &tgt, &tty, at);
                        }
                    }
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
    pub(crate) fn check_empty_display(&mut self, name: &str, value: &ast::Expr, _vty: &Ty) {
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

    pub(crate) fn ann_assign(
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
        if matches!(value.kind, AE::Analyze { .. } | AE::Call { .. }) {
            self.expect = Some(declared.clone());
        }
        let (v, vty) = self.expr(value);
        self.expect = None;
        if let Some(e) = else_ {
            let ok_ty = match &vty {
                Ty::Outcome(inner, _) => (**inner).clone(),
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
            if !diverges(&e.body) || self.exit_is_shadowed(&e.body) {
                let last = e.body.last().map(|s| s.span).unwrap_or(e.span);
                self.err(
                    Diagnostic::error(
                        codes::ELSE_MUST_DIVERGE,
                        "the `else` block must leave: end it with `return`, `break` or `continue`",
                        last,
                    )
                    .with_label("execution would fall through here")
                    .with_secondary(target.span, format!("`{}` would be undefined after the block", target.name))
                    .with_help("add `return` (or `break`/`continue` in a loop, or `exit(...)` to stop the program) as the block's last statement"),
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
        // `r: Result[T] = analyze(...)`: the name keeps the outcomes the value can be, so a
        // `match r` is asked for those arms only.
        let flow = match (&declared, &vty) {
            (Ty::Outcome(t, _), Ty::Outcome(_, tags)) => Ty::Outcome(t.clone(), *tags),
            _ => declared.clone(),
        };
        let (t, _) = self.declare_store(target, flow);
        Some(hir::StmtKind::AnnAssign(t, declared, v))
    }

    /// A block that ends in `exit(...)` leaves only when `exit` is the built-in: a function
    /// of the program's own by that name may return.
    fn exit_is_shadowed(&self, block: &[ast::Stmt]) -> bool {
        let ends_in_exit = matches!(
            block.last().map(|s| &s.kind),
            Some(ast::StmtKind::Expr { expr, .. }) if crate::lower::is_exit_call(expr)
        );
        if !ends_in_exit {
            return false;
        }
        let f = self.fns.last().expect("in a function");
        f.slots.contains_key("exit") || self.info().global_ix.contains_key("exit")
    }

    pub(crate) fn declare_store(&mut self, target: &ast::Ident, ty: Ty) -> (Target, Ty) {
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

    /// Resolves a name being assigned; `ty` is the assigned value's type when known.
    pub fn store_name(&mut self, name: &str, span: Span, ty: Option<Ty>) -> (Target, Ty) {
        let stored = self.store_name_slot(name, span, ty);
        if self.facts.is_some() {
            let at = self.fact_scope();
            if let Some(f) = self.facts.as_mut() {
                f.store(span, &stored.0, &stored.1, at);
            }
        }
        stored
    }

    fn store_name_slot(&mut self, name: &str, span: Span, ty: Option<Ty>) -> (Target, Ty) {
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
                self.forget_narrowing(crate::conditions::Place::Local(s));
                self.check_branch_store(name, span, Some(s), None);
                let f = self.fns.last().expect("in a function");
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
                self.forget_narrowing(crate::conditions::Place::Global(g));
                self.check_branch_store(name, span, None, Some(g));
                self.f().bound_globals.insert(g);
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
    pub(crate) fn note_assignment_type(
        &mut self,
        cur: &Ty,
        declared: bool,
        new: Option<&Ty>,
        span: Span,
        set: impl FnOnce(&mut Self, Ty),
    ) {
        let Some(new) = new else { return };
        if let (Ty::Outcome(t, a), Ty::Outcome(_, b)) = (cur, new) {
            if !a.contains(*b) && cur.accepts(new) {
                set(self, Ty::Outcome(t.clone(), a.union(*b)));
                return;
            }
        }
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
            AE::Tuple(xs) | AE::List(xs) if xs.iter().any(|x| matches!(x.kind, AE::Starred(_))) => {
                self.store_starred(xs, ty)
            }
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
            AE::Slice { .. } => match self.expr(t).0.kind {
                hir::ExprKind::Slice(o, lo, hi, step) => {
                    (Target::Slice(o, [lo, hi, step]), Ty::Any)
                }
                _ => (Target::Discard, Ty::Any),
            },
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
            AE::Starred(_) => {
                self.err(
                    Diagnostic::error(codes::BAD_TARGET, "a `*name` target must be inside a tuple", t.span)
                        .with_label("nothing to unpack beside it")
                        .with_help("write `first, *rest = xs` to take the items after the first, or `rest = list(xs)` for all of them"),
                );
                (Target::Discard, Ty::Any)
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

    /// `a, *rest, z = xs`: the starred name takes the items the others leave, as a list.
    fn store_starred(&mut self, xs: &[ast::Expr], ty: Option<Ty>) -> (Target, Ty) {
        let elem = match &ty {
            Some(Ty::Tuple(_)) | None => Ty::Any,
            Some(other) => other.element(),
        };
        let mut stars = 0;
        let mut ts = Vec::with_capacity(xs.len());
        for x in xs {
            match &x.kind {
                AE::Starred(inner) => {
                    stars += 1;
                    if stars > 1 {
                        self.err(
                            Diagnostic::error(
                                codes::BAD_TARGET,
                                "only one `*name` may take the rest of an unpacking",
                                x.span,
                            )
                            .with_label("a second starred target")
                            .with_help(
                                "keep one `*name`; which items each of two would take is ambiguous",
                            ),
                        );
                    }
                    let list = Ty::List(Box::new(elem.clone()));
                    ts.push(Target::Star(Box::new(
                        self.store_target(inner, Some(list)).0,
                    )));
                }
                _ => ts.push(self.store_target(x, Some(elem.clone())).0),
            }
        }
        (Target::Tuple(ts), Ty::Any)
    }

    /// `del` targets: items of a list or dict, or a list's slice. A name or a field is refused:
    /// a name lives until its function returns, and a record's fields are fixed by its type.
    pub(crate) fn del_items(&mut self, items: &[ast::Expr]) -> Vec<hir::Expr> {
        let mut out = Vec::with_capacity(items.len());
        for t in items {
            let (what, help) = match &t.kind {
                AE::Index(..) | AE::Slice { .. } => {
                    out.push(self.expr(t).0);
                    continue;
                }
                AE::Tuple(xs) | AE::List(xs) => {
                    out.extend(self.del_items(xs));
                    continue;
                }
                AE::Name(_) => (
                    "Kora has no `del name`",
                    "a name lives until its function returns: assign it `None` or a new value to let go of what it holds",
                ),
                AE::Attr(..) => (
                    "a record's field cannot be deleted",
                    "a record keeps every field its `type` declares: assign the field a new value instead",
                ),
                _ => (
                    "cannot delete this expression",
                    "`del` removes an item: `del xs[i]`, `del d[key]` or `del xs[a:b]`",
                ),
            };
            self.err(
                Diagnostic::error(codes::BAD_TARGET, what, t.span)
                    .with_label("not an item of a list or dict")
                    .with_help(help),
            );
        }
        out
    }
}

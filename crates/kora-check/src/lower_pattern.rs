//! Lowering `match` arms: patterns, the same-names rule for alternatives, and guards that may not call a model.

use kora_syntax::ast::{self, ExprKind as AE, PatternKind as P};
use kora_syntax::visit::{walk_expr, Visitor};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir::{self, OutcomeTagPat};
use crate::lower::Lowerer;
use crate::suggest;
use crate::types::Ty;

impl Lowerer<'_> {
    pub fn arm(&mut self, a: &ast::MatchArm, subject: &Ty) -> hir::Arm {
        let pattern = self.pattern(&a.pattern, subject);
        let guard = a.guard.as_ref().map(|g| {
            if let Some(span) = find_analyze(g) {
                self.err(
                    Diagnostic::error(codes::MODEL_IN_GUARD, "a guard cannot call a model", span)
                        .with_label("`analyze` in a `case ... if` guard")
                        .with_help(
                            "guards may run for arms that never execute, so their cost would depend on arm order: call `analyze` before the `match` and test its result",
                        ),
                );
            }
            self.condition(g).0
        });
        let body = self.block(&a.body);
        hir::Arm {
            pattern,
            guard,
            body,
            span: a.span,
        }
    }

    fn pattern(&mut self, p: &ast::Pattern, subject: &Ty) -> hir::Pattern {
        match &p.kind {
            P::Wildcard | P::Error => hir::Pattern::Wildcard,
            P::Capture(n) => hir::Pattern::Bind(self.bind_typed(n, p.span, subject)),
            P::Literal(e) => hir::Pattern::Literal(self.expr(e).0),
            P::Star(n) => {
                self.err(
                    Diagnostic::error(
                        codes::BAD_PATTERN,
                        format!("`*{}` only takes the rest of a sequence", n.name),
                        p.span,
                    )
                    .with_label("not inside `[...]` or `(...)`")
                    .with_help(format!(
                        "write it among the items of a sequence pattern: `case [first, *{}]:`",
                        n.name
                    )),
                );
                hir::Pattern::Wildcard
            }
            P::Sequence(ps) => self.sequence_pattern(ps, subject),
            P::Or(alts) => {
                let sets: Vec<(Vec<String>, Span)> = alts
                    .iter()
                    .map(|a| {
                        let mut names = Vec::new();
                        bound_names(a, &mut names);
                        names.sort();
                        names.dedup();
                        (names, a.span)
                    })
                    .collect();
                if let Some((first, _)) = sets.first() {
                    for (names, span) in &sets[1..] {
                        if names != first {
                            let show = |ns: &[String]| {
                                if ns.is_empty() {
                                    "no names".to_string()
                                } else {
                                    ns.iter()
                                        .map(|n| format!("`{n}`"))
                                        .collect::<Vec<_>>()
                                        .join(", ")
                                }
                            };
                            self.err(
                                Diagnostic::error(
                                    codes::ALT_BINDINGS,
                                    "alternatives in a pattern must bind the same names",
                                    *span,
                                )
                                .with_label(format!("this alternative binds {}", show(names)))
                                .with_secondary(sets[0].1, format!("the first binds {}", show(first)))
                                .with_help("bind the same names in every alternative, or split them into separate `case` arms"),
                            );
                        }
                    }
                }
                hir::Pattern::Or(alts.iter().map(|a| self.pattern(a, subject)).collect())
            }
            P::As(inner, name) => {
                let i = self.pattern(inner, subject);
                let t = self.store_name(&name.name, name.span, None).0;
                hir::Pattern::As(Box::new(i), t)
            }
            P::Constructor { name, args, kwargs } => {
                if let Some(test) = hir::TypeTest::from_name(&name.name) {
                    return self.class_pattern(test, args, kwargs, p.span);
                }
                self.constructor_pattern(name, args, kwargs, subject, p.span)
            }
        }
    }

    /// `[a, b]`, `(a, *rest)`: items one by one, at most one star taking what is left.
    fn sequence_pattern(&mut self, ps: &[ast::Pattern], subject: &Ty) -> hir::Pattern {
        let stars: Vec<usize> = ps
            .iter()
            .enumerate()
            .filter(|(_, q)| matches!(q.kind, P::Star(_)))
            .map(|(i, _)| i)
            .collect();
        let elem = subject.element();
        if let [at] = stars.as_slice() {
            let before = ps[..*at].iter().map(|q| self.pattern(q, &elem)).collect();
            let P::Star(name) = &ps[*at].kind else {
                return hir::Pattern::Wildcard;
            };
            let rest = if name.name == "_" {
                hir::Target::Discard
            } else {
                let list = Ty::List(Box::new(elem.clone()));
                self.bind_typed(&name.name, name.span, &list)
            };
            let after = ps[at + 1..]
                .iter()
                .map(|q| self.pattern(q, &elem))
                .collect();
            return hir::Pattern::SequenceStar(before, Box::new(rest), after);
        }
        if let Some(second) = stars.get(1) {
            self.err(
                Diagnostic::error(
                    codes::BAD_PATTERN,
                    "a sequence pattern takes at most one `*name`",
                    ps[*second].span,
                )
                .with_label("a second starred item")
                .with_help("keep one `*name`: which items each of two would take is ambiguous"),
            );
            return hir::Pattern::Wildcard;
        }
        let elems: Vec<Ty> = match subject {
            Ty::Tuple(ts) if ts.len() == ps.len() => ts.clone(),
            other => vec![other.element(); ps.len()],
        };
        hir::Pattern::Sequence(
            ps.iter()
                .zip(elems.iter())
                .map(|(q, t)| self.pattern(q, t))
                .collect(),
        )
    }

    /// `int(n)`, `str()`, `list(xs)`: Python's class patterns for the built-in types, whose
    /// one positional sub-pattern matches the value itself.
    fn class_pattern(
        &mut self,
        test: hir::TypeTest,
        args: &[ast::Pattern],
        kwargs: &[(ast::Ident, ast::Pattern)],
        span: Span,
    ) -> hir::Pattern {
        let name = test.name();
        if args.len() > 1 || !kwargs.is_empty() {
            self.err(
                Diagnostic::error(
                    codes::BAD_PATTERN,
                    format!("`{name}(...)` takes one sub-pattern, the value itself"),
                    span,
                )
                .with_label("too many sub-patterns")
                .with_help(format!(
                    "write `case {name}(x):` and take the value apart inside the arm"
                )),
            );
        }
        let ty = test_type(test);
        let inner = args.first().map(|a| Box::new(self.pattern(a, &ty)));
        hir::Pattern::Class(test, inner)
    }

    /// A name a pattern binds, typed from what the pattern knows when the name has no type
    /// yet. A name bound with different types in different arms is left untyped: which arm
    /// ran is only known at run time.
    fn bind_typed(&mut self, name: &str, span: Span, ty: &Ty) -> hir::Target {
        let known = ty.is_known() && !matches!(ty, Ty::Outcome(..));
        let (t, now) = self.store_name(name, span, None);
        if !known {
            return t;
        }
        match &t {
            hir::Target::Local(s) | hir::Target::Cell(s) => {
                let s = *s as usize;
                let f = self.f();
                if f.declared.contains(&(s as u32)) {
                    return t;
                }
                let first = f.pattern_typed.insert(s as u32);
                f.slot_tys[s] = if (first && !now.is_known()) || now == *ty {
                    ty.clone()
                } else {
                    Ty::Any
                };
            }
            _ => {}
        }
        t
    }

    fn constructor_pattern(
        &mut self,
        name: &ast::Ident,
        args: &[ast::Pattern],
        kwargs: &[(ast::Ident, ast::Pattern)],
        subject: &Ty,
        span: Span,
    ) -> hir::Pattern {
        let tag = match name.name.as_str() {
            "Ok" => Some(OutcomeTagPat::Ok),
            "Err" => Some(OutcomeTagPat::Err),
            "Uncertain" => Some(OutcomeTagPat::Uncertain),
            "Exhausted" => Some(OutcomeTagPat::Exhausted),
            "Failed" => Some(OutcomeTagPat::Failed),
            _ => None,
        };
        if let Some(tag) = tag {
            if args.len() > 1 || !kwargs.is_empty() {
                self.err(
                    Diagnostic::error(
                        codes::BAD_PATTERN,
                        format!("`{}` carries one value", name.name),
                        span,
                    )
                    .with_label("too many sub-patterns")
                    .with_help(format!(
                        "write `{}(x)` and take it apart inside the arm",
                        name.name
                    )),
                );
            }
            let payload_ty = match (tag, subject) {
                (OutcomeTagPat::Ok, Ty::Outcome(t, _)) => (**t).clone(),
                (OutcomeTagPat::Ok, _) => Ty::Any,
                _ => Ty::Str,
            };
            let inner = args.first().map(|a| Box::new(self.pattern(a, &payload_ty)));
            return hir::Pattern::Outcome(tag, inner);
        }
        let Some(tid) = self.ctx.type_of(self.m, &name.name) else {
            let known: Vec<String> = self
                .ctx
                .type_ix
                .keys()
                .filter(|k| !k.contains("::"))
                .cloned()
                .collect();
            let mut d = Diagnostic::error(
                codes::BAD_PATTERN,
                format!("`{}` is not a record type or outcome", name.name),
                name.span,
            )
            .with_label("unknown constructor");
            d = match suggest::closest(
                &name.name,
                known.iter().map(String::as_str).chain([
                    "Ok",
                    "Err",
                    "Uncertain",
                    "Exhausted",
                    "Failed",
                ]),
            ) {
                Some(s) => d.with_help(format!("did you mean `{s}`?")),
                None => d.with_help(
                    "patterns name a `type` record or one of Ok, Err, Uncertain, Exhausted, Failed",
                ),
            };
            self.err(d);
            return hir::Pattern::Wildcard;
        };
        let fields: Vec<(String, Ty)> = self.ctx.types[tid.0 as usize]
            .fields
            .iter()
            .map(|f| (self.ctx.names.name(f.name).to_string(), f.ty.clone()))
            .collect();
        let tname = self.ctx.types[tid.0 as usize].name.clone();
        let mut subs = Vec::new();
        for (i, a) in args.iter().enumerate() {
            match fields.get(i) {
                Some((_, t)) => subs.push((i, self.pattern(a, &t.clone()))),
                None => self.err(
                    Diagnostic::error(
                        codes::BAD_PATTERN,
                        format!("`{tname}` has {} fields", fields.len()),
                        a.span,
                    )
                    .with_label("one sub-pattern too many"),
                ),
            }
        }
        for (k, a) in kwargs {
            match fields.iter().position(|f| f.0 == k.name) {
                Some(i) => {
                    let t = fields[i].1.clone();
                    subs.push((i, self.pattern(a, &t)));
                }
                None => {
                    let mut d = Diagnostic::error(
                        codes::UNKNOWN_FIELD,
                        format!("`{tname}` has no field `{}`", k.name),
                        k.span,
                    )
                    .with_label("unknown field");
                    if let Some(s) = suggest::closest(&k.name, fields.iter().map(|f| f.0.as_str()))
                    {
                        d = d.with_help(format!("did you mean `{s}`?"));
                    }
                    self.err(d);
                }
            }
        }
        hir::Pattern::Record(tid, subs)
    }
}

/// The type a class pattern's value has inside its arm.
pub(crate) fn test_type(test: hir::TypeTest) -> Ty {
    match test {
        hir::TypeTest::Int => Ty::Int,
        hir::TypeTest::Float => Ty::Float,
        hir::TypeTest::Str => Ty::Str,
        hir::TypeTest::Bool => Ty::Bool,
        hir::TypeTest::List => Ty::List(Box::new(Ty::Any)),
        hir::TypeTest::Dict => Ty::Dict(Box::new(Ty::Any), Box::new(Ty::Any)),
        hir::TypeTest::Tuple => Ty::TupleOf(Box::new(Ty::Any)),
        hir::TypeTest::Set => Ty::Set(Box::new(Ty::Any)),
    }
}

fn bound_names(p: &ast::Pattern, out: &mut Vec<String>) {
    match &p.kind {
        P::Capture(n) => out.push(n.clone()),
        P::Star(n) if n.name != "_" => out.push(n.name.clone()),
        P::Constructor { args, kwargs, .. } => {
            args.iter().for_each(|a| bound_names(a, out));
            kwargs.iter().for_each(|(_, a)| bound_names(a, out));
        }
        P::Sequence(ps) => ps.iter().for_each(|a| bound_names(a, out)),
        P::Or(ps) => {
            if let Some(first) = ps.first() {
                bound_names(first, out)
            }
        }
        P::As(inner, n) => {
            bound_names(inner, out);
            out.push(n.name.clone());
        }
        P::Wildcard | P::Literal(_) | P::Star(_) | P::Error => {}
    }
}

/// The span of the first `analyze` written literally inside an expression.
///
/// A lambda's body is not searched: the guard makes the function, it does not call it.
fn find_analyze(e: &ast::Expr) -> Option<Span> {
    struct Find(Option<Span>);
    impl<'a> Visitor<'a> for Find {
        fn visit_expr(&mut self, x: &'a ast::Expr) {
            match x.kind {
                _ if self.0.is_some() => {}
                AE::Analyze { .. } => self.0 = Some(x.span),
                AE::Lambda { .. } => {}
                _ => walk_expr(self, x),
            }
        }
    }
    let mut f = Find(None);
    f.visit_expr(e);
    f.0
}

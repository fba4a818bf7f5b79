//! Lowering statements: control flow, handlers, `use` declarations and record defaults.

use crate::codes;
use crate::hir::{self};
use crate::lower::Lowerer;
use crate::types::Ty;
use kora_syntax::ast::{self, StmtKind as AS};
use kora_syntax::{Diagnostic, Span};

impl Lowerer<'_> {
    pub(crate) fn stmt(&mut self, s: &ast::Stmt) -> Option<hir::StmtKind> {
        use hir::StmtKind as H;
        Some(match &s.kind {
            AS::Expr { expr, handlers } => {
                self.stash_handlers(handlers);
                let e = self.expr(expr).0;
                self.unclaimed_handlers();
                H::Expr(e)
            }
            // `Matrix = List[List[int]]` at the top of a file names a type (`python_aliases.rs`).
            AS::Assign { .. }
                if self.f().is_module && crate::python_aliases::alias_of(s).is_some() =>
            {
                return None;
            }
            AS::Assign {
                targets,
                value,
                handlers,
            } => {
                self.stash_handlers(handlers);
                let a = self.assign(targets, value);
                self.unclaimed_handlers();
                return Some(a);
            }
            AS::AnnAssign {
                target,
                ty,
                value,
                handlers,
                else_,
            } => {
                self.stash_handlers(handlers);
                let a = self.ann_assign(target, ty, value.as_ref(), else_.as_ref(), s.span);
                self.unclaimed_handlers();
                return a;
            }
            AS::AugAssign { target, op, value } => {
                if matches!(target.kind, ast::ExprKind::Slice { .. }) {
                    self.err(
                        Diagnostic::error(
                            codes::BAD_TARGET,
                            "a slice cannot take an augmented assignment",
                            target.span,
                        )
                        .with_label("a slice of the list")
                        .with_help("write it out: `xs[a:b] = xs[a:b] + ys`"),
                    );
                    return None;
                }
                let (v, vt) = self.expr(value);
                self.check_augmented_local(target);
                let (t, tt) = self.store_target(target, None);
                self.check_binop(*op, &tt, &vt, s.span);
                H::AugAssign(t, *op, v)
            }
            AS::If { branches, orelse } => self.if_chain(branches, orelse.as_deref()),
            AS::While { cond, body } => {
                let c = self.condition(cond).0;
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
                into,
            } => {
                if let Some(mode) = parallel {
                    return Some(self.parallel_for(target, iter, body, *mode, into.as_deref()));
                }
                let (it, ity) = self.expr(iter);
                let (t, _) = self.store_target(target, Some(ity.element()));
                self.f().loops += 1;
                let b = self.block(body);
                self.f().loops -= 1;
                H::For(t, it, b)
            }
            AS::Break(Some(v)) if self.break_value_allowed() => H::BreakValue(self.expr(v).0),
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
                if let Some(answer) = self.branch_answer() {
                    let v = v.as_ref().map(|v| {
                        let (e, t) = self.expr(v);
                        if !answer.accepts(&t) {
                            self.mismatch(&answer, &t, v.span, "the branch's answer type");
                        }
                        e
                    });
                    return Some(H::Return(v));
                }
                if self.token_handler == Some(self.fns.len()) {
                    self.refuse_token_return(s.span);
                }
                let in_handler = self
                    .handler_ret
                    .clone()
                    .filter(|(depth, _)| *depth == self.fns.len());
                if in_handler.is_none() && self.f().is_module {
                    self.err(
                        Diagnostic::error(
                            codes::RETURN_OUTSIDE,
                            "`return` outside a function",
                            s.span,
                        )
                        .with_label("the top level of a file cannot return")
                        .with_help("to stop the program, call `exit()` (or `exit(1)`, `exit(\"message\")`); to leave a loop, `break`"),
                    );
                }
                let ret = match in_handler {
                    Some((_, t)) => t,
                    None => self.f().ret.clone(),
                };
                let v = v.as_ref().map(|v| {
                    // `return json.parse(text)` reads into the declared return type.
                    if matches!(v.kind, ast::ExprKind::Call { .. }) && ret.is_known() {
                        self.expect = Some(ret.clone());
                    }
                    let (e, t) = self.expr(v);
                    self.expect = None;
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
                self.check_exhaustive(&sty, arms, s.span);
                let arms = arms.iter().map(|a| self.arm(a, &sty)).collect();
                H::Match(subj, arms)
            }
            AS::Use(u) => return self.use_decl(u, s.span),
            AS::Assert { cond, msg } => {
                let c = self.condition(cond).0;
                H::Assert(c, msg.as_ref().map(|m| self.expr(m).0))
            }
            AS::Del(items) => H::Del(self.del_items(items)),
            AS::Budget { args, body } => return self.budget_block(args, body, s.span),
            AS::Context { args, body } => return self.context_block(args, body, s.span),
            AS::ModelBlock { args, body } => return self.model_block(args, body, s.span),
            AS::Mock {
                target,
                value,
                body,
            } => return self.mock(target, value, body, s.span),
            AS::Declassify { value, sink, body } => H::Declassify {
                value: self.expr(value).0,
                sink: sink.name.clone(),
                body: self.block(body),
            },
            AS::Test { name, body } => {
                self.test_block(name, body, s.span);
                return None;
            }
            AS::PythonImport { module, names } => {
                self.python_import(module, names, s.span);
                return None;
            }
        })
    }

    pub(crate) fn outside_loop(&mut self, word: &str, span: Span) {
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

    pub(crate) fn use_decl(&mut self, u: &ast::UseDecl, span: Span) -> Option<hir::StmtKind> {
        match &u.target {
            ast::UseTarget::Std(name) => {
                if let Some(&target_mod) = self.info().uses.get(&name.span) {
                    // A package's module (the loader resolved it against the manifest).
                    let bound = match &u.alias {
                        Some(a) => (a.name.clone(), a.span),
                        None => (
                            name.name
                                .rsplit('.')
                                .next()
                                .unwrap_or(&name.name)
                                .to_string(),
                            name.span,
                        ),
                    };
                    let (t, _) = self.store_name(&bound.0, bound.1, Some(Ty::Module));
                    return Some(hir::StmtKind::Use(t, target_mod));
                }
                if name.name == "eval" {
                    // Metrics are lowered where they are called (lower_eval.rs).
                    return None;
                }
                if let Some(m) = crate::std_api::StdMod::from_name(&name.name) {
                    if m == crate::std_api::StdMod::Helper {
                        let pkg = self.ctx.mod_pkgs.get(self.m.0 as usize).cloned().flatten();
                        match pkg.filter(|p| self.ctx.pkg_helpers.contains(p)) {
                            Some(p) => {
                                // Its helper is started by the embedder, which must know it
                                // is used before the run starts.
                                let place = self.place(span);
                                self.ctx.externals.id("helper", &p, &place);
                            }
                            None => {
                                let (msg, help) = match self.ctx.mod_pkgs.get(self.m.0 as usize).cloned().flatten() {
                                    Some(p) => (
                                        format!("package `{p}` declares no helper, so it cannot `use helper`"),
                                        "declare one in the package's kora.toml: `[package.helper]` with `command = [\"bin/helper\"]` (see docs/helpers.md)".to_string(),
                                    ),
                                    None => (
                                        "`use helper` is only for a package that declares a helper".to_string(),
                                        "a program reaches a helper through the package that declares it: call that package's functions (see docs/helpers.md)".to_string(),
                                    ),
                                };
                                self.err(
                                    Diagnostic::error(codes::HELPER_OUTSIDE_PACKAGE, msg, span)
                                        .with_label("no `[package.helper]` governs this file")
                                        .with_help(help),
                                );
                                return None;
                            }
                        }
                    }
                    if m == crate::std_api::StdMod::Pdf {
                        // `pdf` runs in a helper process: the embedder must register one
                        // before the run starts, as for `use python`.
                        let place = self.place(span);
                        self.ctx.externals.id("helper", "pdf", &place);
                    }
                    let bound = u.alias.as_ref().unwrap_or(name).name.clone();
                    if !self.f().is_module {
                        self.f().std_aliases.insert(bound, m);
                    }
                    return None;
                }
                let std: Vec<&str> = crate::std_api::MODULES
                    .iter()
                    .map(|(n, _)| *n)
                    .chain(crate::std_api::PLANNED.iter().copied())
                    .collect();
                let std = std.as_slice();
                if std.contains(&name.name.as_str()) {
                    self.not_yet(&format!("the standard module `{}`", name.name), span);
                } else {
                    let mut d = Diagnostic::error(
                        codes::UNKNOWN_STD_MODULE,
                        format!("there is no standard module `{}`", name.name),
                        name.span,
                    )
                    .with_label("not in the standard library");
                    d = match crate::suggest::closest(&name.name, std.iter().copied()) {
                        Some(s) => d.with_help(format!("did you mean `use {s}`?")),
                        None => d.with_help(
                            "a file is imported with a quoted path: `use \"./name.ko\" as name`",
                        ),
                    };
                    self.err(d);
                }
                None
            }
            ast::UseTarget::Provider { kind, name } => self.external_use(u, kind, name, span),
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

    pub(crate) fn record_defaults(&mut self, r: &ast::RecordDecl) {
        let Some(tid) = self.ctx.type_of(self.m, &r.name.name) else {
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
}

//! Lowering function definitions: parameters, captures, cells and the checked signature.

use crate::codes;
use crate::hir::{self, Capture};
use crate::lower::{is_mutable_display, FnState, Lowerer};
use crate::types::Ty;
use kora_syntax::ast::{self, FuncKind};
use kora_syntax::{Diagnostic, Span};
use rustc_hash::{FxHashMap, FxHashSet};
use std::sync::Arc;

impl Lowerer<'_> {
    /// Lowers a `def`, `tool` or `agent`.
    pub fn function(&mut self, def: &ast::FuncDef) -> Arc<hir::Function> {
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
        let model = self.agent_model(def);
        let mut f = self.lower_function(
            def.span,
            &qual,
            def.kind,
            &params,
            ret,
            def.doc.clone(),
            def.isolated,
            |l| l.block(&def.body),
        );
        // Just made, so not yet shared.
        if let (Some(m), Some(func)) = (model, Arc::get_mut(&mut f)) {
            func.model = Some(m);
        }
        f
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
    ) -> Arc<hir::Function> {
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
            scope: span,
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
            std_aliases: FxHashMap::default(),
            ext_aliases: FxHashMap::default(),
            bound_globals: FxHashSet::default(),
            branch: None,
            pattern_typed: FxHashSet::default(),
            narrowed: Vec::new(),
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
                    Some(s) => {
                        // A closure made in a branch carries the slot into the worker.
                        if let Some(b) = self.fns.last_mut().and_then(|f| f.branch.as_mut()) {
                            b.reads.insert(s);
                        }
                        captures.push(Capture::Slot(s))
                    }
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
                quick: ty.quick(),
                ty,
                default,
                fresh_default: fresh,
            })
            .collect();
        if let Some(facts) = self.facts.as_mut() {
            for p in params {
                if let Some(&s) = st.slots.get(&p.name.name) {
                    let target = if st.is_cell[s as usize] {
                        hir::Target::Cell(s)
                    } else {
                        hir::Target::Local(s)
                    };
                    facts.store(
                        p.name.span,
                        &target,
                        &st.slot_tys[s as usize],
                        (self.m, span),
                    );
                }
            }
        }
        self.fns.push(st);
        let body = body(self);
        let st = self.fns.pop().expect("pushed above");
        cell_slots.extend(st.extra_cells.iter().copied());
        Arc::new(hir::Function {
            name: name.to_string(),
            kind,
            module: self.m,
            params: hir_params,
            star,
            ret_quick: ret.quick(),
            ret,
            nlocals: st.slot_names.len() as u32,
            no_boxes: cell_slots.is_empty() && st.free_slots.is_empty(),
            cell_slots,
            free_slots: st.free_slots,
            captures,
            slot_names: st.slot_names,
            body,
            doc,
            isolated,
            model: None,
            span,
        })
    }
}

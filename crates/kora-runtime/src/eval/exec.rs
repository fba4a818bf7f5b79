//! Executing statements: assignment to targets, loops, `match`, `else` unwrapping, `use`.

use std::rc::Rc;

use kora_check::hir::{self, Stmt, StmtKind as S, Target};
use kora_syntax::ast::BinOp;

use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Flow, Interp};
use crate::value::{store, Function, OutcomeTag, Value};

struct FrameView<'a, 'io>(&'a mut Interp<'io>);

impl crate::observe::debug::FrameStack for FrameView<'_, '_> {
    fn frames(&self) -> Vec<crate::observe::debug::FrameInfo> {
        self.0.frame_infos()
    }

    fn globals(&self, module: kora_check::hir::ModId) -> Vec<(String, Value)> {
        self.0.module_globals(module)
    }

    fn set_local(&mut self, frame: usize, name: &str, value: Value) -> Result<(), String> {
        self.0.set_frame_local(frame, name, value)
    }

    fn set_global(
        &mut self,
        module: kora_check::hir::ModId,
        name: &str,
        value: Value,
    ) -> Result<(), String> {
        self.0.set_module_global(module, name, value)
    }
}

impl Interp<'_> {
    pub(crate) fn exec_block(&mut self, stmts: &[Stmt]) -> RtResult<Flow> {
        for s in stmts {
            if self.watched {
                self.watch(s)?;
            }
            match self.exec(s) {
                Ok(Flow::Normal) => {}
                Ok(flow) => return Ok(flow),
                Err(mut e) => {
                    if e.pending.is_none() {
                        e.pending = Some(s.span);
                    }
                    return Err(e);
                }
            }
        }
        Ok(Flow::Normal)
    }

    #[cold]
    fn watch(&mut self, s: &Stmt) -> RtResult<()> {
        if self.debugger.is_some() {
            self.debug_hook(s);
        }
        if let Some(stop) = &self.stop {
            if stop.load(std::sync::atomic::Ordering::Relaxed) {
                return Err(RtError::new(
                    codes::STOPPED,
                    "this branch was stopped because a sibling branch used `break` or raised",
                ));
            }
        }
        if self
            .interrupt
            .is_some_and(|i| i.swap(false, std::sync::atomic::Ordering::Relaxed))
        {
            return Err(RtError::new(
                codes::INTERRUPTED,
                "interrupted (Ctrl-C); what ran before it stays done",
            ));
        }
        if let Some((winner, me)) = &self.race {
            if winner.load(std::sync::atomic::Ordering::Acquire) < *me {
                return Err(lost_race());
            }
        }
        if self
            .cancel
            .as_ref()
            .is_some_and(kora_models::Cancel::is_cancelled)
        {
            return Err(lost_race());
        }
        Ok(())
    }

    #[cold]
    fn debug_hook(&mut self, s: &Stmt) {
        if let Some(f) = self.top_frame_mut() {
            f.at = s.span;
        }
        let module = kora_check::hir::ModId(self.cur_mod as u32);
        let depth = self.frames().len();
        if let Some(mut d) = self.debugger.take() {
            d.before_statement(module, s.span, depth, &mut FrameView(self));
            self.debugger = Some(d);
        }
    }

    /// Shows a debugger an error in the frame that raised it (the first frame it leaves).
    #[cold]
    pub(crate) fn debug_error(&mut self, e: &RtError) {
        // A sibling's stop and a durable run's suspension are how a run ends, not failures.
        if !e.trace.is_empty()
            || e.code == codes::STOPPED
            || e.code == codes::SUSPENDED
            || e.code == codes::EXIT
        {
            return;
        }
        if let Some(mut d) = self.debugger.take() {
            d.on_error(e.code, &e.message, &mut FrameView(self));
            self.debugger = Some(d);
        }
    }

    /// The statements loops run most, in a small frame; the rest are in `exec_cold`.
    fn exec(&mut self, s: &Stmt) -> RtResult<Flow> {
        match &s.kind {
            S::Expr(e) => {
                self.eval(e)?;
            }
            S::Assign(t, e) => {
                let v = self.eval(e)?;
                self.assign(t, v)?;
            }
            S::ConcatAssign(t, e) => self.concat_assign(t, e)?,
            S::AugAssign(t, op, e) => self.aug_assign(t, *op, e)?,
            S::AnnAssign(t, ty, e) => {
                let v = self.eval(e)?;
                if !crate::value::conform::conforms(&self.prog, &v, ty) {
                    return Err(crate::value::conform::mismatch(&self.prog, ty, &v));
                }
                self.assign(t, v)?;
            }
            S::If(branches, orelse) => {
                for (c, body) in branches {
                    let taken = match crate::labels::label::any_unverified()
                        && crate::eval::declassify::is_allowlist(c)
                    {
                        true => self.allowlist_truth(c)?,
                        false => self.truth(c)?,
                    };
                    if taken {
                        return self.exec_block(body);
                    }
                }
                if let Some(b) = orelse {
                    return self.exec_block(b);
                }
            }
            S::While(c, body) => {
                while self.truth(c)? {
                    match self.exec_block(body)? {
                        Flow::Break | Flow::BreakWith => break,
                        Flow::Return => return Ok(Flow::Return),
                        Flow::Normal | Flow::Continue => {}
                    }
                }
            }
            S::For(t, it, body) => return self.exec_for(t, it, body),
            S::Break => return Ok(Flow::Break),
            S::Continue => return Ok(Flow::Continue),
            S::Return(e) => {
                let v = match e {
                    Some(e) => self.operand(e)?,
                    None => Value::None,
                };
                store(&mut self.flow_value, v);
                return Ok(Flow::Return);
            }
            S::Pass => {}
            _ => return self.exec_cold(s),
        }
        Ok(Flow::Normal)
    }

    /// The less frequent statements, kept out of `exec` so its prologue stays short: every
    /// statement of every call pays it.
    #[inline(never)]
    fn exec_cold(&mut self, s: &Stmt) -> RtResult<Flow> {
        match &s.kind {
            S::AssignMulti(ts, e) => {
                let v = self.eval(e)?;
                for t in ts {
                    self.assign(t, v.clone())?;
                }
            }
            S::Unwrap {
                target,
                ty,
                value,
                binds,
                orelse,
            } => {
                let v = self.eval(value)?;
                let Value::Outcome(o) = &v else {
                    return Err(RtError::new(
                        codes::UNWRAP,
                        format!(
                            "the right side of `x: T = ... else:` must be an outcome, got {}",
                            crate::value::conform::describe(&self.prog, &v)
                        ),
                    ));
                };
                if o.tag == OutcomeTag::Ok {
                    if !crate::value::conform::conforms(&self.prog, &o.payload, ty) {
                        return Err(RtError::new(
                            codes::TYPE,
                            format!(
                                "type mismatch: declared `{ty}`, got Ok carrying {}",
                                crate::value::conform::describe(&self.prog, &o.payload)
                            ),
                        ));
                    }
                    self.assign(target, o.payload.clone())?;
                } else {
                    if let Some((why, kind)) = binds {
                        self.assign(why, o.payload.clone())?;
                        self.assign(kind, Value::str(o.tag.kind()))?;
                    }
                    return match self.exec_block(orelse)? {
                        Flow::Normal => Err(RtError::new(
                            codes::UNWRAP,
                            "the `else` block finished without leaving",
                        )),
                        flow => Ok(flow),
                    };
                }
            }
            S::Def(t, f) => {
                let c = self.make_closure(f)?;
                self.assign(t, c)?;
            }
            S::Match(subject, arms) => return self.exec_match(subject, arms),
            S::Use(t, m) => {
                self.init_module(*m)?;
                self.assign(t, Value::Module(*m))?;
            }
            S::Assert(c, msg) => self.exec_assert(c, msg.as_ref())?,
            S::Del(items) => self.exec_del(items)?,
            S::Mock(value, body) => return self.exec_mock(value, body, s.span),
            S::MockExternal {
                ext,
                member,
                value,
                body,
            } => return self.exec_external_mock(*ext, member, value, body, s.span),
            S::ParallelFor(p) => return self.exec_parallel(p),
            S::BreakValue(e) => {
                self.flow_value = self.eval(e)?;
                return Ok(Flow::BreakWith);
            }
            S::Context {
                max_input,
                reserve_output,
                body,
            } => return self.exec_context(max_input, reserve_output.as_ref(), body),
            S::Budget(b) => return self.exec_budget(b, s.span),
            S::ModelBlock { name, body } => {
                let name = match &*crate::labels::label::plain(&self.eval(name)?) {
                    Value::Str(s) => s.as_str().to_string(),
                    other => {
                        return Err(RtError::new(
                            codes::TYPE,
                            format!(
                                "`with model(...)` names a `[models]` entry as a `str`, got a `{}`",
                                other.type_name()
                            ),
                        ))
                    }
                };
                self.model_scope.push(name);
                let flow = self.exec_block(body);
                self.model_scope.pop();
                return flow;
            }
            S::Declassify { value, sink, body } => {
                return self.exec_declassify(value, sink, body, s.span)
            }
            S::Expr(_)
            | S::Assign(..)
            | S::ConcatAssign(..)
            | S::AugAssign(..)
            | S::AnnAssign(..)
            | S::If(..)
            | S::While(..)
            | S::For(..)
            | S::Break
            | S::Continue
            | S::Return(_)
            | S::Pass => return self.exec(s),
        }
        Ok(Flow::Normal)
    }

    pub(crate) fn make_closure(&mut self, f: &std::sync::Arc<hir::Function>) -> RtResult<Value> {
        let mut defaults = Vec::new();
        for p in &f.params {
            if let Some(d) = &p.default {
                defaults.push(if p.fresh_default {
                    Value::None
                } else {
                    self.eval(d)?
                });
            }
        }
        let captures = f
            .captures
            .iter()
            .map(|c| match c {
                hir::Capture::Slot(s) => match &self.stack[self.base + *s as usize] {
                    Value::Cell(cell) => cell.clone(),
                    // Defensive: a capture of a slot that is not a cell copies its value.
                    other => Rc::new(std::cell::RefCell::new(other.clone())),
                },
            })
            .collect();
        Ok(Value::Func(Rc::new(Function {
            def: f.clone(),
            captures,
            defaults,
        })))
    }

    /// Binds `v` to a target; a local, the common case, is stored without a call.
    #[inline(always)]
    pub(crate) fn assign(&mut self, t: &Target, v: Value) -> RtResult<()> {
        if let Target::Local(s) = t {
            store(&mut self.stack[self.base + *s as usize], v);
            return Ok(());
        }
        self.assign_other(t, v)
    }

    fn assign_other(&mut self, t: &Target, v: Value) -> RtResult<()> {
        match t {
            Target::Local(s) => {
                self.stack[self.base + *s as usize] = v;
            }
            Target::Cell(s) => match &self.stack[self.base + *s as usize] {
                Value::Cell(c) => *c.borrow_mut() = v,
                _ => self.stack[self.base + *s as usize] = v,
            },
            Target::Global(g) => {
                if let Some(l) = self.lazy.as_mut() {
                    l.mark(self.cur_mod, *g as usize);
                }
                self.globals[self.cur_mod][*g as usize] = v;
            }
            Target::Index(o, i) => {
                if let hir::ExprKind::Local(s) = &o.kind {
                    // As in `eval`: a plain local's list is written where it lies.
                    let idx = self.operand(i)?;
                    let slot = &self.stack[self.base + *s as usize];
                    if let (Value::List(l), Value::Int(n)) = (slot, &idx) {
                        let mut l = l.borrow_mut();
                        let len = l.len() as i64;
                        let k = if *n < 0 { n + len } else { *n };
                        if k >= 0 && k < len {
                            store(&mut l[k as usize], v);
                            return Ok(());
                        }
                    }
                    if let (Value::Dict(d), true) =
                        (slot, crate::eval::label_calls::scalar_key(&idx))
                    {
                        // A value that is not a view under an int or str key, plain or
                        // secret: what `set_index` would do after its hashability and view
                        // checks, which cannot apply here. A secret key is kept as it is, its
                        // label riding on the key, as `set_index` keeps it.
                        if !matches!(v, Value::Labeled(_)) {
                            let decides = crate::labels::label::tag_of(&idx);
                            let old = d.borrow_mut().insert(crate::value::Key(idx), v);
                            drop(old);
                            // Whether a secret key was new there sets the dict's size.
                            if let Some(t) = decides {
                                crate::labels::shape::mark(slot, t);
                            }
                            return Ok(());
                        }
                    }
                    let obj = slot.clone();
                    return crate::value::index::set_index(&obj, &idx, v);
                }
                let obj = self.eval(o)?;
                let idx = self.eval(i)?;
                crate::value::index::set_index(&obj, &idx, v)?;
            }
            Target::Attr(o, name) => {
                let obj = self.eval(o)?;
                self.set_attr(&obj, *name, v)?;
            }
            Target::Tuple(ts) if ts.iter().any(|t| matches!(t, Target::Star(_))) => {
                // The starred list is as long as the source says: a source seen through a
                // label (a view, a shape label) gives a starred list seen through it.
                let whole = crate::labels::label::join(
                    crate::labels::label::tag_of(&v),
                    crate::labels::shape::tag(&v),
                );
                let items = crate::value::iter::collect(&v)?;
                self.assign_starred(ts, items, whole)?;
            }
            Target::Star(t) => self.assign(t, v)?,
            Target::Slice(o, bounds) => {
                let obj = self.eval(o)?;
                let mut tag = None;
                let [lo, hi, step] = bounds;
                let lo = self.opt_int(lo.as_deref(), &mut tag)?;
                let hi = self.opt_int(hi.as_deref(), &mut tag)?;
                let step = self.opt_int(step.as_deref(), &mut tag)?;
                // Items placed where a secret says are labelled by it, as `xs[secret_i] = v`.
                let v = crate::labels::label::wrap_opt(v, tag);
                crate::value::index::set_slice(&obj, lo, hi, step, &v)?;
                // How many items remain is the bounds' and the new run's: the shape's label.
                if let Some(t) = crate::labels::shape::decided_by_operand(&obj, &v) {
                    crate::labels::shape::mark(&obj, t);
                }
            }
            Target::Tuple(ts) => {
                // A tuple of the right length (`enumerate`, `.items()`, a swap) is unpacked
                // from where it lies, without first copying its items into a vector.
                if let Value::Tuple(items) = &v {
                    if items.len() == ts.len() {
                        for (t, x) in ts.iter().zip(items.iter()) {
                            self.assign(t, x.clone())?;
                        }
                        return Ok(());
                    }
                }
                let items = crate::value::iter::collect(&v)?;
                if items.len() != ts.len() {
                    let msg = if items.len() > ts.len() {
                        format!("too many values to unpack (expected {})", ts.len())
                    } else {
                        format!(
                            "not enough values to unpack (expected {}, got {})",
                            ts.len(),
                            items.len()
                        )
                    };
                    return Err(RtError::new(codes::VALUE, msg));
                }
                for (t, x) in ts.iter().zip(items) {
                    self.assign(t, x)?;
                }
            }
            Target::Discard => {}
        }
        Ok(())
    }

    /// `a, *rest, z = items`: the targets around the star take one item each, the star a list
    /// of what is left between them.
    fn assign_starred(
        &mut self,
        ts: &[Target],
        mut items: Vec<Value>,
        whole: Option<crate::labels::label::Tag>,
    ) -> RtResult<()> {
        let star = ts
            .iter()
            .position(|t| matches!(t, Target::Star(_)))
            .unwrap_or(ts.len());
        let fixed = ts.len() - 1;
        if items.len() < fixed {
            return Err(RtError::new(
                codes::VALUE,
                format!(
                    "not enough values to unpack (expected at least {fixed}, got {})",
                    items.len()
                ),
            ));
        }
        let after = items.split_off(items.len() - (ts.len() - star - 1));
        let rest = items.split_off(star);
        for (t, x) in ts[..star].iter().zip(items) {
            self.assign(t, x)?;
        }
        self.assign(
            &ts[star],
            crate::labels::label::wrap_opt(Value::list(rest), whole),
        )?;
        for (t, x) in ts[star + 1..].iter().zip(after) {
            self.assign(t, x)?;
        }
        Ok(())
    }

    pub(crate) fn set_attr(&mut self, obj: &Value, name: hir::Sym, v: Value) -> RtResult<()> {
        if let Value::Record(r) = obj {
            let rec = self.prog.record(r.ty);
            if let Some(i) = rec.fields.iter().position(|f| f.name == name) {
                let fty = &rec.fields[i].ty;
                if !crate::value::conform::conforms(&self.prog, &v, fty) {
                    return Err(RtError::new(
                        codes::TYPE,
                        format!(
                            "field `{}` of `{}` must be `{}`, got {}",
                            self.prog.name(name),
                            rec.name,
                            fty,
                            crate::value::conform::describe(&self.prog, &v)
                        ),
                    ));
                }
                let mut fields = r.fields.borrow_mut();
                if !crate::labels::view::is_view_of(&v, &fields[i]) {
                    fields[i] = v;
                }
                return Ok(());
            }
            return Err(RtError::new(
                codes::ATTRIBUTE,
                format!("'{}' has no field '{}'", rec.name, self.prog.name(name)),
            ));
        }
        if let Value::Labeled(l) = obj {
            // A record read through a label is the record itself: the field changes there.
            if let Value::Record(_) = &l.value {
                return self.set_attr(&l.value.clone(), name, v);
            }
        }
        Err(RtError::new(
            codes::ATTRIBUTE,
            format!(
                "cannot set attribute '{}' on a '{}' value",
                self.prog.name(name),
                obj.type_name()
            ),
        ))
    }
}

/// Int `+ - * // %` and float `+ - *` (division by a non-zero divisor) without leaving the caller;
/// `None` sends everything else, overflow included, to the general path. Inline secrets are
/// not matched here but in `label_ops::small_arith`, a frameless out-of-line leaf that `eval`
/// calls after this: an arm for them here, or that leaf inlined, reshaped the hottest code and
/// made plain arithmetic dearer (nbody +3%, loops +8% instructions).
#[inline(always)]
pub(crate) fn fast_arith(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    match (a, b) {
        (Value::Int(a), Value::Int(b)) => match op {
            BinOp::Add => a.checked_add(*b),
            BinOp::Sub => a.checked_sub(*b),
            BinOp::Mul => a.checked_mul(*b),
            BinOp::Mod if *b != 0 => Some(crate::value::arith::floor_mod(*a, *b)),
            BinOp::FloorDiv if *b != 0 => crate::value::arith::floor_div(*a, *b),
            _ => None,
        }
        .map(Value::Int),
        (Value::Float(a), Value::Float(b)) => match op {
            BinOp::Add => Some(a + b),
            BinOp::Sub => Some(a - b),
            BinOp::Mul => Some(a * b),
            BinOp::Div if *b != 0.0 => Some(a / b),
            _ => None,
        }
        .map(Value::Float),
        _ => None,
    }
}

/// The stop of a branch that can no longer win its `first` race (or runs inside one that cannot).
#[cold]
pub(crate) fn lost_race() -> Box<RtError> {
    RtError::new(
        codes::STOPPED,
        "this branch was stopped because an earlier branch of the `first` race answered",
    )
}

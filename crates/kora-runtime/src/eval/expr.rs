//! Evaluating expressions, with inline fast paths for the int, list and local-variable cases that dominate loops.

use kora_check::hir::{self, sym, Args, CompKind, ExprKind as E, FPart, Sym};
use kora_syntax::ast::{BoolOp, CmpOp, UnaryOp};

use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::compare::int_compare;
use crate::value::{discard, Dict, Key, Set, Value};

/// Attaches the span of the expression that failed, if nothing closer did.
#[inline]
pub(crate) fn at<T>(r: RtResult<T>, e: &hir::Expr) -> RtResult<T> {
    r.map_err(|mut err| {
        if err.pending.is_none() {
            err.pending = Some(e.span);
        }
        err
    })
}

/// An outcome tested for truth where the checker could not see it was one.
#[cold]
fn outcome_truth(tag: crate::value::OutcomeTag) -> Box<crate::error::RtError> {
    crate::error::RtError::new(
        crate::error::codes::TYPE,
        format!(
            "an outcome has no truth value (this one is `{}`): match it, or bind its payload with `x: T = ... else:`",
            tag.name()
        ),
    )
}

impl Interp<'_> {
    /// Leaf operands evaluated in place: a local or an int literal costs no recursive call.
    #[inline(always)]
    pub(crate) fn operand(&mut self, e: &hir::Expr) -> RtResult<Value> {
        match &e.kind {
            E::Local(s) => Ok(self.stack[self.base + *s as usize].clone()),
            E::Int(i) => Ok(Value::Int(*i)),
            _ => self.eval(e),
        }
    }

    /// A condition's truth, with int comparisons answered without building a `Bool`.
    #[inline]
    pub(crate) fn truth(&mut self, e: &hir::Expr) -> RtResult<bool> {
        if let E::Compare(first, rest) = &e.kind {
            if let [(op, re)] = rest.as_slice() {
                let left = self.operand(first)?;
                let right = self.operand(re)?;
                if let (Value::Int(x), Value::Int(y)) = (&left, &right) {
                    if let Some(b) = int_compare(*op, *x, *y) {
                        std::mem::forget(left);
                        std::mem::forget(right);
                        return Ok(b);
                    }
                }
                // A branch on a secret int (`if n < 2:`): which branch runs is an implicit
                // flow, untracked (DECISIONS.md), so only the truth is needed, not a label.
                if let Some(b) = crate::labels::ops::small_truth(*op, &left, &right) {
                    std::mem::forget(left);
                    std::mem::forget(right);
                    return Ok(b);
                }
                let r = at(self.compare(*op, &left, &right), e);
                discard(left);
                discard(right);
                return r;
            }
        }
        let v = self.eval(e)?;
        if let Value::Outcome(o) = &v {
            return Err(outcome_truth(o.tag));
        }
        Ok(v.truthy())
    }

    pub(crate) fn eval(&mut self, e: &hir::Expr) -> RtResult<Value> {
        match &e.kind {
            E::Local(s) => Ok(self.stack[self.base + *s as usize].clone()),
            E::Int(i) => Ok(Value::Int(*i)),
            E::Binary(op, a, b) => {
                let x = self.operand(a)?;
                let y = self.operand(b)?;
                // Numbers have nothing to drop: `fast_arith` answering means no drop call.
                if let Some(v) = crate::eval::exec::fast_arith(*op, &x, &y) {
                    std::mem::forget(x);
                    std::mem::forget(y);
                    return Ok(v);
                }
                // A secret int with a plain one (`n - 1`): a frameless call, not the general path's.
                if let Some(v) = crate::labels::ops::small_arith(*op, &x, &y) {
                    std::mem::forget(x);
                    std::mem::forget(y);
                    return Ok(v);
                }
                at(crate::value::arith::binary_owned(*op, x, y), e)
            }
            E::Compare(first, rest) if rest.len() == 1 => {
                let (op, re) = &rest[0];
                let left = self.operand(first)?;
                let right = self.operand(re)?;
                if let (Value::Int(x), Value::Int(y)) = (&left, &right) {
                    if let Some(b) = int_compare(*op, *x, *y) {
                        std::mem::forget(left);
                        std::mem::forget(right);
                        return Ok(Value::Bool(b));
                    }
                }
                if crate::labels::label::any() {
                    return at(crate::labels::ops::compare(*op, &left, &right), e);
                }
                Ok(Value::Bool(at(self.compare(*op, &left, &right), e)?))
            }
            E::Compare(first, rest) => {
                let mut left = self.eval(first)?;
                let mut seen = match rest.first() {
                    Some((op, _)) => crate::labels::ops::left_tag(*op, &left),
                    None => None,
                };
                for (i, (op, re)) in rest.iter().enumerate() {
                    let right = self.eval(re)?;
                    seen = crate::labels::label::join(
                        seen,
                        crate::labels::ops::right_tag(*op, &right),
                    );
                    if !at(self.compare(*op, &left, &right), e)? {
                        return Ok(crate::labels::label::wrap_opt(Value::Bool(false), seen));
                    }
                    if i + 1 < rest.len() {
                        left = right;
                    }
                }
                Ok(crate::labels::label::wrap_opt(Value::Bool(true), seen))
            }
            E::Call(f, args) => self.eval_call(f, args, e),
            E::MethodCall(obj, name, args) => self.eval_method_call(obj, *name, args, e),
            E::Global(g) => self.global(self.cur_mod, *g as usize),
            E::Cell(s) => Ok(match &self.stack[self.base + *s as usize] {
                Value::Cell(c) => c.borrow().clone(),
                other => other.clone(),
            }),
            E::Float(f) => Ok(Value::Float(*f)),
            E::Bool(b) => Ok(Value::Bool(*b)),
            E::None => Ok(Value::None),
            E::Str(i) => Ok(self.consts[*i as usize].clone()),
            E::Index(o, i) => {
                if let E::Local(s) = &o.kind {
                    // The list is read where it lies in its slot, without counting a clone up and
                    // down. Evaluating the index first is unobservable: nothing it runs can
                    // rebind a plain local of this frame.
                    let idx = self.operand(i)?;
                    let slot = &self.stack[self.base + *s as usize];
                    if let (Value::List(l), Value::Int(n), true) =
                        (slot, &idx, crate::labels::shape::none())
                    {
                        let l = l.borrow();
                        let len = l.len() as i64;
                        let k = if *n < 0 { n + len } else { *n };
                        if k >= 0 && k < len {
                            let v = l[k as usize].clone();
                            std::mem::forget(idx);
                            return Ok(v);
                        }
                    }
                    let idx = match (slot, idx) {
                        (Value::Dict(d), k @ (Value::Int(_) | Value::Str(_)))
                            if crate::labels::shape::none() =>
                        {
                            // An int or str key is hashable as it is and carries no label.
                            let key = Key(k);
                            if let Some(v) = d.borrow().get(&key) {
                                return Ok(v.clone());
                            }
                            key.0
                        }
                        (_, k) => k,
                    };
                    let obj = slot.clone();
                    return at(crate::value::index::get_index(&self.prog, &obj, &idx), e);
                }
                let obj = self.operand(o)?;
                let idx = self.operand(i)?;
                if let (Value::List(l), Value::Int(n), true) =
                    (&obj, &idx, crate::labels::shape::none())
                {
                    let l = l.borrow();
                    let len = l.len() as i64;
                    let k = if *n < 0 { n + len } else { *n };
                    if k >= 0 && k < len {
                        return Ok(l[k as usize].clone());
                    }
                }
                at(
                    crate::value::index::get_index_owned(&self.prog, &obj, idx),
                    e,
                )
            }
            _ => self.eval_cold(e),
        }
    }

    /// The less frequent expression kinds, kept out of `eval` so its frame stays small.
    #[inline(never)]
    fn eval_cold(&mut self, e: &hir::Expr) -> RtResult<Value> {
        match &e.kind {
            E::ModuleGlobal(m, g) => self.global(m.0 as usize, *g as usize),
            E::Builtin(b) => Ok(Value::Builtin(*b)),
            E::BigInt(digits) => Ok(crate::value::big_int::literal(digits)),
            E::Bytes(b) => Ok(crate::value::bytes::Bytes::shared(b.clone())),
            E::Type(t) => Ok(Value::Type(*t)),
            E::Module(m) => Ok(Value::Module(*m)),
            E::FString(parts) => {
                let mut s = String::new();
                let mut tags = None;
                self.fstring(parts, &mut s, &mut tags)?;
                Ok(crate::labels::label::wrap_opt(Value::str(s), tags))
            }
            E::List(xs) => {
                let mut v = Vec::with_capacity(xs.len());
                for x in xs {
                    v.push(self.eval(x)?);
                }
                Ok(Value::list(v))
            }
            E::Tuple(xs) => {
                let mut v = Vec::with_capacity(xs.len());
                for x in xs {
                    v.push(self.eval(x)?);
                }
                Ok(Value::tuple(v))
            }
            E::ListStar(items) | E::TupleStar(items) => {
                let mut v = Vec::new();
                for (star, x) in items {
                    let val = self.eval(x)?;
                    if *star {
                        v.extend(at(crate::value::iter::collect(&val), x)?);
                    } else {
                        v.push(val);
                    }
                }
                Ok(if matches!(e.kind, E::ListStar(_)) {
                    Value::list(v)
                } else {
                    Value::tuple(v)
                })
            }
            E::Set(xs) => {
                let mut s = Set::default();
                for x in xs {
                    let v = self.eval(x)?;
                    s.insert(at(hashable(v), x)?);
                }
                Ok(Value::set(s))
            }
            E::Dict(kvs) => {
                let mut d = Dict::default();
                for (k, v) in kvs {
                    let key = self.eval(k)?;
                    let val = self.eval(v)?;
                    d.insert(at(hashable(key), k)?, val);
                }
                Ok(Value::dict(d))
            }
            E::Comp(c) => self.comprehension(c),
            E::Unary(op, x) => {
                let v = self.eval(x)?;
                match (op, &v) {
                    // `not secret` is as secret as `secret`: the labelled path keeps the label.
                    (UnaryOp::Not, Value::Labeled(_) | Value::LabeledSmall(_)) => {
                        at(crate::value::arith::unary(*op, &v), e)
                    }
                    (UnaryOp::Not, _) => Ok(crate::eval::label_calls::sized(
                        &v,
                        Value::Bool(!v.truthy()),
                    )),
                    (UnaryOp::Neg, Value::Int(i)) => match i.checked_neg() {
                        Some(n) => Ok(Value::Int(n)),
                        None => at(crate::value::arith::unary(*op, &v), e),
                    },
                    (UnaryOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
                    _ => at(crate::value::arith::unary(*op, &v), e),
                }
            }
            E::BoolOp(op, a, b) => {
                let x = self.eval(a)?;
                match (op, x.truthy()) {
                    (BoolOp::And, false) | (BoolOp::Or, true) => Ok(x),
                    _ => self.eval(b),
                }
            }
            E::Attr(obj, name) => {
                let v = self.eval(obj)?;
                at(self.get_attr(&v, *name), e)
            }
            E::Slice(v, lo, hi, step) => {
                let val = self.eval(v)?;
                let mut bounds = None;
                let lo = self.opt_int(lo.as_deref(), &mut bounds)?;
                let hi = self.opt_int(hi.as_deref(), &mut bounds)?;
                let step = self.opt_int(step.as_deref(), &mut bounds)?;
                let r = at(crate::value::index::slice(&val, lo, hi, step), e)?;
                // A slice's length is clipped to its container's, which is as labelled as
                // what the container holds (the size row).
                if crate::labels::label::any() && !crate::labels::label::is_scalar(&val) {
                    bounds = crate::labels::label::join(bounds, crate::labels::label::deep(&val));
                }
                Ok(crate::labels::label::wrap_opt(r, bounds))
            }
            E::Lambda(f) => self.make_closure(f),
            E::Local(_)
            | E::MethodCall(..)
            | E::Index(..)
            | E::Int(_)
            | E::Binary(..)
            | E::Compare(..)
            | E::Call(..)
            | E::Global(_)
            | E::Cell(_)
            | E::Float(_)
            | E::Bool(_)
            | E::None
            | E::Str(_) => self.eval(e),
            E::Analyze(call) => at(self.analyze(call), e),
            E::StdCall(call) => at(self.std_call(call), e),
            E::ExternalCall(call) => at(self.external_call(call), e),
            E::ExternalMember(ext, member) => at(self.external_member(*ext, member.as_deref()), e),
            E::AskHuman(call) => at(self.ask_human(call), e),
            E::Classified(value, origin) => self.eval_classified(value, origin),
            E::Unverified(value, origin) => self.eval_unverified(value, origin),
            E::Remaining(meter, site) => {
                let m = self.eval(meter)?;
                let r = match &m {
                    Value::Str(s) => self.remaining(s.as_str(), site),
                    other => Err(crate::error::RtError::new(
                        crate::error::codes::UNKNOWN_METER,
                        format!(
                            "`remaining` takes a meter's name as a `str`, got a `{}`",
                            other.type_name()
                        ),
                    )),
                };
                at(r, e)
            }
            E::IfExp(c, t, o) => {
                if self.truth(c)? {
                    self.eval(t)
                } else {
                    self.eval(o)
                }
            }
        }
    }

    /// A slice bound; its label, if any, is joined into `tags` for the slice's result.
    pub(crate) fn opt_int(
        &mut self,
        e: Option<&hir::Expr>,
        tags: &mut Option<crate::labels::label::Tag>,
    ) -> RtResult<Option<i64>> {
        match e {
            None => Ok(None),
            Some(x) => match self.eval(x)? {
                Value::Labeled(l) => {
                    *tags = crate::labels::label::join(*tags, Some(l.tag()));
                    match &l.value {
                        Value::Int(i) => Ok(Some(*i)),
                        Value::Bool(b) => Ok(Some(*b as i64)),
                        Value::None => Ok(None),
                        other => Err(RtError::new(
                            codes::TYPE,
                            format!(
                                "slice indices must be integers or None, not {}",
                                other.type_name()
                            ),
                        )),
                    }
                }
                Value::LabeledSmall(s) => {
                    *tags = crate::labels::label::join(*tags, Some(s.tag()));
                    // An int, or a bool counted as 0 or 1.
                    Ok(Some(s.int().unwrap_or_else(|| s.plain().truthy() as i64)))
                }
                Value::Int(i) => Ok(Some(i)),
                Value::Bool(b) => Ok(Some(b as i64)),
                Value::None => Ok(None),
                other => Err(RtError::new(
                    codes::TYPE,
                    format!(
                        "slice indices must be integers or None, not {}",
                        other.type_name()
                    ),
                )),
            },
        }
    }

    fn compare(&mut self, op: CmpOp, a: &Value, b: &Value) -> RtResult<bool> {
        if let (Value::Int(x), Value::Int(y)) = (a, b) {
            return Ok(match op {
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
                CmpOp::Lt => x < y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Ge => x >= y,
                CmpOp::In | CmpOp::NotIn => {
                    return crate::value::compare::contains(b, a).map(|r| r == (op == CmpOp::In))
                }
                CmpOp::Is => x == y,
                CmpOp::IsNot => x != y,
            });
        }
        if let (CmpOp::In | CmpOp::NotIn, Value::Int(_) | Value::Str(_), Value::Dict(d)) =
            (op, a, b)
        {
            // The counting idiom's `k in d`: an int or str key needs no hashability check.
            let found = d.borrow().contains_key(&Key(a.clone()));
            return Ok(found == (op == CmpOp::In));
        }
        if crate::labels::label::is_labeled(a) || crate::labels::label::is_labeled(b) {
            return crate::labels::ops::truth(op, a, b);
        }
        crate::value::compare::compare_op(op, a, b)
    }

    fn eval_args(&mut self, args: &Args) -> RtResult<(Vec<Value>, Kwargs)> {
        let mut pos = Vec::with_capacity(args.positional.len());
        let mut stars = args.star.iter().peekable();
        for (i, a) in args.positional.iter().enumerate() {
            while let Some((at_i, se)) = stars.peek() {
                if *at_i != i {
                    break;
                }
                let v = self.eval(se)?;
                pos.extend(at(crate::value::iter::collect(&v), se)?);
                stars.next();
            }
            pos.push(self.eval(a)?);
        }
        for (_, se) in stars {
            let v = self.eval(se)?;
            pos.extend(at(crate::value::iter::collect(&v), se)?);
        }
        let mut kw = Vec::with_capacity(args.keywords.len());
        for (k, v) in &args.keywords {
            kw.push((*k, self.eval(v)?));
        }
        Ok((pos, kw))
    }

    /// `recv.name(args)`, with `list.append` and `dict.get` answered in place: their
    /// argument vector and the method dispatch cost more than the operation.
    #[inline(never)]
    fn eval_method_call(
        &mut self,
        obj: &hir::Expr,
        name: Sym,
        args: &Args,
        e: &hir::Expr,
    ) -> RtResult<Value> {
        let recv = self.operand(obj)?;
        if args.keywords.is_empty() && args.star.is_empty() {
            match (&recv, args.positional.as_slice()) {
                (Value::List(l), [x]) if name == sym::APPEND => {
                    let v = self.eval(x)?;
                    let mut items = l.borrow_mut();
                    crate::value::grow::room(&mut items, "the list")?;
                    items.push(v);
                    return Ok(Value::None);
                }
                // Not once a container has a shape label: the dict may be one, read as a view.
                (Value::Dict(d), [k, rest @ ..])
                    if name == sym::GET && rest.len() <= 1 && crate::labels::shape::none() =>
                {
                    let key = self.eval(k)?;
                    let default = match rest.first() {
                        Some(x) => Some(self.eval(x)?),
                        None => None,
                    };
                    // `get` joins its arguments' labels into the result (`label_calls.rs`):
                    // with a plain key and default there are none, and `dict_get`, out of
                    // this frame, handles the rest.
                    if matches!(key, Value::Int(_) | Value::Str(_))
                        && !default
                            .as_ref()
                            .is_some_and(crate::labels::label::is_labeled)
                    {
                        let found = d.borrow().get(&Key(key)).cloned();
                        return Ok(found.unwrap_or_else(|| default.unwrap_or_default()));
                    }
                    return at(self.dict_get(&recv, key, default), e);
                }
                _ => {}
            }
        }
        let (pos, kw) = self.eval_args(args)?;
        at(self.call_method(&recv, name, pos, kw), e)
    }

    fn eval_call(&mut self, f: &hir::Expr, args: &Args, e: &hir::Expr) -> RtResult<Value> {
        // A module-level function, the usual callee, is read from its slot without a
        // recursive `eval` (a worker's lazily copied globals take the general path).
        let fv = match &f.kind {
            E::Global(g) if self.lazy.is_none() => self.globals[self.cur_mod][*g as usize].clone(),
            _ => self.eval(f)?,
        };
        if let (Value::Func(c), true) = (&fv, args.star.is_empty()) {
            // Arguments go straight into the callee's frame slots.
            let base = self.stack.len();
            for a in &args.positional {
                match self.operand(a) {
                    Ok(v) => self.stack.push(v),
                    Err(err) => {
                        self.stack.truncate(base);
                        return Err(err);
                    }
                }
            }
            for (_, v) in &args.keywords {
                match self.eval(v) {
                    Ok(x) => self.stack.push(x),
                    Err(err) => {
                        self.stack.truncate(base);
                        return Err(err);
                    }
                }
            }
            let kw = crate::eval::interp::KwNames::Hir(&args.keywords);
            return at(self.invoke(c, base, args.positional.len(), kw), e);
        }
        if let (Value::Builtin(b), [arg]) = (&fv, args.positional.as_slice()) {
            if let E::Comp(c) = &arg.kind {
                let name = hir::builtin_name(*b);
                if c.kind == CompKind::Generator && args.keywords.is_empty() {
                    match name {
                        "any" | "all" => return self.lazy_any_all(c, name == "any"),
                        "sum" => return at(self.lazy_sum(c), e),
                        _ => {}
                    }
                }
            }
            // `len(x)` in a loop condition would otherwise allocate an argument vector.
            if b.0 == crate::eval::builtins::id::LEN
                && args.keywords.is_empty()
                && args.star.is_empty()
            {
                let v = self.operand(arg)?;
                if let Value::Labeled(l) = &v {
                    return at(labelled_len(l), e);
                }
                let n = at(crate::eval::builtins::len(&v).map(Value::Int), e)?;
                return Ok(crate::eval::label_calls::sized(&v, n));
            }
        }
        let (pos, kw) = self.eval_args(args)?;
        at(self.call_value_kw(&fv, pos, kw), e)
    }

    /// Renders an f-string into `out`; the labels of the values it shows join into `tags`.
    fn fstring(
        &mut self,
        parts: &[FPart],
        out: &mut String,
        tags: &mut Option<crate::labels::label::Tag>,
    ) -> RtResult<()> {
        for p in parts {
            match p {
                FPart::Lit(i) => {
                    if let Value::Str(s) = &self.consts[*i as usize] {
                        crate::value::grow::push_str(out, s.as_str(), "the f-string")?;
                    }
                }
                FPart::Field { expr, conv, spec } => {
                    let v = self.eval(expr)?;
                    let v = match crate::labels::label::deep(&v) {
                        // The text is built from the plain value and the whole string gets
                        // every label inside it.
                        Some(t) => {
                            *tags = crate::labels::label::join(*tags, Some(t));
                            crate::labels::label::reveal(&v)
                        }
                        None => v,
                    };
                    let v = match conv {
                        Some('r') | Some('a') => {
                            let mut s = String::new();
                            crate::value::format::repr(&self.prog, &v, &mut s);
                            Value::str(s)
                        }
                        Some('s') => {
                            let mut s = String::new();
                            crate::value::format::to_str(&self.prog, &v, &mut s);
                            Value::str(s)
                        }
                        _ => v,
                    };
                    if spec.is_empty() {
                        match &v {
                            Value::Str(s) => {
                                crate::value::grow::push_str(out, s.as_str(), "the f-string")?
                            }
                            _ => {
                                at(crate::value::big_int::check_text(&v), expr)?;
                                let mut piece = String::new();
                                crate::value::format::to_str(&self.prog, &v, &mut piece);
                                crate::value::grow::push_str(out, &piece, "the f-string")?;
                            }
                        }
                    } else {
                        let mut spec_text = String::new();
                        self.fstring(spec, &mut spec_text, tags)?;
                        let piece = at(
                            crate::value::format::format_value(&self.prog, &v, &spec_text),
                            expr,
                        )?;
                        crate::value::grow::push_str(out, &piece, "the f-string")?;
                    }
                }
            }
        }
        Ok(())
    }
}

type Kwargs = Vec<(Sym, Value)>;

pub(crate) fn hashable(v: Value) -> RtResult<Key> {
    if v.is_hashable() {
        Ok(Key(v))
    } else {
        Err(RtError::new(
            codes::TYPE,
            format!("unhashable type: '{}'", v.type_name()),
        ))
    }
}

/// `len` of a labelled value, as `len`'s size mode does it (`label_calls.rs`): the length
/// of a secret is as secret as it. Out of line, so the plain `len` path stays small.
#[cold]
fn labelled_len(l: &crate::labels::label::Labeled) -> RtResult<Value> {
    if crate::labels::view::is_mutable_container(&l.value) {
        // A container seen through a label (`[0] * secret_n`, `d[secret_key]`) was sized
        // or chosen by that label; what it holds may carry others.
        let n = crate::eval::builtins::len(&l.value).map(Value::Int)?;
        let tag = crate::labels::label::join(Some(l.tag()), crate::labels::label::deep(&l.value));
        return Ok(crate::labels::label::wrap_opt(n, tag));
    }
    let tag = l.tag();
    let n = crate::eval::builtins::len(&l.value)
        .map_err(|err| crate::labels::label::withhold(err, Some(tag)))?;
    Ok(crate::labels::label::wrap(Value::Int(n), tag))
}

//! `+=`-style updates: lists, strings, dicts and sets change in place, as in Python.

use std::rc::Rc;

use kora_syntax::ast::BinOp;

use super::{as_int, binary_slow, float_op, int_op, repeat_vec};
use crate::error::{codes, fail, type_error, RtResult};
use crate::value::compare::hash_key;
use crate::value::iter::collect;
use crate::value::{Dict, KStr, Value};

/// `target op= rhs`: lists, strings, dicts and sets update in place as in Python
/// (aliases of a list see `+=`); everything else rebinds to `target op rhs`.
pub fn inplace(op: BinOp, target: &mut Value, rhs: &Value) -> RtResult<()> {
    if crate::labels::label::any() {
        if let Some(t) = crate::labels::shape::decided_by_operand(target, rhs) {
            inplace_plain(op, target, rhs)?;
            crate::labels::shape::mark(target, t);
            return Ok(());
        }
    }
    inplace_plain(op, target, rhs)
}

fn inplace_plain(op: BinOp, target: &mut Value, rhs: &Value) -> RtResult<()> {
    if let Value::Labeled(l) = &*target {
        if crate::labels::view::is_mutable_container(&l.value) {
            return view_inplace(op, target, rhs);
        }
    }
    if let (BinOp::Add, Value::Labeled(l)) = (op, &mut *target) {
        if labelled_append(l, rhs) {
            return Ok(());
        }
    }
    match (op, &mut *target, rhs) {
        (_, Value::Int(x), Value::Int(y)) => {
            *target = int_op(op, *x, *y)?;
            Ok(())
        }
        (BinOp::Add, Value::List(l), _) => {
            let items = collect(rhs)?;
            let mut l = l.borrow_mut();
            crate::value::grow::reserve_vec(&mut l, items.len(), "the list")?;
            l.extend(items);
            Ok(())
        }
        (BinOp::Mul, Value::List(l), _) if as_int(rhs).is_some() => {
            let n = usize::try_from(as_int(rhs).unwrap_or(0)).unwrap_or(0);
            let grown = repeat_vec(&l.borrow(), n)?;
            **l.borrow_mut() = grown;
            Ok(())
        }
        (BinOp::Add, Value::Str(s), Value::Str(r)) => {
            if let Some(k) = Rc::get_mut(s) {
                k.push_str_within(r.as_str())?;
            } else {
                let total = s.as_str().len().saturating_add(r.as_str().len());
                let mut n = crate::value::grow::string(total, "the concatenated string")?;
                n.push_str(s.as_str());
                n.push_str(r.as_str());
                *s = Rc::new(KStr::new(n));
            }
            Ok(())
        }
        (BinOp::BitOr, Value::Dict(d), _) => {
            if let Value::Dict(o) = rhs {
                if Rc::ptr_eq(d, o) {
                    return Ok(());
                }
                let items: Vec<_> = o
                    .borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                d.borrow_mut().extend(items);
                return Ok(());
            }
            let pairs = dict_pairs(rhs)?;
            d.borrow_mut().extend(pairs);
            Ok(())
        }
        (
            BinOp::BitOr | BinOp::BitAnd | BinOp::Sub | BinOp::BitXor,
            Value::Set(s),
            Value::Set(o),
        ) => {
            if Rc::ptr_eq(s, o) {
                if matches!(op, BinOp::Sub | BinOp::BitXor) {
                    s.borrow_mut().clear();
                }
                return Ok(());
            }
            let o = o.borrow();
            let mut s = s.borrow_mut();
            match op {
                BinOp::BitOr => s.extend(o.iter().cloned()),
                BinOp::BitAnd => s.retain(|k| o.contains(k)),
                BinOp::Sub => s.retain(|k| !o.contains(k)),
                _ => {
                    for k in o.iter() {
                        if !s.shift_remove(k) {
                            s.insert(k.clone());
                        }
                    }
                }
            }
            Ok(())
        }
        _ => {
            *target = match (&*target, rhs) {
                (Value::Float(x), Value::Float(y)) => float_op(op, *x, *y, target, rhs, true)?,
                // A label on either side: computed on the plain values and relabelled, in
                // the target's own box when nothing else holds it.
                (Value::Labeled(_) | Value::LabeledSmall(_), _)
                | (_, Value::Labeled(_) | Value::LabeledSmall(_)) => {
                    return crate::labels::ops::update(op, target, rhs)
                }
                _ => binary_slow(op, target, rhs, true)?,
            };
            Ok(())
        }
    }
}

/// `view op= rhs` on a list, dict or set read through a label: the shared container changes
/// in place as it would without the label (`xs = d[secret]; xs += [1]` grows the list in
/// `d`). An operator that makes a new value instead gives a new value with the view's label.
#[cold]
fn view_inplace(op: BinOp, target: &mut Value, rhs: &Value) -> RtResult<()> {
    let Value::Labeled(l) = &*target else {
        return Ok(());
    };
    let tag = l.tag();
    let mut inner = l.value.clone();
    inplace(op, &mut inner, rhs).map_err(|e| crate::labels::label::withhold(e, Some(tag)))?;
    let same = match (&inner, &l.value) {
        (Value::List(a), Value::List(b)) => Rc::ptr_eq(a, b),
        (Value::Dict(a), Value::Dict(b)) => Rc::ptr_eq(a, b),
        (Value::Set(a), Value::Set(b)) => Rc::ptr_eq(a, b),
        (Value::Record(a), Value::Record(b)) => Rc::ptr_eq(a, b),
        _ => false,
    };
    if !same {
        *target = crate::labels::label::wrap(inner, tag);
    }
    Ok(())
}

/// `s += t` on a labelled string nothing else holds: appends in place and joins `t`'s label,
/// so building a secret string in a loop stays linear as it is for a plain one.
fn labelled_append(l: &mut Rc<crate::labels::label::Labeled>, rhs: &Value) -> bool {
    let (r, tag) = crate::labels::label::split(rhs);
    let Value::Str(r) = &*r else {
        return false;
    };
    let Some(inner) = Rc::get_mut(l) else {
        return false;
    };
    let Value::Str(s) = &mut inner.value else {
        return false;
    };
    match Rc::get_mut(s) {
        Some(k) => {
            if k.push_str_within(r.as_str()).is_err() {
                return false;
            }
        }
        None => {
            let mut n = String::with_capacity(s.as_str().len() + r.as_str().len());
            n.push_str(s.as_str());
            n.push_str(r.as_str());
            *s = Rc::new(KStr::new(n));
        }
    }
    if let Some(t) = tag {
        let joined = inner.tag().join(t);
        inner.bits = joined.bits;
        inner.secret_from = joined.secret_from;
        inner.untrusted_from = joined.untrusted_from;
        inner.release.set(joined.release);
    }
    true
}

/// The `(key, value)` pairs of an iterable, as `dict(pairs)` and `d |= pairs` read them.
pub fn dict_pairs(v: &Value) -> RtResult<Dict> {
    if let Value::Labeled(l) = v {
        if let Value::Dict(_) = &l.value {
            // A dict read through a label: its entries, each side carrying the label.
            if let Value::Dict(copy) = crate::labels::view::expand(v) {
                return Ok(copy.borrow().clone());
            }
        }
    }
    let mut d = Dict::default();
    for (i, item) in collect(v)?.into_iter().enumerate() {
        let pair = match &item {
            Value::Str(_)
            | Value::List(_)
            | Value::Tuple(_)
            | Value::Set(_)
            | Value::Dict(_)
            | Value::Range(_) => collect(&item)?,
            _ => {
                return type_error(format!(
                    "cannot convert dictionary update sequence element #{i} to a sequence"
                ))
            }
        };
        if pair.len() != 2 {
            return fail(
                codes::VALUE,
                format!(
                    "dictionary update sequence element #{i} has length {}; 2 is required",
                    pair.len()
                ),
            );
        }
        let mut it = pair.into_iter();
        if let (Some(k), Some(v)) = (it.next(), it.next()) {
            d.insert(hash_key(&k)?, v);
        }
    }
    Ok(d)
}

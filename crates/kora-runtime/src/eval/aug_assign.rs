//! Updating assignments: `x += y`, `xs[i] op= v`, `d[k] += 1`, `obj.f op= v`, and `x = x + y` appending in place.

use std::rc::Rc;

use kora_check::hir::{self, Target};
use kora_syntax::ast::BinOp;

use crate::error::RtResult;
use crate::eval::exec::fast_arith;
use crate::eval::interp::Interp;
use crate::value::{store, Value};

impl Interp<'_> {
    /// `x = x + y`: appends in place when nothing else holds the value.
    pub(crate) fn concat_assign(&mut self, t: &Target, e: &hir::Expr) -> RtResult<()> {
        let rhs = self.eval(e)?;
        if let Target::Local(s) = t {
            let idx = self.base + *s as usize;
            let mut cur = std::mem::take(&mut self.stack[idx]);
            // `x = x + y` makes a new value: a view's shared container must not grow.
            let labelled = matches!(&cur, Value::Labeled(l) if !crate::labels::view::is_mutable_container(&l.value))
                && crate::value::arith::inplace(BinOp::Add, &mut cur, &rhs).is_ok();
            let done = labelled
                || match (&mut cur, &rhs) {
                    (Value::Str(a), Value::Str(b)) => match Rc::get_mut(a) {
                        Some(a) => {
                            a.push_str_within(b.as_str())?;
                            true
                        }
                        None => false,
                    },
                    (Value::List(a), Value::List(b))
                        if Rc::strong_count(a) == 1 && crate::labels::shape::none() =>
                    {
                        let extra = b.borrow().clone();
                        let mut a = a.borrow_mut();
                        crate::value::grow::reserve_vec(&mut a, extra.len(), "the list")?;
                        a.extend(extra);
                        true
                    }
                    _ => false,
                };
            let v = if done {
                cur
            } else if let Some(v) = crate::labels::ops::small_ints(BinOp::Add, &cur, &rhs) {
                // `n = n + 1` on an inline secret: as `n + 1` in an expression, on the word.
                v
            } else {
                match crate::value::arith::binary(BinOp::Add, &cur, &rhs) {
                    Ok(v) => v,
                    Err(err) => {
                        self.stack[idx] = cur;
                        return Err(err);
                    }
                }
            };
            self.stack[idx] = v;
            return Ok(());
        }
        let cur = self.load_target(t)?;
        let v = crate::value::arith::binary(BinOp::Add, &cur, &rhs)?;
        self.assign(t, v)
    }

    pub(crate) fn aug_assign(&mut self, t: &Target, op: BinOp, e: &hir::Expr) -> RtResult<()> {
        let rhs = self.eval(e)?;
        match t {
            Target::Local(s) => {
                let idx = self.base + *s as usize;
                if let Some(v) = fast_arith(op, &self.stack[idx], &rhs) {
                    // Both were numbers: neither the old value nor `rhs` has anything to drop.
                    std::mem::forget(std::mem::replace(&mut self.stack[idx], v));
                    std::mem::forget(rhs);
                    return Ok(());
                }
                let mut cur = std::mem::take(&mut self.stack[idx]);
                let r = crate::value::arith::inplace(op, &mut cur, &rhs);
                self.stack[idx] = cur;
                r
            }
            Target::Index(o, i) => {
                if let hir::ExprKind::Local(s) = &o.kind {
                    let idx = self.operand(i)?;
                    let slot = &self.stack[self.base + *s as usize];
                    if numbers_in_place(slot, &idx, op, &rhs) {
                        return Ok(());
                    }
                    let idx = match (slot, idx) {
                        (Value::Dict(d), k @ (Value::Int(_) | Value::Str(_))) => {
                            // `counts[k] += 1`: one lookup, the number updated where it lies.
                            let key = crate::value::Key(k);
                            if let Some(cur) = d.borrow_mut().get_mut(&key) {
                                if let Some(v) = fast_arith(op, cur, &rhs) {
                                    store(cur, v);
                                    return Ok(());
                                }
                            }
                            key.0
                        }
                        (_, k) => k,
                    };
                    let obj = self.stack[self.base + *s as usize].clone();
                    let mut cur = crate::value::index::get_index(&self.prog, &obj, &idx)?;
                    crate::value::arith::inplace(op, &mut cur, &rhs)?;
                    return crate::value::index::set_index(&obj, &idx, cur);
                }
                let obj = self.operand(o)?;
                let idx = self.operand(i)?;
                if numbers_in_place(&obj, &idx, op, &rhs) {
                    return Ok(());
                }
                let mut cur = crate::value::index::get_index(&self.prog, &obj, &idx)?;
                crate::value::arith::inplace(op, &mut cur, &rhs)?;
                crate::value::index::set_index(&obj, &idx, cur)
            }
            Target::Attr(o, name) => {
                let obj = self.eval(o)?;
                let mut cur = self.get_attr(&obj, *name)?;
                crate::value::arith::inplace(op, &mut cur, &rhs)?;
                self.set_attr(&obj, *name, cur)
            }
            _ => {
                let mut cur = self.load_target(t)?;
                crate::value::arith::inplace(op, &mut cur, &rhs)?;
                self.assign(t, cur)
            }
        }
    }

    pub(crate) fn load_target(&mut self, t: &Target) -> RtResult<Value> {
        Ok(match t {
            Target::Local(s) => self.stack[self.base + *s as usize].clone(),
            Target::Cell(s) => match &self.stack[self.base + *s as usize] {
                Value::Cell(c) => c.borrow().clone(),
                other => other.clone(),
            },
            Target::Global(g) => self.global(self.cur_mod, *g as usize)?,
            Target::Index(o, i) => {
                let obj = self.eval(o)?;
                let idx = self.eval(i)?;
                crate::value::index::get_index(&self.prog, &obj, &idx)?
            }
            Target::Attr(o, name) => {
                let obj = self.eval(o)?;
                self.get_attr(&obj, *name)?
            }
            Target::Tuple(_) | Target::Star(_) | Target::Slice(..) | Target::Discard => Value::None,
        })
    }
}

/// `xs[i] op= v` where `xs` is a list and both numbers: the element is updated where it
/// lies. `false` leaves everything as it was for the general path (any other operands, an
/// index out of range, which that path reports).
#[inline(always)]
fn numbers_in_place(list: &Value, idx: &Value, op: BinOp, rhs: &Value) -> bool {
    let (Value::List(l), Value::Int(n)) = (list, idx) else {
        return false;
    };
    let mut l = l.borrow_mut();
    let len = l.len() as i64;
    let k = if *n < 0 { n + len } else { *n };
    if k < 0 || k >= len {
        return false;
    }
    let slot = &mut l[k as usize];
    match fast_arith(op, slot, rhs) {
        Some(v) => {
            *slot = v;
            true
        }
        None => false,
    }
}

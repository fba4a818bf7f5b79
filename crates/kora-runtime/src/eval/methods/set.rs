//! Methods of `set`. Other operands may be any iterable, as in Python; members stay in insertion order.

use std::cell::RefCell;
use std::rc::Rc;

use kora_check::hir::{sym, Sym};

use super::no_attribute;
use crate::error::{codes, fail, RtResult};
use crate::eval::builtins::args;
use crate::value::caller::Caller;
use crate::value::compare::hash_key;
use crate::value::format::repr_string;
use crate::value::iter::collect;
use crate::value::{Set, Value};

/// The members of an argument, as a set (hashability checked).
fn as_set(v: &Value) -> RtResult<Set> {
    if let Value::Set(s) = v {
        return Ok(s.borrow().clone());
    }
    let mut s = Set::default();
    for x in collect(v)? {
        s.insert(hash_key(&x)?);
    }
    Ok(s)
}

pub(super) fn call(
    ctx: &mut dyn Caller,
    s: &Rc<RefCell<Set>>,
    name: Sym,
    a: Vec<Value>,
    kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let mname = args::Qual("set", ctx.program().name(name));
    args::no_kwargs(&mname, &kwargs)?;
    Ok(match name {
        sym::ADD => {
            args::exactly_one(&mname, &a)?;
            let k = hash_key(&a[0])?;
            s.borrow_mut().insert(k);
            Value::None
        }
        sym::DISCARD | sym::REMOVE => {
            args::exactly_one(&mname, &a)?;
            let k = hash_key(&a[0])?;
            let removed = s.borrow_mut().shift_remove(&k);
            if !removed && name == sym::REMOVE {
                return fail(codes::KEY, repr_string(ctx.program(), &a[0]));
            }
            Value::None
        }
        sym::POP => {
            args::no_args(&mname, &a)?;
            match s.borrow_mut().shift_remove_index(0) {
                Some(k) => k.0,
                None => return fail(codes::KEY, "'pop from an empty set'"),
            }
        }
        sym::UNION | sym::UPDATE => {
            let mut out = if name == sym::UNION {
                s.borrow().clone()
            } else {
                Set::default()
            };
            for o in &a {
                out.extend(as_set(o)?);
            }
            if name == sym::UPDATE {
                s.borrow_mut().extend(out);
                return Ok(Value::None);
            }
            Value::set(out)
        }
        sym::INTERSECTION | sym::DIFFERENCE => {
            let mut out = s.borrow().clone();
            for o in &a {
                let o = as_set(o)?;
                if name == sym::INTERSECTION {
                    out.retain(|k| o.contains(k));
                } else {
                    out.retain(|k| !o.contains(k));
                }
            }
            Value::set(out)
        }
        sym::SYMMETRIC_DIFFERENCE => {
            args::exactly_one(&mname, &a)?;
            let o = as_set(&a[0])?;
            let mine = s.borrow();
            let mut out: Set = mine.iter().filter(|k| !o.contains(*k)).cloned().collect();
            out.extend(o.iter().filter(|k| !mine.contains(*k)).cloned());
            Value::set(out)
        }
        sym::ISSUBSET | sym::ISSUPERSET | sym::ISDISJOINT => {
            args::exactly_one(&mname, &a)?;
            let o = as_set(&a[0])?;
            let mine = s.borrow();
            Value::Bool(match name {
                sym::ISSUBSET => mine.iter().all(|k| o.contains(k)),
                sym::ISSUPERSET => o.iter().all(|k| mine.contains(k)),
                _ => !mine.iter().any(|k| o.contains(k)),
            })
        }
        sym::COPY => {
            args::no_args(&mname, &a)?;
            Value::set(s.borrow().clone())
        }
        sym::CLEAR => {
            args::no_args(&mname, &a)?;
            let old = std::mem::take(&mut *s.borrow_mut());
            drop(old);
            Value::None
        }
        _ => return no_attribute(ctx, &Value::Set(s.clone()), name),
    })
}

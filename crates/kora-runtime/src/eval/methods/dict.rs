//! Methods of `dict`. Removal keeps insertion order (`shift_remove`), as Python's dicts do.

use std::cell::RefCell;
use std::rc::Rc;

use kora_check::hir::{sym, Sym};

use super::no_attribute;
use crate::error::{codes, fail, RtResult};
use crate::eval::builtins::args;
use crate::value::arith::dict_pairs;
use crate::value::caller::Caller;
use crate::value::compare::hash_key;
use crate::value::format::repr_string;
use crate::value::{Dict, Key, Value};

pub(super) fn call(
    ctx: &mut dyn Caller,
    d: &Rc<RefCell<Dict>>,
    name: Sym,
    a: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    if name == sym::UPDATE {
        args::count("update", &a, 0, 1)?;
        let mut add: Vec<(Key, Value)> = match a.first() {
            None => Vec::new(),
            Some(Value::Dict(o)) if Rc::ptr_eq(o, d) => Vec::new(),
            Some(Value::Dict(o)) => o
                .borrow()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            Some(v) => dict_pairs(v)?.into_iter().collect(),
        };
        let p = ctx.program();
        for (k, v) in kwargs.drain(..) {
            add.push((Key(Value::str(p.name(k))), v));
        }
        d.borrow_mut().extend(add);
        return Ok(Value::None);
    }
    let mname = args::Qual("dict", ctx.program().name(name));
    args::no_kwargs(&mname, &kwargs)?;
    Ok(match name {
        sym::GET => {
            args::count("get", &a, 1, 2)?;
            let k = hash_key(&a[0])?;
            let found = d.borrow().get(&k).cloned();
            found.unwrap_or_else(|| a.get(1).cloned().unwrap_or_default())
        }
        sym::KEYS => {
            args::no_args(&mname, &a)?;
            Value::list(d.borrow().keys().map(|k| k.0.clone()).collect())
        }
        sym::VALUES => {
            args::no_args(&mname, &a)?;
            Value::list(d.borrow().values().cloned().collect())
        }
        sym::ITEMS => {
            args::no_args(&mname, &a)?;
            Value::list(
                d.borrow()
                    .iter()
                    .map(|(k, v)| Value::tuple(vec![k.0.clone(), v.clone()]))
                    .collect(),
            )
        }
        sym::POP => {
            args::count("pop", &a, 1, 2)?;
            let k = hash_key(&a[0])?;
            let removed = d.borrow_mut().shift_remove(&k);
            match (removed, a.get(1)) {
                (Some(v), _) => v,
                (None, Some(default)) => default.clone(),
                (None, None) => return fail(codes::KEY, repr_string(ctx.program(), &a[0])),
            }
        }
        sym::SETDEFAULT => {
            args::count("setdefault", &a, 1, 2)?;
            let k = hash_key(&a[0])?;
            let default = a.get(1).cloned().unwrap_or_default();
            d.borrow_mut().entry(k).or_insert(default).clone()
        }
        sym::COPY => {
            args::no_args(&mname, &a)?;
            Value::dict(d.borrow().clone())
        }
        sym::CLEAR => {
            args::no_args(&mname, &a)?;
            let old = std::mem::take(&mut *d.borrow_mut());
            drop(old);
            Value::None
        }
        _ => return no_attribute(ctx, &Value::Dict(d.clone()), name),
    })
}

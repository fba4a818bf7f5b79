//! Methods of `list`, plus the `index`/`count` that tuples and ranges share with it.

use std::cell::RefCell;

use kora_check::hir::{sym, Sym};

use super::no_attribute;
use crate::error::{codes, fail, type_error, RtResult};
use crate::eval::builtins::args;
use crate::eval::builtins::seq_sort_options;
use crate::value::caller::Caller;
use crate::value::compare::values_equal;
use crate::value::format::{repr_string, type_name};
use crate::value::iter::collect;
use crate::value::{ListItems, Value};

pub(super) fn call(
    ctx: &mut dyn Caller,
    recv: &Value,
    l: &RefCell<ListItems>,
    name: Sym,
    mut a: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    if name == sym::SORT {
        let (key, reverse) = seq_sort_options(ctx, &mut kwargs)?;
        if !a.is_empty() {
            return type_error("sort() takes no positional arguments");
        }
        // Python empties the list while sorting, so a key function sees `[]`.
        let mut items = std::mem::take(&mut *l.borrow_mut());
        let r = super::sort_values(ctx, &mut items, key.as_ref(), reverse);
        let mut cur = l.borrow_mut();
        let modified = !cur.is_empty();
        *cur = items;
        r?;
        if modified {
            return fail(codes::VALUE, "list modified during sort");
        }
        return Ok(Value::None);
    }
    args::no_kwargs(args::Qual("list", ctx.program().name(name)), &kwargs)?;
    match name {
        sym::APPEND => {
            args::exactly_one("list.append", &a)?;
            let mut v = l.borrow_mut();
            crate::value::grow::room(&mut v, "the list")?;
            v.push(a.pop().unwrap_or_default());
        }
        sym::EXTEND => {
            args::exactly_one("list.extend", &a)?;
            let items = collect(&a[0])?;
            let mut v = l.borrow_mut();
            crate::value::grow::reserve_vec(&mut v, items.len(), "the list")?;
            v.extend(items);
        }
        sym::INSERT => {
            args::count("insert", &a, 2, 2)?;
            let i = args::index(&a[0])?;
            let x = a.pop().unwrap_or_default();
            let mut v = l.borrow_mut();
            crate::value::grow::room(&mut v, "the list")?;
            let len = v.len() as i128;
            let mut i = i as i128;
            if i < 0 {
                i = (i + len).max(0);
            }
            v.insert(i.min(len) as usize, x);
        }
        sym::POP => {
            args::count("pop", &a, 0, 1)?;
            let mut v = l.borrow_mut();
            if v.is_empty() {
                return fail(codes::INDEX, "pop from empty list");
            }
            let i = match a.first() {
                Some(i) => args::index(i)?,
                None => -1,
            };
            let len = v.len() as i128;
            let j = if i < 0 { i as i128 + len } else { i as i128 };
            if !(0..len).contains(&j) {
                return fail(codes::INDEX, "pop index out of range");
            }
            return Ok(v.remove(j as usize));
        }
        sym::REMOVE => {
            args::exactly_one("list.remove", &a)?;
            let pos = l.borrow().iter().position(|x| values_equal(x, &a[0]));
            match pos {
                Some(i) => {
                    l.borrow_mut().remove(i);
                }
                None => return fail(codes::VALUE, "list.remove(x): x not in list"),
            }
        }
        sym::REVERSE => {
            args::no_args("list.reverse", &a)?;
            l.borrow_mut().reverse();
        }
        sym::COPY => {
            args::no_args("list.copy", &a)?;
            return Ok(Value::list(l.borrow().clone()));
        }
        sym::CLEAR => {
            args::no_args("list.clear", &a)?;
            // Dropped after the borrow ends: element destructors never see it held.
            let old = std::mem::take(&mut *l.borrow_mut());
            drop(old);
        }
        sym::INDEX | sym::COUNT => {
            let items = l.borrow().clone();
            return call_seq(ctx, recv, &items, name, a, Vec::new());
        }
        _ => return no_attribute(ctx, recv, name),
    }
    Ok(Value::None)
}

/// `index` and `count` on a list, tuple or range.
pub(super) fn call_seq(
    ctx: &mut dyn Caller,
    recv: &Value,
    items: &[Value],
    name: Sym,
    a: Vec<Value>,
    kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let what = type_name(recv);
    match name {
        sym::COUNT => {
            args::no_kwargs(args::Qual(what, "count"), &kwargs)?;
            args::exactly_one(args::Qual(what, "count"), &a)?;
            let n = items.iter().filter(|x| values_equal(x, &a[0])).count();
            Ok(Value::Int(n as i64))
        }
        sym::INDEX => {
            args::no_kwargs(args::Qual(what, "index"), &kwargs)?;
            args::count("index", &a, 1, 3)?;
            let len = items.len() as i128;
            let clamp = |v: Option<i64>, default: i128| -> i128 {
                match v {
                    None => default,
                    Some(v) => {
                        let v = v as i128;
                        if v < 0 {
                            (v + len).max(0)
                        } else {
                            v.min(len)
                        }
                    }
                }
            };
            let start = clamp(args::opt_index(a.get(1))?, 0);
            let end = clamp(args::opt_index(a.get(2))?, len);
            let found = (start..end).find(|&i| values_equal(&items[i as usize], &a[0]));
            match found {
                Some(i) => Ok(Value::Int(i as i64)),
                None => {
                    let msg = match what {
                        "tuple" => "tuple.index(x): x not in tuple".to_string(),
                        "range" => format!("{} is not in range", repr_string(ctx.program(), &a[0])),
                        _ => format!("{} is not in list", repr_string(ctx.program(), &a[0])),
                    };
                    fail(codes::VALUE, msg)
                }
            }
        }
        _ => no_attribute(ctx, recv, name),
    }
}

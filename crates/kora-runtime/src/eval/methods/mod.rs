//! Methods of the built-in types (`xs.append(x)`, `s.split()`, `d.get(k)`), dispatched on `hir::sym` constants.
//!
//! Deviation from CPython, by design: `dict.keys()`, `.values()` and `.items()`
//! return lists (snapshots), not live views.

mod dict;
mod list;
mod set;
mod sort;
mod str;
mod strsplit;
pub(crate) use crate::value::unicode;

use kora_check::hir::{sym, Sym};

use crate::error::{codes, fail, RtResult};
use crate::eval::builtins::args;
use crate::value::caller::Caller;
use crate::value::format::type_name_in;
use crate::value::Value;

pub use sort::sort_values;

/// Calls method `name` on `recv`.
pub fn call_method(
    ctx: &mut dyn Caller,
    recv: &Value,
    name: Sym,
    args: Vec<Value>,
    kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    match recv {
        Value::Str(s) => str::call(ctx, s, name, args, kwargs),
        Value::List(l) => list::call(ctx, recv, l, name, args, kwargs),
        Value::Dict(d) => dict::call(ctx, d, name, args, kwargs),
        Value::Set(s) => set::call(ctx, s, name, args, kwargs),
        Value::Tuple(t) => list::call_seq(ctx, recv, t, name, args, kwargs),
        Value::Range(r) => range_method(ctx, recv, r, name, args, kwargs),
        Value::Float(f) if name == sym::IS_INTEGER => {
            args::no_kwargs("float.is_integer", &kwargs)?;
            args::no_args("float.is_integer", &args)?;
            Ok(Value::Bool(f.is_finite() && f.fract() == 0.0))
        }
        Value::Cell(c) => {
            let inner = c.borrow().clone();
            call_method(ctx, &inner, name, args, kwargs)
        }
        _ => no_attribute(ctx, recv, name),
    }
}

/// `range.count`/`range.index` by arithmetic for ints, by scanning otherwise.
fn range_method(
    ctx: &mut dyn Caller,
    recv: &Value,
    r: &crate::value::RangeObj,
    name: Sym,
    a: Vec<Value>,
    kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    if let ([Value::Int(x)], true) = (a.as_slice(), kwargs.is_empty()) {
        let inside = crate::value::compare::range_contains(r, *x);
        if name == sym::COUNT {
            return Ok(Value::Int(inside as i64));
        }
        if name == sym::INDEX {
            if !inside {
                return fail(codes::VALUE, format!("{x} is not in range"));
            }
            let offset = (*x as i128 - r.start as i128) / r.step as i128;
            return Ok(Value::Int(offset as i64));
        }
    }
    let items = crate::value::iter::collect(recv)?;
    list::call_seq(ctx, recv, &items, name, a, kwargs)
}

pub(crate) fn no_attribute<T>(ctx: &dyn Caller, recv: &Value, name: Sym) -> RtResult<T> {
    let p = ctx.program();
    fail(
        codes::ATTRIBUTE,
        format!(
            "'{}' object has no attribute '{}'",
            type_name_in(p, recv),
            p.name(name)
        ),
    )
}

const STR_METHODS: &[Sym] = &[
    sym::SPLIT,
    sym::RSPLIT,
    sym::JOIN,
    sym::STRIP,
    sym::LSTRIP,
    sym::RSTRIP,
    sym::UPPER,
    sym::LOWER,
    sym::REPLACE,
    sym::STARTSWITH,
    sym::ENDSWITH,
    sym::FIND,
    sym::RFIND,
    sym::INDEX,
    sym::COUNT,
    sym::ISDIGIT,
    sym::ISALPHA,
    sym::ISALNUM,
    sym::ISSPACE,
    sym::ISUPPER,
    sym::ISLOWER,
    sym::CAPITALIZE,
    sym::TITLE,
    sym::SPLITLINES,
    sym::FORMAT,
    sym::ZFILL,
    sym::CENTER,
    sym::LJUST,
    sym::RJUST,
    sym::SWAPCASE,
    sym::PARTITION,
    sym::RPARTITION,
    sym::REMOVEPREFIX,
    sym::REMOVESUFFIX,
    sym::ISNUMERIC,
    sym::ISDECIMAL,
];

const LIST_METHODS: &[Sym] = &[
    sym::APPEND,
    sym::EXTEND,
    sym::INSERT,
    sym::POP,
    sym::REMOVE,
    sym::INDEX,
    sym::COUNT,
    sym::SORT,
    sym::REVERSE,
    sym::COPY,
    sym::CLEAR,
];

const DICT_METHODS: &[Sym] = &[
    sym::GET,
    sym::KEYS,
    sym::VALUES,
    sym::ITEMS,
    sym::POP,
    sym::SETDEFAULT,
    sym::UPDATE,
    sym::COPY,
    sym::CLEAR,
];

const SET_METHODS: &[Sym] = &[
    sym::ADD,
    sym::DISCARD,
    sym::REMOVE,
    sym::POP,
    sym::UNION,
    sym::INTERSECTION,
    sym::DIFFERENCE,
    sym::SYMMETRIC_DIFFERENCE,
    sym::ISSUBSET,
    sym::ISSUPERSET,
    sym::ISDISJOINT,
    sym::COPY,
    sym::CLEAR,
    sym::UPDATE,
];

/// Whether `recv.name` is a method, so the evaluator can make a bound method value.
pub fn has_method(recv: &Value, name: Sym) -> bool {
    match recv {
        Value::Str(_) => STR_METHODS.contains(&name),
        Value::List(_) => LIST_METHODS.contains(&name),
        Value::Dict(_) => DICT_METHODS.contains(&name),
        Value::Set(_) => SET_METHODS.contains(&name),
        Value::Tuple(_) | Value::Range(_) => name == sym::INDEX || name == sym::COUNT,
        Value::Float(_) => name == sym::IS_INTEGER,
        Value::Cell(c) => has_method(&c.borrow(), name),
        Value::Labeled(l) => has_method(&l.value, name),
        Value::LabeledSmall(s) => has_method(&s.plain(), name),
        _ => false,
    }
}

#[cfg(test)]
mod tests;

//! Built-ins over iterables: `range`, `enumerate`, `zip`, `sorted`, `reversed`, `min`, `max`, `sum`, `map`, `filter`.

use std::rc::Rc;

use kora_check::hir::{sym, Sym};
use kora_syntax::ast::{BinOp, CmpOp};

use super::args;
use crate::error::{codes, fail, type_error, RtResult};
use crate::eval::methods::sort_values;
use crate::value::arith::binary;
use crate::value::caller::Caller;
use crate::value::compare::compare_op;
use crate::value::format::type_name;
use crate::value::iter::{collect, iterate};
use crate::value::{RangeObj, Value};

pub(super) fn range(a: &[Value], kwargs: &[(Sym, Value)]) -> RtResult<Value> {
    args::no_kwargs("range", kwargs)?;
    args::count("range", a, 1, 3)?;
    let (start, stop, step) = match a {
        [stop] => (0, args::index(stop)?, 1),
        [start, stop] => (args::index(start)?, args::index(stop)?, 1),
        [start, stop, step] => (args::index(start)?, args::index(stop)?, args::index(step)?),
        _ => (0, 0, 1),
    };
    if step == 0 {
        return fail(codes::VALUE, "range() arg 3 must not be zero");
    }
    Ok(Value::Range(Rc::new(RangeObj { start, stop, step })))
}

pub(super) fn enumerate(
    ctx: &mut dyn Caller,
    mut a: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let p = ctx.program();
    if let Some(s) = args::take(&mut kwargs, sym::START) {
        a.push(s);
    }
    if let Some(it) = args::take_named(p, &mut kwargs, "iterable") {
        a.insert(0, it);
    }
    args::done(p, &kwargs, "enumerate")?;
    args::count("enumerate", &a, 1, 2)?;
    let start = match a.get(1) {
        Some(s) => args::index(s)?,
        None => 0,
    };
    let items = collect(&a[0])?;
    let mut out = Vec::with_capacity(items.len());
    for (i, x) in items.into_iter().enumerate() {
        let Some(n) = i64::try_from(i).ok().and_then(|i| start.checked_add(i)) else {
            return fail(
                codes::OVERFLOW,
                "integer overflow: enumerate() index does not fit in a 64-bit int",
            );
        };
        out.push(Value::tuple(vec![Value::Int(n), x]));
    }
    Ok(Value::list(out))
}

pub(super) fn zip(
    ctx: &mut dyn Caller,
    a: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let strict = args::take(&mut kwargs, sym::STRICT).is_some_and(|v| v.truthy());
    args::done(ctx.program(), &kwargs, "zip")?;
    let cols = a.iter().map(collect).collect::<RtResult<Vec<_>>>()?;
    let n = cols.iter().map(Vec::len).min().unwrap_or(0);
    if strict {
        check_strict(&cols, n)?;
    }
    let mut out = Vec::with_capacity(n);
    for row in 0..n {
        out.push(Value::tuple(cols.iter().map(|c| c[row].clone()).collect()));
    }
    Ok(Value::list(out))
}

/// `zip(strict=True)`'s errors, naming arguments as CPython does.
fn check_strict(cols: &[Vec<Value>], n: usize) -> RtResult<()> {
    let others = |i: usize| {
        if i == 1 {
            "argument 1".to_string()
        } else {
            format!("arguments 1-{i}")
        }
    };
    if let Some(i) = cols.iter().position(|c| c.len() == n) {
        if i > 0 {
            return fail(
                codes::VALUE,
                format!("zip() argument {} is shorter than {}", i + 1, others(i)),
            );
        }
        if let Some(j) = cols.iter().position(|c| c.len() > n) {
            return fail(
                codes::VALUE,
                format!("zip() argument {} is longer than {}", j + 1, others(j)),
            );
        }
    }
    Ok(())
}

/// `reverse=` of a sort: whether, and the label of the value that said so.
#[derive(Default, Clone, Copy)]
pub struct Reverse {
    pub on: bool,
    pub tag: Option<crate::labels::label::Tag>,
}

/// Reads `key=` and `reverse=` for `sorted` and `list.sort`.
pub(crate) fn sort_options(
    ctx: &dyn Caller,
    kwargs: &mut Vec<(Sym, Value)>,
) -> RtResult<(Option<Value>, Reverse)> {
    let key = args::take(kwargs, sym::KEY).filter(|k| !matches!(k, Value::None));
    let reverse = args::take(kwargs, sym::REVERSE).map(|v| {
        // A labelled `reverse=` decides the order: the sort's items carry its label.
        let (plain, tag) = crate::labels::label::split(&v);
        (plain.into_owned(), tag)
    });
    let reverse = match reverse {
        None => Reverse::default(),
        Some((v @ (Value::Int(_) | Value::Bool(_)), tag)) => Reverse {
            on: v.truthy(),
            tag,
        },
        Some((v, _)) => {
            return type_error(format!(
                "'{}' object cannot be interpreted as an integer",
                type_name(&v)
            ))
        }
    };
    args::done(ctx.program(), kwargs, "sort")?;
    Ok((key, reverse))
}

pub(super) fn sorted(
    ctx: &mut dyn Caller,
    a: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let (key, reverse) = sort_options(ctx, &mut kwargs)?;
    args::count("sorted", &a, 1, 1)?;
    let mut items = collect(&a[0])?;
    sort_values(ctx, &mut items, key.as_ref(), reverse)?;
    Ok(Value::list(items))
}

pub(super) fn reversed(a: Vec<Value>, kwargs: &[(Sym, Value)]) -> RtResult<Value> {
    args::no_kwargs("reversed", kwargs)?;
    args::count("reversed", &a, 1, 1)?;
    match &a[0] {
        Value::List(_) | Value::Tuple(_) | Value::Str(_) | Value::Range(_) | Value::Dict(_) => {
            let mut items = collect(&a[0])?;
            items.reverse();
            Ok(Value::list(items))
        }
        v => type_error(format!("'{}' object is not reversible", type_name(v))),
    }
}

pub(super) fn min_max(
    ctx: &mut dyn Caller,
    is_max: bool,
    a: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let name = if is_max { "max" } else { "min" };
    let key = args::take(&mut kwargs, sym::KEY).filter(|k| !matches!(k, Value::None));
    let default = args::take(&mut kwargs, sym::DEFAULT);
    args::done(ctx.program(), &kwargs, name)?;
    if a.is_empty() {
        return fail(
            codes::ARGUMENTS,
            format!("{name} expected at least 1 argument, got 0"),
        );
    }
    let items = if a.len() == 1 {
        collect(&a[0])?
    } else {
        if default.is_some() {
            return type_error(format!(
                "Cannot specify a default for {name}() with multiple positional arguments"
            ));
        }
        a
    };
    let op = if is_max { CmpOp::Gt } else { CmpOp::Lt };
    let mut best: Option<(Value, Value)> = None;
    // Which item wins depends on every key compared (the table's gather row).
    let mut tag = None;
    for item in items {
        let k = match &key {
            Some(f) => ctx.call_value(f, vec![item.clone()])?,
            None => item.clone(),
        };
        if crate::labels::label::any() {
            tag = crate::labels::label::join(tag, crate::labels::label::deep(&k));
        }
        best = match best {
            Some((bk, bv)) if !compare_op(op, &k, &bk)? => Some((bk, bv)),
            _ => Some((k, item)),
        };
    }
    match (best, default) {
        (Some((_, v)), _) => Ok(crate::labels::label::wrap_opt(v, tag)),
        (None, Some(d)) => Ok(d),
        (None, None) => fail(codes::VALUE, format!("{name}() arg is an empty sequence")),
    }
}

pub(super) fn sum(
    ctx: &mut dyn Caller,
    mut a: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    if let Some(s) = args::take(&mut kwargs, sym::START) {
        a.push(s);
    }
    args::done(ctx.program(), &kwargs, "sum")?;
    args::count("sum", &a, 1, 2)?;
    let start = a.get(1).cloned().unwrap_or(Value::Int(0));
    if matches!(start, Value::Str(_)) {
        return type_error("sum() can't sum strings [use ''.join(seq) instead]");
    }
    let mut it = iterate(&a[0])?;
    let mut acc = start;
    while let Some(x) = it.next() {
        acc = match (&acc, &x) {
            (Value::Int(s), Value::Int(i)) => match s.checked_add(*i) {
                Some(v) => Value::Int(v),
                None => binary(BinOp::Add, &acc, &x)?,
            },
            (Value::Float(s), Value::Float(f)) => Value::Float(s + f),
            _ => binary(BinOp::Add, &acc, &x)?,
        };
    }
    Ok(acc)
}

pub(super) fn map(ctx: &mut dyn Caller, a: Vec<Value>, kwargs: &[(Sym, Value)]) -> RtResult<Value> {
    args::no_kwargs("map", kwargs)?;
    if a.len() < 2 {
        return type_error("map() must have at least two arguments.");
    }
    let f = &a[0];
    let cols = a[1..].iter().map(collect).collect::<RtResult<Vec<_>>>()?;
    let n = cols.iter().map(Vec::len).min().unwrap_or(0);
    let mut out = Vec::with_capacity(n);
    for row in 0..n {
        let call_args = cols.iter().map(|c| c[row].clone()).collect();
        out.push(ctx.call_value(f, call_args)?);
    }
    Ok(Value::list(out))
}

pub(super) fn filter(
    ctx: &mut dyn Caller,
    a: Vec<Value>,
    kwargs: &[(Sym, Value)],
) -> RtResult<Value> {
    args::no_kwargs("filter", kwargs)?;
    args::count("filter", &a, 2, 2)?;
    let mut out = Vec::new();
    let mut it = iterate(&a[1])?;
    while let Some(x) = it.next() {
        let keep = match &a[0] {
            Value::None => x.truthy(),
            f => ctx.call_value(f, vec![x.clone()])?.truthy(),
        };
        if keep {
            out.push(x);
        }
    }
    Ok(Value::list(out))
}

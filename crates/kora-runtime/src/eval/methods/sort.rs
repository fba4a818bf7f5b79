//! Stable sorting with Python's rules: keys computed once, only `<` consulted, errors propagate.
//!
//! `slice::sort_by` may panic when a comparator is not a total order (NaN, mixed
//! sets) and cannot stop on a failed comparison, so the general case is our own
//! merge sort over indices; homogeneous ints, strings and NaN-free numbers take the
//! std sort, whose comparator is total there.

use std::cmp::Ordering;

use crate::error::RtResult;
use crate::value::caller::Caller;
use crate::value::compare::{int_float_cmp, less_than};
use crate::value::Value;

/// Sorts `items` in place, stably, by `key(item)` (or the items), descending if `reverse`.
///
/// Once labels exist, an order decided by labelled keys is as labelled as they are: each
/// item is put back carrying the join of every key's labels (the table's order row), so a
/// public list sorted by a secret key does not show the secret's order.
pub fn sort_values(
    ctx: &mut dyn Caller,
    items: &mut Vec<Value>,
    key: Option<&Value>,
    reverse: crate::eval::builtins::Reverse,
) -> RtResult<()> {
    let tag = sort_by_keys(ctx, items, key, reverse.on)?;
    let tag = crate::labels::label::join(tag, reverse.tag);
    if let Some(tag) = tag {
        for x in items.iter_mut() {
            *x = crate::labels::label::wrap(std::mem::take(x), tag);
        }
    }
    Ok(())
}

/// The join of the labels of `keys`, once labels exist.
fn keys_label(keys: &[Value]) -> Option<crate::labels::label::Tag> {
    if !crate::labels::label::any() {
        return None;
    }
    keys.iter().fold(None, |t, k| {
        crate::labels::label::join(t, crate::labels::label::deep(k))
    })
}

/// `sort_values` without the labelling: the sort, and the keys' label.
fn sort_by_keys(
    ctx: &mut dyn Caller,
    items: &mut Vec<Value>,
    key: Option<&Value>,
    reverse: bool,
) -> RtResult<Option<crate::labels::label::Tag>> {
    let computed;
    let keys: &[Value] = match key {
        Some(f) => {
            let mut ks = Vec::with_capacity(items.len());
            for x in items.iter() {
                ks.push(ctx.call_value(f, vec![x.clone()])?);
            }
            computed = ks;
            &computed
        }
        None => {
            if sort_ints_in_place(items, reverse) {
                return Ok(keys_label(items));
            }
            items
        }
    };
    let tag = keys_label(keys);
    if keys.len() < 2 {
        return Ok(tag);
    }
    let order: Vec<usize> = match int_keys(keys) {
        Some(mut pairs) => {
            // Positions break ties, so the unstable sort gives the stable order.
            if reverse {
                pairs.sort_unstable_by_key(|&(k, i)| (std::cmp::Reverse(k), i));
            } else {
                pairs.sort_unstable();
            }
            pairs.into_iter().map(|(_, i)| i).collect()
        }
        None => general_order(keys, reverse)?,
    };
    let mut old: Vec<Option<Value>> = std::mem::take(items).into_iter().map(Some).collect();
    items.extend(
        order
            .into_iter()
            .map(|i| old.get_mut(i).and_then(Option::take).unwrap_or_default()),
    );
    Ok(tag)
}

/// All plain ints: sort the values directly (equal ints are indistinguishable). So are
/// secret ints that all carry one label (inline, one tag id): the labels move with them.
fn sort_ints_in_place(items: &mut [Value], reverse: bool) -> bool {
    if !items.iter().all(|v| matches!(v, Value::Int(_))) {
        return sort_secret_ints_in_place(items, reverse);
    }
    sort_by_int(items, reverse, |v| match v {
        Value::Int(i) => *i,
        _ => 0,
    });
    true
}

#[cold]
fn sort_secret_ints_in_place(items: &mut [Value], reverse: bool) -> bool {
    let Some(Value::LabeledSmall(first)) = items.first() else {
        return false;
    };
    let id = first.id();
    let one_label =
        |v: &Value| matches!(v, Value::LabeledSmall(s) if s.id() == id && s.int().is_some());
    if !items.iter().all(one_label) {
        return false;
    }
    // One label and all ints (checked above), so the packed words order as the numbers.
    sort_by_int(items, reverse, |v| match v {
        Value::LabeledSmall(s) => s.order_key(),
        _ => 0,
    });
    true
}

/// Sorts `items` by the int `key` reads from each, descending when `reverse`.
fn sort_by_int(items: &mut [Value], reverse: bool, key: impl Fn(&Value) -> i64) {
    if reverse {
        items.sort_unstable_by_key(|v| std::cmp::Reverse(key(v)));
    } else {
        items.sort_unstable_by_key(key);
    }
}

/// The stable order of `keys`: the std sort where they have a total order, our merge sort
/// (which stops on a failed comparison) otherwise.
fn general_order(keys: &[Value], reverse: bool) -> RtResult<Vec<usize>> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let revealed;
    let (keys, cmp) = match total_order(keys) {
        Some(cmp) => (keys, Some(cmp)),
        None => match revealed_order(keys) {
            Some((plain, cmp)) => {
                revealed = plain;
                (revealed.as_slice(), Some(cmp))
            }
            None => (keys, None),
        },
    };
    if let Some(cmp) = cmp {
        if reverse {
            order.sort_by(|&a, &b| cmp(&keys[b], &keys[a]));
        } else {
            order.sort_by(|&a, &b| cmp(&keys[a], &keys[b]));
        }
    } else if reverse {
        merge_sort(&mut order, &mut |a, b| less_than(&keys[b], &keys[a]))?;
    } else {
        merge_sort(&mut order, &mut |a, b| less_than(&keys[a], &keys[b]))?;
    }
    Ok(order)
}

/// Keys that are all ints, plain or seen through a label (`key=lambda t: t[1]`, secret
/// scores), as `(key, position)` pairs: comparing two of them is all the sort then does.
fn int_keys(keys: &[Value]) -> Option<Vec<(i64, usize)>> {
    let mut out = Vec::with_capacity(keys.len());
    for (i, k) in keys.iter().enumerate() {
        match &*crate::labels::label::plain(k) {
            Value::Int(n) => out.push((*n, i)),
            _ => return None,
        }
    }
    Some(out)
}

type Cmp = fn(&Value, &Value) -> Ordering;

/// A comparator that is a total order on `keys`, when the keys allow one.
fn total_order(keys: &[Value]) -> Option<Cmp> {
    let first = keys.first()?;
    match first {
        Value::Str(_) if keys.iter().all(|k| matches!(k, Value::Str(_))) => Some(str_order),
        _ if keys.iter().all(|k| match k {
            Value::Int(_) | Value::Bool(_) => true,
            Value::Float(f) => !f.is_nan(),
            _ => false,
        }) =>
        {
            Some(num_order)
        }
        Value::Tuple(_) if tuples_totally_ordered(keys) => Some(tuple_order),
        _ => None,
    }
}

/// Keys with labels on them (secret strings, tuples holding a secret), revealed once so the
/// sort compares plain values with the plain comparators, when those are a total order.
/// Comparing through the labels instead unwrapped both keys on every one of n log n
/// comparisons. The order is the plain values' order either way, and the items keep their
/// own labels: the revealed keys only decide positions and are dropped here.
fn revealed_order(keys: &[Value]) -> Option<(Vec<Value>, Cmp)> {
    if !crate::labels::label::any() || !keys.iter().any(|k| crate::labels::label::deep(k).is_some())
    {
        return None;
    }
    let plain: Vec<Value> = keys.iter().map(plain_key).collect();
    let cmp = total_order(&plain)?;
    Some((plain, cmp))
}

fn str_order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Str(x), Value::Str(y)) => x.as_str().cmp(y.as_str()),
        _ => Ordering::Equal,
    }
}

/// What a tuple element may be for tuples to sort by a total order: at one position,
/// every tuple holds a number (NaN excluded) or every tuple holds a string.
#[derive(Clone, Copy, PartialEq)]
enum Slot {
    Num,
    Str,
}

fn slot_kind(v: &Value) -> Option<Slot> {
    match v {
        Value::Int(_) | Value::Bool(_) => Some(Slot::Num),
        Value::Float(f) if !f.is_nan() => Some(Slot::Num),
        Value::Str(_) => Some(Slot::Str),
        _ => None,
    }
}

/// Tuples of scalars whose kinds agree position by position (the common `(priority, id,
/// name)` key): Python's element-wise comparison can then neither fail nor meet NaN, so
/// it is a total order and the std sort may use it.
fn tuples_totally_ordered(keys: &[Value]) -> bool {
    let mut kinds: Vec<Slot> = Vec::new();
    for k in keys {
        let Value::Tuple(t) = k else {
            return false;
        };
        for (i, v) in t.iter().enumerate() {
            let Some(kind) = slot_kind(v) else {
                return false;
            };
            match kinds.get(i) {
                Some(&known) if known != kind => return false,
                Some(_) => {}
                None => kinds.push(kind),
            }
        }
    }
    true
}

/// `label::reveal` of a key, without its walks for the common key, a tuple of scalars.
fn plain_key(k: &Value) -> Value {
    match k {
        Value::Tuple(t)
            if t.iter()
                .all(|x| crate::labels::label::is_scalar(&crate::labels::label::plain(x))) =>
        {
            Value::tuple(
                t.iter()
                    .map(|x| crate::labels::label::plain(x).into_owned())
                    .collect(),
            )
        }
        _ => crate::labels::label::reveal(k),
    }
}

/// Element-wise order of two tuples of scalars (`tuples_totally_ordered`).
fn tuple_order(a: &Value, b: &Value) -> Ordering {
    let (Value::Tuple(x), Value::Tuple(y)) = (a, b) else {
        return Ordering::Equal;
    };
    for (p, q) in x.iter().zip(y.iter()) {
        let o = match (p, q) {
            (Value::Str(s), Value::Str(t)) => s.as_str().cmp(t.as_str()),
            _ => num_order(p, q),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    x.len().cmp(&y.len())
}

fn num_order(a: &Value, b: &Value) -> Ordering {
    let int = |v: &Value| match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    };
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        (Value::Float(x), _) => {
            int_float_cmp(int(b).unwrap_or(0), *x).map_or(Ordering::Equal, Ordering::reverse)
        }
        (_, Value::Float(y)) => int_float_cmp(int(a).unwrap_or(0), *y).unwrap_or(Ordering::Equal),
        _ => int(a).cmp(&int(b)),
    }
}

/// Stable bottom-up merge sort of `order` by a fallible `lt`.
fn merge_sort(
    order: &mut Vec<usize>,
    lt: &mut dyn FnMut(usize, usize) -> RtResult<bool>,
) -> RtResult<()> {
    const RUN: usize = 8;
    let n = order.len();
    for start in (0..n).step_by(RUN) {
        let end = (start + RUN).min(n);
        for i in start + 1..end {
            let mut j = i;
            while j > start && lt(order[j], order[j - 1])? {
                order.swap(j, j - 1);
                j -= 1;
            }
        }
    }
    let mut buf = vec![0usize; n];
    let mut width = RUN;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            while i < mid && j < end {
                if lt(order[j], order[i])? {
                    buf[k] = order[j];
                    j += 1;
                } else {
                    buf[k] = order[i];
                    i += 1;
                }
                k += 1;
            }
            buf[k..k + (mid - i)].copy_from_slice(&order[i..mid]);
            k += mid - i;
            buf[k..k + (end - j)].copy_from_slice(&order[j..end]);
            start = end;
        }
        std::mem::swap(order, &mut buf);
        width *= 2;
    }
    Ok(())
}

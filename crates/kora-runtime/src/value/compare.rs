//! Python's `==`, `<`-family ordering, `in`, and dict-key checks between runtime values.
//!
//! Mixed int/float comparisons are exact (as in CPython: `2**53 + 1 != 2.0**53`),
//! and sequences compare at their first unequal element, so `[1, nan] < [1, 2]` is
//! false and `[1, 2] < [1, 'a']` is a type error about `int` and `str` only.

use std::cmp::Ordering;
use std::rc::Rc;

use kora_syntax::ast::CmpOp;

use crate::error::{codes, fail, type_error, RtResult};
use crate::value::bytes::Bytes;
use crate::value::format::type_name;
use crate::value::{Key, RangeObj, Set, Value};

/// Containers nested deeper than this compare unequal instead of overflowing the stack.
const MAX_DEPTH: u32 = 1000;

/// Python `a == b`.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    eq(a, b, 0)
}

fn eq(a: &Value, b: &Value, depth: u32) -> bool {
    use Value::*;
    match (a, b) {
        (Int(x), Int(y)) => x == y,
        (Str(x), Str(y)) => Rc::ptr_eq(x, y) || x.as_str() == y.as_str(),
        (Float(x), Float(y)) => x == y,
        (None, None) => true,
        (Bool(x), Bool(y)) => x == y,
        (Int(_) | Bool(_) | Float(_) | BigInt(_), Int(_) | Bool(_) | Float(_) | BigInt(_)) => {
            num_cmp(a, b) == Some(Ordering::Equal)
        }
        (List(x), List(y)) => {
            Rc::ptr_eq(x, y) || (depth < MAX_DEPTH && seq_eq(&x.borrow(), &y.borrow(), depth))
        }
        (Tuple(x), Tuple(y)) => Rc::ptr_eq(x, y) || (depth < MAX_DEPTH && seq_eq(x, y, depth)),
        (Dict(x), Dict(y)) => {
            if Rc::ptr_eq(x, y) {
                return true;
            }
            let (x, y) = (x.borrow(), y.borrow());
            depth < MAX_DEPTH
                && x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| eq(v, w, depth + 1)))
        }
        (Set(x), Set(y)) => {
            Rc::ptr_eq(x, y) || {
                let (x, y) = (x.borrow(), y.borrow());
                x.len() == y.len() && x.iter().all(|k| y.contains(k))
            }
        }
        (Range(x), Range(y)) => range_eq(x, y),
        (Record(x), Record(y)) => {
            Rc::ptr_eq(x, y)
                || (x.ty == y.ty
                    && depth < MAX_DEPTH
                    && seq_eq(&x.fields.borrow(), &y.fields.borrow(), depth))
        }
        (Outcome(x), Outcome(y)) => {
            x.tag == y.tag && depth < MAX_DEPTH && eq(&x.payload, &y.payload, depth + 1)
        }
        (Func(x), Func(y)) => Rc::ptr_eq(x, y),
        (Builtin(x), Builtin(y)) => x == y,
        (Method(x), Method(y)) => x.1 == y.1 && identical(&x.0, &y.0),
        (Type(x), Type(y)) => x == y,
        (Module(x), Module(y)) => x == y,
        (Native(x), Native(y)) => Rc::ptr_eq(x, y) || x.compare(y) == Some(Ordering::Equal),
        (Cell(c), _) => eq(&c.borrow(), b, depth),
        (_, Cell(c)) => eq(a, &c.borrow(), depth),
        // Either form of label: the plain values compare. Two boxes (secret dict keys met
        // in a lookup) unwrap both at once rather than one per pass through this match.
        (Labeled(x), Labeled(y)) => eq(&x.value, &y.value, depth),
        (Labeled(_) | LabeledSmall(_), _) => eq(&crate::labels::label::plain(a), b, depth),
        (_, Labeled(_) | LabeledSmall(_)) => eq(a, &crate::labels::label::plain(b), depth),
        _ => false,
    }
}

fn seq_eq(x: &[Value], y: &[Value], depth: u32) -> bool {
    x.len() == y.len() && x.iter().zip(y).all(|(a, b)| eq(a, b, depth + 1))
}

/// Ranges are equal when they produce the same numbers (`range(0) == range(5, 2)`).
fn range_eq(x: &RangeObj, y: &RangeObj) -> bool {
    let n = x.len();
    n == y.len() && (n == 0 || (x.start == y.start && (n == 1 || x.step == y.step)))
}

/// Python's `is`: the same object for heap values; equal values for immutable scalars.
pub fn identical(a: &Value, b: &Value) -> bool {
    use Value::*;
    match (a, b) {
        (None, None) => true,
        (Bool(x), Bool(y)) => x == y,
        (Int(x), Int(y)) => x == y,
        (BigInt(x), BigInt(y)) => Rc::ptr_eq(x, y) || x == y,
        (Float(x), Float(y)) => x.to_bits() == y.to_bits(),
        (Str(x), Str(y)) => Rc::ptr_eq(x, y) || x.as_str() == y.as_str(),
        (List(x), List(y)) => Rc::ptr_eq(x, y),
        (Tuple(x), Tuple(y)) => Rc::ptr_eq(x, y) || (x.is_empty() && y.is_empty()),
        (Dict(x), Dict(y)) => Rc::ptr_eq(x, y),
        (Set(x), Set(y)) => Rc::ptr_eq(x, y),
        (Range(x), Range(y)) => Rc::ptr_eq(x, y),
        (Record(x), Record(y)) => Rc::ptr_eq(x, y),
        (Outcome(x), Outcome(y)) => Rc::ptr_eq(x, y),
        (Func(x), Func(y)) => Rc::ptr_eq(x, y),
        (Method(x), Method(y)) => Rc::ptr_eq(x, y),
        (Builtin(x), Builtin(y)) => x == y,
        (Type(x), Type(y)) => x == y,
        (Module(x), Module(y)) => x == y,
        (Native(x), Native(y)) => Rc::ptr_eq(x, y),
        (Cell(x), Cell(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

/// Exact comparison of an int with a float; `None` when the float is NaN.
pub fn int_float_cmp(i: i64, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return Option::None;
    }
    // 2**63 is exactly representable; every i64 is below it.
    if f >= 9_223_372_036_854_775_808.0 {
        return Some(Ordering::Less);
    }
    if f < -9_223_372_036_854_775_808.0 {
        return Some(Ordering::Greater);
    }
    let t = f.trunc();
    match i.cmp(&(t as i64)) {
        Ordering::Equal => {
            if f > t {
                Some(Ordering::Less)
            } else if f < t {
                Some(Ordering::Greater)
            } else {
                Some(Ordering::Equal)
            }
        }
        o => Some(o),
    }
}

/// Compares two numbers (bool, int, float); `None` if either is not a number or NaN is involved.
fn num_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    if matches!(a, BigInt(_)) || matches!(b, BigInt(_)) {
        return big_cmp(a, b);
    }
    let int = |v: &Value| match v {
        Int(i) => Some(*i),
        Bool(b) => Some(*b as i64),
        _ => Option::None,
    };
    match (a, b) {
        (Float(x), Float(y)) => x.partial_cmp(y),
        (Float(x), _) => int_float_cmp(int(b)?, *x).map(Ordering::reverse),
        (_, Float(y)) => int_float_cmp(int(a)?, *y),
        _ => Some(int(a)?.cmp(&int(b)?)),
    }
}

/// `num_cmp` when a big int is involved: exact against ints and floats alike.
#[cold]
fn big_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    use crate::value::big_int::{cmp_float, IntRef};
    match (a, b) {
        (Value::Float(x), _) => cmp_float(&IntRef::of(b)?.to_big(), *x).map(Ordering::reverse),
        (_, Value::Float(y)) => cmp_float(&IntRef::of(a)?.to_big(), *y),
        _ => Some(IntRef::of(a)?.to_big().cmp(&IntRef::of(b)?.to_big())),
    }
}

fn is_number(v: &Value) -> bool {
    matches!(
        v,
        Value::Int(_) | Value::Bool(_) | Value::Float(_) | Value::BigInt(_)
    )
}

/// Ordering for `<`, `<=`, `>`, `>=` (`op` names the operator in the error message).
/// Pairs that are unordered (NaN, incomparable sets) give `Equal`; use
/// [`compare_op`] where that difference matters.
pub fn compare(a: &Value, b: &Value, op: &str) -> RtResult<Ordering> {
    Ok(partial(a, b, op, 0)?.unwrap_or(Ordering::Equal))
}

/// Evaluates one comparison operator with Python's semantics.
pub fn compare_op(op: CmpOp, a: &Value, b: &Value) -> RtResult<bool> {
    let o = match op {
        CmpOp::Eq => return Ok(values_equal(a, b)),
        CmpOp::Ne => return Ok(!values_equal(a, b)),
        CmpOp::In => return contains(b, a),
        CmpOp::NotIn => return Ok(!contains(b, a)?),
        CmpOp::Is => return Ok(identical(a, b)),
        CmpOp::IsNot => return Ok(!identical(a, b)),
        CmpOp::Lt | CmpOp::Le | CmpOp::Gt | CmpOp::Ge => partial(a, b, op.symbol(), 0)?,
    };
    Ok(match o {
        Option::None => false,
        Some(o) => match op {
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            _ => o != Ordering::Less,
        },
    })
}

/// `a < b` as Python's `sorted`, `min` and `max` ask it.
pub fn less_than(a: &Value, b: &Value) -> RtResult<bool> {
    if let (Value::Int(x), Value::Int(y)) = (a, b) {
        return Ok(x < y);
    }
    Ok(partial(a, b, "<", 0)? == Some(Ordering::Less))
}

fn partial(a: &Value, b: &Value, op: &str, depth: u32) -> RtResult<Option<Ordering>> {
    use Value::*;
    if depth > MAX_DEPTH {
        return fail(
            codes::RECURSION,
            "maximum recursion depth exceeded in comparison",
        );
    }
    Ok(match (a, b) {
        (Int(x), Int(y)) => Some(x.cmp(y)),
        (Float(x), Float(y)) => x.partial_cmp(y),
        (Str(x), Str(y)) => Some(x.as_str().cmp(y.as_str())),
        _ if is_number(a) && is_number(b) => num_cmp(a, b),
        (List(x), List(y)) => seq_cmp(&x.borrow(), &y.borrow(), op, depth)?,
        (Tuple(x), Tuple(y)) => seq_cmp(x, y, op, depth)?,
        (Set(x), Set(y)) => set_cmp(&x.borrow(), &y.borrow()),
        (Native(x), Native(y)) if x.compare(y).is_some() => x.compare(y),
        (Cell(c), _) => return partial(&c.borrow(), b, op, depth),
        (Labeled(_) | LabeledSmall(_), _) => {
            return partial(&crate::labels::label::plain(a), b, op, depth)
        }
        (_, Labeled(_) | LabeledSmall(_)) => {
            return partial(a, &crate::labels::label::plain(b), op, depth)
        }
        (_, Cell(c)) => return partial(a, &c.borrow(), op, depth),
        _ => {
            return type_error(format!(
                "'{op}' not supported between instances of '{}' and '{}'",
                type_name(a),
                type_name(b)
            ))
        }
    })
}

fn seq_cmp(x: &[Value], y: &[Value], op: &str, depth: u32) -> RtResult<Option<Ordering>> {
    for (a, b) in x.iter().zip(y) {
        if !eq(a, b, depth + 1) {
            return partial(a, b, op, depth + 1);
        }
    }
    Ok(Some(x.len().cmp(&y.len())))
}

/// Sets are ordered by inclusion: `{1} < {1, 2}`; neither-subset pairs are unordered.
fn set_cmp(x: &Set, y: &Set) -> Option<Ordering> {
    let x_in_y = x.len() <= y.len() && x.iter().all(|k| y.contains(k));
    let y_in_x = y.len() <= x.len() && y.iter().all(|k| x.contains(k));
    match (x_in_y, y_in_x) {
        (true, true) => Some(Ordering::Equal),
        (true, false) => Some(Ordering::Less),
        (false, true) => Some(Ordering::Greater),
        (false, false) => Option::None,
    }
}

/// Wraps `v` as a dict key or set member, or fails as Python does for unhashable values.
pub fn hash_key(v: &Value) -> RtResult<Key> {
    if v.is_hashable() {
        return Ok(Key(v.clone()));
    }
    type_error(format!(
        "unhashable type: '{}'",
        type_name(unhashable_part(v))
    ))
}

/// The innermost value that makes `v` unhashable (`(1, [2])` names `list`).
fn unhashable_part(v: &Value) -> &Value {
    match v {
        Value::Tuple(t) => t
            .iter()
            .find(|x| !x.is_hashable())
            .map_or(v, unhashable_part),
        Value::Outcome(o) if !o.payload.is_hashable() => unhashable_part(&o.payload),
        _ => v,
    }
}

/// `item in b` for bytes: an int is one octet, bytes a run of them (as in Python).
fn bytes_contains(hay: &[u8], item: &Value) -> RtResult<bool> {
    match item {
        Value::Int(i) => match u8::try_from(*i) {
            Ok(b) => Ok(hay.contains(&b)),
            Err(_) => fail(codes::VALUE, "byte must be in range(0, 256)"),
        },
        Value::Bool(b) => Ok(hay.contains(&u8::from(*b))),
        Value::Labeled(l) => bytes_contains(hay, &l.value),
        Value::LabeledSmall(x) => bytes_contains(hay, &x.plain()),
        _ => match Bytes::of(item) {
            Some(needle) => {
                Ok(needle.is_empty() || hay.windows(needle.len()).any(|w| *w == *needle))
            }
            None => type_error(format!(
                "a bytes-like object is required, not '{}'",
                type_name(item)
            )),
        },
    }
}

/// Python `item in container`.
pub fn contains(container: &Value, item: &Value) -> RtResult<bool> {
    match container {
        Value::List(l) => Ok(l.borrow().iter().any(|x| values_equal(x, item))),
        Value::Tuple(t) => Ok(t.iter().any(|x| values_equal(x, item))),
        Value::Dict(d) => {
            let k = hash_key(item)?;
            Ok(d.borrow().contains_key(&k))
        }
        Value::Set(s) => {
            let k = hash_key(item)?;
            Ok(s.borrow().contains(&k))
        }
        Value::Str(s) => match item {
            Value::Str(sub) => Ok(s.as_str().contains(sub.as_str())),
            Value::Labeled(l) => contains(container, &l.value),
            Value::LabeledSmall(x) => contains(container, &x.plain()),
            _ => type_error(format!(
                "'in <string>' requires string as left operand, not {}",
                type_name(item)
            )),
        },
        Value::Range(r) => Ok(match item {
            Value::Labeled(l) => return contains(container, &l.value),
            Value::LabeledSmall(x) => return contains(container, &x.plain()),
            Value::Int(i) => range_contains(r, *i),
            Value::Bool(b) => range_contains(r, *b as i64),
            Value::Float(f) => {
                f.fract() == 0.0 && int_float_cmp(*f as i64, *f) == Some(Ordering::Equal) && {
                    range_contains(r, *f as i64)
                }
            }
            _ => false,
        }),
        Value::Native(_) => match Bytes::of(container) {
            Some(hay) => bytes_contains(&hay, item),
            None => type_error(format!(
                "argument of type '{}' is not iterable",
                type_name(container)
            )),
        },
        Value::Cell(c) => contains(&c.borrow(), item),
        Value::Labeled(l) => contains(&l.value, item),
        _ if crate::labels::label::is_labeled(item) => {
            contains(container, &crate::labels::label::plain(item))
        }
        _ => type_error(format!(
            "argument of type '{}' is not iterable",
            type_name(container)
        )),
    }
}

pub fn range_contains(r: &RangeObj, x: i64) -> bool {
    let (start, stop, step, x) = (r.start as i128, r.stop as i128, r.step as i128, x as i128);
    if step > 0 {
        start <= x && x < stop && (x - start) % step == 0
    } else {
        stop < x && x <= start && (start - x) % (-step) == 0
    }
}

/// An int comparison's answer, or `None` for `in`/`is`, which take the general path.
#[inline(always)]
pub(crate) fn int_compare(op: CmpOp, x: i64, y: i64) -> Option<bool> {
    match op {
        CmpOp::Lt => Some(x < y),
        CmpOp::Le => Some(x <= y),
        CmpOp::Gt => Some(x > y),
        CmpOp::Ge => Some(x >= y),
        CmpOp::Eq => Some(x == y),
        CmpOp::Ne => Some(x != y),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(v: Vec<Value>) -> Value {
        Value::list(v)
    }

    #[test]
    fn equality_is_pythons() {
        let (i, f, b) = (Value::Int, Value::Float, Value::Bool);
        assert!(values_equal(&i(1), &f(1.0)) && values_equal(&f(1.0), &b(true)));
        assert!(!values_equal(&f(f64::NAN), &f(f64::NAN)));
        assert!(!values_equal(&i((1 << 53) + 1), &f((1u64 << 53) as f64)));
        assert!(values_equal(&l(vec![i(1), f(2.0)]), &l(vec![f(1.0), i(2)])));
        assert!(!values_equal(&Value::tuple(vec![i(1)]), &l(vec![i(1)])));
        let nan_list = l(vec![f(f64::NAN)]);
        assert!(
            values_equal(&nan_list, &nan_list.clone()),
            "identity short-cut"
        );
        let range = |start, stop, step| Value::Range(Rc::new(RangeObj { start, stop, step }));
        assert!(values_equal(&range(0, 0, 1), &range(5, 2, 3)));
        assert!(values_equal(&range(0, 3, 5), &range(0, 1, 1)));
        assert!(!values_equal(&Value::None, &i(0)));
    }

    #[test]
    fn ordering_is_pythons() {
        let (i, f, s) = (Value::Int, Value::Float, Value::str);
        let lt = |a: &Value, b: &Value| compare_op(CmpOp::Lt, a, b);
        assert_eq!(lt(&i(1), &f(1.5)).ok(), Some(true));
        assert_eq!(lt(&s("a"), &s("B")).ok(), Some(false));
        assert_eq!(
            lt(&l(vec![i(1), i(2)]), &l(vec![i(1), i(2), i(3)])).ok(),
            Some(true)
        );
        assert_eq!(lt(&l(vec![i(1)]), &l(vec![i(1), s("a")])).ok(), Some(true));
        assert_eq!(
            lt(&l(vec![i(1), i(2)]), &l(vec![i(1), s("a")])).map_err(|e| e.message),
            Err("'<' not supported between instances of 'int' and 'str'".to_string())
        );
        assert_eq!(
            compare_op(CmpOp::Ge, &Value::None, &Value::None).map_err(|e| e.message),
            Err("'>=' not supported between instances of 'NoneType' and 'NoneType'".to_string())
        );
        assert_eq!(lt(&f(f64::NAN), &i(1)).ok(), Some(false));
        assert_eq!(compare_op(CmpOp::Ge, &f(f64::NAN), &i(1)).ok(), Some(false));
        assert_eq!(
            lt(&l(vec![i(1), f(f64::NAN)]), &l(vec![i(1), i(2)])).ok(),
            Some(false)
        );
        let set = |v: Vec<i64>| Value::set(v.into_iter().map(|x| Key(Value::Int(x))).collect());
        assert_eq!(lt(&set(vec![1]), &set(vec![1, 2])).ok(), Some(true));
        assert_eq!(lt(&set(vec![1]), &set(vec![2])).ok(), Some(false));
        assert_eq!(
            compare_op(CmpOp::Gt, &set(vec![2]), &set(vec![1])).ok(),
            Some(false)
        );
        assert_eq!(compare(&i(2), &f(1.5), "<").ok(), Some(Ordering::Greater));
        assert_eq!(
            int_float_cmp(i64::MAX, 9.223_372_036_854_776e18),
            Some(Ordering::Less)
        );
    }

    #[test]
    fn membership() {
        let (i, f, s) = (Value::Int, Value::Float, Value::str);
        let range = Value::Range(Rc::new(RangeObj {
            start: 0,
            stop: 10,
            step: 3,
        }));
        assert_eq!(contains(&range, &i(9)).ok(), Some(true));
        assert_eq!(contains(&range, &f(6.0)).ok(), Some(true));
        assert_eq!(contains(&range, &i(10)).ok(), Some(false));
        assert_eq!(contains(&range, &Value::Bool(true)).ok(), Some(false));
        assert_eq!(contains(&s("xaby"), &s("ab")).ok(), Some(true));
        assert_eq!(
            contains(&s("abc"), &i(1)).map_err(|e| e.message),
            Err("'in <string>' requires string as left operand, not int".to_string())
        );
        let d = Value::dict([(Key(f(2.0)), i(1))].into_iter().collect());
        assert_eq!(contains(&d, &i(2)).ok(), Some(true));
        assert_eq!(
            contains(&d, &l(vec![])).map_err(|e| e.message),
            Err("unhashable type: 'list'".to_string())
        );
        assert_eq!(
            hash_key(&Value::tuple(vec![i(1), l(vec![])]))
                .err()
                .map(|e| e.message),
            Some("unhashable type: 'list'".to_string())
        );
        assert_eq!(
            contains(&i(5), &i(1)).map_err(|e| e.message),
            Err("argument of type 'int' is not iterable".to_string())
        );
    }
}

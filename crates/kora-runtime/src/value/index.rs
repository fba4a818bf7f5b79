//! Subscripts: `v[i]`, `v[i] = x`, `v[lo:hi:step]` and slice assignment, with Python's bounds rules and errors.

use kora_check::hir::Program;

use crate::error::{codes, fail, type_error, RtResult};
use crate::value::compare::hash_key;
use crate::value::format::{char_value, repr_string, type_name};
use crate::value::iter::collect;
use crate::value::{RangeObj, Value};

pub(crate) fn int_of(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    }
}

/// Resolves a possibly negative index against `len`.
pub(crate) fn normalize(i: i64, len: usize) -> Option<usize> {
    let len = i128::try_from(len).ok()?;
    let i = if i < 0 { i as i128 + len } else { i as i128 };
    if (0..len).contains(&i) {
        usize::try_from(i).ok()
    } else {
        None
    }
}

fn index_error<T>(what: &str) -> RtResult<T> {
    fail(codes::INDEX, format!("{what} index out of range"))
}

pub(crate) fn indices_error<T>(what: &str, idx: &Value) -> RtResult<T> {
    type_error(format!(
        "{what} indices must be integers or slices, not {}",
        type_name(idx)
    ))
}

/// `v[idx]`.
pub fn get_index(p: &Program, v: &Value, idx: &Value) -> RtResult<Value> {
    get_index_seen(p, &crate::labels::shape::seen_or(v), idx)
}

/// `get_index` of a container already seen as its readers see it: a view's container is
/// read without asking again (it is the one with the shape label).
fn get_index_seen(p: &Program, v: &Value, idx: &Value) -> RtResult<Value> {
    if let (inner, Some(tag)) = crate::labels::label::split(idx) {
        // Which element a secret index picks is as secret as the index. A dict looks the
        // labelled key up itself, so a missing key is reported as the placeholder.
        let r = match v {
            Value::Dict(_) => get_index_plain(p, v, idx)?,
            // `inner` is plain: `get_index` would go straight to `get_index_plain`.
            _ => get_index_plain(p, v, &inner)
                .map_err(|e| crate::labels::label::withhold(e, Some(tag)))?,
        };
        return Ok(crate::labels::label::wrap(r, tag));
    }
    get_index_plain(p, v, idx)
}

/// `v[idx]` with an index the caller is done with: as `get_index`, but a secret index
/// nothing else holds lends its box to the element it picks (`label_ops::relabel`).
#[inline(never)]
pub fn get_index_owned(p: &Program, v: &Value, idx: Value) -> RtResult<Value> {
    if let Some(view) = crate::labels::shape::seen(v) {
        return get_index_owned(p, &view, idx);
    }
    if let (inner, Some(tag)) = crate::labels::label::split(&idx) {
        // The same rule as `get_index`, the element labelled with the index's label; `inner`
        // is plain, so `get_index` would go straight to `get_index_plain`.
        let r = match v {
            Value::Dict(_) => get_index_plain(p, v, &idx)?,
            _ => get_index_plain(p, v, &inner)
                .map_err(|e| crate::labels::label::withhold(e, Some(tag)))?,
        };
        return Ok(crate::labels::ops::relabel(r, tag, idx, Value::None));
    }
    get_index_plain(p, v, &idx)
}

fn get_index_plain(p: &Program, v: &Value, idx: &Value) -> RtResult<Value> {
    if let (Value::BigInt(_), Value::List(_) | Value::Tuple(_) | Value::Str(_) | Value::Range(_)) =
        (idx, v)
    {
        return fail(codes::INDEX, "cannot fit 'int' into an index-sized integer");
    }
    match v {
        Value::List(l) => {
            let Some(i) = int_of(idx) else {
                return indices_error("list", idx);
            };
            let l = l.borrow();
            match normalize(i, l.len()).and_then(|i| l.get(i)) {
                Some(x) => Ok(x.clone()),
                None => index_error("list"),
            }
        }
        Value::Tuple(t) => {
            let Some(i) = int_of(idx) else {
                return indices_error("tuple", idx);
            };
            match normalize(i, t.len()).and_then(|i| t.get(i)) {
                Some(x) => Ok(x.clone()),
                None => index_error("tuple"),
            }
        }
        Value::Str(s) => {
            let Some(i) = int_of(idx) else {
                return type_error(format!(
                    "string indices must be integers, not '{}'",
                    type_name(idx)
                ));
            };
            let c = if s.is_ascii() {
                normalize(i, s.as_str().len()).map(|i| s.as_str().as_bytes()[i] as char)
            } else {
                normalize(i, s.char_len()).and_then(|i| s.as_str().chars().nth(i))
            };
            match c {
                Some(c) => Ok(char_value(c)),
                None => index_error("string"),
            }
        }
        Value::Range(r) => {
            let Some(i) = int_of(idx) else {
                return indices_error("range", idx);
            };
            match normalize(i, r.len()) {
                // `RangeObj::get` would overflow in `step * i` for extreme ranges.
                Some(i) => Ok(Value::Int(
                    (r.start as i128 + r.step as i128 * i as i128) as i64,
                )),
                None => index_error("range object"),
            }
        }
        Value::Dict(d) => {
            let k = hash_key(idx)?;
            match d.borrow().get(&k) {
                Some(x) => Ok(x.clone()),
                None => fail(codes::KEY, repr_string(p, idx)),
            }
        }
        Value::Cell(c) => get_index(p, &c.borrow(), idx),
        Value::Native(_) if crate::value::bytes::Bytes::of(v).is_some() => {
            let b = crate::value::bytes::Bytes::of(v).unwrap_or_else(|| [].into());
            let Some(i) = int_of(idx) else {
                return indices_error("byte", idx);
            };
            match normalize(i, b.len()).and_then(|i| b.get(i)) {
                Some(x) => Ok(Value::Int(i64::from(*x))),
                None => fail(codes::INDEX, "index out of range"),
            }
        }
        Value::Labeled(l) => Ok(crate::labels::label::wrap(
            get_index_seen(p, &l.value, idx)?,
            l.tag(),
        )),
        _ => type_error(format!(
            "'{}' object is not subscriptable",
            crate::value::format::type_name_in(p, v)
        )),
    }
}

/// `v[idx] = val`.
pub fn set_index(v: &Value, idx: &Value, val: Value) -> RtResult<()> {
    match v {
        // A dict keeps a labelled key as it is (its label rides on the key); a list position
        // chosen by a secret labels the value stored there.
        // Which item a secret position overwrote is secret too: the list's shape carries it.
        Value::List(_) if crate::labels::label::is_labeled(idx) => {
            let (i, tag) = crate::labels::label::split(idx);
            set_index(v, &i, crate::labels::label::wrap_opt(val, tag))?;
            if let Some(t) = tag {
                crate::labels::shape::mark(v, t);
            }
            Ok(())
        }
        Value::List(l) => {
            let Some(i) = int_of(idx) else {
                return indices_error("list", idx);
            };
            let mut l = l.borrow_mut();
            let len = l.len();
            match normalize(i, len).and_then(|i| l.get_mut(i)) {
                Some(slot) => {
                    if !crate::labels::view::is_view_of(&val, slot) {
                        *slot = val;
                    }
                    Ok(())
                }
                None => fail(codes::INDEX, "list assignment index out of range"),
            }
        }
        Value::Dict(d) => {
            let k = hash_key(idx)?;
            let mut d = d.borrow_mut();
            if let Value::Labeled(_) = &val {
                // `d[k] += [x]` through a label changed the list in `d`: it stays as it was.
                if d.get(&k)
                    .is_some_and(|slot| crate::labels::view::is_view_of(&val, slot))
                {
                    return Ok(());
                }
            }
            // An entry is a key, a value and the map's index: about 48 bytes.
            crate::value::grow::entry_room(d.len(), 48, "the dict")?;
            let decides = crate::labels::label::deep(&k.0);
            d.insert(k, val);
            drop(d);
            // Whether a secret key was new there sets the dict's size.
            if let Some(t) = decides {
                crate::labels::shape::mark(v, t);
            }
            Ok(())
        }
        Value::Cell(c) => set_index(&c.borrow(), idx, val),
        Value::Labeled(l) => set_index(&l.value, idx, val),
        _ => type_error(format!(
            "'{}' object does not support item assignment",
            type_name(v)
        )),
    }
}

/// Converts a slice bound (`None`, int or bool) as Python's slice does.
pub fn slice_index(v: &Value) -> RtResult<Option<i64>> {
    match v {
        Value::None => Ok(None),
        // A slice clamps to the sequence, so a bound past 64 bits acts as the extreme.
        Value::BigInt(b) => Ok(Some(if num_traits::Signed::is_negative(&**b) {
            i64::MIN
        } else {
            i64::MAX
        })),
        _ => match int_of(v) {
            Some(i) => Ok(Some(i)),
            None => {
                type_error("slice indices must be integers or None or have an __index__ method")
            }
        },
    }
}

/// A slice resolved against a length: `start + k * step` for `k < len`.
pub(crate) struct Resolved {
    start: i128,
    stop: i128,
    step: i128,
    len: usize,
}

/// CPython's `PySlice_Unpack` + `PySlice_AdjustIndices`.
pub(crate) fn resolve(
    lo: Option<i64>,
    hi: Option<i64>,
    step: Option<i64>,
    len: usize,
) -> RtResult<Resolved> {
    let step = step.unwrap_or(1).max(-i64::MAX) as i128;
    if step == 0 {
        return fail(codes::VALUE, "slice step cannot be zero");
    }
    let n = len as i128;
    let adjust = |b: Option<i64>, default_neg: i128, default_pos: i128| -> i128 {
        match b {
            None => {
                if step < 0 {
                    default_neg
                } else {
                    default_pos
                }
            }
            Some(b) => {
                let b = b as i128;
                if b < 0 {
                    let b = b + n;
                    if b < 0 {
                        if step < 0 {
                            -1
                        } else {
                            0
                        }
                    } else {
                        b
                    }
                } else if b >= n {
                    if step < 0 {
                        n - 1
                    } else {
                        n
                    }
                } else {
                    b
                }
            }
        }
    };
    let start = adjust(lo, n - 1, 0);
    let stop = adjust(hi, -1, n);
    let count = if step < 0 {
        if stop < start {
            (start - stop - 1) / (-step) + 1
        } else {
            0
        }
    } else if start < stop {
        (stop - start - 1) / step + 1
    } else {
        0
    };
    Ok(Resolved {
        start,
        stop,
        step,
        len: usize::try_from(count).unwrap_or(0),
    })
}

impl Resolved {
    pub(crate) fn indices(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len).map(move |k| (self.start + k as i128 * self.step) as usize)
    }
}

/// `v[lo:hi:step]` for lists, tuples, strings and ranges.
pub fn slice(v: &Value, lo: Option<i64>, hi: Option<i64>, step: Option<i64>) -> RtResult<Value> {
    match v {
        Value::Labeled(l) => Ok(crate::labels::label::wrap(
            slice(&l.value, lo, hi, step)?,
            l.tag(),
        )),
        Value::List(l) => {
            let l = l.borrow();
            let r = resolve(lo, hi, step, l.len())?;
            Ok(Value::list(pick(&l, &r)))
        }
        Value::Tuple(t) => {
            let r = resolve(lo, hi, step, t.len())?;
            if r.step == 1 && r.len == t.len() {
                return Ok(v.clone());
            }
            Ok(Value::tuple(pick(t, &r)))
        }
        Value::Str(s) => {
            let text = s.as_str();
            if s.is_ascii() {
                let r = resolve(lo, hi, step, text.len())?;
                if r.step == 1 && r.len == text.len() {
                    return Ok(v.clone());
                }
                if r.step == 1 {
                    let a = r.start as usize;
                    return Ok(Value::str(&text[a..a + r.len]));
                }
                let b = text.as_bytes();
                return Ok(Value::str(
                    r.indices().map(|i| b[i] as char).collect::<String>(),
                ));
            }
            let chars: Vec<char> = text.chars().collect();
            let r = resolve(lo, hi, step, chars.len())?;
            Ok(Value::str(
                r.indices().map(|i| chars[i]).collect::<String>(),
            ))
        }
        Value::Range(rg) => {
            let r = resolve(lo, hi, step, rg.len())?;
            let item = |i: i128| i64::try_from(rg.start as i128 + i * rg.step as i128);
            match (
                item(r.start),
                item(r.stop),
                i64::try_from(rg.step as i128 * step.unwrap_or(1) as i128),
            ) {
                (Ok(start), Ok(stop), Ok(step)) => Ok(Value::Range(std::rc::Rc::new(RangeObj {
                    start,
                    stop,
                    step,
                }))),
                _ => fail(codes::OVERFLOW, "range slice does not fit in 64-bit ints"),
            }
        }
        Value::Cell(c) => slice(&c.borrow(), lo, hi, step),
        Value::Native(_) if crate::value::bytes::Bytes::of(v).is_some() => {
            let b = crate::value::bytes::Bytes::of(v).unwrap_or_else(|| [].into());
            let r = resolve(lo, hi, step, b.len())?;
            Ok(crate::value::bytes::Bytes::value(
                r.indices().map(|i| b[i]).collect(),
            ))
        }
        _ => type_error(format!("'{}' object is not subscriptable", type_name(v))),
    }
}

fn pick(items: &[Value], r: &Resolved) -> Vec<Value> {
    crate::value::list_items::pick_strided(items, r.start as usize, r.step as isize, r.len)
}

/// `v[lo:hi:step] = val` (lists only, as in Python).
pub fn set_slice(
    v: &Value,
    lo: Option<i64>,
    hi: Option<i64>,
    step: Option<i64>,
    val: &Value,
) -> RtResult<()> {
    // A view's container is the one that changes, as with `set_index`.
    match v {
        Value::Labeled(l) => return set_slice(&l.value, lo, hi, step, val),
        Value::Cell(c) => return set_slice(&c.borrow(), lo, hi, step, val),
        _ => {}
    }
    let Value::List(l) = v else {
        return type_error(format!(
            "'{}' object does not support item assignment",
            type_name(v)
        ));
    };
    // Collected first: `xs[:] = xs` must not read the list while it is being rewritten.
    let items = match collect(val) {
        Ok(items) => items,
        Err(_) if step.unwrap_or(1) == 1 => return type_error("can only assign an iterable"),
        Err(_) => return type_error("must assign iterable to extended slice"),
    };
    let mut l = l.borrow_mut();
    let r = resolve(lo, hi, step, l.len())?;
    if step.unwrap_or(1) == 1 {
        let a = r.start as usize;
        let b = (r.stop.max(r.start)) as usize;
        l.splice(a..b, items);
        return Ok(());
    }
    if items.len() != r.len {
        return fail(
            codes::VALUE,
            format!(
                "attempt to assign sequence of size {} to extended slice of size {}",
                items.len(),
                r.len
            ),
        );
    }
    let idx: Vec<usize> = r.indices().collect();
    for (i, x) in idx.into_iter().zip(items) {
        if let Some(slot) = l.get_mut(i) {
            *slot = x;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::builtins::tests::TestCaller;

    fn show(r: RtResult<Value>) -> String {
        match r {
            Ok(v) => repr_string(&TestCaller::new().program, &v),
            Err(e) => format!("{}: {}", e.code, e.message),
        }
    }

    fn ints(v: &[i64]) -> Value {
        Value::list(v.iter().map(|i| Value::Int(*i)).collect())
    }

    #[test]
    fn indexing_and_errors() {
        let p = TestCaller::new().program;
        let xs = ints(&[1, 2, 3]);
        let i = Value::Int;
        assert_eq!(show(get_index(&p, &xs, &i(-1))), "3");
        assert_eq!(show(get_index(&p, &xs, &Value::Bool(true))), "2");
        assert_eq!(
            show(get_index(&p, &xs, &i(3))),
            "E1006: list index out of range"
        );
        assert_eq!(
            show(get_index(&p, &xs, &i(i64::MIN))),
            "E1006: list index out of range"
        );
        assert_eq!(
            show(get_index(&p, &xs, &Value::str("a"))),
            "E1008: list indices must be integers or slices, not str"
        );
        assert_eq!(show(get_index(&p, &Value::str("héllo"), &i(-4))), "'é'");
        assert_eq!(
            show(get_index(&p, &Value::str("ab"), &i(5))),
            "E1006: string index out of range"
        );
        assert_eq!(
            show(get_index(&p, &Value::str("ab"), &Value::str("a"))),
            "E1008: string indices must be integers, not 'str'"
        );
        assert_eq!(
            show(get_index(&p, &Value::tuple(vec![]), &i(0))),
            "E1006: tuple index out of range"
        );
        let d = Value::dict(Default::default());
        set_index(&d, &Value::str("k"), i(1)).unwrap();
        assert_eq!(show(get_index(&p, &d, &Value::str("k"))), "1");
        assert_eq!(show(get_index(&p, &d, &Value::str("x"))), "E1007: 'x'");
        assert_eq!(
            show(get_index(&p, &i(5), &i(0))),
            "E1008: 'int' object is not subscriptable"
        );
        assert_eq!(
            show(set_index(&Value::tuple(vec![]), &i(0), i(1)).map(|_| Value::None)),
            "E1008: 'tuple' object does not support item assignment"
        );
        assert_eq!(
            show(set_index(&xs, &i(5), i(1)).map(|_| Value::None)),
            "E1006: list assignment index out of range"
        );
    }

    #[test]
    fn slicing_like_python() {
        let xs = ints(&[0, 1, 2, 3, 4, 5]);
        let sl =
            |v: &Value, a: Option<i64>, b: Option<i64>, c: Option<i64>| show(slice(v, a, b, c));
        assert_eq!(sl(&xs, Some(1), Some(4), None), "[1, 2, 3]");
        assert_eq!(sl(&xs, None, None, Some(-2)), "[5, 3, 1]");
        assert_eq!(sl(&xs, Some(-10), Some(10), Some(-1)), "[]");
        assert_eq!(sl(&xs, Some(10), Some(-10), Some(-1)), "[5, 4, 3, 2, 1, 0]");
        assert_eq!(
            sl(&xs, Some(i64::MIN), Some(i64::MAX), Some(i64::MIN)),
            "[]"
        );
        assert_eq!(
            sl(&xs, None, None, Some(0)),
            "E1009: slice step cannot be zero"
        );
        assert_eq!(sl(&Value::str("abc"), Some(1), Some(0), Some(-1)), "'b'");
        assert_eq!(sl(&Value::str("héllo"), None, None, Some(-1)), "'olléh'");
        assert_eq!(sl(&Value::str("héllo"), Some(1), Some(3), None), "'él'");
        let r = |start, stop, step| Value::Range(std::rc::Rc::new(RangeObj { start, stop, step }));
        assert_eq!(sl(&r(0, 10, 1), None, None, Some(-3)), "range(9, -1, -3)");
        assert_eq!(sl(&r(0, 10, 3), None, None, Some(-1)), "range(9, -3, -3)");
        assert_eq!(sl(&r(0, 5, 1), Some(-10), Some(10), None), "range(0, 5)");
        assert_eq!(
            sl(&Value::tuple(vec![Value::Int(1)]), Some(0), None, None),
            "(1,)"
        );
    }

    #[test]
    fn slice_assignment() {
        let xs = ints(&[0, 1, 2, 3]);
        set_slice(&xs, Some(1), Some(3), None, &ints(&[9, 9, 9])).unwrap();
        assert_eq!(show(Ok(xs.clone())), "[0, 9, 9, 9, 3]");
        set_slice(&xs, None, None, None, &xs.clone()).unwrap();
        assert_eq!(show(Ok(xs.clone())), "[0, 9, 9, 9, 3]");
        set_slice(&xs, None, None, Some(2), &ints(&[7, 7, 7])).unwrap();
        assert_eq!(show(Ok(xs.clone())), "[7, 9, 7, 9, 7]");
        assert_eq!(
            show(set_slice(&xs, None, None, Some(2), &ints(&[1])).map(|_| Value::None)),
            "E1009: attempt to assign sequence of size 1 to extended slice of size 3"
        );
        assert_eq!(
            show(slice_index(&Value::Float(1.0)).map(|_| Value::None)),
            "E1008: slice indices must be integers or None or have an __index__ method"
        );
    }
}

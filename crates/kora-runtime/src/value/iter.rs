//! Iteration over runtime values: `for x in v`, comprehensions, and built-ins that consume iterables.
//!
//! Lists are walked by index on the live list, so appending during a loop is seen
//! as in Python. Dicts and sets are snapshotted when the loop starts (Python would
//! raise "changed size during iteration"; Kora iterates the snapshot instead).

use std::cell::RefCell;
use std::rc::Rc;

use crate::error::{type_error, RtResult};
use crate::value::format::{char_value, type_name};
use crate::value::{KStr, ListItems, Value};

pub enum Iter {
    Range {
        next: i64,
        step: i64,
        remaining: usize,
    },
    List {
        list: Rc<RefCell<ListItems>>,
        i: usize,
    },
    Tuple {
        items: Rc<Vec<Value>>,
        i: usize,
    },
    Str {
        s: Rc<KStr>,
        /// Byte offset of the next character.
        pos: usize,
    },
    /// A snapshot (dict keys, set members).
    Values(std::vec::IntoIter<Value>),
}

/// Starts iterating `v`, or fails with Python's "'int' object is not iterable".
pub fn iterate(v: &Value) -> RtResult<Iter> {
    iterate_seen(&crate::labels::shape::seen_or(v))
}

/// `iterate` of a value already seen as its readers see it: a view's container is read
/// here without asking again (it is the container that has the shape label).
fn iterate_seen(v: &Value) -> RtResult<Iter> {
    Ok(match v {
        Value::Range(r) => Iter::Range {
            next: r.start,
            step: r.step,
            remaining: r.len(),
        },
        Value::List(l) => Iter::List {
            list: l.clone(),
            i: 0,
        },
        Value::Tuple(t) => Iter::Tuple {
            items: t.clone(),
            i: 0,
        },
        Value::Str(s) => Iter::Str {
            s: s.clone(),
            pos: 0,
        },
        Value::Dict(d) => Iter::Values(
            d.borrow()
                .keys()
                .map(|k| k.0.clone())
                .collect::<Vec<_>>()
                .into_iter(),
        ),
        Value::Set(s) => Iter::Values(
            s.borrow()
                .iter()
                .map(|k| k.0.clone())
                .collect::<Vec<_>>()
                .into_iter(),
        ),
        Value::Cell(c) => return iterate(&c.borrow()),
        Value::Native(_) if crate::value::bytes::Bytes::of(v).is_some() => Iter::Values(
            crate::value::bytes::Bytes::of(v)
                .unwrap_or_else(|| [].into())
                .iter()
                .map(|b| Value::Int(i64::from(*b)))
                .collect::<Vec<_>>()
                .into_iter(),
        ),
        // A labelled string or range yields labelled items (containers carry labels on
        // their elements already, see `label::wrap`).
        Value::Labeled(l) => {
            let tag = l.tag();
            let mut inner = iterate_seen(&l.value)?;
            let mut items = Vec::with_capacity(inner.size_hint());
            while let Some(x) = inner.next() {
                items.push(crate::labels::label::wrap(x, tag));
            }
            Iter::Values(items.into_iter())
        }
        _ => return not_iterable(v),
    })
}

pub fn not_iterable<T>(v: &Value) -> RtResult<T> {
    type_error(format!("'{}' object is not iterable", type_name(v)))
}

impl Iter {
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Option<Value> {
        match self {
            Iter::Range {
                next,
                step,
                remaining,
            } => {
                if *remaining == 0 {
                    return None;
                }
                let v = *next;
                *remaining -= 1;
                // Wraps only past the last element, which is never read.
                *next = next.wrapping_add(*step);
                Some(Value::Int(v))
            }
            Iter::List { list, i } => {
                let v = list.borrow().get(*i).cloned();
                *i += 1;
                v
            }
            Iter::Tuple { items, i } => {
                let v = items.get(*i).cloned();
                *i += 1;
                v
            }
            Iter::Str { s, pos } => {
                let c = s.as_str().get(*pos..)?.chars().next()?;
                *pos += c.len_utf8();
                Some(char_value(c))
            }
            Iter::Values(it) => it.next(),
        }
    }

    /// How many items remain (for a list, as of now).
    pub fn size_hint(&self) -> usize {
        match self {
            Iter::Range { remaining, .. } => *remaining,
            Iter::List { list, i } => list.borrow().len().saturating_sub(*i),
            Iter::Tuple { items, i } => items.len().saturating_sub(*i),
            Iter::Str { s, pos } => {
                let rest = s.as_str().len().saturating_sub(*pos);
                if s.is_ascii() {
                    rest
                } else {
                    s.as_str().get(*pos..).map_or(0, |r| r.chars().count())
                }
            }
            Iter::Values(it) => it.len(),
        }
    }
}

/// All items of an iterable, in iteration order.
pub fn collect(v: &Value) -> RtResult<Vec<Value>> {
    collect_seen(&crate::labels::shape::seen_or(v))
}

/// `collect` of a value already seen as its readers see it (see `iterate_seen`).
fn collect_seen(v: &Value) -> RtResult<Vec<Value>> {
    Ok(match v {
        Value::List(l) => l.borrow().clone(),
        Value::Tuple(t) => t.to_vec(),
        Value::Range(r) => {
            let mut out = crate::value::grow::vec(r.len(), "a list of the range")?;
            let mut it = iterate(v)?;
            while let Some(x) = it.next() {
                out.push(x);
            }
            out
        }
        Value::Str(s) => s.as_str().chars().map(char_value).collect(),
        Value::Dict(d) => d.borrow().keys().map(|k| k.0.clone()).collect(),
        Value::Set(s) => s.borrow().iter().map(|k| k.0.clone()).collect(),
        Value::Cell(c) => return collect(&c.borrow()),
        Value::Native(_) if crate::value::bytes::Bytes::of(v).is_some() => {
            crate::value::bytes::Bytes::of(v)
                .unwrap_or_else(|| [].into())
                .iter()
                .map(|b| Value::Int(i64::from(*b)))
                .collect()
        }
        // As `iterate` does: every item read through a label carries it.
        Value::Labeled(l) => {
            let tag = l.tag();
            collect_seen(&l.value)?
                .into_iter()
                .map(|x| crate::labels::label::wrap(x, tag))
                .collect()
        }
        _ => return not_iterable(v),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::RangeObj;

    #[test]
    fn ranges_strings_and_live_lists() {
        // The counter would overflow past the last element; it must not be read.
        let r = Value::Range(Rc::new(RangeObj {
            start: i64::MAX - 2,
            stop: i64::MAX,
            step: 1,
        }));
        assert_eq!(collect(&r).map(|v| v.len()).ok(), Some(2));
        let mut it = iterate(&Value::str("hé")).unwrap();
        assert_eq!(it.size_hint(), 2);
        assert_eq!(
            it.next()
                .and_then(|v| v.as_str().map(str::to_string))
                .as_deref(),
            Some("h")
        );
        assert_eq!(
            it.next()
                .and_then(|v| v.as_str().map(str::to_string))
                .as_deref(),
            Some("é")
        );
        assert!(it.next().is_none());
        // Appending during iteration is seen, as in Python.
        let l = Value::list(vec![Value::Int(1)]);
        let mut it = iterate(&l).unwrap();
        let mut seen = 0;
        while let Some(v) = it.next() {
            seen += 1;
            if let (Value::List(inner), Value::Int(n)) = (&l, v) {
                if n < 3 {
                    inner.borrow_mut().push(Value::Int(n + 1));
                }
            }
        }
        assert_eq!(seen, 3);
        assert_eq!(
            iterate(&Value::Int(5)).err().map(|e| e.message),
            Some("'int' object is not iterable".to_string())
        );
        let neg = Value::Range(Rc::new(RangeObj {
            start: 5,
            stop: -1,
            step: -2,
        }));
        let vals: Vec<i64> = collect(&neg)
            .unwrap()
            .into_iter()
            .filter_map(|v| match v {
                Value::Int(i) => Some(i),
                _ => None,
            })
            .collect();
        assert_eq!(vals, vec![5, 3, 1]);
    }
}

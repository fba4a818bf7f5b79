//! Mapping every leaf of a value the caller owns, in place where no one else holds a container.
//!
//! `label::map_leaves` copies: it borrows the value, so every list, dict and record is
//! rebuilt around the mapped leaves and the old tree is freed after. When the caller owns the
//! value and nothing else shares a container (a fresh parse result, say), the containers can
//! be kept and only their slots rewritten; that is what this does, falling back to the copy
//! for a container that is shared, so a value someone else can still see is never changed.

use indexmap::map::MutableKeys;
use indexmap::set::MutableValues;

use crate::labels::label::map_leaves;
use crate::value::Value;

/// `v` with `f` applied to every leaf (anything but a list, tuple, dict, set, record or
/// outcome). Past a nesting depth of 64 the rest is left as it is, as `map_leaves` shares it.
pub fn map_leaves_owned(v: Value, f: &mut dyn FnMut(Value) -> Value) -> Value {
    go(v, 0, f)
}

fn go(mut v: Value, depth: usize, f: &mut dyn FnMut(Value) -> Value) -> Value {
    if depth > 64 {
        return v;
    }
    let d = depth + 1;
    let slot = |x: &mut Value, f: &mut dyn FnMut(Value) -> Value| {
        *x = go(std::mem::take(x), d, f);
    };
    let unshared = match &mut v {
        Value::List(rc) => match std::rc::Rc::get_mut(rc) {
            Some(cell) => {
                for x in cell.get_mut().iter_mut() {
                    slot(x, f);
                }
                true
            }
            None => false,
        },
        Value::Tuple(rc) => match std::rc::Rc::get_mut(rc) {
            Some(xs) => {
                for x in xs.iter_mut() {
                    slot(x, f);
                }
                true
            }
            None => false,
        },
        // A key's hash and equality read through its label, so relabelling a key in place
        // leaves the table valid.
        Value::Dict(rc) => match std::rc::Rc::get_mut(rc) {
            Some(cell) => {
                for (k, x) in cell.get_mut().iter_mut2() {
                    slot(&mut k.0, f);
                    slot(x, f);
                }
                true
            }
            None => false,
        },
        Value::Set(rc) => match std::rc::Rc::get_mut(rc) {
            Some(cell) => {
                let s = cell.get_mut();
                for i in 0..s.len() {
                    if let Some(k) = s.get_index_mut2(i) {
                        slot(&mut k.0, f);
                    }
                }
                true
            }
            None => false,
        },
        Value::Record(rc) => match std::rc::Rc::get_mut(rc) {
            Some(r) => {
                for x in r.fields.get_mut().iter_mut() {
                    slot(x, f);
                }
                true
            }
            None => false,
        },
        Value::Outcome(rc) => match std::rc::Rc::get_mut(rc) {
            Some(o) => {
                slot(&mut o.payload, f);
                true
            }
            None => false,
        },
        _ => return f(v),
    };
    if unshared {
        v
    } else {
        map_leaves(&v, &mut |x| f(x.clone()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Dict, Key};

    fn bump(v: Value) -> Value {
        match v {
            Value::Int(i) => Value::Int(i + 1),
            other => other,
        }
    }

    #[test]
    fn an_unshared_list_is_rewritten_in_place() {
        let v = Value::list(vec![Value::Int(1), Value::list(vec![Value::Int(2)])]);
        let before = match &v {
            Value::List(rc) => std::rc::Rc::as_ptr(rc),
            _ => unreachable!(),
        };
        let out = map_leaves_owned(v, &mut bump);
        let Value::List(rc) = &out else {
            panic!("a list stays a list")
        };
        assert_eq!(std::rc::Rc::as_ptr(rc), before, "the container was kept");
        let xs = rc.borrow();
        assert!(matches!(xs[0], Value::Int(2)));
        let Value::List(inner) = &xs[1] else {
            panic!("nested list")
        };
        assert!(matches!(inner.borrow()[0], Value::Int(3)));
    }

    #[test]
    fn a_shared_container_is_copied_and_the_other_holder_sees_no_change() {
        let inner = Value::list(vec![Value::Int(1)]);
        let other_holder = inner.clone();
        let mut d = Dict::default();
        d.insert(Key(Value::str("k")), inner);
        let out = map_leaves_owned(Value::dict(d), &mut bump);
        let Value::List(seen) = &other_holder else {
            unreachable!()
        };
        assert!(matches!(seen.borrow()[0], Value::Int(1)), "untouched");
        let Value::Dict(m) = &out else {
            panic!("a dict stays a dict")
        };
        let m = m.borrow();
        let Some(Value::List(mapped)) = m.get(&Key(Value::str("k"))) else {
            panic!("the entry is kept")
        };
        assert!(matches!(mapped.borrow()[0], Value::Int(2)));
    }
}

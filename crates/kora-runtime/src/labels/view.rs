//! Views: a list, dict, set or record reached through a label, as a `Labeled` box sharing the container.
//!
//! `label::wrap` makes them; this file says what is one, how a pattern opens one, how a
//! rendering expands one into the copy with labelled leaves it stands for, and when storing
//! one back would be the same container.

use std::rc::Rc;

use crate::labels::label::{map_leaves, wrap};
use crate::value::{Record, Value};

/// Containers that change in place, which a label reaches as a view rather than a copy.
#[inline]
pub(crate) fn is_mutable_container(v: &Value) -> bool {
    matches!(
        v,
        Value::List(_) | Value::Dict(_) | Value::Set(_) | Value::Record(_)
    )
}

/// Whether `new` is a view of the very container `stored` is: storing it there would only
/// put a read's label on the container for every other reader (`d[k] += [x]` through a
/// secret key changes the list in `d` and stores it back; Python stores the same object).
#[inline]
pub(crate) fn is_view_of(new: &Value, stored: &Value) -> bool {
    match new {
        Value::Labeled(_) => viewed(new).is_some() && viewed(new) == container_ptr(stored),
        _ => false,
    }
}

fn container_ptr(v: &Value) -> Option<*const ()> {
    match v {
        Value::List(x) => Some(Rc::as_ptr(x) as *const ()),
        Value::Dict(x) => Some(Rc::as_ptr(x) as *const ()),
        Value::Set(x) => Some(Rc::as_ptr(x) as *const ()),
        Value::Record(x) => Some(Rc::as_ptr(x) as *const ()),
        _ => None,
    }
}

/// The container a view shares, when `v` is one.
pub(crate) fn viewed(v: &Value) -> Option<*const ()> {
    match v {
        Value::Labeled(l) => container_ptr(&l.value),
        _ => None,
    }
}

/// A view of a list or record opened one level: a new container whose elements (fields)
/// are the view's, each carrying its label. For a pattern, which binds the parts; `None` for
/// anything else.
pub(crate) fn opened(v: &Value) -> Option<Value> {
    let Value::Labeled(l) = v else {
        return None;
    };
    let tag = l.tag();
    match &l.value {
        Value::List(xs) => Some(Value::list(
            xs.borrow().iter().map(|x| wrap(x.clone(), tag)).collect(),
        )),
        Value::Record(r) => Some(Value::Record(Rc::new(Record {
            ty: r.ty,
            fields: std::cell::RefCell::new(
                r.fields
                    .borrow()
                    .iter()
                    .map(|x| wrap(x.clone(), tag))
                    .collect(),
            ),
        }))),
        _ => None,
    }
}

/// A copy of `v` in which no view is left: each view's container copied with its label on
/// every leaf, what a rendering shows.
pub(crate) fn expand(v: &Value) -> Value {
    map_leaves(v, &mut |x| x.clone())
}

//! Shape labels: a plain list, dict or set whose size, membership or order a labelled operand decided in place.
//!
//! `xs.extend(secret_part)` that adds nothing, `s.add(secret)` on a set that already holds it,
//! `del xs[:n]` with a secret `n`: afterwards no element carries the label, yet `len(xs)`,
//! `not xs` and where a later item lands depend on the secret. The label has to sit on the
//! container, and every alias of it must see the label, so it cannot live in a `Value` (16
//! bytes, all spoken for) or in one variable. It lives here, in a table keyed by the
//! container's address, and from then on the container reads as a view of itself: `seen`
//! turns it into one wherever a read starts (iteration, indexing, method calls, rendering),
//! and `each_labeled` reports the label as a leaf, so every rule that reads labels deep
//! (size, compare, flatten, gather) sees it.
//!
//! The table holds a `Weak` to each container, which keeps the allocation (not the items)
//! alive, so an address is never reused while its entry exists; dead entries are swept as
//! the table grows. Heaps are per thread (`parallel for` copies values across), so the table
//! is too.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use rustc_hash::FxHashMap;

use crate::labels::label::{boxed, wrap, Labeled, Tag};
use crate::value::list_items::ListItems;
use crate::value::{Dict, Set, Value};

enum Pin {
    List(Weak<RefCell<ListItems>>),
    Dict(Weak<RefCell<Dict>>),
    Set(Weak<RefCell<Set>>),
}

impl Pin {
    fn alive(&self) -> bool {
        match self {
            Pin::List(w) => w.strong_count() > 0,
            Pin::Dict(w) => w.strong_count() > 0,
            Pin::Set(w) => w.strong_count() > 0,
        }
    }
}

struct Entry {
    _pin: Pin,
    /// A box around an empty string carrying the label: what `each_labeled` hands out, and
    /// what a `declassify` of the container marks released (its text sends nothing).
    label: Rc<Labeled>,
}

thread_local! {
    static SHAPES: RefCell<FxHashMap<usize, Entry>> = RefCell::new(FxHashMap::default());
    /// Entries in `SHAPES`; zero in every run that never changed a container by a secret,
    /// so the reads below cost one thread-local load there.
    static COUNT: Cell<usize> = const { Cell::new(0) };
    static SWEEP_AT: Cell<usize> = const { Cell::new(64) };
}

fn address(v: &Value) -> Option<usize> {
    match v {
        Value::List(x) => Some(Rc::as_ptr(x) as *const () as usize),
        Value::Dict(x) => Some(Rc::as_ptr(x) as *const () as usize),
        Value::Set(x) => Some(Rc::as_ptr(x) as *const () as usize),
        _ => None,
    }
}

/// Whether no container has a shape label: the interpreter's inline indexing may then read
/// a list or dict without asking.
#[inline(always)]
pub fn none() -> bool {
    COUNT.with(Cell::get) == 0
}

/// The shape label of a plain list, dict or set, if an in-place change by a labelled operand
/// gave it one.
#[inline]
pub fn tag(v: &Value) -> Option<Tag> {
    if COUNT.with(Cell::get) == 0 {
        return None;
    }
    label_box(v).map(|b| b.tag())
}

/// The box carrying `v`'s shape label, for `each_labeled`.
pub(crate) fn label_box(v: &Value) -> Option<Rc<Labeled>> {
    if COUNT.with(Cell::get) == 0 {
        return None;
    }
    let at = address(v)?;
    let b = SHAPES.with(|s| s.borrow().get(&at).map(|e| e.label.clone()))?;
    // Released with the value it came from: `declassify secret for m:` lets the shape a
    // secret key gave a dict reach `m` inside the block, as it lets the key itself.
    if b.tag().is_classified() && b.release.get() == 0 {
        if let Some(id) = crate::labels::release::open_for_origin(b.secret_from) {
            if let Value::Labeled(r) = boxed(
                Value::str(""),
                Tag {
                    release: id,
                    ..b.tag()
                },
            ) {
                return Some(r);
            }
        }
    }
    Some(b)
}

/// `v` as its readers must see it: a container with a shape label becomes a view of itself
/// (the same container, seen through the label); anything else is returned as it is.
#[inline]
pub fn seen(v: &Value) -> Option<Value> {
    let t = tag(v)?;
    Some(wrap(v.clone(), t))
}

/// `v` as its readers see it: the view `seen` makes, or `v` itself (no copy) when it has no
/// shape label.
pub fn seen_or(v: &Value) -> Cow<'_, Value> {
    match seen(v) {
        Some(view) => Cow::Owned(view),
        None => Cow::Borrowed(v),
    }
}

/// Puts `t` on the shape of `container` (a plain list, dict or set, or a view of one), joined
/// with a shape label it already has. Its items are left as they are: every read of them
/// starts at `seen`, which adds the label when they are read, so a release open at that
/// moment reaches it (a label written into the items now would be an old, unreleased one).
pub fn mark(container: &Value, t: Tag) {
    let container = match container {
        Value::Labeled(l) => &l.value,
        other => other,
    };
    let Some(at) = address(container) else {
        return;
    };
    let old = tag(container);
    let joined = old.map_or(t, |o| o.join(t));
    if old == Some(joined) {
        return;
    }
    let pin = match container {
        Value::List(x) => Pin::List(Rc::downgrade(x)),
        Value::Dict(x) => Pin::Dict(Rc::downgrade(x)),
        Value::Set(x) => Pin::Set(Rc::downgrade(x)),
        _ => return,
    };
    let Value::Labeled(label) = boxed(Value::str(""), joined) else {
        return;
    };
    SHAPES.with(|s| {
        let mut s = s.borrow_mut();
        s.insert(at, Entry { _pin: pin, label });
        if s.len() >= SWEEP_AT.with(Cell::get) {
            s.retain(|_, e| e._pin.alive());
            SWEEP_AT.with(|n| n.set((s.len() * 2).max(64)));
        }
        COUNT.with(|n| n.set(s.len()));
    });
}

/// The label that decides the shape of `target` (a plain list, dict or set) when `rhs` is
/// added to it or taken from it in place (`xs += part`, `s |= other`, `xs.extend(part)`):
/// for a list, the label on `rhs` as a whole (a view, or a shape label), since its items
/// bring their own; for a set or dict, every label inside `rhs`, since whether an item is
/// new there depends on its value.
pub fn decided_by_operand(target: &Value, rhs: &Value) -> Option<Tag> {
    let target = match target {
        Value::Labeled(l) => &l.value,
        other => other,
    };
    match target {
        Value::List(_) => crate::labels::label::join(crate::labels::label::tag_of(rhs), tag(rhs)),
        Value::Dict(_) | Value::Set(_) => crate::labels::label::deep(rhs),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::label::deep;

    #[test]
    fn an_empty_list_marked_reads_labelled_and_its_aliases_too() {
        let xs = Value::list(Vec::new());
        let alias = xs.clone();
        assert!(tag(&xs).is_none());
        mark(&xs, Tag::classified(1));
        assert!(tag(&alias).is_some_and(Tag::is_classified));
        assert!(deep(&alias).is_some_and(Tag::is_classified));
        assert!(matches!(seen(&alias), Some(Value::Labeled(_))));
    }

    #[test]
    fn a_dead_container_leaves_no_label_behind() {
        let d = Value::Dict(Rc::new(RefCell::new(Dict::default())));
        mark(&d, Tag::unverified(2));
        assert!(tag(&d).is_some_and(Tag::is_unverified));
        drop(d);
        // The allocation is pinned, so a new container cannot take the dead one's address.
        let fresh = Value::list(vec![Value::Int(1)]);
        assert!(tag(&fresh).is_none());
    }
}

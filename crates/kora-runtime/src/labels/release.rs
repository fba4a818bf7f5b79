//! Releases: the ids `declassify x for SINK:` writes into the classified boxes of `x` while
//! its block runs, the table of open ones, and the check a sink makes against them.
//!
//! A release is written into boxes in place, so every holder of the same box sees it. An
//! inline labelled scalar (`labels/small.rs`) has no box to write into: before marking, its
//! occurrences are boxed, in place inside the lists, dicts, sets, records and cells of the
//! value, and in a rebuilt copy for the value itself and its tuples and outcomes, which the
//! block stores back where the value came from (`Release::rebuilt`). An inline scalar a
//! release does not reach stays unreleased: refused at the sink, never let through.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::labels::label::{boxed, each_labeled, Labeled, Leaf, Tag};
use crate::value::{Key, Value};

static NEXT_RELEASE: AtomicU32 = AtomicU32::new(1);

/// Active releases: (id, sink name).
static ACTIVE: Mutex<Vec<(u32, String)>> = Mutex::new(Vec::new());

/// Origins of the classified values each open release names: (release id, origin id).
static ORIGINS: Mutex<Vec<(u32, u32)>> = Mutex::new(Vec::new());

fn origins() -> MutexGuard<'static, Vec<(u32, u32)>> {
    ORIGINS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The open release of a value that became classified at `origin`, if any: what releases a
/// shape label (`labels/shape.rs`), which has no value of its own for a `declassify` to
/// name; what it protects is a fact about that value (whether it was already a key).
pub(crate) fn open_for_origin(origin: u32) -> Option<u32> {
    origins()
        .iter()
        .rev()
        .find(|(_, o)| *o == origin)
        .map(|(id, _)| *id)
}

fn active() -> MutexGuard<'static, Vec<(u32, String)>> {
    // A panic while holding the lock leaves the table consistent (each write is one push).
    ACTIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Opens a release of the classified leaves of `v` for `sink`; undone by `Release::end`.
pub fn release(v: &Value, sink: &str) -> Release {
    let id = NEXT_RELEASE.fetch_add(1, Ordering::Relaxed);
    active().push((id, sink.to_string()));
    let rebuilt = box_smalls(v, 0);
    let held = rebuilt.clone().unwrap_or_else(|| v.clone());
    let mut previous = Vec::new();
    let mut named = Vec::new();
    each_labeled(&held, &mut |l| {
        if let Leaf::Boxed(l) = l {
            if l.tag().is_classified() {
                named.push((id, l.secret_from));
                previous.push((l as *const Labeled, l.release.get()));
                l.release.set(id);
            }
        }
    });
    origins().extend(named);
    Release {
        id,
        held,
        rebuilt: rebuilt.is_some(),
        previous,
    }
}

/// An open `declassify` block.
pub struct Release {
    id: u32,
    /// Keeps the released boxes alive, so the pointers in `previous` stay valid.
    held: Value,
    rebuilt: bool,
    previous: Vec<(*const Labeled, u32)>,
}

impl Release {
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The released value, when it had to be rebuilt to box its inline scalars: the block
    /// stores it back in the variable it named, so reads inside the block meet the boxes.
    pub fn rebuilt(&self) -> Option<&Value> {
        self.rebuilt.then_some(&self.held)
    }

    /// Closes the block: the id stops being honoured and the leaves get their old releases.
    pub fn end(self) {
        active().retain(|(id, _)| *id != self.id);
        origins().retain(|(id, _)| *id != self.id);
        each_labeled(&self.held, &mut |l| {
            let Leaf::Boxed(l) = l else {
                return;
            };
            let p = l as *const Labeled;
            if let Some((_, old)) = self.previous.iter().find(|(q, _)| *q == p) {
                if l.release.get() == self.id {
                    l.release.set(*old);
                }
            }
        });
    }
}

/// The sink an active release names, or `None` when the release id is not (or no longer) open.
pub fn released_to(release: u32) -> Option<String> {
    if release == 0 {
        return None;
    }
    active()
        .iter()
        .find(|(id, _)| *id == release)
        .map(|(_, s)| s.clone())
}

/// The first classified part of `v` that no open release lets reach a sink `allows` accepts.
pub fn unreleased(v: &Value, allows: &dyn Fn(&str) -> bool) -> Option<Tag> {
    let mut bad = None;
    each_labeled(v, &mut |l| {
        let tag = l.tag();
        if bad.is_none() && tag.is_classified() {
            // An inline scalar's tag never has a release (`labels/small.rs`): refused here.
            let ok = released_to(tag.release).is_some_and(|s| allows(&s));
            if !ok {
                bad = Some(tag);
            }
        }
    });
    bad
}

/// `v` with every inline labelled scalar in it boxed: mutable containers are changed in place
/// (their identity is what other holders share), and `Some` is a rebuilt `v` when `v` itself
/// (or a tuple or outcome on the way) had to change. `None`: nothing to rebuild at this level.
fn box_smalls(v: &Value, depth: usize) -> Option<Value> {
    if depth > 64 || !crate::labels::label::any() {
        return None;
    }
    let d = depth + 1;
    match v {
        Value::LabeledSmall(s) => Some(boxed(s.plain(), s.tag())),
        Value::Labeled(l) => {
            // A view: its container is changed in place; a boxed scalar is already a box.
            box_smalls(&l.value, d);
            None
        }
        Value::List(xs) => {
            let n = xs.borrow().len();
            for i in 0..n {
                let x = xs.borrow().get(i).cloned();
                if let Some(new) = x.and_then(|x| box_smalls(&x, d)) {
                    if let Ok(mut items) = xs.try_borrow_mut() {
                        items[i] = new;
                    }
                }
            }
            None
        }
        Value::Record(r) => {
            let n = r.fields.borrow().len();
            for i in 0..n {
                let x = r.fields.borrow()[i].clone();
                if let Some(new) = box_smalls(&x, d) {
                    if let Ok(mut fields) = r.fields.try_borrow_mut() {
                        fields[i] = new;
                    }
                }
            }
            None
        }
        Value::Cell(c) => {
            let x = c.borrow().clone();
            if let Some(new) = box_smalls(&x, d) {
                if let Ok(mut slot) = c.try_borrow_mut() {
                    *slot = new;
                }
            }
            None
        }
        Value::Dict(m) => {
            let entries: Vec<(Key, Value)> = m
                .borrow()
                .iter()
                .map(|(k, x)| (k.clone(), x.clone()))
                .collect();
            let mut changed = false;
            let rebuilt: crate::value::Dict = entries
                .into_iter()
                .map(|(k, x)| {
                    let k2 = box_smalls(&k.0, d).map(Key);
                    let x2 = box_smalls(&x, d);
                    changed |= k2.is_some() || x2.is_some();
                    (k2.unwrap_or(k), x2.unwrap_or(x))
                })
                .collect();
            if changed {
                if let Ok(mut slot) = m.try_borrow_mut() {
                    // A boxed key hashes and compares as the inline one: the order and the
                    // lookups are the same.
                    *slot = rebuilt;
                }
            }
            None
        }
        Value::Set(s) => {
            let keys: Vec<Key> = s.borrow().iter().cloned().collect();
            let mut changed = false;
            let rebuilt: crate::value::Set = keys
                .into_iter()
                .map(|k| match box_smalls(&k.0, d) {
                    Some(new) => {
                        changed = true;
                        Key(new)
                    }
                    None => k,
                })
                .collect();
            if changed {
                if let Ok(mut slot) = s.try_borrow_mut() {
                    *slot = rebuilt;
                }
            }
            None
        }
        Value::Tuple(xs) => {
            let parts: Vec<Option<Value>> = xs.iter().map(|x| box_smalls(x, d)).collect();
            if parts.iter().all(Option::is_none) {
                return None;
            }
            Some(Value::tuple(
                parts
                    .into_iter()
                    .zip(xs.iter())
                    .map(|(new, old)| new.unwrap_or_else(|| old.clone()))
                    .collect(),
            ))
        }
        Value::Outcome(o) => box_smalls(&o.payload, d).map(|p| Value::outcome(o.tag, p)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::label::{origin, wrap};

    #[test]
    fn a_release_is_honoured_only_while_open() {
        let secret = wrap(Value::str("s"), Tag::classified(origin("test")));
        let r = release(&secret, "local");
        assert!(unreleased(&secret, &|s| s == "local").is_none());
        assert!(unreleased(&secret, &|s| s == "other").is_some());
        r.end();
        assert!(unreleased(&secret, &|s| s == "local").is_some());
    }

    #[test]
    fn an_inline_secret_is_boxed_to_be_released_and_unreleased_where_the_release_missed() {
        let n = wrap(Value::Int(7), Tag::classified(origin("release test")));
        assert!(matches!(n, Value::LabeledSmall(_)), "small ints are inline");
        let xs = Value::list(vec![n.clone()]);
        let r = release(&Value::tuple(vec![n.clone(), xs.clone()]), "local");
        let Some(Value::Tuple(parts)) = r.rebuilt() else {
            panic!("the tuple was rebuilt around a box")
        };
        assert!(unreleased(&parts[0], &|s| s == "local").is_none());
        // The list was changed in place: every holder of it sees the released box.
        assert!(unreleased(&xs, &|s| s == "local").is_none());
        // The inline copy the release did not reach is still refused.
        assert!(unreleased(&n, &|s| s == "local").is_some());
        r.end();
        assert!(unreleased(&xs, &|s| s == "local").is_some());
    }
}

//! Security labels: `classified` (confidentiality) and `unverified` (integrity) carried on values.
//!
//! A labelled value is `Value::Labeled(Rc<Labeled>)` around a plain value, or, for a small
//! int or bool, `Value::LabeledSmall`: the value and an interned tag id in one word, no box
//! (`labels/small.rs`). Either way the 16-byte `Value` and every fast path that matches
//! `Int`/`Float`/`List` stay as they were: a labelled operand never matches a fast path and
//! falls to the generic one, which splits the label off (`split`, `tag_of`, `deep` answer
//! for both forms), computes on the plain value and puts the join of its operands' labels
//! back on the result. No operation drops a label (architecture invariant 6); the tests in
//! `crates/kora-cli/tests/labels.rs` try to launder one through each operation.
//!
//! Containers keep labels on their elements: `[1, secret]` is a public list holding one
//! classified element, so its length and shape stay public, and reading the element back
//! gives the classified value. An operation that flattens a container into one value (`str`,
//! an f-string, `json.encode`, `"".join`) labels its result with every label inside it.
//!
//! A list, dict, set or record *reached through* a label (`d[secret_key]`, `xs[secret_i]`,
//! `classified(rows)`) is a *view*: a `Labeled` box around the same `Rc`, so a mutation
//! through it reaches the one container every other path sees (`d.setdefault(k, []).append(x)`
//! works as in Python). Everything read through a view carries its label, as if each leaf
//! were labelled; what is written through it is stored as it is, exactly as writing into a
//! copy of the container stored it (DECISIONS.md, "A container reached through a label is a
//! view"). Tuples and outcomes are immutable, so they are rebuilt one level instead, their
//! mutable insides becoming views.
//!
//! Where a label came from (`classified(...)` at main.ko:3:7, `env.get("KEY")`) is an
//! *origin*, interned in a process-wide table so the number crosses threads in a `Portable`.
//! A `declassify x for SINK:` block is a *release*: an id, active while the block runs,
//! written into the classified leaves of `x`; a value derived inside the block keeps the
//! release only if every classified input had it. Once the block ends its id is inactive, so a
//! copy that escaped the block is plainly classified again.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use crate::labels::small::Small;
use crate::labels::view::is_mutable_container;
use crate::value::{Key, Record, Value};

pub use crate::labels::release::{release, released_to, unreleased, Release};

pub const CLASSIFIED: u8 = 1;
pub const UNVERIFIED: u8 = 2;

/// The label of one value: which kinds it carries, where each came from, what releases it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tag {
    pub bits: u8,
    /// Origin id of the confidentiality label (0 when not classified).
    pub secret_from: u32,
    /// Origin id of the integrity label (0 when verified).
    pub untrusted_from: u32,
    /// Id of the `declassify` block that released this value (0: none).
    pub release: u32,
}

impl Tag {
    pub fn classified(origin: u32) -> Tag {
        Tag {
            bits: CLASSIFIED,
            secret_from: origin,
            ..Tag::default()
        }
    }

    pub fn unverified(origin: u32) -> Tag {
        ANY_UNVERIFIED.store(true, Ordering::Relaxed);
        Tag {
            bits: UNVERIFIED,
            untrusted_from: origin,
            ..Tag::default()
        }
    }

    pub fn is_classified(self) -> bool {
        self.bits & CLASSIFIED != 0
    }

    pub fn is_unverified(self) -> bool {
        self.bits & UNVERIFIED != 0
    }

    /// The label of a value computed from two labelled inputs.
    pub fn join(self, other: Tag) -> Tag {
        let release = match (self.is_classified(), other.is_classified()) {
            (true, true) if self.release == other.release => self.release,
            (true, true) => 0,
            (true, false) => self.release,
            (false, true) => other.release,
            (false, false) => 0,
        };
        Tag {
            bits: self.bits | other.bits,
            secret_from: if self.secret_from != 0 {
                self.secret_from
            } else {
                other.secret_from
            },
            untrusted_from: if self.untrusted_from != 0 {
                self.untrusted_from
            } else {
                other.untrusted_from
            },
            release,
        }
    }

    /// This label without its integrity part: what a parse into a type leaves behind.
    pub fn verified(self) -> Tag {
        Tag {
            bits: self.bits & !UNVERIFIED,
            untrusted_from: 0,
            ..self
        }
    }
}

/// Joins two optional labels.
pub fn join(a: Option<Tag>, b: Option<Tag>) -> Option<Tag> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.join(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

/// The heap part of `Value::Labeled`. `value` is never itself `Labeled`.
pub struct Labeled {
    pub bits: u8,
    pub secret_from: u32,
    pub untrusted_from: u32,
    /// Written in place by a `declassify` block and restored when it ends.
    pub release: Cell<u32>,
    pub value: Value,
}

impl Labeled {
    pub fn tag(&self) -> Tag {
        Tag {
            bits: self.bits,
            secret_from: self.secret_from,
            untrusted_from: self.untrusted_from,
            release: self.release.get(),
        }
    }
}

static PLACEHOLDER: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// What a rendering shows in place of a classified value (`[output] classified` in kora.toml).
pub fn placeholder() -> &'static str {
    PLACEHOLDER.get().map_or("__CLASSIFIED__", String::as_str)
}

/// Sets the placeholder once per process, from the project's configuration.
pub fn set_placeholder(text: &str) {
    let _ = PLACEHOLDER.set(text.to_string());
}

/// Set once any label exists in the process, so plain programs skip every deep scan.
static ANY: AtomicBool = AtomicBool::new(false);

/// Whether any value has ever been labelled in this process.
#[inline(always)]
pub fn any() -> bool {
    ANY.load(Ordering::Relaxed)
}

/// Set once any unverified label exists: only then can `if name in POOL:` narrow anything,
/// so until then a run with secrets skips the allowlist check on every `if`. Set where an
/// integrity label is made (`Tag::unverified`) and where one is put on a value (`wrap`,
/// `boxed`, which a label crossing threads or a journal also goes through).
static ANY_UNVERIFIED: AtomicBool = AtomicBool::new(false);

/// Whether any value has ever been labelled unverified in this process.
#[inline(always)]
pub fn any_unverified() -> bool {
    ANY_UNVERIFIED.load(Ordering::Relaxed)
}

/// Puts `tag` on `v` (joined with a label it already has).
///
/// A list, dict, set or record gets a view (the box shares the container); a tuple or an
/// outcome is rebuilt one level with each part wrapped, so shape stays public and every
/// consumer of elements (a loop, a callback, a pattern) meets the label on what it reads.
pub fn wrap(v: Value, tag: Tag) -> Value {
    if tag.bits == 0 {
        return v;
    }
    ANY.store(true, Ordering::Relaxed);
    if tag.is_unverified() {
        ANY_UNVERIFIED.store(true, Ordering::Relaxed);
    }
    // A plain scalar (`str(secret)`, an element picked by a secret index) is most of what
    // gets labelled: it has no parts and no label to join, so it goes straight into its box
    // (or inline) without the frame the containers need.
    if is_scalar(&v) {
        return boxed_or_small(v, tag);
    }
    wrap_other(v, tag)
}

/// `wrap` of anything but a plain scalar: views, rebuilt tuples, joins with a label `v`
/// already has.
#[inline(never)]
fn wrap_other(v: Value, tag: Tag) -> Value {
    match &v {
        // An empty tuple has no part to carry the label, yet that it is empty may be
        // exactly what the label protects (`tuple(secret_part)`): it is boxed instead.
        Value::Tuple(xs) if xs.is_empty() => return boxed(v, tag),
        Value::Tuple(xs) => return Value::tuple(xs.iter().map(|x| wrap(x.clone(), tag)).collect()),
        Value::Outcome(o) => return Value::outcome(o.tag, wrap(o.payload.clone(), tag)),
        Value::Cell(c) => {
            let inner = c.borrow().clone();
            return wrap(inner, tag);
        }
        _ => {}
    }
    let (inner, tag) = match v {
        // Already carrying everything `tag` adds: the same box serves, as a copy of the
        // value would (`d.get(secret_key)` on a secret count allocates nothing).
        Value::Labeled(l) if l.tag().join(tag) == l.tag() => return Value::Labeled(l),
        Value::Labeled(l) => (l.value.clone(), l.tag().join(tag)),
        Value::LabeledSmall(s) if s.tag().join(tag) == s.tag() => return v,
        Value::LabeledSmall(s) => (s.plain(), s.tag().join(tag)),
        other => (other, tag),
    };
    boxed_or_small(inner, tag)
}

/// `inner` (plain) labelled `tag`: inline when it is a small int or bool and the tag can be
/// interned, in a box otherwise.
#[inline]
pub(crate) fn boxed_or_small(inner: Value, tag: Tag) -> Value {
    if let Some(s) = Small::new(&inner, tag) {
        return Value::LabeledSmall(s);
    }
    boxed(inner, tag)
}

/// `inner` (plain) in a new `Labeled` box with `tag`, never inline: what a release marks.
pub(crate) fn boxed(inner: Value, tag: Tag) -> Value {
    if tag.is_unverified() {
        ANY_UNVERIFIED.store(true, Ordering::Relaxed);
    }
    Value::Labeled(Rc::new(Labeled {
        bits: tag.bits,
        secret_from: tag.secret_from,
        untrusted_from: tag.untrusted_from,
        release: Cell::new(tag.release),
        value: inner,
    }))
}

/// Puts an optional label on `v`.
#[inline]
pub fn wrap_opt(v: Value, tag: Option<Tag>) -> Value {
    match tag {
        Some(t) => wrap(v, t),
        None => v,
    }
}

/// A plain value seen through a label: borrowed from a box, or an inline scalar's own copy.
/// An inline int or bool has no plain value in memory to borrow; its copy owns nothing, so
/// `Plain` has no drop to call (the sort comparators make millions of these).
pub enum Plain<'a> {
    Borrowed(&'a Value),
    Scalar(std::mem::ManuallyDrop<Value>),
}

impl Plain<'_> {
    #[inline(always)]
    fn scalar(s: Small) -> Plain<'static> {
        Plain::Scalar(std::mem::ManuallyDrop::new(s.plain()))
    }

    /// The plain value as an owned `Value`.
    #[inline]
    pub fn into_owned(self) -> Value {
        match self {
            Plain::Borrowed(v) => v.clone(),
            Plain::Scalar(v) => std::mem::ManuallyDrop::into_inner(v),
        }
    }
}

impl std::ops::Deref for Plain<'_> {
    type Target = Value;

    #[inline(always)]
    fn deref(&self) -> &Value {
        match self {
            Plain::Borrowed(v) => v,
            Plain::Scalar(v) => v,
        }
    }
}

/// The plain value and its own (shallow) label.
#[inline]
pub fn split(v: &Value) -> (Plain<'_>, Option<Tag>) {
    match v {
        Value::Labeled(l) => (Plain::Borrowed(&l.value), Some(l.tag())),
        Value::LabeledSmall(s) => (Plain::scalar(*s), Some(s.tag())),
        other => (Plain::Borrowed(other), None),
    }
}

/// The plain value, its label dropped: only for computing a result that gets the label back.
#[inline]
pub fn plain(v: &Value) -> Plain<'_> {
    match v {
        Value::Labeled(l) => Plain::Borrowed(&l.value),
        Value::LabeledSmall(s) => Plain::scalar(*s),
        other => Plain::Borrowed(other),
    }
}

/// The value's own (shallow) label, in either form: what every "is this labelled?" asks.
#[inline]
pub fn tag_of(v: &Value) -> Option<Tag> {
    match v {
        Value::Labeled(l) => Some(l.tag()),
        Value::LabeledSmall(s) => Some(s.tag()),
        _ => None,
    }
}

/// Whether `v` carries a label of its own (boxed or inline), without building the tag.
#[inline(always)]
pub fn is_labeled(v: &Value) -> bool {
    matches!(v, Value::Labeled(_) | Value::LabeledSmall(_))
}

/// Every label anywhere inside `v` (its own, its elements', its fields'), joined.
#[inline]
pub fn deep(v: &Value) -> Option<Tag> {
    // Scalars answer without the walk: f-string fields and flattened arguments are mostly
    // these, and a labelled box holds a scalar whenever `wrap` made it.
    match v {
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_) => None,
        Value::Labeled(l) if is_scalar(&l.value) => Some(l.tag()),
        Value::LabeledSmall(s) => Some(s.tag()),
        _ => deep_walk(v),
    }
}

/// Values that hold no other value.
#[inline]
pub(crate) fn is_scalar(v: &Value) -> bool {
    matches!(
        v,
        Value::None | Value::Bool(_) | Value::Int(_) | Value::Float(_) | Value::Str(_)
    )
}

fn deep_walk(v: &Value) -> Option<Tag> {
    let mut acc = None;
    each_labeled(v, &mut |l| acc = join(acc, Some(l.tag())));
    acc
}

/// A labelled part of a value, as `each_labeled` meets it: a box, or an inline scalar.
#[derive(Clone, Copy)]
pub enum Leaf<'a> {
    Boxed(&'a Labeled),
    Small(Small),
}

impl Leaf<'_> {
    pub fn tag(self) -> Tag {
        match self {
            Leaf::Boxed(l) => l.tag(),
            Leaf::Small(s) => s.tag(),
        }
    }

    pub fn is_classified(self) -> bool {
        self.tag().is_classified()
    }

    /// The plain value under the label.
    pub fn plain(&self) -> Plain<'_> {
        match self {
            Leaf::Boxed(l) => Plain::Borrowed(&l.value),
            Leaf::Small(s) => Plain::scalar(*s),
        }
    }
}

/// Calls `f` on every labelled part of `v`, boxed or inline.
pub fn each_labeled(v: &Value, f: &mut dyn FnMut(Leaf<'_>)) {
    // A list that contains itself is legal; its labels are all met before this depth.
    fn go(v: &Value, depth: usize, f: &mut dyn FnMut(Leaf<'_>)) {
        if depth > 64 {
            return;
        }
        match v {
            Value::Labeled(l) => {
                f(Leaf::Boxed(l));
                go(&l.value, depth + 1, f);
            }
            Value::LabeledSmall(s) => f(Leaf::Small(*s)),
            Value::List(xs) => {
                if let Some(b) = crate::labels::shape::label_box(v) {
                    f(Leaf::Boxed(&b));
                }
                xs.borrow().iter().for_each(|x| go(x, depth + 1, f))
            }
            Value::Tuple(xs) => xs.iter().for_each(|x| go(x, depth + 1, f)),
            Value::Dict(d) => {
                if let Some(b) = crate::labels::shape::label_box(v) {
                    f(Leaf::Boxed(&b));
                }
                for (k, x) in d.borrow().iter() {
                    go(&k.0, depth + 1, f);
                    go(x, depth + 1, f);
                }
            }
            Value::Set(s) => {
                if let Some(b) = crate::labels::shape::label_box(v) {
                    f(Leaf::Boxed(&b));
                }
                s.borrow().iter().for_each(|k| go(&k.0, depth + 1, f))
            }
            Value::Record(r) => r.fields.borrow().iter().for_each(|x| go(x, depth + 1, f)),
            Value::Outcome(o) => go(&o.payload, depth + 1, f),
            Value::Method(m) => go(&m.0, depth + 1, f),
            Value::Cell(c) => go(&c.borrow(), depth + 1, f),
            _ => {}
        }
    }
    if any() {
        go(v, 0, f);
    }
}

/// A copy of `v` with `f` applied to every leaf (anything but a list, tuple, dict, set,
/// record or outcome), the containers rebuilt around the results. A view is copied as the
/// container it shares with its label on each leaf `f` sees. Past a nesting depth of 64 (a
/// list that contains itself) the rest is shared, not copied.
pub fn map_leaves(v: &Value, f: &mut dyn FnMut(&Value) -> Value) -> Value {
    fn go(v: &Value, depth: usize, f: &mut dyn FnMut(&Value) -> Value) -> Value {
        if depth > 64 {
            return v.clone();
        }
        let d = depth + 1;
        match v {
            Value::Labeled(l) if is_mutable_container(&l.value) => {
                let tag = l.tag();
                go(&l.value, d, &mut |x: &Value| f(&wrap(x.clone(), tag)))
            }
            Value::List(xs) => Value::list(xs.borrow().iter().map(|x| go(x, d, f)).collect()),
            Value::Tuple(xs) => Value::tuple(xs.iter().map(|x| go(x, d, f)).collect()),
            Value::Dict(m) => Value::dict(
                m.borrow()
                    .iter()
                    .map(|(k, x)| (Key(go(&k.0, d, f)), go(x, d, f)))
                    .collect(),
            ),
            Value::Set(s) => Value::set(s.borrow().iter().map(|k| Key(go(&k.0, d, f))).collect()),
            Value::Record(rec) => Value::Record(Rc::new(Record {
                ty: rec.ty,
                fields: std::cell::RefCell::new(
                    rec.fields.borrow().iter().map(|x| go(x, d, f)).collect(),
                ),
            })),
            Value::Outcome(o) => Value::outcome(o.tag, go(&o.payload, d, f)),
            leaf => f(leaf),
        }
    }
    go(v, 0, f)
}

/// A copy of `v` with every label removed, sharing whatever held none.
///
/// Only for computing a result that is then labelled with `deep(v)`, or for a sink that
/// has already checked the labels (a model the value was released to).
pub fn reveal(v: &Value) -> Value {
    match v {
        Value::Labeled(l) if is_scalar(&l.value) => return l.value.clone(),
        Value::LabeledSmall(s) => return s.plain(),
        _ => {}
    }
    if deep(v).is_none() {
        return v.clone();
    }
    map_leaves(v, &mut |x| plain(x).into_owned())
}

/// `v` with every string inside it labelled `tag`, and nothing else: what a parse of
/// unverified text into a type leaves unverified (numbers and booleans were narrowed).
pub fn on_strings(v: Value, tag: Tag) -> Value {
    crate::labels::leaves_owned::map_leaves_owned(v, &mut |x| match x {
        Value::Str(_) => wrap(x, tag),
        other => other,
    })
}

/// An error raised while computing on a secret's plain value: its message could quote the
/// secret (`invalid literal for int(): 'hunter2'`), so it is replaced when the inputs were
/// classified. Error messages are a sink like any other output.
pub fn withhold(mut e: Box<crate::error::RtError>, tag: Option<Tag>) -> Box<crate::error::RtError> {
    if let Some(t) = tag.filter(|t| t.is_classified()) {
        e.message = format!(
            "an operation on {} failed; its message is withheld because it would show the classified value",
            origin_text(t.secret_from)
        );
    }
    e
}

/// Process-wide tables: origins are interned descriptions.
struct Tables {
    /// Few: one per `classified(...)` site and per input source that labels.
    origins: Vec<String>,
}

static TABLES: Mutex<Tables> = Mutex::new(Tables {
    origins: Vec::new(),
});

fn tables() -> std::sync::MutexGuard<'static, Tables> {
    // A panic while holding the lock leaves the tables consistent (each write is one push).
    TABLES.lock().unwrap_or_else(|e| e.into_inner())
}

/// The id of an origin description such as "`classified(...)` at main.ko:3:7".
pub fn origin(description: &str) -> u32 {
    let mut t = tables();
    if let Some(i) = t.origins.iter().position(|o| o == description) {
        return i as u32 + 1;
    }
    t.origins.push(description.to_string());
    t.origins.len() as u32
}

/// The description of an origin id, for messages.
pub fn origin_text(id: u32) -> String {
    let t = tables();
    match id.checked_sub(1).and_then(|i| t.origins.get(i as usize)) {
        Some(s) => s.clone(),
        None => "a classified value".to_string(),
    }
}

/// Texts of classified values a release let reach a model: scrubbed from files that record
/// the exchange (cassettes).
static SENT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Remembers the text of a released secret that was sent to a model.
pub fn note_sent(text: String) {
    let mut s = SENT.lock().unwrap_or_else(|e| e.into_inner());
    if !text.is_empty() && !s.contains(&text) {
        // Longest first, so a secret that contains another is replaced whole.
        s.push(text);
        s.sort_by_key(|t| std::cmp::Reverse(t.len()));
    }
}

/// `text` with every released secret it quotes replaced by the placeholder. JSON text quotes
/// strings with escapes, so the escaped form is replaced too.
pub fn scrub(text: &str) -> String {
    let s = SENT.lock().unwrap_or_else(|e| e.into_inner());
    let mut out = text.to_string();
    for secret in s.iter() {
        out = out.replace(secret.as_str(), placeholder());
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        let inner = escaped.trim_matches('"');
        if inner != secret {
            out = out.replace(inner, placeholder());
        }
    }
    out
}

/// The first unverified part of `v`, if any.
pub fn untrusted(v: &Value) -> Option<Tag> {
    let mut bad = None;
    each_labeled(v, &mut |l| {
        if bad.is_none() && l.tag().is_unverified() {
            bad = Some(l.tag());
        }
    });
    bad
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::labels::view::{expand, viewed};

    #[test]
    fn join_keeps_both_kinds_and_a_release_only_when_shared() {
        let a = Tag {
            release: 4,
            ..Tag::classified(1)
        };
        let b = Tag::unverified(2);
        let j = a.join(b);
        assert!(j.is_classified() && j.is_unverified());
        assert_eq!((j.secret_from, j.untrusted_from, j.release), (1, 2, 4));
        let c = Tag {
            release: 5,
            ..Tag::classified(3)
        };
        assert_eq!(a.join(c).release, 0);
        assert_eq!(a.join(a).release, 4);
    }

    #[test]
    fn wrapping_twice_joins_instead_of_nesting() {
        let v = wrap(Value::Int(3), Tag::classified(1));
        let v = wrap(v, Tag::unverified(2));
        let (inner, tag) = split(&v);
        assert!(matches!(*inner, Value::Int(3)));
        let tag = tag.expect("labelled");
        assert!(tag.is_classified() && tag.is_unverified());
    }

    #[test]
    fn deep_finds_labels_inside_containers_and_reveal_removes_them() {
        let secret = wrap(Value::str("s"), Tag::classified(origin("test")));
        let v = Value::list(vec![Value::Int(1), Value::tuple(vec![secret])]);
        assert!(deep(&v).is_some_and(Tag::is_classified));
        assert!(deep(&reveal(&v)).is_none());
    }

    #[test]
    fn a_labelled_list_is_a_view_of_the_same_list() {
        let xs = Value::list(vec![Value::Int(1)]);
        let view = wrap(xs.clone(), Tag::classified(origin("test")));
        let (inner, tag) = split(&view);
        let (Value::List(a), Value::List(b), Some(tag)) = (&xs, &*inner, tag) else {
            panic!("a labelled box around the list")
        };
        assert!(Rc::ptr_eq(a, b) && tag.is_classified());
        b.borrow_mut().push(Value::Int(2));
        assert_eq!(a.borrow().len(), 2, "the push reached the shared list");
        // Rendered and revealed as the copy with labelled leaves used to be.
        let shown = expand(&view);
        let Value::List(c) = &shown else {
            panic!("a list")
        };
        assert!(c.borrow().iter().all(|x| split(x).1.is_some()));
        assert!(deep(&reveal(&view)).is_none());
    }

    #[test]
    fn a_labelled_tuple_is_rebuilt_with_views_inside() {
        let inner = Value::list(vec![]);
        let t = wrap(
            Value::tuple(vec![Value::Int(1), inner.clone()]),
            Tag::classified(origin("test")),
        );
        let Value::Tuple(parts) = &t else {
            panic!("still a tuple")
        };
        assert!(split(&parts[0]).1.is_some());
        assert_eq!(viewed(&parts[1]), viewed(&wrap(inner, Tag::classified(1))));
    }
}

//! How calls treat labels: the one place the propagation table of `docs/labels.md` is
//! written as code, for built-ins, methods, standard-library functions and f-strings.
//!
//! Each call has one mode, the row of the table it belongs to. *Through*: arguments are
//! passed as they are, because the callee stores them or walks them with `iterate` (which
//! labels what it yields): `list`, `xs.append`, `Ok(...)`. *Strip*: a scalar argument's label
//! is taken off, the result gets it back: `abs(n)`, `secret.upper()`, `range(n)`. *Flatten*:
//! the callee turns a structure into one value (`str(xs)`, `",".join(xs)`, `json.encode`), so
//! every label inside goes onto the result. *Size*: the answer is a size, a truth or a
//! position read from a container (`len`, `bool`, `xs.index`, `xs.count`): it depends on how
//! many parts there are, which a container built from a secret's parts carries only on those
//! parts, so every label inside joins the result. *Narrow*: a parse into a type (`int(text)`)
//! keeps confidentiality, reads as Size does and drops `unverified`. *Gather*: a selection or
//! a fold over elements (`min`, `max`, `sum`, `any`, `all`): every label inside the arguments
//! joins the result, whichever element was picked. *Shape*: `type` strips a scalar's label
//! and reads a view for its type, which does not depend on what it holds. Orders are the
//! sort's own rule (`methods/sort.rs`): items placed by labelled keys carry the keys' labels.
//! `print` is none of these: it is a sink, and renders classified leaves as the placeholder.

use kora_check::hir::{BuiltinId, Sym};

use crate::error::RtResult;
use crate::eval::builtins::id;
use crate::labels::label::{self, Tag};
use crate::value::caller::Caller;
use crate::value::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Through,
    Strip,
    Flatten,
    Narrow,
    Size,
    Gather,
    Shape,
}

fn builtin_mode(b: BuiltinId) -> Mode {
    match b.0 {
        id::STR | id::REPR => Mode::Flatten,
        id::INT | id::FLOAT | id::BOOL => Mode::Narrow,
        // `hash` of a tuple reads every element, as a size reads every part.
        id::LEN | id::HASH => Mode::Size,
        id::MIN | id::MAX | id::SUM | id::ANY | id::ALL => Mode::Gather,
        id::ISINSTANCE | id::TYPE => Mode::Shape,
        id::ABS
        | id::ROUND
        | id::ORD
        | id::CHR
        | id::DIVMOD
        | id::POW
        | id::HEX
        | id::OCT
        | id::BIN
        | id::RANGE
        | id::REMAINING
        | id::REVERSED => Mode::Strip,
        _ => Mode::Through,
    }
}

/// Built-ins whose result is a container (or an iterator) with one item per item of their
/// iterable arguments: `list`, `tuple`, `set`, `dict`, `sorted`, `zip`, `enumerate`, `map`,
/// `filter` (the build row of the table, for copies).
fn builds_from_iterables(b: BuiltinId) -> bool {
    matches!(
        b.0,
        id::LIST
            | id::TUPLE
            | id::SET
            | id::DICT
            | id::SORTED
            | id::ZIP
            | id::ENUMERATE
            | id::MAP
            | id::FILTER
    )
}

/// Calls a built-in with labelled arguments handled by its mode.
pub(crate) fn builtin(
    ctx: &mut dyn Caller,
    b: BuiltinId,
    args: Vec<Value>,
    kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let mode = builtin_mode(b);
    if !label::any() {
        return crate::eval::builtins::call_plain(ctx, b, args, kwargs);
    }
    if mode == Mode::Through {
        if builds_from_iterables(b) {
            // The copy's length is the source's: a source seen through a label (a view, a
            // labelled string, a shape label) gives a copy seen through it, even an empty one.
            let mut tag = None;
            for v in &args {
                tag = label::join(
                    tag,
                    label::join(label::tag_of(v), crate::labels::shape::tag(v)),
                );
            }
            let r = crate::eval::builtins::call_plain(ctx, b, args, kwargs)
                .map_err(|e| label::withhold(e, tag))?;
            return Ok(label::wrap_opt(r, tag));
        }
        return crate::eval::builtins::call_plain(ctx, b, args, kwargs);
    }
    apply(mode, args, kwargs, |a, k| {
        crate::eval::builtins::call_plain(ctx, b, a, k)
    })
}

/// Runs `f` on the arguments as `mode` says, and labels its result.
pub(crate) fn apply(
    mode: Mode,
    mut args: Vec<Value>,
    kwargs: Vec<(Sym, Value)>,
    f: impl FnOnce(Vec<Value>, Vec<(Sym, Value)>) -> RtResult<Value>,
) -> RtResult<Value> {
    // One labelled scalar (`str(secret)`, `abs(n)`): every mode but through reads it as its
    // plain value and puts its own label on the result, which is what the general loop
    // below does for it (its deep label is its own), without the loop's walks and copies.
    if let ([one], true, false) = (
        args.as_mut_slice(),
        kwargs.is_empty(),
        mode == Mode::Through,
    ) {
        if let Some(tag) = label::tag_of(one).filter(|_| is_scalar_leaf(one)) {
            *one = label::plain(one).into_owned();
            let r = f(args, kwargs).map_err(|e| label::withhold(e, Some(tag)))?;
            let tag = if mode == Mode::Narrow {
                tag.verified()
            } else {
                tag
            };
            return Ok(label::wrap(r, tag));
        }
    }
    let labelled = |v: &Value| match mode {
        Mode::Flatten | Mode::Size | Mode::Narrow | Mode::Gather => label::deep(v).is_some(),
        _ => label::is_labeled(v),
    };
    if !args.iter().any(labelled) && !kwargs.iter().any(|(_, v)| labelled(v)) {
        return f(args, kwargs);
    }
    apply_labelled(mode, args, kwargs, f)
}

/// `apply` once a label is among the arguments, other than one labelled scalar: out of line,
/// so `str(secret)` and `str(plain)` do not pay this frame's setup.
#[inline(never)]
fn apply_labelled(
    mode: Mode,
    args: Vec<Value>,
    kwargs: Vec<(Sym, Value)>,
    f: impl FnOnce(Vec<Value>, Vec<(Sym, Value)>) -> RtResult<Value>,
) -> RtResult<Value> {
    let mut tag: Option<Tag> = None;
    let mut take = |v: Value| -> Value {
        match mode {
            Mode::Flatten => {
                tag = label::join(tag, label::deep(&v));
                label::reveal(&v)
            }
            Mode::Size | Mode::Narrow => {
                tag = label::join(tag, label::deep(&v));
                shallow_plain(v)
            }
            Mode::Gather => {
                tag = label::join(tag, label::deep(&v));
                v
            }
            Mode::Shape => match v {
                Value::Labeled(l) if crate::labels::view::is_mutable_container(&l.value) => {
                    l.value.clone()
                }
                other => strip(other, &mut tag),
            },
            Mode::Strip => strip(v, &mut tag),
            Mode::Through => v,
        }
    };
    let args: Vec<Value> = args.into_iter().map(&mut take).collect();
    let kwargs: Vec<(Sym, Value)> = kwargs.into_iter().map(|(k, v)| (k, take(v))).collect();
    let r = f(args, kwargs).map_err(|e| label::withhold(e, tag))?;
    let tag = match (mode, tag) {
        (Mode::Narrow, Some(t)) => Some(t.verified()),
        (_, t) => t,
    };
    Ok(label::wrap_opt(r, tag))
}

/// `v` without its own label: a view's container, a labelled scalar's plain value. What it
/// holds keeps its labels.
fn shallow_plain(v: Value) -> Value {
    match v {
        Value::Labeled(l) => l.value.clone(),
        Value::LabeledSmall(s) => s.plain(),
        other => other,
    }
}

/// A size or a truth read from `v` (`len(v)`, `not v`, `xs.index(x)`): `r` with every label
/// inside `v` joined on, once labels exist. Plain runs pay one load.
#[inline]
pub(crate) fn sized(v: &Value, r: Value) -> Value {
    if !label::any() {
        return r;
    }
    label::wrap_opt(r, label::deep(v))
}

/// `v` without its own label, which is joined into `tag`.
fn strip(v: Value, tag: &mut Option<Tag>) -> Value {
    match label::split(&v) {
        (inner, Some(t)) => {
            *tag = label::join(*tag, Some(t));
            inner.into_owned()
        }
        (_, None) => v,
    }
}

/// The mode of a method call on `recv`: strings flatten (`join`, `format` read elements),
/// labelled scalars strip, containers pass arguments through (they store them) and label
/// the result with the arguments' own labels (`d.get(secret)` is as secret as the key).
pub(crate) fn method_mode(recv: &Value) -> Mode {
    match &*label::plain(recv) {
        Value::Str(_) => Mode::Flatten,
        Value::List(_) | Value::Dict(_) | Value::Set(_) | Value::Tuple(_) => Mode::Through,
        _ => Mode::Strip,
    }
}

/// The label a container method's result gets from its arguments (Through mode).
pub(crate) fn argument_labels(args: &[Value], kwargs: &[(Sym, Value)]) -> Option<Tag> {
    let mut tag = None;
    for v in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
        tag = label::join(tag, label::tag_of(v));
    }
    tag
}

/// The label that decides the shape of `recv` (a list, dict or set, or a view of one) when
/// method `name` changes it in place with these arguments: the shape row of the table.
/// `xs.extend(part)` and `xs += part` grow by as many items as `part` holds; `s.add(x)`,
/// `s.discard(x)`, `d.setdefault(k)`, `d.pop(k)`, `xs.remove(x)` change the size or not by
/// whether `x` is there; `xs.insert(i, x)` and `xs.pop(i)` move items by `i`. `append` and
/// the stored value of `insert`/`setdefault` decide nothing: the size grows by one whatever
/// they are, and they keep their own labels.
pub(crate) fn shape_decided(
    recv: &Value,
    name: Sym,
    args: &[Value],
    kw: &[(Sym, Value)],
) -> Option<Tag> {
    use kora_check::hir::sym;
    let first = args.first();
    let deep_all = || {
        let mut t = None;
        for v in args.iter().chain(kw.iter().map(|(_, v)| v)) {
            t = label::join(t, label::deep(v));
        }
        t
    };
    match (&*label::plain(recv), name) {
        (Value::List(_), sym::EXTEND) => {
            first.and_then(|a| crate::labels::shape::decided_by_operand(recv, a))
        }
        (Value::List(_), sym::INSERT | sym::POP) => first.and_then(label::tag_of),
        (Value::List(_), sym::REMOVE) => first.and_then(label::deep),
        (Value::Dict(_), sym::UPDATE) => deep_all(),
        (Value::Dict(_), sym::POP | sym::SETDEFAULT) => first.and_then(label::deep),
        (Value::Set(_), sym::ADD | sym::DISCARD | sym::REMOVE | sym::UPDATE) => deep_all(),
        _ => None,
    }
}

/// Whether method `name` answers a size, a position or a relation of its receiver when the
/// receiver is a container (the size row): `index`, `count`, `issubset`, `issuperset`,
/// `isdisjoint`. On a string they are string methods, already flattened.
pub(crate) fn is_size_method(name: Sym) -> bool {
    use kora_check::hir::sym;
    matches!(
        name,
        sym::INDEX | sym::COUNT | sym::ISSUBSET | sym::ISSUPERSET | sym::ISDISJOINT
    )
}

/// Every label inside a receiver and its arguments, joined.
pub(crate) fn deep_operands(recv: &Value, args: &[Value], kwargs: &[(Sym, Value)]) -> Option<Tag> {
    let mut tag = label::deep(recv);
    for v in args.iter().chain(kwargs.iter().map(|(_, v)| v)) {
        tag = label::join(tag, label::deep(v));
    }
    tag
}

/// Whether any argument holds a label anywhere inside it (what flatten mode reads).
pub(crate) fn any_deep(args: &[Value], kwargs: &[(Sym, Value)]) -> bool {
    args.iter()
        .chain(kwargs.iter().map(|(_, v)| v))
        .any(|v| label::deep(v).is_some())
}

impl crate::eval::interp::Interp<'_> {
    /// `d.get(key[, default])` on a plain dict once labels exist. A scalar key (plain or
    /// labelled) is looked up here, and the result labelled as `call_method_labeled`'s
    /// through mode labels it: the join of the key's and the default's own labels, in that
    /// order. A labelled key hashes and compares as its plain value (`value::hash_value`,
    /// `compare::eq`), so the lookup is the general path's. Anything else takes that path.
    #[inline(never)]
    pub(crate) fn dict_get(
        &mut self,
        recv: &Value,
        key: Value,
        default: Option<Value>,
    ) -> RtResult<Value> {
        if let (Value::Dict(d), true) = (recv, scalar_key(&key)) {
            let from_args = label::join(
                label::tag_of(&key),
                default.as_ref().and_then(label::tag_of),
            );
            let found = d.borrow().get(&crate::value::Key(key)).cloned();
            let r = found.unwrap_or_else(|| default.unwrap_or_default());
            // A count stored under a secret key usually carries that key's label already
            // (`counts[w] = counts.get(w, 0) + 1`): `wrap` would return it unchanged.
            if from_args.is_some() && label::tag_of(&r) == from_args {
                return Ok(r);
            }
            return Ok(label::wrap_opt(r, from_args));
        }
        let pos = match default {
            None => vec![key],
            Some(x) => vec![key, x],
        };
        self.call_method(recv, kora_check::hir::sym::GET, pos, Vec::new())
    }
}

/// Whether `key` is an int or a string, plain or labelled: a dict key whose hash and
/// equality are its plain value's and which can never be unhashable.
#[inline]
pub(crate) fn scalar_key(key: &Value) -> bool {
    match key {
        Value::Int(_) | Value::Str(_) | Value::LabeledSmall(_) => true,
        Value::Labeled(l) => matches!(l.value, Value::Int(_) | Value::Str(_)),
        _ => false,
    }
}

/// Whether `v` is a labelled scalar (inline, or a box around a scalar): its own label is
/// its only one.
#[inline]
fn is_scalar_leaf(v: &Value) -> bool {
    match v {
        Value::LabeledSmall(_) => true,
        Value::Labeled(l) => label::is_scalar(&l.value),
        _ => false,
    }
}

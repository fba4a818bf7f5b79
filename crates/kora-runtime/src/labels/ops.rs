//! Operators on labelled operands: arithmetic and comparison computed on the plain values,
//! with the joined label put back on the result without the generic wrap's detours.
//!
//! The generic rule (`label.rs`) is split, compute, wrap: every labelled result is a fresh
//! `Labeled` box. In a loop over secret numbers most operands are temporaries nothing else
//! holds (`fib(n - 1) + fib(n - 2)`, `(seed * a + c) % m`), so the result can live in an
//! operand's box when that box already carries exactly the result's label: same bits, same
//! origins, same release. The label is then the one `join` would have produced, so nothing
//! about transitivity changes; only an allocation and a free are saved.

use std::cell::Cell;
use std::rc::Rc;

use kora_syntax::ast::{BinOp, CmpOp};

use crate::error::RtResult;
use crate::labels::label::{self, is_scalar, Labeled, Tag};
use crate::labels::small::{join_ids, Small};
use crate::value::Value;

/// `a op b` where at least one operand is labelled: the plain values' result, labelled with
/// the join of both labels (an error's message is withheld when it could quote a secret).
/// Its caller (`arith::binary_owned`, reached from `eval`) has tried `small_arith`, so only
/// `small_joined`, the inline ints' remaining cases, is tried here.
#[cold]
pub fn binary(op: BinOp, a: Value, b: Value) -> RtResult<Value> {
    if let Some(v) = small_joined(op, &a, &b) {
        // Ints have nothing to drop.
        std::mem::forget(a);
        std::mem::forget(b);
        return Ok(v);
    }
    // A secret int too wide to be inline with a plain one (`seed * a + c`, then `% m`): the
    // box's own label is the result's, so `int_result`'s checks for other shapes are skipped.
    let a = match (a, &b) {
        (Value::Labeled(x), &Value::Int(q)) => match int_op_boxed(op, &x.value, q) {
            Some(n) => {
                // An int has nothing to drop.
                std::mem::forget(b);
                return Ok(own_box(x, n).unwrap_or_else(|x| like(&x, n)));
            }
            None => Value::Labeled(x),
        },
        (a, _) => a,
    };
    if let Some(n) = quick_ints(op, &label::plain(&a), &label::plain(&b)) {
        return Ok(int_result(n, a, b));
    }
    // Two secret scalars with one label, not both ints (`stems[i] + str(j)` on secrets): that
    // label is the result's, read from the boxes without building and joining two tags.
    if let (Value::Labeled(x), Value::Labeled(y)) = (&a, &b) {
        if same_label(x, y) && is_scalar(&x.value) && is_scalar(&y.value) {
            let tag = x.tag();
            let r = crate::value::arith::binary(op, &x.value, &y.value)
                .map_err(|e| label::withhold(e, Some(tag)))?;
            return Ok(into_box(r, tag, a));
        }
    }
    let (x, ta) = label::split(&a);
    let (y, tb) = label::split(&b);
    let r = crate::value::arith::binary(op, &x, &y)
        .map_err(|e| label::withhold(e, label::join(ta, tb)))?;
    Ok(match (ta, tb) {
        // One side labelled: the result's label is exactly that side's, so its box fits.
        (Some(t), None) => into_box(r, t, a),
        (None, Some(t)) => into_box(r, t, b),
        (Some(s), Some(t)) => {
            let j = s.join(t);
            if j == s {
                into_box(r, j, a)
            } else if j == t {
                into_box(r, j, b)
            } else {
                relabel(r, j, Value::None, Value::None)
            }
        }
        (None, None) => r,
    })
}

/// `a op b` on an inline labelled int and a plain int, or two with one label, when the
/// result is inline too: the label is the operand's id unchanged, so nothing is looked up or
/// allocated. It calls nothing, so it needs no frame: a secret `n - 1` costs a call and a few
/// instructions. `None` for the rest, which `small_joined` and the general path take.
#[inline(never)]
pub(crate) fn small_arith(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    // A secret on the left is the common shape (`n - 1`, `h * 31`, `f(n) + f(m)`).
    let Value::LabeledSmall(x) = a else {
        return match (a, b) {
            (Value::Int(p), Value::LabeledSmall(y)) => {
                Small::int_with_id(int_op(op, *p, y.int()?)?, y.id()).map(Value::LabeledSmall)
            }
            _ => None,
        };
    };
    let add = matches!(op, BinOp::Add | BinOp::Sub);
    let sub = op == BinOp::Sub;
    match b {
        Value::Int(q) if add => x.add_int(*q, sub),
        Value::Int(q) => Small::int_with_id(int_op(op, x.int()?, *q)?, x.id()),
        Value::LabeledSmall(y) if y.id() == x.id() => {
            if add {
                x.add_same(*y, sub)
            } else {
                Small::int_with_id(int_op(op, x.int()?, y.int()?)?, x.id())
            }
        }
        _ => None,
    }
    .map(Value::LabeledSmall)
}

/// What `small_arith` declines among inline labelled ints: two labels, joined by id, and a
/// result past 51 bits, boxed here with the id's tag (the LCG's `seed * 1103515245`), which
/// is the joined label already, rather than unpacked again by the general path. `None` for
/// anything else and on overflow.
#[inline(always)]
fn small_joined(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    let (p, q, id) = match (a, b) {
        (Value::LabeledSmall(x), Value::LabeledSmall(y)) => {
            (x.int()?, y.int()?, join_ids(x.id(), y.id())?)
        }
        (Value::LabeledSmall(x), Value::Int(q)) => (x.int()?, *q, x.id()),
        (Value::Int(p), Value::LabeledSmall(y)) => (*p, y.int()?, y.id()),
        _ => return None,
    };
    let n = int_op(op, p, q)?;
    Some(match Small::int_with_id(n, id) {
        Some(s) => Value::LabeledSmall(s),
        None => crate::labels::small::wide_int(n, id),
    })
}

/// `a op b` where an operand is an inline labelled int and the other one too or a plain int,
/// for a caller that has not tried `small_arith`: the result is inline with the joined
/// label, or boxed with it when it is too wide. `None` for anything else and on overflow.
#[inline(always)]
pub(crate) fn small_ints(op: BinOp, a: &Value, b: &Value) -> Option<Value> {
    // Plain operands (`total = total + x`) must not pay the call.
    if !matches!(a, Value::LabeledSmall(_)) && !matches!(b, Value::LabeledSmall(_)) {
        return None;
    }
    small_arith(op, a, b).or_else(|| small_joined(op, a, b))
}

/// `p op q` for the operators a loop counter or a recursion uses, `None` on overflow or
/// for anything else (the general path reports it).
#[inline(always)]
fn int_op(op: BinOp, p: i64, q: i64) -> Option<i64> {
    match op {
        BinOp::Add => p.checked_add(q),
        BinOp::Sub => p.checked_sub(q),
        BinOp::Mul => p.checked_mul(q),
        BinOp::Mod if q != 0 => Some(crate::value::arith::floor_mod(p, q)),
        BinOp::FloorDiv if q != 0 => crate::value::arith::floor_div(p, q),
        _ => None,
    }
}

/// `p op q` where `p` is the int in a box, `None` when it holds something else.
#[inline(always)]
fn int_op_boxed(op: BinOp, inner: &Value, q: i64) -> Option<i64> {
    match inner {
        Value::Int(p) => int_op(op, *p, q),
        _ => None,
    }
}

#[inline(always)]
fn quick_ints(op: BinOp, a: &Value, b: &Value) -> Option<i64> {
    match (a, b) {
        (Value::Int(p), Value::Int(q)) => int_op(op, *p, *q),
        _ => None,
    }
}

/// The int `n` computed from `a` and `b`, at least one labelled, with the join of their
/// labels: `binary`'s rule without building tags, for the shapes that decide a loop's cost
/// (`n - 1` on a secret, `f(x) + f(y)` on two temporaries with one label). The result lives
/// in an operand's box when nothing else holds it, as `into_box` does.
fn int_result(n: i64, a: Value, b: Value) -> Value {
    if matches!(a, Value::LabeledSmall(_)) || matches!(b, Value::LabeledSmall(_)) {
        // An inline operand has no box to lend; the result is inline when it fits.
        return match label::join(label::tag_of(&a), label::tag_of(&b)) {
            Some(t) => scalar(Value::Int(n), t),
            None => Value::Int(n),
        };
    }
    match (a, b) {
        (Value::Labeled(x), Value::Labeled(y)) => {
            if !same_label(&x, &y) {
                let t = x.tag().join(y.tag());
                return relabel(Value::Int(n), t, Value::Labeled(x), Value::Labeled(y));
            }
            let x = match own_box(x, n) {
                Ok(v) => return v,
                Err(x) => x,
            };
            match own_box(y, n) {
                Ok(v) => v,
                Err(_) => like(&x, n),
            }
        }
        (Value::Labeled(x), _) | (_, Value::Labeled(x)) => match own_box(x, n) {
            Ok(v) => v,
            Err(x) => like(&x, n),
        },
        _ => Value::Int(n),
    }
}

/// Whether two boxes carry the same label, so either one's is their join.
#[inline]
fn same_label(x: &Labeled, y: &Labeled) -> bool {
    x.bits == y.bits
        && x.secret_from == y.secret_from
        && x.untrusted_from == y.untrusted_from
        && x.release.get() == y.release.get()
}

/// The int `n` with `x`'s label: inline when it fits, in a new box otherwise.
#[inline]
fn like(x: &Labeled, n: i64) -> Value {
    if let Some(s) = Small::new(&Value::Int(n), x.tag()) {
        return Value::LabeledSmall(s);
    }
    Value::Labeled(Rc::new(Labeled {
        bits: x.bits,
        secret_from: x.secret_from,
        untrusted_from: x.untrusted_from,
        release: Cell::new(x.release.get()),
        value: Value::Int(n),
    }))
}

/// `Ok` with `this` now holding `n` when nothing else holds it, the box back otherwise.
/// A result that fits inline leaves its box instead (`(seed * a + c) % m` passes 51 bits
/// only in the middle): the next operations on it then take the inline fast paths.
#[inline]
fn own_box(mut this: Rc<Labeled>, n: i64) -> Result<Value, Rc<Labeled>> {
    if let Some(s) = Small::new(&Value::Int(n), this.tag()) {
        return Ok(Value::LabeledSmall(s));
    }
    // A box under an open `declassify` is held by the release too, so it is never unique
    // here: a reused box never carries a release the result should not.
    match Rc::get_mut(&mut this) {
        Some(inner) => {
            match &mut inner.value {
                // An int has nothing to drop: overwritten in place.
                Value::Int(old) => *old = n,
                other => *other = Value::Int(n),
            }
            Ok(Value::Labeled(this))
        }
        None => Err(this),
    }
}

/// `r` labelled `tag`, which is exactly `donor`'s label: in `donor`'s box when nothing else
/// holds it, in a new box otherwise.
#[inline]
fn into_box(r: Value, tag: Tag, donor: Value) -> Value {
    if !is_scalar(&r) {
        return label::wrap(r, tag);
    }
    if let Value::Labeled(mut boxed) = donor {
        // A box under an open `declassify` is held by the release too, so it is never
        // unique here: a reused box never carries a release the result should not.
        if let Some(inner) = Rc::get_mut(&mut boxed) {
            inner.value = r;
            return Value::Labeled(boxed);
        }
    }
    scalar(r, tag)
}

/// `target op= rhs` where either side is labelled: as `binary`, the result going into the
/// target's own box when nothing else holds it. On an error the target is left as it was.
#[cold]
pub fn update(op: BinOp, target: &mut Value, rhs: &Value) -> RtResult<()> {
    let (x, ta) = label::split(target);
    let (y, tb) = label::split(rhs);
    let tag = label::join(ta, tb);
    let r = crate::value::arith::binary(op, &x, &y).map_err(|e| label::withhold(e, tag))?;
    let Some(tag) = tag else {
        *target = r;
        return Ok(());
    };
    let cur = std::mem::take(target);
    *target = relabel(r, tag, cur, Value::None);
    Ok(())
}

/// `r` labelled `tag`, in the box of `a` or `b` when one of them is a labelled scalar nothing
/// else holds and its label is already `tag`; in a new box otherwise.
pub fn relabel(r: Value, tag: Tag, a: Value, b: Value) -> Value {
    if !is_scalar(&r) {
        // Containers are labelled as views (tuples rebuilt): only `wrap` knows how.
        return label::wrap(r, tag);
    }
    let r = match reuse(r, tag, a) {
        Ok(v) => return v,
        Err(r) => r,
    };
    let r = match reuse(r, tag, b) {
        Ok(v) => return v,
        Err(r) => r,
    };
    scalar(r, tag)
}

/// Moves `r` into `donor`'s box if the box is free to take it; gives `r` back otherwise.
#[inline]
fn reuse(r: Value, tag: Tag, donor: Value) -> Result<Value, Value> {
    let Value::Labeled(mut boxed) = donor else {
        return Err(r);
    };
    match Rc::get_mut(&mut boxed) {
        // A box under an open `declassify` is held by the release too, so it is never
        // unique here: a reused box never carries a release the result should not.
        Some(inner) if inner.tag() == tag => {
            inner.value = r;
            Ok(Value::Labeled(boxed))
        }
        _ => Err(r),
    }
}

/// A scalar (never a container, a cell or a labelled value) with a non-empty label: inline
/// when it fits, in a new box otherwise.
fn scalar(r: Value, tag: Tag) -> Value {
    debug_assert!(is_scalar(&r) && tag.bits != 0);
    label::boxed_or_small(r, tag)
}

/// `a op b` as a value, once labels exist: the comparison of the plain values, labelled with
/// both operands' labels (`secret == "x"` is as secret as `secret`).
#[cold]
pub fn compare(op: CmpOp, a: &Value, b: &Value) -> RtResult<Value> {
    if let Some(v) = small_compare(op, a, b) {
        return Ok(v);
    }
    let (ta, tb) = (left_tag(op, a), right_tag(op, b));
    let r = truth(op, a, b)?;
    Ok(match label::join(ta, tb) {
        Some(t) => scalar(Value::Bool(r), t),
        None => Value::Bool(r),
    })
}

/// The label the right operand gives `a op b`: every label inside it (what a container
/// holds decides `==`, `<` and `in`), or for `is` its own, since identity is not content.
pub fn right_tag(op: CmpOp, b: &Value) -> Option<label::Tag> {
    match op {
        CmpOp::Is | CmpOp::IsNot => label::tag_of(b),
        _ => label::deep(b),
    }
}

/// The label the left operand gives `a op b`, by the same rule as `right_tag`.
pub fn left_tag(op: CmpOp, a: &Value) -> Option<label::Tag> {
    right_tag(op, a)
}

/// `a op b` on an inline labelled int and a plain int (either side): an inline bool with the
/// same label. `None` for anything else.
#[inline]
fn small_compare(op: CmpOp, a: &Value, b: &Value) -> Option<Value> {
    let (p, q, s) = match (a, b) {
        (Value::LabeledSmall(x), Value::Int(q)) => (x.int()?, *q, *x),
        (Value::Int(p), Value::LabeledSmall(y)) => (*p, y.int()?, *y),
        (Value::LabeledSmall(x), Value::LabeledSmall(y)) if x.id() == y.id() => {
            (x.int()?, y.int()?, *x)
        }
        _ => return None,
    };
    let r = crate::value::compare::int_compare(op, p, q)?;
    Some(Value::LabeledSmall(s.same_label_bool(r)))
}

/// `a op b` on inline labelled ints or one and a plain int, `None` for anything else.
#[inline(always)]
pub(crate) fn small_truth(op: CmpOp, a: &Value, b: &Value) -> Option<bool> {
    let (p, q) = match (a, b) {
        (Value::LabeledSmall(x), Value::Int(q)) => (x.int()?, *q),
        (Value::Int(p), Value::LabeledSmall(y)) => (*p, y.int()?),
        (Value::LabeledSmall(x), Value::LabeledSmall(y)) => (x.int()?, y.int()?),
        _ => return None,
    };
    crate::value::compare::int_compare(op, p, q)
}

/// The truth of `a op b` where either side may be labelled, for a branch (which labels do
/// not track, see DECISIONS.md) or for `compare` to label.
pub fn truth(op: CmpOp, a: &Value, b: &Value) -> RtResult<bool> {
    match op {
        // A label is not part of a value's identity: `m is None` for an unverified `None`
        // answers as for a plain one, and a view is the container it shares.
        CmpOp::Is | CmpOp::IsNot => {
            crate::value::compare::compare_op(op, &label::plain(a), &label::plain(b))
        }
        // `in` looks through labels itself.
        CmpOp::In | CmpOp::NotIn => crate::value::compare::compare_op(op, a, b),
        _ => {
            if let Some(r) = small_truth(op, a, b) {
                return Ok(r);
            }
            let (x, y) = (label::plain(a), label::plain(b));
            if let (Value::Int(p), Value::Int(q)) = (&*x, &*y) {
                if let Some(r) = crate::value::compare::int_compare(op, *p, *q) {
                    return Ok(r);
                }
            }
            crate::value::compare::compare_op(op, &x, &y)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secret(v: Value) -> Value {
        label::wrap(v, Tag::classified(label::origin("label_ops test")))
    }

    fn tag_of(v: &Value) -> Option<Tag> {
        label::split(v).1
    }

    /// Past 51 bits an int is boxed (`labels/small.rs`).
    const BIG: i64 = 1 << 55;

    #[test]
    fn a_temporary_operand_lends_its_box_and_keeps_the_label() {
        let a = secret(Value::Int(BIG));
        let before = match &a {
            Value::Labeled(l) => Rc::as_ptr(l),
            _ => unreachable!("a big int is boxed"),
        };
        let want = tag_of(&a);
        let r = binary(BinOp::Add, a, Value::Int(2)).expect("adds");
        match &r {
            Value::Labeled(l) => {
                assert_eq!(Rc::as_ptr(l), before, "the box was reused");
                assert!(matches!(l.value, Value::Int(n) if n == BIG + 2));
            }
            _ => panic!("the label was lost"),
        }
        assert_eq!(tag_of(&r), want);
    }

    #[test]
    fn small_secret_ints_stay_inline_and_move_between_the_forms_with_their_label() {
        let a = secret(Value::Int(40));
        assert!(matches!(a, Value::LabeledSmall(_)));
        let want = tag_of(&a);
        let r = binary(BinOp::Mul, a, Value::Int(3)).expect("multiplies");
        assert!(matches!(r, Value::LabeledSmall(_)) && tag_of(&r) == want);
        assert!(matches!(*label::plain(&r), Value::Int(120)));
        // Out of the inline range and back, the label kept both ways.
        let big = binary(BinOp::Mul, r, Value::Int(BIG / 64)).expect("multiplies");
        assert!(matches!(big, Value::Labeled(_)) && tag_of(&big) == want);
        let back = binary(BinOp::Mod, big, Value::Int(1000)).expect("mod");
        assert!(tag_of(&back) == want);
        // Two different labels join, inline too.
        let u = label::wrap(
            Value::Int(1),
            Tag::unverified(label::origin("label_ops other")),
        );
        let j = binary(BinOp::Add, back, u).expect("adds");
        let t = tag_of(&j).expect("labelled");
        assert!(t.is_classified() && t.is_unverified());
        let c = compare(CmpOp::Lt, &j, &Value::Int(5)).expect("compares");
        assert!(matches!(*label::plain(&c), Value::Bool(_)) && tag_of(&c) == Some(t));
    }

    #[test]
    fn a_shared_operand_is_left_alone() {
        let a = secret(Value::Int(40));
        let r = binary(BinOp::Sub, a.clone(), Value::Int(1)).expect("subtracts");
        assert!(
            matches!(*label::plain(&a), Value::Int(40)),
            "the operand kept its value"
        );
        assert!(matches!(*label::plain(&r), Value::Int(39)));
        assert!(tag_of(&r).is_some_and(Tag::is_classified));
    }

    #[test]
    fn a_box_with_a_different_label_is_not_reused_and_both_labels_reach_the_result() {
        let a = secret(Value::Int(1));
        let b = label::wrap(
            Value::Int(2),
            Tag::unverified(label::origin("label_ops input")),
        );
        let r = binary(BinOp::Mul, a, b).expect("multiplies");
        let t = tag_of(&r).expect("labelled");
        assert!(t.is_classified() && t.is_unverified());
        assert!(matches!(*label::plain(&r), Value::Int(2)));
    }

    #[test]
    fn two_temporaries_with_one_label_share_a_box_and_modulo_keeps_the_label() {
        let (a, b) = (secret(Value::Int(7)), secret(Value::Int(5)));
        let r = binary(BinOp::Add, a, b).expect("adds");
        assert!(matches!(*label::plain(&r), Value::Int(12)));
        assert!(tag_of(&r).is_some_and(Tag::is_classified));
        let kept = r.clone();
        let m = binary(BinOp::Mod, r, Value::Int(-5)).expect("mod");
        assert!(
            matches!(*label::plain(&m), Value::Int(-3)),
            "Python's floor modulo"
        );
        assert!(tag_of(&m).is_some_and(Tag::is_classified));
        assert!(
            matches!(*label::plain(&kept), Value::Int(12)),
            "a shared box is not written"
        );
        let d = binary(BinOp::FloorDiv, m, Value::Int(2)).expect("floor div");
        assert!(matches!(*label::plain(&d), Value::Int(-2)));
        assert!(tag_of(&d).is_some());
    }

    #[test]
    fn a_container_result_is_a_view_whose_elements_read_labelled() {
        let n = secret(Value::Int(2));
        let r = binary(BinOp::Mul, Value::list(vec![Value::Int(7)]), n).expect("repeats");
        let Some(tag) = tag_of(&r) else {
            panic!("the new list is seen through the label")
        };
        assert!(tag.is_classified());
        let items = crate::value::iter::collect(&r).expect("a list");
        assert_eq!(items.len(), 2);
        assert!(items.iter().all(|x| tag_of(x).is_some()));
    }

    #[test]
    fn comparisons_see_the_plain_values_and_label_the_result() {
        let a = secret(Value::Int(3));
        assert_eq!(truth(CmpOp::Lt, &a, &Value::Int(4)).ok(), Some(true));
        assert_eq!(truth(CmpOp::Eq, &Value::Float(3.0), &a).ok(), Some(true));
        let r = compare(CmpOp::Ge, &a, &Value::Int(4)).expect("compares");
        assert!(matches!(*label::plain(&r), Value::Bool(false)));
        assert!(tag_of(&r).is_some_and(Tag::is_classified));
        let plain = compare(CmpOp::Lt, &Value::Int(1), &Value::Int(2)).expect("compares");
        assert!(matches!(plain, Value::Bool(true)));
    }
}

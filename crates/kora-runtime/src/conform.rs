//! Run-time checks that a value has the shape its annotation promises.
//!
//! Shallow on purpose: the checker proved what it could, and a deep walk of a
//! large list on every assignment would cost more than the bug it catches.

use kora_check::hir::Program;
use kora_check::types::Ty;

use crate::value::Value;

// Always inlined: every typed parameter of every call passes here, and the common
// answers (`int` is an `int`) are one comparison.
#[inline(always)]
pub fn conforms(_p: &Program, v: &Value, ty: &Ty) -> bool {
    match (ty, v) {
        (Ty::Any, _)
        | (Ty::Int, Value::Int(_))
        | (Ty::Float, Value::Float(_))
        | (Ty::Str, Value::Str(_)) => return true,
        _ => {}
    }
    conforms_slow(v, ty)
}

/// A labelled value's plain value against `ty`.
#[inline]
fn conforms_labeled(inner: &Value, ty: &Ty) -> bool {
    match (ty, inner) {
        (Ty::Int, Value::Int(_)) | (Ty::Float, Value::Float(_)) | (Ty::Str, Value::Str(_)) => true,
        _ => conforms_general(inner, ty),
    }
}

/// Everything `conforms` does not answer inline. Kept small, so a secret `int` parameter
/// pays a comparison rather than the general check's frame.
#[inline(never)]
fn conforms_slow(v: &Value, ty: &Ty) -> bool {
    // A label is not part of a type: `classified("x")` is a `str`.
    match v {
        Value::Labeled(l) => conforms_labeled(&l.value, ty),
        Value::LabeledSmall(s) => match (ty, s.int()) {
            (Ty::Int | Ty::Float, Some(_)) => true,
            _ => conforms_labeled(&s.plain(), ty),
        },
        _ => conforms_general(v, ty),
    }
}

#[inline(never)]
fn conforms_general(v: &Value, ty: &Ty) -> bool {
    match ty {
        Ty::Any => true,
        Ty::Int => matches!(v, Value::Int(_) | Value::Bool(_)),
        Ty::Float => matches!(v, Value::Int(_) | Value::Float(_) | Value::Bool(_)),
        Ty::Bool => matches!(v, Value::Bool(_)),
        Ty::Str => matches!(v, Value::Str(_)),
        Ty::None => matches!(v, Value::None),
        Ty::List(_) => matches!(v, Value::List(_)),
        Ty::Dict(..) => matches!(v, Value::Dict(_)),
        Ty::Set(_) => matches!(v, Value::Set(_)),
        Ty::Tuple(ts) => matches!(v, Value::Tuple(t) if t.len() == ts.len()),
        Ty::TupleOf(_) => matches!(v, Value::Tuple(_)),
        Ty::Record(id, _) => matches!(v, Value::Record(r) if r.ty == *id),
        Ty::Literal(members) => match v {
            Value::Str(s) => members.iter().any(|m| m == s.as_str()),
            _ => false,
        },
        Ty::Union(ts) => ts.iter().any(|t| conforms_slow(v, t)),
        Ty::Outcome(_) => matches!(v, Value::Outcome(_)),
        Ty::Func => matches!(
            v,
            Value::Func(_) | Value::Builtin(_) | Value::Method(_) | Value::Type(_)
        ),
        Ty::Module => matches!(v, Value::Module(_)),
        Ty::Std(t) => matches!(v, Value::Native(n) if n.std_type() == *t),
    }
}

/// "a `str` ('abc')": the value's type and a short rendering, for messages.
pub fn describe(p: &Program, v: &Value) -> String {
    let ty = match v {
        Value::Record(r) => p.record(r.ty).name.clone(),
        other => other.type_name().to_string(),
    };
    let mut s = String::new();
    crate::format::repr(p, v, &mut s);
    if s.chars().count() > 40 {
        let cut: String = s.chars().take(37).collect();
        s = format!("{cut}...");
    }
    format!("a `{ty}` ({s})")
}

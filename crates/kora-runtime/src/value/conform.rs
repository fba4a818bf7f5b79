//! Run-time checks that a value has the shape its annotation promises.
//!
//! Shallow on purpose: the checker proved what it could, and a deep walk of a
//! large list on every assignment would cost more than the bug it catches.

use kora_check::hir::Program;
use kora_check::types::{Quick, Ty};

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

/// `conforms` for a parameter or return whose `Quick` kind the checker stored: the common
/// answer is one byte compared with the value's tag, without decoding `ty`.
#[inline(always)]
pub fn conforms_quick(q: Quick, v: &Value, ty: &Ty) -> bool {
    match (q, v) {
        (Quick::Any, _)
        | (Quick::Int, Value::Int(_))
        | (Quick::Float, Value::Float(_))
        | (Quick::Str, Value::Str(_))
        | (Quick::Bool, Value::Bool(_))
        | (Quick::List, Value::List(_))
        | (Quick::Dict, Value::Dict(_)) => true,
        // A label is not part of a type, and an inline labelled scalar is an int or a bool,
        // both of which `int` and `float` accept: a secret parameter pays no out-of-line check.
        (Quick::Int | Quick::Float, Value::LabeledSmall(_)) => true,
        (Quick::Bool, Value::LabeledSmall(s)) => s.is_bool(),
        _ => conforms_slow(v, ty),
    }
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
        Ty::Int => matches!(v, Value::Int(_) | Value::Bool(_) | Value::BigInt(_)),
        Ty::Float => matches!(
            v,
            Value::Int(_) | Value::Float(_) | Value::Bool(_) | Value::BigInt(_)
        ),
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
        Ty::Outcome(..) => matches!(v, Value::Outcome(_)),
        Ty::Func => matches!(
            v,
            Value::Func(_) | Value::Builtin(_) | Value::Method(_) | Value::Type(_)
        ),
        Ty::Module => matches!(v, Value::Module(_)),
        Ty::Std(t) => matches!(v, Value::Native(n) if n.std_type() == *t),
    }
}

/// The error of an annotated assignment whose value does not conform; out of line, so
/// the statement loop's frame does not carry the formatting.
#[cold]
#[inline(never)]
pub fn mismatch(p: &Program, ty: &Ty, v: &Value) -> Box<crate::error::RtError> {
    crate::error::RtError::new(
        crate::error::codes::TYPE,
        format!("type mismatch: declared `{ty}`, got {}", describe(p, v)),
    )
}

/// "a `str` ('abc')": the value's type and a short rendering, for messages.
pub fn describe(p: &Program, v: &Value) -> String {
    let ty = match v {
        Value::Record(r) => p.record(r.ty).name.clone(),
        other => other.type_name().to_string(),
    };
    let mut s = String::new();
    crate::value::format::repr(p, v, &mut s);
    if s.chars().count() > 40 {
        let cut: String = s.chars().take(37).collect();
        s = format!("{cut}...");
    }
    format!("a `{ty}` ({s})")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one-byte answer must agree with the full check on every value it sees: the
    /// quick kinds only accept earlier, never differently.
    #[test]
    fn quick_kinds_agree_with_the_full_check() {
        let tys = [
            Ty::Any,
            Ty::Int,
            Ty::Float,
            Ty::Str,
            Ty::Bool,
            Ty::None,
            Ty::List(Box::new(Ty::Int)),
            Ty::Dict(Box::new(Ty::Str), Box::new(Ty::Int)),
            Ty::Union(vec![Ty::Int, Ty::Str]),
        ];
        let values = [
            Value::None,
            Value::Bool(true),
            Value::Int(3),
            Value::Float(2.5),
            Value::str("s"),
            Value::list(vec![Value::Int(1)]),
            Value::dict(crate::value::Dict::default()),
        ];
        for ty in &tys {
            for v in &values {
                assert_eq!(
                    conforms_quick(ty.quick(), v, ty),
                    conforms_general(v, ty),
                    "{ty} against a {}",
                    v.type_name()
                );
            }
        }
    }
}

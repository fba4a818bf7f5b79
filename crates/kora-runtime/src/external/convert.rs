//! Values to `Data` on the way out of a call, `Data` to values on the way back: the one place
//! each direction is decided.
//!
//! Out: `None`, bools, ints, floats, strings, bytes, lists, tuples, dicts, sets, ranges (as lists) and
//! records (as dicts of their fields) cross; functions, outcomes and handles do not, and the
//! error names what was passed. Labels are read through here: whether a classified part may
//! leave at all is the caller's check, made before this conversion.
//!
//! Bytes cross as bytes both ways (`Data::Bytes`, a helper's raw payload). Back: sets and tuples stay what they are, and a
//! dict keeps its keys in order.

use std::rc::Rc;

use kora_check::hir::Program;

use crate::external::Data;
use crate::labels::label;
use crate::value::bytes::Bytes;
use crate::value::{Dict, Key, Set, Value};

/// The deepest nesting either direction follows: a deeper value is refused, never a stack overflow.
const MAX_DEPTH: usize = 200;

/// A value as it leaves for an external module; `Err` names the part that cannot.
pub fn to_data(p: &Program, v: &Value) -> Result<Data, String> {
    out(p, v, 0)
}

fn out(p: &Program, v: &Value, depth: usize) -> Result<Data, String> {
    if depth > MAX_DEPTH {
        return Err(format!("it nests deeper than {MAX_DEPTH} levels"));
    }
    let d = depth + 1;
    let plain = label::plain(v);
    Ok(match &*plain {
        Value::None => Data::None,
        Value::Bool(b) => Data::Bool(*b),
        Value::Int(i) => Data::Int(*i),
        Value::BigInt(b) => Data::BigInt(b.to_string()),
        Value::Float(f) => Data::Float(*f),
        Value::Str(s) => Data::Str(s.as_str().to_string()),
        Value::List(xs) => Data::List(items(p, xs.borrow().iter(), d)?),
        Value::Tuple(xs) => Data::Tuple(items(p, xs.iter(), d)?),
        Value::Set(xs) => Data::Set(items(p, xs.borrow().iter().map(|k| &k.0), d)?),
        Value::Range(r) => Data::List((0..r.len()).map(|i| Data::Int(r.get(i))).collect()),
        Value::Native(_) if Bytes::of(&plain).is_some() => {
            Data::Bytes(Bytes::of(&plain).map(|b| b.to_vec()).unwrap_or_default())
        }
        Value::Dict(m) => Data::Dict(
            m.borrow()
                .iter()
                .map(|(k, v)| Ok((out(p, &k.0, d)?, out(p, v, d)?)))
                .collect::<Result<_, String>>()?,
        ),
        Value::Record(r) => {
            let def = p.record(r.ty);
            let fields = r.fields.borrow();
            Data::Dict(
                def.fields
                    .iter()
                    .zip(fields.iter())
                    .map(|(f, v)| Ok((Data::Str(p.name(f.name).to_string()), out(p, v, d)?)))
                    .collect::<Result<_, String>>()?,
            )
        }
        other => {
            return Err(format!(
                "{} cannot cross to another process: only data does (None, bool, int, float, str, bytes, list, tuple, dict, set, records)",
                crate::value::conform::describe(p, other)
            ))
        }
    })
}

fn items<'v>(
    p: &Program,
    xs: impl Iterator<Item = &'v Value>,
    depth: usize,
) -> Result<Vec<Data>, String> {
    xs.map(|x| out(p, x, depth)).collect()
}

/// `Data` back as a value; `Err` for what Kora cannot hold.
pub fn to_value(d: &Data) -> Result<Value, String> {
    back(d, 0)
}

fn back(d: &Data, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!("the result nests deeper than {MAX_DEPTH} levels"));
    }
    let n = depth + 1;
    Ok(match d {
        Data::None => Value::None,
        Data::Bool(b) => Value::Bool(*b),
        Data::Int(i) => Value::Int(*i),
        // The one place an integer past 64 bits becomes a value: from its decimal text, so it
        // is the same number on both sides whatever its size.
        Data::BigInt(s) => match num_bigint::BigInt::parse_bytes(s.as_bytes(), 10) {
            Some(b) => crate::value::big_int::normalize(b),
            None => return Err(format!("an integer that is not decimal digits: {s}")),
        },
        Data::Float(f) => Value::Float(*f),
        Data::Str(s) => Value::str(s.as_str()),
        Data::Bytes(b) => Bytes::value(b.clone()),
        Data::List(xs) => Value::list(xs.iter().map(|x| back(x, n)).collect::<Result<_, _>>()?),
        Data::Tuple(xs) => Value::tuple(xs.iter().map(|x| back(x, n)).collect::<Result<_, _>>()?),
        Data::Set(xs) => {
            let mut s = Set::default();
            for x in xs {
                s.insert(Key(back(x, n)?));
            }
            Value::Set(Rc::new(std::cell::RefCell::new(s)))
        }
        Data::Dict(kvs) => {
            let mut m = Dict::default();
            for (k, v) in kvs {
                m.insert(Key(back(k, n)?), back(v, n)?);
            }
            Value::dict(m)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_big_int_comes_back_as_the_same_number_and_a_small_one_as_an_int() {
        let v = to_value(&Data::BigInt("-123456789012345678901234567890".into())).expect("int");
        let Value::BigInt(b) = &v else {
            panic!("not a big int")
        };
        assert_eq!(b.to_string(), "-123456789012345678901234567890");
        let small = to_value(&Data::BigInt("42".into())).expect("int");
        assert!(matches!(small, Value::Int(42)));
        assert!(to_value(&Data::BigInt("12x".into())).is_err());
    }

    #[test]
    fn bytes_come_back_as_bytes() {
        let v = to_value(&Data::Bytes(vec![0, 255])).expect("converts");
        assert_eq!(Bytes::of(&v).as_deref(), Some(&[0u8, 255][..]));
    }

    #[test]
    fn nesting_past_the_limit_is_an_error_not_a_crash() {
        let mut d = Data::None;
        for _ in 0..(MAX_DEPTH + 10) {
            d = Data::List(vec![d]);
        }
        assert!(to_value(&d).is_err());
    }
}

//! The type-named built-ins: `str`, `int`, `float`, `bool`, `list`, `dict`, `set`, `tuple`.
//!
//! String parsing follows CPython: surrounding whitespace, one sign, `_` between
//! digits, decimal digits of any script (`int('٣')` is 3), base prefixes.

use kora_check::hir::Sym;

use super::{args, id};
use crate::error::{codes, fail, type_error, RtResult};
use crate::value::arith::dict_pairs;
use crate::value::caller::Caller;
use crate::value::compare::hash_key;
use crate::value::format::{str_repr, to_string, type_name};
use crate::value::iter::collect;
use crate::value::unicode;
use crate::value::{Set, Value};

pub(super) fn construct(
    ctx: &mut dyn Caller,
    which: u16,
    mut args: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let p = ctx.program();
    let name = kora_check::hir::builtin_name(kora_check::hir::BuiltinId(which));
    match which {
        id::INT => {
            let base = args::take_named(p, &mut kwargs, "base");
            args::done(p, &kwargs, "int")?;
            args::count("int", &args, 0, 2)?;
            let base = match (args.get(1), base) {
                (Some(b), None) => Some(b.clone()),
                (None, Some(b)) => Some(b),
                (None, None) => None,
                (Some(_), Some(_)) => {
                    return fail(
                        codes::ARGUMENTS,
                        "argument for int() given by name ('base') and position (2)",
                    )
                }
            };
            to_int(args.first(), base.as_ref())
        }
        id::DICT => {
            args::count(name, &args, 0, 1)?;
            let mut d = match args.first() {
                None => Default::default(),
                Some(Value::Dict(d)) => d.borrow().clone(),
                Some(v) => dict_pairs(v)?,
            };
            for (k, v) in kwargs {
                d.insert(crate::value::Key(Value::str(p.name(k))), v);
            }
            Ok(Value::dict(d))
        }
        _ => {
            args::no_kwargs(name, &kwargs)?;
            args::count(name, &args, 0, 1)?;
            let Some(x) = args.pop() else {
                return Ok(match which {
                    id::STR => Value::str(""),
                    id::FLOAT => Value::Float(0.0),
                    id::BOOL => Value::Bool(false),
                    id::LIST => Value::list(Vec::new()),
                    id::SET => Value::set(Set::default()),
                    _ => Value::tuple(Vec::new()),
                });
            };
            match which {
                id::STR => Ok(match x {
                    Value::Str(_) => x,
                    _ => {
                        crate::value::big_int::check_text(&x)?;
                        Value::str(to_string(p, &x))
                    }
                }),
                id::FLOAT => to_float(&x).map(Value::Float),
                id::BOOL => Ok(Value::Bool(x.truthy())),
                id::LIST => Ok(Value::list(collect(&x)?)),
                id::SET => {
                    let mut s = Set::default();
                    for item in collect(&x)? {
                        s.insert(hash_key(&item)?);
                    }
                    Ok(Value::set(s))
                }
                _ => Ok(match x {
                    Value::Tuple(_) => x,
                    _ => Value::tuple(collect(&x)?),
                }),
            }
        }
    }
}

/// `int(x)` / `int(x, base)`.
pub fn to_int(x: Option<&Value>, base: Option<&Value>) -> RtResult<Value> {
    let base = match base {
        None => None,
        Some(b) => {
            let b = args::index(b)?;
            if b != 0 && !(2..=36).contains(&b) {
                return fail(codes::VALUE, "int() base must be >= 2 and <= 36, or 0");
            }
            Some(b as u32)
        }
    };
    let Some(x) = x else {
        if base.is_some() {
            return type_error("int() missing string argument");
        }
        return Ok(Value::Int(0));
    };
    match (x, base) {
        (Value::Str(s), _) => parse_int_value(s.as_str(), base.unwrap_or(10)),
        (_, Some(_)) => type_error("int() can't convert non-string with explicit base"),
        (Value::Int(i), None) => Ok(Value::Int(*i)),
        (Value::BigInt(b), None) => Ok(Value::BigInt(b.clone())),
        (Value::Bool(b), None) => Ok(Value::Int(*b as i64)),
        (Value::Float(f), None) => float_to_int_value(*f),
        (Value::Cell(c), None) => to_int(Some(&c.borrow()), None),
        _ => type_error(format!(
            "int() argument must be a string, a bytes-like object or a real number, not '{}'",
            type_name(x)
        )),
    }
}

/// `int(f)`: truncated toward zero, of any size.
pub fn float_to_int_value(f: f64) -> RtResult<Value> {
    if f.is_finite() {
        return Ok(crate::value::big_int::from_f64(f));
    }
    float_to_int(f).map(Value::Int)
}

/// `int(s, base)` of any size: the 64-bit reading first, big ints when it overflows.
pub fn parse_int_value(s: &str, base: u32) -> RtResult<Value> {
    match parse_int(s, base) {
        Ok(i) => Ok(Value::Int(i)),
        Err(e) if e.code == codes::OVERFLOW => parse_big(s, base),
        Err(e) => Err(e),
    }
}

/// A well-formed int literal too long for 64 bits (`parse_int` validated its shape).
#[cold]
fn parse_big(s: &str, base: u32) -> RtResult<Value> {
    let t = s.trim_matches(unicode::is_space);
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower2 = t.get(..2).map(|p| p.to_ascii_lowercase());
    let (radix, digits) = match (base, lower2.as_deref()) {
        (0 | 16, Some("0x")) => (16, &t[2..]),
        (0 | 8, Some("0o")) => (8, &t[2..]),
        (0 | 2, Some("0b")) => (2, &t[2..]),
        (0, _) => (10, t),
        (b, _) => (b, t),
    };
    let digits: String = digits
        .chars()
        .filter(|c| *c != '_')
        .map(|c| match unicode::decimal_value(c) {
            Some(d) => char::from_digit(d, 10).unwrap_or(c),
            None => c,
        })
        .collect();
    match crate::value::big_int::parse(&digits, radix)? {
        Some(b) => Ok(crate::value::big_int::normalize(if negative {
            -b
        } else {
            b
        })),
        None => invalid_int(s, base),
    }
}

/// Truncates a float toward zero, as `int(f)` does.
pub fn float_to_int(f: f64) -> RtResult<i64> {
    if f.is_nan() {
        return fail(codes::VALUE, "cannot convert float NaN to integer");
    }
    if f.is_infinite() {
        return fail(codes::OVERFLOW, "cannot convert float infinity to integer");
    }
    let t = f.trunc();
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&t) {
        Ok(t as i64)
    } else {
        fail(
            codes::OVERFLOW,
            format!(
                "integer overflow: int({}) does not fit in a 64-bit int",
                crate::value::format::float_repr(f)
            ),
        )
    }
}

fn invalid_int<T>(s: &str, base: u32) -> RtResult<T> {
    let mut m = format!("invalid literal for int() with base {base}: ");
    str_repr(s, &mut m);
    fail(codes::VALUE, m)
}

/// `int(s, base)` for a string; `base` is 0 or 2..=36.
pub fn parse_int(s: &str, base: u32) -> RtResult<i64> {
    let t = s.trim_matches(unicode::is_space);
    let (negative, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let lower2 = t.get(..2).map(|p| p.to_ascii_lowercase());
    let prefix_base = match lower2.as_deref() {
        Some("0x") => Some(16),
        Some("0o") => Some(8),
        Some("0b") => Some(2),
        _ => None,
    };
    let (radix, digits, had_prefix) = match (base, prefix_base) {
        (0, Some(b)) => (b, &t[2..], true),
        (0, None) => (10, t, false),
        (b, Some(pb)) if b == pb => (b, &t[2..], true),
        (b, _) => (b, t, false),
    };
    let mut value: u64 = 0;
    let mut any = false;
    let mut prev_digit = false;
    let mut last_underscore = false;
    let mut nonzero = false;
    let mut leading_zero = false;
    let mut overflowed = false;
    for (i, c) in digits.chars().enumerate() {
        if c == '_' {
            // Only between digits, or straight after a base prefix (`0x_1f`).
            if !(prev_digit || (had_prefix && i == 0)) {
                return invalid_int(s, base);
            }
            prev_digit = false;
            last_underscore = true;
            continue;
        }
        let d = match unicode::decimal_value(c) {
            Some(d) => d,
            None if c.is_ascii_alphabetic() => c.to_ascii_lowercase() as u32 - 'a' as u32 + 10,
            None => return invalid_int(s, base),
        };
        if d >= radix {
            return invalid_int(s, base);
        }
        if !any && d == 0 {
            leading_zero = true;
        }
        nonzero |= d != 0;
        any = true;
        prev_digit = true;
        last_underscore = false;
        // Keep scanning after an overflow: a malformed tail is reported first, as in Python.
        match value
            .checked_mul(radix as u64)
            .and_then(|v| v.checked_add(d as u64))
        {
            Some(v) => value = v,
            None => overflowed = true,
        }
    }
    if !any || last_underscore {
        return invalid_int(s, base);
    }
    // Base 0 forbids `010` (ambiguous with old octal) but allows `000`.
    if base == 0 && !had_prefix && leading_zero && nonzero {
        return invalid_int(s, base);
    }
    let limit = if negative {
        1u64 << 63
    } else {
        i64::MAX as u64
    };
    if overflowed || value > limit {
        return int_too_big(s);
    }
    Ok(if negative {
        (value as i64).wrapping_neg()
    } else {
        value as i64
    })
}

fn int_too_big<T>(s: &str) -> RtResult<T> {
    let mut m = String::from("integer overflow: int(");
    str_repr(s, &mut m);
    m.push_str(") does not fit in a 64-bit int");
    fail(codes::OVERFLOW, m)
}

/// `float(x)`.
pub fn to_float(x: &Value) -> RtResult<f64> {
    match x {
        Value::Float(f) => Ok(*f),
        Value::Int(i) => Ok(*i as f64),
        Value::BigInt(b) => crate::value::big_int::to_f64(b),
        Value::Bool(b) => Ok(*b as i64 as f64),
        Value::Str(s) => parse_float(s.as_str()),
        Value::Cell(c) => to_float(&c.borrow()),
        _ => type_error(format!(
            "float() argument must be a string or a real number, not '{}'",
            type_name(x)
        )),
    }
}

/// `float(s)` for a string.
pub fn parse_float(s: &str) -> RtResult<f64> {
    let invalid = || {
        let mut m = String::from("could not convert string to float: ");
        str_repr(s, &mut m);
        fail(codes::VALUE, m)
    };
    let t = s.trim_matches(unicode::is_space);
    let mut clean = String::with_capacity(t.len());
    let chars: Vec<char> = t.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' {
            let digit_at = |j: Option<usize>| {
                j.and_then(|j| chars.get(j))
                    .is_some_and(|c| unicode::decimal_value(*c).is_some())
            };
            if !digit_at(i.checked_sub(1)) || !digit_at(i.checked_add(1)) {
                return invalid();
            }
            continue;
        }
        match unicode::decimal_value(c) {
            Some(d) if !c.is_ascii() => clean.push(char::from(b'0' + d as u8)),
            _ => clean.push(c),
        }
    }
    match clean.parse::<f64>() {
        Ok(f) => Ok(f),
        Err(_) => invalid(),
    }
}

//! Python's binary and unary operators (`+ - * / // % ** & | ^ << >>`, `-x`, `~x`) and `+=`-style updates.
//!
//! Ints are Python's: every 64-bit operation is checked, and one that overflows is done
//! again on big ints (`big_int.rs`), never wrapped.
//! Float rules (floor division, modulo sign, `**` special cases, error texts) are
//! ports of CPython's `floatobject.c`, so results match bit for bit.

mod inplace;
#[cfg(test)]
mod tests;

use kora_syntax::ast::{BinOp, UnaryOp};

use crate::error::{codes, fail, type_error, RtResult};
use crate::value::big_int;
use crate::value::format::type_name;
use crate::value::grow;
use crate::value::{Set, Value};

pub use inplace::{dict_pairs, inplace};

/// `a op b`.
pub fn binary(op: BinOp, a: &Value, b: &Value) -> RtResult<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => int_op(op, *x, *y),
        (Value::Float(x), Value::Float(y)) => float_op(op, *x, *y, a, b, false),
        (Value::Labeled(_) | Value::LabeledSmall(_), _)
        | (_, Value::Labeled(_) | Value::LabeledSmall(_)) => labeled_binary(op, a, b),
        _ => binary_slow(op, a, b, false),
    }
}

/// `a op b` on operands the caller is done with: as `binary`, but a labelled temporary
/// lends its box to the result (`label_ops`), so secret arithmetic in a loop allocates less.
/// Out of line, as the call it replaced was: `eval` is the hottest frame, and code inlined
/// into it is paid for by every plain call. `eval` has tried `fast_arith` and
/// `label_ops::small_arith` before this.
#[inline(never)]
pub fn binary_owned(op: BinOp, a: Value, b: Value) -> RtResult<Value> {
    match (&a, &b) {
        (Value::Int(x), Value::Int(y)) => int_op(op, *x, *y),
        (Value::Float(x), Value::Float(y)) => float_op(op, *x, *y, &a, &b, false),
        (Value::Labeled(_) | Value::LabeledSmall(_), _)
        | (_, Value::Labeled(_) | Value::LabeledSmall(_)) => crate::labels::ops::binary(op, a, b),
        _ => binary_slow(op, &a, &b, false),
    }
}

/// `a op b` with a label on either side: computed on the plain values, labelled with both.
#[cold]
fn labeled_binary(op: BinOp, a: &Value, b: &Value) -> RtResult<Value> {
    let (x, ta) = crate::labels::label::split(a);
    let (y, tb) = crate::labels::label::split(b);
    let tag = crate::labels::label::join(ta, tb);
    let r = binary(op, &x, &y).map_err(|e| crate::labels::label::withhold(e, tag))?;
    Ok(crate::labels::label::wrap_opt(r, tag))
}

fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    }
}

fn as_float(v: &Value) -> Option<f64> {
    match v {
        Value::Float(f) => Some(*f),
        _ => as_int(v).map(|i| i as f64),
    }
}

/// `a op b` where an operand is a big int: int with int stays exact, with a float the int
/// converts (or overflows, as in CPython).
#[cold]
fn big_binary(op: BinOp, a: &Value, b: &Value, inplace: bool) -> RtResult<Option<Value>> {
    use crate::value::big_int::IntRef;
    match (IntRef::of(a), IntRef::of(b)) {
        (Some(x), Some(y)) => big_int::binary(op, &x.to_big(), &y.to_big()).map(Some),
        (Some(x), None) if matches!(b, Value::Float(_)) => {
            let y = as_float(b).unwrap_or(0.0);
            float_op(op, x.to_f64()?, y, a, b, inplace).map(Some)
        }
        (None, Some(y)) if matches!(a, Value::Float(_)) => {
            let x = as_float(a).unwrap_or(0.0);
            float_op(op, x, y.to_f64()?, a, b, inplace).map(Some)
        }
        (Some(n), None)
            if op == BinOp::Mul
                && matches!(b, Value::Str(_) | Value::List(_) | Value::Tuple(_)) =>
        {
            repeat_big(b, n).map(Some)
        }
        (None, Some(n))
            if op == BinOp::Mul
                && matches!(a, Value::Str(_) | Value::List(_) | Value::Tuple(_)) =>
        {
            repeat_big(a, n).map(Some)
        }
        _ => Ok(None),
    }
}

/// A sequence repeated a big number of times: empty for a negative count, else too long.
fn repeat_big(seq: &Value, n: crate::value::big_int::IntRef<'_>) -> RtResult<Value> {
    if n.is_negative() {
        return repeat(seq, 0);
    }
    let empty = match seq {
        Value::Str(s) => s.as_str().is_empty(),
        Value::List(l) => l.borrow().is_empty(),
        Value::Tuple(t) => t.is_empty(),
        _ => false,
    };
    if empty {
        return repeat(seq, 0);
    }
    fail(
        codes::OVERFLOW,
        "cannot fit 'int' into an index-sized integer",
    )
}

fn symbol(op: BinOp, inplace: bool) -> String {
    if inplace {
        format!("{}=", op.symbol())
    } else {
        op.symbol().to_string()
    }
}

fn unsupported<T>(op: BinOp, a: &Value, b: &Value, inplace: bool) -> RtResult<T> {
    use Value::*;
    match (op, a) {
        (BinOp::Add, Str(_) | List(_) | Tuple(_)) => type_error(format!(
            "can only concatenate {} (not \"{}\") to {}",
            type_name(a),
            type_name(b),
            type_name(a)
        )),
        (BinOp::Mul, Str(_) | List(_) | Tuple(_)) => type_error(format!(
            "can't multiply sequence by non-int of type '{}'",
            type_name(b)
        )),
        (BinOp::Mul, _) if matches!(b, Str(_) | List(_) | Tuple(_)) => type_error(format!(
            "can't multiply sequence by non-int of type '{}'",
            type_name(a)
        )),
        (BinOp::Mod, Str(_)) => {
            type_error("Kora has no `%` formatting of strings: write an f-string, f\"{n:d} items\"")
        }
        _ => type_error(format!(
            "unsupported operand type(s) for {}: '{}' and '{}'",
            symbol(op, inplace),
            type_name(a),
            type_name(b)
        )),
    }
}

fn binary_slow(op: BinOp, a: &Value, b: &Value, inplace: bool) -> RtResult<Value> {
    // A container whose shape a secret decided labels what is made from it: `ys + []`
    // would otherwise copy a secret length into a plain list.
    if !crate::labels::shape::none() {
        let t =
            crate::labels::label::join(crate::labels::shape::tag(a), crate::labels::shape::tag(b));
        if t.is_some() {
            let r = binary_unshaped(op, a, b, inplace)
                .map_err(|e| crate::labels::label::withhold(e, t))?;
            return Ok(crate::labels::label::wrap_opt(r, t));
        }
    }
    binary_unshaped(op, a, b, inplace)
}

fn binary_unshaped(op: BinOp, a: &Value, b: &Value, inplace: bool) -> RtResult<Value> {
    use Value::*;
    if matches!(a, BigInt(_)) || matches!(b, BigInt(_)) {
        if let Some(v) = big_binary(op, a, b, inplace)? {
            return Ok(v);
        }
    }
    if let (Some(x), Some(y)) = (as_int(a), as_int(b)) {
        if let (Bool(p), Bool(q)) = (a, b) {
            match op {
                BinOp::BitAnd => return Ok(Bool(*p & *q)),
                BinOp::BitOr => return Ok(Bool(*p | *q)),
                BinOp::BitXor => return Ok(Bool(*p ^ *q)),
                _ => {}
            }
        }
        return int_op(op, x, y);
    }
    if let (Some(x), Some(y)) = (as_float(a), as_float(b)) {
        return float_op(op, x, y, a, b, inplace);
    }
    if matches!(a, Native(_)) || matches!(b, Native(_)) {
        if let Some(r) = crate::value::bytes::arith(op, a, b) {
            return r;
        }
    }
    match (op, a, b) {
        (BinOp::Add, Str(x), Str(y)) => {
            let total = x.as_str().len().saturating_add(y.as_str().len());
            let mut s = grow::string(total, "the concatenated string")?;
            s.push_str(x.as_str());
            s.push_str(y.as_str());
            Ok(Value::str(s))
        }
        (BinOp::Add, List(x), List(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            let mut v = grow::vec(x.len().saturating_add(y.len()), "the concatenated list")?;
            v.extend_from_slice(&x);
            v.extend_from_slice(&y);
            Ok(Value::list(v))
        }
        (BinOp::Add, Tuple(x), Tuple(y)) => {
            let mut v = grow::vec(x.len().saturating_add(y.len()), "the concatenated tuple")?;
            v.extend_from_slice(x);
            v.extend_from_slice(y);
            Ok(Value::tuple(v))
        }
        (BinOp::Mul, Str(_) | List(_) | Tuple(_), _) if as_int(b).is_some() => {
            repeat(a, as_int(b).unwrap_or(0))
        }
        (BinOp::Mul, _, Str(_) | List(_) | Tuple(_)) if as_int(a).is_some() => {
            repeat(b, as_int(a).unwrap_or(0))
        }
        (BinOp::BitOr | BinOp::BitAnd | BinOp::Sub | BinOp::BitXor, Set(x), Set(y)) => {
            Ok(Value::set(set_op(op, &x.borrow(), &y.borrow())))
        }
        (BinOp::BitOr, Dict(x), Dict(y)) => {
            let mut d = x.borrow().clone();
            for (k, v) in y.borrow().iter() {
                d.insert(k.clone(), v.clone());
            }
            Ok(Value::dict(d))
        }
        (_, Cell(c), _) => binary_slow(op, &c.borrow(), b, inplace),
        (_, _, Cell(c)) => binary_slow(op, a, &c.borrow(), inplace),
        _ => unsupported(op, a, b, inplace),
    }
}

/// `x op y` again on big ints, after the 64-bit result overflowed.
#[cold]
#[inline(never)]
fn promoted(op: BinOp, x: i64, y: i64) -> RtResult<Value> {
    big_int::binary(
        op,
        &num_bigint::BigInt::from(x),
        &num_bigint::BigInt::from(y),
    )
}

fn zero_division<T>(msg: &str) -> RtResult<T> {
    fail(codes::ZERO_DIVISION, msg)
}

/// Integer `x op y` (`/` gives a float).
pub fn int_op(op: BinOp, x: i64, y: i64) -> RtResult<Value> {
    let r = match op {
        BinOp::Add => x.checked_add(y),
        BinOp::Sub => x.checked_sub(y),
        BinOp::Mul => x.checked_mul(y),
        BinOp::Div => return int_true_div(x, y).map(Value::Float),
        BinOp::FloorDiv => {
            if y == 0 {
                return zero_division("integer division or modulo by zero");
            }
            floor_div(x, y)
        }
        BinOp::Mod => {
            if y == 0 {
                return zero_division("integer modulo by zero");
            }
            Some(floor_mod(x, y))
        }
        BinOp::Pow => return int_pow(x, y),
        BinOp::BitAnd => Some(x & y),
        BinOp::BitOr => Some(x | y),
        BinOp::BitXor => Some(x ^ y),
        BinOp::Shl => {
            if y < 0 {
                return fail(codes::VALUE, "negative shift count");
            }
            if x == 0 {
                Some(0)
            } else if y >= 64 {
                None
            } else {
                let r = x << y;
                (r >> y == x).then_some(r)
            }
        }
        BinOp::Shr => {
            if y < 0 {
                return fail(codes::VALUE, "negative shift count");
            }
            Some(if y >= 64 { x >> 63 } else { x >> y })
        }
    };
    match r {
        Some(r) => Ok(Value::Int(r)),
        None => promoted(op, x, y),
    }
}

/// Floor division; `None` only for `i64::MIN // -1`.
#[inline]
pub fn floor_div(x: i64, y: i64) -> Option<i64> {
    let q = x.checked_div(y)?;
    if (x % y != 0) && ((x < 0) != (y < 0)) {
        Some(q - 1)
    } else {
        Some(q)
    }
}

/// Modulo with the sign of the divisor; `y` must be non-zero.
#[inline]
pub fn floor_mod(x: i64, y: i64) -> i64 {
    let r = x.checked_rem(y).unwrap_or(0);
    if r != 0 && ((r < 0) != (y < 0)) {
        r + y
    } else {
        r
    }
}

fn int_pow(x: i64, y: i64) -> RtResult<Value> {
    if y < 0 {
        if x == 0 {
            return zero_division("0.0 cannot be raised to a negative power");
        }
        return float_pow(x as f64, y as f64).map(Value::Float);
    }
    let r = match u32::try_from(y) {
        Ok(e) => x.checked_pow(e),
        Err(_) => match x {
            0 | 1 => Some(x),
            -1 => Some(if y % 2 == 0 { 1 } else { -1 }),
            _ => None,
        },
    };
    match r {
        Some(r) => Ok(Value::Int(r)),
        None => promoted(BinOp::Pow, x, y),
    }
}

/// `x / y` for ints, correctly rounded like CPython's `long_true_divide`.
pub fn int_true_div(x: i64, y: i64) -> RtResult<f64> {
    if y == 0 {
        return zero_division("division by zero");
    }
    const EXACT: u64 = 1 << 53;
    if x.unsigned_abs() <= EXACT && y.unsigned_abs() <= EXACT {
        return Ok(x as f64 / y as f64);
    }
    let negative = (x < 0) != (y < 0);
    let (n, d) = (x.unsigned_abs() as u128, y.unsigned_abs() as u128);
    if n == 0 {
        return Ok(if negative { -0.0 } else { 0.0 });
    }
    // Scale so the quotient has at least 56 bits; a sticky low bit then makes the
    // single u128 -> f64 rounding exact.
    let (nb, db) = (128 - n.leading_zeros(), 128 - d.leading_zeros());
    let shift = (56 + db).saturating_sub(nb);
    let scaled = n << shift;
    let q = (scaled / d) | u128::from(scaled % d != 0);
    let scale = f64::from_bits(u64::from(1023 - shift) << 52);
    let r = q as f64 * scale;
    Ok(if negative { -r } else { r })
}

fn float_op(op: BinOp, x: f64, y: f64, a: &Value, b: &Value, inplace: bool) -> RtResult<Value> {
    let r = match op {
        BinOp::Add => x + y,
        BinOp::Sub => x - y,
        BinOp::Mul => x * y,
        BinOp::Div => {
            if y == 0.0 {
                return zero_division("float division by zero");
            }
            x / y
        }
        BinOp::FloorDiv => {
            if y == 0.0 {
                return zero_division("float floor division by zero");
            }
            float_divmod(x, y).0
        }
        BinOp::Mod => {
            if y == 0.0 {
                return zero_division("float modulo");
            }
            float_mod(x, y)
        }
        BinOp::Pow => float_pow(x, y)?,
        _ => return unsupported(op, a, b, inplace),
    };
    Ok(Value::Float(r))
}

/// Python's float `%`: the result takes the sign of `y` (`y` non-zero).
pub fn float_mod(x: f64, y: f64) -> f64 {
    let m = x % y;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m + y
        } else {
            m
        }
    } else {
        0.0f64.copysign(y)
    }
}

/// CPython's `float_divmod` (`y` non-zero): floor quotient and modulo.
pub fn float_divmod(x: f64, y: f64) -> (f64, f64) {
    let mut m = x % y;
    let mut div = (x - m) / y;
    if m != 0.0 {
        if (y < 0.0) != (m < 0.0) {
            m += y;
            div -= 1.0;
        }
    } else {
        m = 0.0f64.copysign(y);
    }
    let floordiv = if div != 0.0 {
        let f = div.floor();
        if div - f > 0.5 {
            f + 1.0
        } else {
            f
        }
    } else {
        0.0f64.copysign(x / y)
    };
    (floordiv, m)
}

fn is_odd_integer(x: f64) -> bool {
    x.abs() % 2.0 == 1.0
}

/// CPython's `float_pow`, special cases first, then the platform `pow`.
pub fn float_pow(x: f64, y: f64) -> RtResult<f64> {
    if y == 0.0 {
        return Ok(1.0);
    }
    if x.is_nan() {
        return Ok(x);
    }
    if y.is_nan() {
        return Ok(if x == 1.0 { 1.0 } else { y });
    }
    if y.is_infinite() {
        let ax = x.abs();
        return Ok(if ax == 1.0 {
            1.0
        } else if (y > 0.0) == (ax > 1.0) {
            y.abs()
        } else {
            0.0
        });
    }
    if x.is_infinite() {
        let odd = is_odd_integer(y);
        return Ok(if y > 0.0 {
            if odd {
                x
            } else {
                x.abs()
            }
        } else if odd {
            0.0f64.copysign(x)
        } else {
            0.0
        });
    }
    if x == 0.0 {
        if y < 0.0 {
            return zero_division("0.0 cannot be raised to a negative power");
        }
        return Ok(if is_odd_integer(y) { x } else { 0.0 });
    }
    let mut base = x;
    let mut negate = false;
    if x < 0.0 {
        if y != y.floor() {
            // CPython returns a complex number here; Kora has none.
            return fail(
                codes::VALUE,
                "negative number cannot be raised to a fractional power",
            );
        }
        base = -x;
        negate = is_odd_integer(y);
    }
    if base == 1.0 {
        return Ok(if negate { -1.0 } else { 1.0 });
    }
    let r = base.powf(y);
    if r.is_infinite() {
        return fail(codes::OVERFLOW, "(34, 'Numerical result out of range')");
    }
    Ok(if negate { -r } else { r })
}

fn repeat(seq: &Value, n: i64) -> RtResult<Value> {
    let n = usize::try_from(n).unwrap_or(0);
    match seq {
        Value::Str(s) => {
            let s = s.as_str().as_bytes();
            let buf = repeat_vec(s, n)?;
            Ok(Value::str(String::from_utf8(buf).unwrap_or_default()))
        }
        Value::List(l) => Ok(Value::list(repeat_vec(&l.borrow(), n)?)),
        Value::Tuple(t) => Ok(Value::tuple(repeat_vec(t, n)?)),
        _ => unsupported(BinOp::Mul, seq, &Value::Int(n as i64), false),
    }
}

/// `items * n`, refusing sizes that cannot be allocated instead of aborting.
pub fn repeat_vec<T: Clone>(items: &[T], n: usize) -> RtResult<Vec<T>> {
    let Some(total) = items.len().checked_mul(n) else {
        return grow::too_large("the repeated sequence");
    };
    let mut v: Vec<T> = grow::vec(total, "the repeated sequence")?;
    if total == 0 {
        return Ok(v);
    }
    v.extend_from_slice(items);
    while v.len() < total {
        let take = v.len().min(total - v.len());
        v.extend_from_within(..take);
    }
    Ok(v)
}

fn set_op(op: BinOp, x: &Set, y: &Set) -> Set {
    match op {
        BinOp::BitOr => {
            let mut s = x.clone();
            s.extend(y.iter().cloned());
            s
        }
        BinOp::BitAnd => x.iter().filter(|k| y.contains(*k)).cloned().collect(),
        BinOp::Sub => x.iter().filter(|k| !y.contains(*k)).cloned().collect(),
        _ => {
            let mut s: Set = x.iter().filter(|k| !y.contains(*k)).cloned().collect();
            s.extend(y.iter().filter(|k| !x.contains(*k)).cloned());
            s
        }
    }
}

/// `-v`, `+v`, `~v`, `not v`.
pub fn unary(op: UnaryOp, v: &Value) -> RtResult<Value> {
    if let (inner, Some(tag)) = crate::labels::label::split(v) {
        // `not view` is a truth about what the view holds, whose labels join it.
        let tag = match op {
            UnaryOp::Not => crate::labels::label::deep(v).unwrap_or(tag),
            _ => tag,
        };
        return Ok(crate::labels::label::wrap(unary(op, &inner)?, tag));
    }
    let sym = match op {
        UnaryOp::Not => return Ok(Value::Bool(!v.truthy())),
        UnaryOp::Neg => "-",
        UnaryOp::Pos => "+",
        UnaryOp::Invert => "~",
    };
    match (op, v) {
        (UnaryOp::Neg, Value::Float(f)) => Ok(Value::Float(-f)),
        (UnaryOp::Pos, Value::Float(f)) => Ok(Value::Float(*f)),
        (UnaryOp::Neg, Value::BigInt(b)) => Ok(big_int::neg(b)),
        (UnaryOp::Invert, Value::BigInt(b)) => Ok(big_int::invert(b)),
        (UnaryOp::Pos, Value::BigInt(b)) => Ok(Value::BigInt(b.clone())),
        (_, Value::Int(_) | Value::Bool(_)) => {
            let i = as_int(v).unwrap_or(0);
            match op {
                UnaryOp::Neg => match i.checked_neg() {
                    Some(n) => Ok(Value::Int(n)),
                    None => Ok(big_int::neg(&num_bigint::BigInt::from(i))),
                },
                UnaryOp::Invert => Ok(Value::Int(!i)),
                _ => Ok(Value::Int(i)),
            }
        }
        (_, Value::Cell(c)) => unary(op, &c.borrow()),
        _ => type_error(format!(
            "bad operand type for unary {sym}: '{}'",
            type_name(v)
        )),
    }
}

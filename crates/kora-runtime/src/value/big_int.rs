//! Ints past 64 bits: what an `int` becomes when a result does not fit, as in Python.
//!
//! Small ints stay `Value::Int(i64)` and keep every fast path; an operation whose result
//! does not fit computes here and returns `Value::BigInt`. A `BigInt` value is never in
//! i64 range (`normalize` turns it back), so two ints are equal only when they have the
//! same variant and `Int` paths never need to look for a big twin. Results are CPython's
//! to the digit: floor division and modulo round toward negative infinity, bitwise
//! operators act on two's complement, `/` is correctly rounded, and text conversion has
//! CPython's 4300-digit limit. A result past `MAX_BITS` is refused with a clean
//! MemoryError rather than an allocation that would abort the process.

use std::cmp::Ordering;
use std::rc::Rc;

use kora_syntax::ast::BinOp;
use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_traits::{One, Signed, ToPrimitive, Zero};

use crate::error::{codes, fail, RtResult};
use crate::value::Value;

/// The largest result computed, in bits (512 MiB of digits): past it, CPython would be
/// out of memory or out of time too.
pub const MAX_BITS: u64 = 1 << 32;

/// CPython's `sys.int_info.default_max_str_digits`: decimal text of an int is refused past it.
pub const MAX_STR_DIGITS: usize = 4300;

/// An int, small or big, borrowed from a value.
#[derive(Clone, Copy)]
pub enum IntRef<'a> {
    Small(i64),
    Big(&'a BigInt),
}

impl IntRef<'_> {
    pub fn of(v: &Value) -> Option<IntRef<'_>> {
        match v {
            Value::Int(i) => Some(IntRef::Small(*i)),
            Value::Bool(b) => Some(IntRef::Small(*b as i64)),
            Value::BigInt(b) => Some(IntRef::Big(b)),
            _ => None,
        }
    }

    pub fn to_big(self) -> BigInt {
        match self {
            IntRef::Small(i) => BigInt::from(i),
            IntRef::Big(b) => b.clone(),
        }
    }

    pub fn is_negative(self) -> bool {
        match self {
            IntRef::Small(i) => i < 0,
            IntRef::Big(b) => b.is_negative(),
        }
    }

    /// The digits of the magnitude in `radix` (2, 8, 10 or 16), lower case.
    pub fn magnitude_digits(self, radix: u32) -> String {
        match self {
            IntRef::Small(i) => {
                let n = i.unsigned_abs();
                match radix {
                    2 => format!("{n:b}"),
                    8 => format!("{n:o}"),
                    16 => format!("{n:x}"),
                    _ => {
                        let mut d = String::new();
                        crate::value::int_text::push_u64(&mut d, n);
                        d
                    }
                }
            }
            IntRef::Big(b) => b.magnitude().to_str_radix(radix),
        }
    }

    /// `float(n)`, refusing an int too large for a float as CPython does.
    pub fn to_f64(self) -> RtResult<f64> {
        match self {
            IntRef::Small(i) => Ok(i as f64),
            IntRef::Big(b) => to_f64(b),
        }
    }
}

/// An int as a value: small when it fits in 64 bits.
pub fn normalize(b: BigInt) -> Value {
    match b.to_i64() {
        Some(i) => Value::Int(i),
        None => Value::BigInt(Rc::new(b)),
    }
}

fn too_big<T>() -> RtResult<T> {
    fail(codes::MEMORY, "MemoryError: the int result is too large")
}

fn bits(b: &BigInt) -> u64 {
    b.bits()
}

/// `float(b)`: correctly rounded, or CPython's OverflowError.
pub fn to_f64(b: &BigInt) -> RtResult<f64> {
    match b.to_f64() {
        Some(f) if f.is_finite() => Ok(f),
        _ => fail(codes::OVERFLOW, "int too large to convert to float"),
    }
}

/// `x op y` on ints of any size (at least one of them big, or a 64-bit result overflowed).
pub fn binary(op: BinOp, x: &BigInt, y: &BigInt) -> RtResult<Value> {
    Ok(match op {
        BinOp::Add => normalize(x + y),
        BinOp::Sub => normalize(x - y),
        BinOp::Mul => {
            if bits(x) + bits(y) > MAX_BITS {
                return too_big();
            }
            normalize(x * y)
        }
        BinOp::Div => Value::Float(true_div(x, y)?),
        BinOp::FloorDiv => {
            if y.is_zero() {
                return fail(codes::ZERO_DIVISION, "integer division or modulo by zero");
            }
            normalize(x.div_floor(y))
        }
        BinOp::Mod => {
            if y.is_zero() {
                return fail(codes::ZERO_DIVISION, "integer modulo by zero");
            }
            normalize(x.mod_floor(y))
        }
        BinOp::Pow => return pow(x, y),
        BinOp::BitAnd => normalize(x & y),
        BinOp::BitOr => normalize(x | y),
        BinOp::BitXor => normalize(x ^ y),
        BinOp::Shl => {
            if y.is_negative() {
                return fail(codes::VALUE, "negative shift count");
            }
            if x.is_zero() {
                return Ok(Value::Int(0));
            }
            match y.to_u64() {
                Some(n) if bits(x).saturating_add(n) <= MAX_BITS => normalize(x << n),
                _ => return too_big(),
            }
        }
        BinOp::Shr => {
            if y.is_negative() {
                return fail(codes::VALUE, "negative shift count");
            }
            match y.to_u64() {
                Some(n) if n < bits(x) => normalize(floor_shr(x, n)),
                _ => Value::Int(if x.is_negative() { -1 } else { 0 }),
            }
        }
    })
}

/// `x >> n` rounding toward negative infinity, as Python's arithmetic shift does.
fn floor_shr(x: &BigInt, n: u64) -> BigInt {
    let q = x >> n;
    // Whatever rounding the crate's shift uses, settle it as the floor of x / 2**n.
    let back = &q << n;
    if back > *x {
        q - 1
    } else if x - &back >= (BigInt::one() << n) {
        q + 1
    } else {
        q
    }
}

fn pow(x: &BigInt, y: &BigInt) -> RtResult<Value> {
    if y.is_negative() {
        if x.is_zero() {
            return fail(
                codes::ZERO_DIVISION,
                "0.0 cannot be raised to a negative power",
            );
        }
        let base = to_f64(x)?;
        let exp = to_f64(y)?;
        return crate::value::arith::float_pow(base, exp).map(Value::Float);
    }
    if x.is_zero() || x.is_one() {
        return Ok(normalize(x.clone()));
    }
    if *x == BigInt::from(-1) {
        return Ok(Value::Int(if y.is_even() { 1 } else { -1 }));
    }
    let Some(e) = y.to_u32() else {
        return too_big();
    };
    if bits(x).saturating_mul(u64::from(e)) > MAX_BITS {
        return too_big();
    }
    Ok(normalize(num_traits::Pow::pow(x, e)))
}

/// `x / y` correctly rounded, as CPython's `long_true_divide`.
pub fn true_div(x: &BigInt, y: &BigInt) -> RtResult<f64> {
    if y.is_zero() {
        return fail(codes::ZERO_DIVISION, "division by zero");
    }
    if x.is_zero() {
        let negative = y.is_negative();
        return Ok(if negative { -0.0 } else { 0.0 });
    }
    let negative = x.is_negative() != y.is_negative();
    let (a, b) = (x.magnitude(), y.magnitude());
    if a.bits() <= 53 && b.bits() <= 53 {
        let r = a.to_f64().unwrap_or(0.0) / b.to_f64().unwrap_or(1.0);
        return Ok(if negative { -r } else { r });
    }
    // Scale so the quotient has 55 or 56 bits; a sticky low bit for a non-zero remainder
    // makes the one rounding, from an integer of at most 57 bits to a float, exact.
    let shift = 55 + b.bits() as i64 - a.bits() as i64;
    let (num, den) = if shift >= 0 {
        (a << shift as u64, b.clone())
    } else {
        (a.clone(), b << (-shift) as u64)
    };
    let (q, r) = num.div_rem(&den);
    let q = q.to_u64().unwrap_or(u64::MAX) | u64::from(!r.is_zero());
    let r = ldexp(q as f64, -shift);
    if r.is_infinite() {
        return fail(
            codes::OVERFLOW,
            "integer division result too large for a float",
        );
    }
    Ok(if negative { -r } else { r })
}

/// `f * 2**e` without overflowing the intermediate power.
fn ldexp(mut f: f64, mut e: i64) -> f64 {
    while e > 1000 {
        f *= 2f64.powi(1000);
        e -= 1000;
    }
    while e < -1000 {
        f *= 2f64.powi(-1000);
        e += 1000;
    }
    f * 2f64.powi(e as i32)
}

/// `-x`.
pub fn neg(x: &BigInt) -> Value {
    normalize(-x)
}

/// `~x`.
pub fn invert(x: &BigInt) -> Value {
    normalize(-x - 1)
}

/// Exact comparison of an int with a float; `None` when the float is NaN.
pub fn cmp_float(x: &BigInt, f: f64) -> Option<Ordering> {
    if f.is_nan() {
        return None;
    }
    if f.is_infinite() {
        return Some(if f > 0.0 {
            Ordering::Less
        } else {
            Ordering::Greater
        });
    }
    let t = f.trunc();
    let ti: BigInt = num_traits::FromPrimitive::from_f64(t)?;
    Some(match x.cmp(&ti) {
        Ordering::Equal if f > t => Ordering::Less,
        Ordering::Equal if f < t => Ordering::Greater,
        o => o,
    })
}

/// The int nearest `f` toward zero (`int(1e20)`), for a finite float.
pub fn from_f64(f: f64) -> Value {
    match num_traits::FromPrimitive::from_f64(f.trunc()) {
        Some(b) => normalize(b),
        None => Value::Int(0),
    }
}

/// Decimal text, or CPython's refusal past `MAX_STR_DIGITS` digits.
pub fn to_decimal(x: &BigInt) -> RtResult<String> {
    // Each decimal digit is at least 3.32 bits: only very long ints need the count.
    if x.bits() > (MAX_STR_DIGITS as u64) * 3 {
        let digits = x.magnitude().to_str_radix(10);
        if digits.len() > MAX_STR_DIGITS {
            return fail(
                codes::VALUE,
                format!("Exceeds the limit ({MAX_STR_DIGITS} digits) for integer string conversion, as in CPython: show it in hex (`hex(n)`), or as a float"),
            );
        }
        return Ok(if x.is_negative() {
            format!("-{digits}")
        } else {
            digits
        });
    }
    Ok(x.to_string())
}

/// Refuses, as CPython does, to render an int with more than `MAX_STR_DIGITS` digits; the
/// entry points of text (`print`, `str`, `repr`, f-strings) ask before rendering.
pub fn check_text(v: &Value) -> RtResult<()> {
    if let Value::BigInt(b) = &*crate::labels::label::plain(v) {
        if b.bits() > (MAX_STR_DIGITS as u64) * 3 {
            to_decimal(b)?;
        }
    }
    Ok(())
}

/// Appends `str(x)`; an int too long for text shows CPython's refusal in its place, where
/// the caller cannot fail (a repr inside an error message).
pub fn push_decimal(x: &BigInt, out: &mut String) {
    match to_decimal(x) {
        Ok(s) => out.push_str(&s),
        Err(_) => out.push_str("<int with more than 4300 digits>"),
    }
}

/// Parses digits (no sign, no `_`) in `radix`, with CPython's limit for decimal text.
pub fn parse(digits: &str, radix: u32) -> RtResult<Option<BigInt>> {
    if radix == 10 && digits.len() > MAX_STR_DIGITS {
        return fail(
            codes::VALUE,
            format!(
                "Exceeds the limit ({MAX_STR_DIGITS} digits) for integer string conversion: value has {} digits, as CPython refuses too; read it in hex (`int(text, 16)`)",
                digits.len()
            ),
        );
    }
    Ok(BigInt::parse_bytes(digits.as_bytes(), radix))
}

/// A literal's text as the checker kept it: digits with any `0x`/`0o`/`0b` prefix.
pub fn literal(text: &str) -> Value {
    let (radix, digits) = match text.get(..2) {
        Some("0x") => (16, &text[2..]),
        Some("0o") => (8, &text[2..]),
        Some("0b") => (2, &text[2..]),
        _ => (10, text),
    };
    match BigInt::parse_bytes(digits.as_bytes(), radix) {
        Some(b) => normalize(b),
        None => Value::Int(0),
    }
}

/// CPython's `hash(n)`: `n` modulo the Mersenne prime 2**61 - 1, with the sign kept, and
/// -1 mapped to -2.
pub fn py_hash(x: &BigInt) -> i64 {
    let p = BigInt::from((1i64 << 61) - 1);
    let m = x.magnitude().clone() % p.magnitude();
    let h = m.to_i64().unwrap_or(0);
    let h = if x.sign() == Sign::Minus { -h } else { h };
    if h == -1 {
        -2
    } else {
        h
    }
}

/// `pow(base, exp, modulus)` with a non-negative exponent.
pub fn mod_pow(base: &BigInt, exp: &BigInt, modulus: &BigInt) -> RtResult<Value> {
    if modulus.is_zero() {
        return fail(codes::VALUE, "pow() 3rd argument cannot be 0");
    }
    if exp.is_negative() {
        return fail(
            codes::VALUE,
            "pow() 2nd argument cannot be negative when 3rd argument is specified",
        );
    }
    let r = base.modpow(exp, modulus);
    // Python's result takes the sign of the modulus.
    let r = if !r.is_zero() && (r.is_negative() != modulus.is_negative()) {
        r + modulus
    } else {
        r
    };
    Ok(normalize(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big(s: &str) -> BigInt {
        s.parse().expect("digits")
    }

    fn show(v: &Value) -> String {
        match v {
            Value::Int(i) => i.to_string(),
            Value::BigInt(b) => b.to_string(),
            Value::Float(f) => format!("{f:?}"),
            _ => "?".into(),
        }
    }

    #[test]
    fn results_match_cpython() {
        let x = big("-1180591620717411303424"); // -(2**70)
        let seven = BigInt::from(7);
        assert_eq!(
            show(&binary(BinOp::FloorDiv, &x, &seven).unwrap()),
            "-168655945816773043347"
        );
        assert_eq!(show(&binary(BinOp::Mod, &x, &seven).unwrap()), "5");
        assert_eq!(
            show(&binary(BinOp::Shr, &x, &BigInt::from(3)).unwrap()),
            "-147573952589676412928"
        );
        assert_eq!(
            show(&binary(BinOp::BitAnd, &x, &BigInt::from(255)).unwrap()),
            "0"
        );
        assert_eq!(
            show(&invert(&big("1180591620717411303424"))),
            "-1180591620717411303425"
        );
        assert_eq!(
            show(&binary(BinOp::Shr, &BigInt::from(-7), &BigInt::one()).unwrap()),
            "-4"
        );
        assert_eq!(
            show(&binary(BinOp::Div, &big("1180591620717411303424"), &BigInt::from(3)).unwrap()),
            "3.935305402391371e20"
        );
        let p = binary(BinOp::Pow, &BigInt::from(10), &BigInt::from(400)).unwrap();
        let Value::BigInt(p) = p else { panic!("big") };
        assert!(true_div(&p, &BigInt::from(3)).is_err());
        assert_eq!(true_div(&p, &(&*p / BigInt::from(10))).unwrap(), 10.0);
        assert!(to_f64(&p).is_err());
        assert_eq!(py_hash(&big("1180591620717411303424")), 512);
        assert_eq!(py_hash(&big("-1180591620717411303424")), -512);
        assert_eq!(py_hash(&big("2305843009213693951")), 0);
    }

    #[test]
    fn results_come_back_small_when_they_fit() {
        let a = big("9223372036854775808");
        assert!(matches!(
            binary(BinOp::Sub, &a, &BigInt::one()).unwrap(),
            Value::Int(i64::MAX)
        ));
        assert!(matches!(neg(&a), Value::Int(i64::MIN)));
    }

    #[test]
    fn huge_results_are_refused_cleanly() {
        let two = BigInt::from(2);
        assert!(binary(BinOp::Pow, &two, &BigInt::from(1u64 << 40)).is_err());
        assert!(binary(BinOp::Shl, &two, &BigInt::from(1u64 << 40)).is_err());
        assert!(to_decimal(
            &binary(BinOp::Pow, &BigInt::from(10), &BigInt::from(5000))
                .map(|v| match v {
                    Value::BigInt(b) => (*b).clone(),
                    _ => BigInt::zero(),
                })
                .unwrap()
        )
        .is_err());
    }

    #[test]
    fn comparisons_with_floats_are_exact() {
        let a = big("18446744073709551616"); // 2**64
        assert_eq!(cmp_float(&a, 18446744073709551616.0), Some(Ordering::Equal));
        assert_eq!(cmp_float(&a, 1.9e19), Some(Ordering::Less));
        assert_eq!(
            cmp_float(&(&a + 1), 18446744073709551616.0),
            Some(Ordering::Greater)
        );
        assert_eq!(cmp_float(&a, f64::INFINITY), Some(Ordering::Less));
        assert_eq!(cmp_float(&a, f64::NAN), None);
    }
}

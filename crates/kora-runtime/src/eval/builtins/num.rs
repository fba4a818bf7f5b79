//! Numeric built-ins: `abs`, `round` (half-even on the exact binary value), `divmod`, `pow`, `hash`, and
//! `hex`/`oct`/`bin`.

use kora_check::hir::Sym;

use super::args;
use crate::error::{codes, fail, type_error, RtResult};
use crate::value::arith::{binary, float_divmod, floor_div, floor_mod};
use crate::value::big_int::{self, IntRef};
use crate::value::caller::Caller;
use crate::value::format::type_name;
use crate::value::Value;
use kora_syntax::ast::BinOp;
use num_traits::Signed;

pub(super) fn abs(a: &[Value], kwargs: &[(Sym, Value)]) -> RtResult<Value> {
    args::no_kwargs("abs", kwargs)?;
    args::exactly_one("abs", a)?;
    match &a[0] {
        Value::Int(i) => match i.checked_abs() {
            Some(v) => Ok(Value::Int(v)),
            None => Ok(big_int::normalize(num_bigint::BigInt::from(*i).abs())),
        },
        Value::BigInt(b) => Ok(big_int::normalize(b.abs())),
        Value::Bool(b) => Ok(Value::Int(*b as i64)),
        Value::Float(f) => Ok(Value::Float(f.abs())),
        v => type_error(format!("bad operand type for abs(): '{}'", type_name(v))),
    }
}

pub(super) fn round(
    ctx: &mut dyn Caller,
    mut a: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let p = ctx.program();
    if let Some(n) = args::take_named(p, &mut kwargs, "ndigits") {
        a.push(n);
    }
    args::done(p, &kwargs, "round")?;
    args::count("round", &a, 1, 2)?;
    let nd = args::opt_index(a.get(1))?;
    match (&a[0], nd) {
        (Value::BigInt(b), None) => Ok(Value::BigInt(b.clone())),
        (Value::BigInt(b), Some(n)) => round_big(b, n),
        (Value::Int(_) | Value::Bool(_), None) => Ok(Value::Int(args::index(&a[0])?)),
        (Value::Int(_) | Value::Bool(_), Some(n)) => {
            let x = args::index(&a[0])?;
            match round_int(x, n) {
                Ok(r) => Ok(Value::Int(r)),
                Err(_) => round_big(&num_bigint::BigInt::from(x), n),
            }
        }
        (Value::Float(f), None) => super::convert::float_to_int_value(f.round_ties_even()),
        (Value::Float(f), Some(n)) => round_float(*f, n).map(Value::Float),
        (v, _) => type_error(format!(
            "type {} doesn't define __round__ method",
            type_name(v)
        )),
    }
}

/// `round(x, n)` for a big int: unchanged for `n >= 0`, else half-even to `10**-n`.
fn round_big(x: &num_bigint::BigInt, n: i64) -> RtResult<Value> {
    use num_integer::Integer;
    if n >= 0 {
        return Ok(Value::BigInt(std::rc::Rc::new(x.clone())));
    }
    let k = u32::try_from(n.unsigned_abs())
        .unwrap_or(u32::MAX)
        .min(100_000);
    let pow = num_traits::Pow::pow(num_bigint::BigInt::from(10), k);
    let (q, r) = x.div_mod_floor(&pow);
    let twice: num_bigint::BigInt = &r * 2;
    let up = twice > pow || (twice == pow && q.is_odd());
    Ok(big_int::normalize((q + u8::from(up)) * pow))
}

/// `round(x, n)` for an int: unchanged for `n >= 0`, else half-even to `10**-n`.
fn round_int(x: i64, n: i64) -> RtResult<i64> {
    if n >= 0 {
        return Ok(x);
    }
    let k = n.unsigned_abs();
    if k > 19 {
        // 10**20 is more than twice any i64, so everything rounds to zero.
        return Ok(0);
    }
    let pow = 10i128.pow(k as u32);
    let x = x as i128;
    let q = x.div_euclid(pow);
    let r = x.rem_euclid(pow);
    let up = 2 * r > pow || (2 * r == pow && q % 2 != 0);
    let result = (q + up as i128) * pow;
    // A result past 64 bits is one `round_big` gives; only i64 extremes get here.
    i64::try_from(result).or_else(|_| {
        fail(
            codes::OVERFLOW,
            format!("round({x}, {n}) does not fit: use round on a big int"),
        )
    })
}

/// `round(x, n)` for a float: correctly rounded (half-even on the exact binary value)
/// to `n` decimal places, as CPython's dtoa-based `double_round`.
pub fn round_float(x: f64, n: i64) -> RtResult<f64> {
    if !x.is_finite() || x == 0.0 {
        return Ok(x);
    }
    if n > 323 {
        return Ok(x);
    }
    if n < -308 {
        return Ok(0.0 * x);
    }
    let r = if n >= 0 {
        format!("{:.*}", n as usize, x).parse::<f64>().unwrap_or(x)
    } else {
        round_left_of_point(x, n.unsigned_abs() as usize)
    };
    if r.is_infinite() {
        return fail(codes::OVERFLOW, "rounded value too large to represent");
    }
    Ok(r)
}

/// Rounds to a multiple of `10**k` (k >= 1) using the exact decimal digits of `x`.
fn round_left_of_point(x: f64, k: usize) -> f64 {
    let int_part = x.trunc();
    let has_fraction = x != int_part;
    let digits = format!("{:.0}", int_part.abs());
    let negative = x.is_sign_negative();
    let signed = |s: String| {
        let v = s.parse::<f64>().unwrap_or(0.0);
        if negative {
            -v
        } else {
            v
        }
    };
    if digits.len() < k {
        // |x| < 10**(k-1) < half of 10**k.
        return signed("0".to_string());
    }
    let (head, tail) = digits.split_at(digits.len() - k);
    let tail = tail.as_bytes();
    let half_cmp = tail[0].cmp(&b'5').then_with(|| {
        if tail[1..].iter().any(|&d| d != b'0') {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    let last_odd = head.as_bytes().last().is_some_and(|d| (d - b'0') % 2 == 1);
    let up = match half_cmp {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Less => false,
        std::cmp::Ordering::Equal => has_fraction || last_odd,
    };
    let mut head: Vec<u8> = if head.is_empty() {
        vec![b'0']
    } else {
        head.as_bytes().to_vec()
    };
    if up {
        let mut i = head.len();
        loop {
            if i == 0 {
                head.insert(0, b'1');
                break;
            }
            i -= 1;
            if head[i] == b'9' {
                head[i] = b'0';
            } else {
                head[i] += 1;
                break;
            }
        }
    }
    let mut s = String::from_utf8(head).unwrap_or_default();
    s.push('e');
    s.push_str(&k.to_string());
    signed(s)
}

pub(super) fn divmod(a: &[Value], kwargs: &[(Sym, Value)]) -> RtResult<Value> {
    args::no_kwargs("divmod", kwargs)?;
    args::count("divmod", a, 2, 2)?;
    let int = |v: &Value| match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    };
    let float = |v: &Value| match v {
        Value::Float(f) => Some(*f),
        Value::BigInt(b) => big_int::to_f64(b).ok(),
        _ => int(v).map(|i| i as f64),
    };
    if let (Some(x), Some(y)) = (int(&a[0]), int(&a[1])) {
        if y == 0 {
            return fail(codes::ZERO_DIVISION, "integer division or modulo by zero");
        }
        if let Some(q) = floor_div(x, y) {
            return Ok(Value::tuple(vec![
                Value::Int(q),
                Value::Int(floor_mod(x, y)),
            ]));
        }
    }
    if let (Some(x), Some(y)) = (IntRef::of(&a[0]), IntRef::of(&a[1])) {
        let (x, y) = (x.to_big(), y.to_big());
        let q = big_int::binary(BinOp::FloorDiv, &x, &y)?;
        let r = big_int::binary(BinOp::Mod, &x, &y)?;
        return Ok(Value::tuple(vec![q, r]));
    }
    if let (Some(x), Some(y)) = (float(&a[0]), float(&a[1])) {
        if y == 0.0 {
            return fail(codes::ZERO_DIVISION, "float divmod()");
        }
        let (q, r) = float_divmod(x, y);
        return Ok(Value::tuple(vec![Value::Float(q), Value::Float(r)]));
    }
    type_error(format!(
        "unsupported operand type(s) for divmod(): '{}' and '{}'",
        type_name(&a[0]),
        type_name(&a[1])
    ))
}

/// `hex`, `oct` or `bin` (`name`) of an int: Python's prefixed digits, the sign before the prefix.
pub(super) fn radix(name: &str, a: &[Value], kwargs: &[(Sym, Value)]) -> RtResult<Value> {
    args::no_kwargs(name, kwargs)?;
    args::exactly_one(name, a)?;
    let n = match IntRef::of(&a[0]) {
        Some(n) => n,
        None => return args::index(&a[0]).map(|_| Value::None),
    };
    let sign = if n.is_negative() { "-" } else { "" };
    let (prefix, r) = match name {
        "hex" => ("0x", 16),
        "oct" => ("0o", 8),
        _ => ("0b", 2),
    };
    Ok(Value::str(format!(
        "{sign}{prefix}{}",
        n.magnitude_digits(r)
    )))
}

pub(super) fn pow(a: &[Value], kwargs: &[(Sym, Value)]) -> RtResult<Value> {
    args::no_kwargs("pow", kwargs)?;
    args::count("pow", a, 2, 3)?;
    let Some(m) = a.get(2).filter(|m| !matches!(m, Value::None)) else {
        return binary(BinOp::Pow, &a[0], &a[1]);
    };
    let int = |v: &Value| match v {
        Value::Int(i) => Some(*i),
        Value::Bool(b) => Some(*b as i64),
        _ => None,
    };
    let (Some(base), Some(exp), Some(m)) = (int(&a[0]), int(&a[1]), int(m)) else {
        if let (Some(b), Some(e), Some(m)) = (IntRef::of(&a[0]), IntRef::of(&a[1]), IntRef::of(m)) {
            return big_int::mod_pow(&b.to_big(), &e.to_big(), &m.to_big());
        }
        return type_error("pow() 3rd argument not allowed unless all arguments are integers");
    };
    if m == 0 {
        return fail(codes::VALUE, "pow() 3rd argument cannot be 0");
    }
    let modulus = m.unsigned_abs() as u128;
    let mut b = (base as i128).rem_euclid(modulus as i128) as u128;
    if exp < 0 {
        match mod_inverse(b, modulus) {
            Some(inv) => b = inv,
            None => return fail(codes::VALUE, "base is not invertible for the given modulus"),
        }
    }
    let mut e = exp.unsigned_abs();
    let mut r: u128 = 1 % modulus;
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % modulus;
        }
        b = b * b % modulus;
        e >>= 1;
    }
    let mut r = r as i128;
    if m < 0 && r != 0 {
        r -= modulus as i128;
    }
    Ok(Value::Int(r as i64))
}

fn mod_inverse(a: u128, m: u128) -> Option<u128> {
    let (mut old_r, mut r) = (a as i128, m as i128);
    let (mut old_s, mut s) = (1i128, 0i128);
    while r != 0 {
        let q = old_r / r;
        (old_r, r) = (r, old_r - q * r);
        (old_s, s) = (s, old_s - q * s);
    }
    (old_r == 1).then(|| old_s.rem_euclid(m as i128) as u128)
}

const MODULUS: u64 = (1 << 61) - 1;

/// `hash(v)`: CPython's values for ints, floats, bools and tuples of them. Strings
/// hash deterministically (CPython salts them per process, so no program can rely on them).
pub fn py_hash(v: &Value) -> i64 {
    let h = match v {
        Value::None => 0x5f3759df,
        Value::Bool(b) => *b as i64,
        Value::Int(i) => {
            let h = (i.unsigned_abs() % MODULUS) as i64;
            if *i < 0 {
                -h
            } else {
                h
            }
        }
        Value::BigInt(b) => big_int::py_hash(b),
        Value::Float(f) => hash_float(*f),
        Value::Str(s) => {
            // FNV-1a, then folded into the non-negative range CPython's modulus uses.
            let mut h: u64 = 0xcbf29ce484222325;
            for b in s.as_str().bytes() {
                h = (h ^ b as u64).wrapping_mul(0x100000001b3);
            }
            h as i64
        }
        Value::Tuple(t) => {
            const P1: u64 = 11400714785074694791;
            const P2: u64 = 14029467366897019727;
            const P5: u64 = 2870177450012600261;
            let mut acc = P5;
            for x in t.iter() {
                let lane = py_hash(x) as u64;
                acc = acc.wrapping_add(lane.wrapping_mul(P2));
                acc = acc.rotate_left(31);
                acc = acc.wrapping_mul(P1);
            }
            acc = acc.wrapping_add((t.len() as u64) ^ (P5 ^ 3527539));
            if acc == u64::MAX {
                return 1546275796;
            }
            acc as i64
        }
        Value::Outcome(o) => (o.tag as i64 + 1).wrapping_mul(1_000_003) ^ py_hash(&o.payload),
        Value::Builtin(b) => b.0 as i64 + 0x1000,
        Value::Type(t) => t.0 as i64 + 0x2000,
        Value::Module(m) => m.0 as i64 + 0x3000,
        Value::Func(f) => (std::rc::Rc::as_ptr(f) as usize >> 4) as i64,
        Value::Cell(c) => py_hash(&c.borrow()),
        _ => 0,
    };
    if h == -1 {
        -2
    } else {
        h
    }
}

/// CPython's `_Py_HashDouble` (NaN hashes to 0; CPython uses the object's address).
fn hash_float(v: f64) -> i64 {
    if v.is_infinite() {
        return if v > 0.0 { 314159 } else { -314159 };
    }
    if v.is_nan() || v == 0.0 {
        return 0;
    }
    let (mut m, mut e) = frexp(v);
    let sign: i64 = if m < 0.0 {
        m = -m;
        -1
    } else {
        1
    };
    let mut x: u64 = 0;
    while m != 0.0 {
        x = ((x << 28) & MODULUS) | (x >> (61 - 28));
        m *= 268435456.0;
        e -= 28;
        let y = m as u64;
        m -= y as f64;
        x += y;
        if x >= MODULUS {
            x -= MODULUS;
        }
    }
    let e = if e >= 0 {
        e % 61
    } else {
        61 - 1 - ((-1 - e) % 61)
    } as u32;
    x = ((x << e) & MODULUS) | (x >> (61 - e));
    (x as i64) * sign
}

/// `frexp`: `v = m * 2**e` with `0.5 <= |m| < 1` (v finite, non-zero).
fn frexp(v: f64) -> (f64, i32) {
    let bits = v.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    if exp == 0 {
        // Subnormal: scale into the normal range first.
        let (m, e) = frexp(v * f64::from_bits(0x4350_0000_0000_0000)); // 2**54
        return (m, e - 54);
    }
    let m = f64::from_bits((bits & !(0x7ff << 52)) | (1022 << 52));
    (m, exp - 1022)
}

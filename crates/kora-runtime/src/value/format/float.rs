//! Float to decimal text: Python's shortest `repr` and the `e`/`f`/`g`/`%` presentations.
//!
//! Rust's float formatting is correctly rounded (ties to even on the exact binary
//! value), like David Gay's `dtoa` that CPython uses; we take its digits and lay
//! them out with a port of CPython's `format_float_short`.

use std::fmt::{self, Write as _};

/// Rust's formatted output of one float, kept on the stack: repr is on the hot path.
struct StackBuf {
    b: [u8; 48],
    n: usize,
}

impl StackBuf {
    fn new() -> StackBuf {
        StackBuf { b: [0; 48], n: 0 }
    }

    fn as_str(&self) -> &str {
        // Only `write_str` fills the buffer, with whole `&str`s.
        std::str::from_utf8(&self.b[..self.n]).unwrap_or("")
    }
}

impl fmt::Write for StackBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.n.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.b.get_mut(self.n..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.n = end;
        Ok(())
    }
}

/// `repr(f)` exactly as CPython prints it.
pub fn float_repr(f: f64) -> String {
    let mut s = String::new();
    write_float_repr(f, &mut s);
    s
}

/// Appends `repr(f)`: shortest round-trip digits, exponent form below 1e-4 and from 1e16.
pub fn write_float_repr(f: f64, out: &mut String) {
    if f.is_nan() {
        out.push_str("nan");
        return;
    }
    if f.is_infinite() {
        out.push_str(if f > 0.0 { "inf" } else { "-inf" });
        return;
    }
    if f.fract() == 0.0 && f.abs() < 1e16 {
        // Integral values print as `N.0`; `f as i64` is exact below 2**63.
        if f == 0.0 && f.is_sign_negative() {
            out.push_str("-0.0");
        } else {
            let _ = write!(out, "{}.0", f as i64);
        }
        return;
    }
    let mut buf = StackBuf::new();
    if write!(buf, "{:e}", f.abs()).is_err() {
        // Unreachable in practice (shortest output is under 30 bytes); stay total anyway.
        let _ = write!(out, "{f}");
        return;
    }
    let (digits, decpt) = split_exp(buf.as_str());
    let mut dbuf = [0u8; 40];
    let mut nd = 0;
    for b in digits.bytes().filter(|b| b.is_ascii_digit()) {
        if let Some(slot) = dbuf.get_mut(nd) {
            *slot = b;
            nd += 1;
        }
    }
    let mut decpt = decpt;
    if nd >= 16 {
        // Two shortest candidates can be equally close (900719925474099.25 has
        // .2 and .3); dtoa then takes the even digit, Rust the upper one. Exact
        // rounding to the same length, ties to even, gives dtoa's answer when it
        // still reads back as `f` (next to a power of two it may not). Ties need
        // at least 16 digits, so shorter reprs skip this.
        let mut exact = StackBuf::new();
        if write!(exact, "{:.*e}", nd - 1, f.abs()).is_ok()
            && exact.as_str().parse::<f64>() == Ok(f.abs())
        {
            let (m, d) = split_exp(exact.as_str());
            nd = 0;
            for b in m.bytes().filter(|b| b.is_ascii_digit()) {
                if let Some(slot) = dbuf.get_mut(nd) {
                    *slot = b;
                    nd += 1;
                }
            }
            while nd > 1 && dbuf[nd - 1] == b'0' {
                nd -= 1;
            }
            decpt = d;
        }
    }
    let digits = std::str::from_utf8(&dbuf[..nd]).unwrap_or("0");
    if f < 0.0 {
        out.push('-');
    }
    let use_exp = decpt <= -4 || decpt > 16;
    compose(out, digits, decpt, use_exp, nd as i64, true, false, false);
}

/// Splits Rust's `{:e}` output (`1.25e-7`) into mantissa and Python's `decpt` (exponent + 1).
fn split_exp(s: &str) -> (&str, i64) {
    match s.split_once('e') {
        Some((m, e)) => (m, e.parse::<i64>().unwrap_or(0) + 1),
        None => (s, 1),
    }
}

/// Significant digits of a finite, non-negative `x` rounded to `n >= 1` digits, trailing
/// zeros removed (dtoa mode 2), and `decpt`.
fn sig_digits(x: f64, n: usize) -> (String, i64) {
    let s = format!("{:.*e}", n - 1, x);
    let (m, decpt) = split_exp(&s);
    let mut digits: String = m.chars().filter(char::is_ascii_digit).collect();
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    if digits == "0" {
        return (digits, 1);
    }
    (digits, decpt)
}

/// CPython's `format_float_short` layout of `0.DIGITS × 10^decpt`, without the sign.
#[allow(clippy::too_many_arguments)]
fn compose(
    out: &mut String,
    digits: &str,
    decpt: i64,
    use_exp: bool,
    vdigits_end: i64,
    add_dot_0: bool,
    alt: bool,
    upper: bool,
) {
    let digits_len = digits.len() as i64;
    let (mut decpt, mut exp) = (decpt, 0);
    if use_exp {
        exp = decpt - 1;
        decpt = 1;
    }
    let vstart = if decpt <= 0 { decpt - 1 } else { 0 };
    let vend = if !use_exp && add_dot_0 {
        vdigits_end.max(decpt + 1)
    } else {
        vdigits_end.max(decpt)
    };
    let zeros = |out: &mut String, n: i64| {
        for _ in 0..n.max(0) {
            out.push('0');
        }
    };
    if decpt <= 0 {
        zeros(out, decpt - vstart);
        out.push('.');
        zeros(out, -decpt);
    } else {
        zeros(out, -vstart);
    }
    if 0 < decpt && decpt <= digits_len {
        let (a, b) = digits.split_at(decpt as usize);
        out.push_str(a);
        out.push('.');
        out.push_str(b);
    } else {
        out.push_str(digits);
    }
    if digits_len < decpt {
        zeros(out, decpt - digits_len);
        out.push('.');
        zeros(out, vend - decpt);
    } else {
        zeros(out, vend - digits_len);
    }
    if out.ends_with('.') && !alt {
        out.pop();
    }
    if use_exp {
        out.push(if upper { 'E' } else { 'e' });
        let _ = write!(out, "{exp:+03}");
    }
}

/// The number part of `format(x, spec)` for a float: `ty` is the presentation type
/// (`'\0'` when omitted), `precision` as given. The result carries a `-` when negative
/// (never `+`: the caller lays out signs and padding).
pub(super) fn format_float_body(
    x: f64,
    ty: char,
    precision: Option<usize>,
    alt: bool,
    no_neg_0: bool,
) -> String {
    let (mut ty, add_dot_0, default_precision) = match ty {
        '\0' => ('r', true, 0),
        'n' => ('g', false, 6),
        t => (t, false, 6),
    };
    let mut val = x;
    let mut pct = false;
    if ty == '%' {
        ty = 'f';
        val *= 100.0;
        pct = true;
    }
    let mut precision = match precision {
        None => default_precision,
        Some(p) => {
            if ty == 'r' {
                ty = 'g';
            }
            p
        }
    };
    let upper = ty.is_ascii_uppercase();
    let ty = ty.to_ascii_lowercase();
    let mut out = String::new();
    if val.is_nan() {
        out.push_str(if upper { "NAN" } else { "nan" });
    } else if val.is_infinite() {
        if val < 0.0 {
            out.push('-');
        }
        out.push_str(if upper { "INF" } else { "inf" });
    } else {
        let negative = val.is_sign_negative();
        let a = val.abs();
        if negative {
            out.push('-');
        }
        let body_start = out.len();
        match ty {
            'f' => {
                let _ = write!(out, "{a:.precision$}");
                if alt && precision == 0 {
                    out.push('.');
                }
            }
            'e' => {
                let (digits, decpt) = sig_digits(a, precision.saturating_add(1));
                let vend = precision.saturating_add(1) as i64;
                compose(&mut out, &digits, decpt, true, vend, false, alt, upper);
            }
            'g' => {
                if precision == 0 {
                    precision = 1;
                }
                let (digits, decpt) = sig_digits(a, precision);
                let p = precision as i64;
                let limit = if add_dot_0 { p - 1 } else { p };
                let use_exp = decpt <= -4 || decpt > limit;
                let vend = if alt { p } else { digits.len() as i64 };
                compose(
                    &mut out, &digits, decpt, use_exp, vend, add_dot_0, alt, upper,
                );
            }
            _ => {
                // 'r': the shortest repr, with `.0` on integers.
                let mut s = String::new();
                write_float_repr(a, &mut s);
                if alt && !s.contains('.') {
                    // `format(1e16, '#')` keeps a decimal point: `1.e+16`.
                    if let Some(i) = s.find('e') {
                        s.insert(i, '.');
                    }
                }
                out.push_str(&s);
            }
        }
        if no_neg_0 && negative {
            let mantissa = out[body_start..].split(['e', 'E']).next().unwrap_or("");
            if mantissa.bytes().all(|b| b == b'0' || b == b'.') {
                out.remove(0);
            }
        }
    }
    if pct {
        out.push('%');
    }
    out
}

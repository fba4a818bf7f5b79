//! The format-spec mini-language, `[[fill]align][sign][z][#][0][width][grouping][.precision][type]`.
//!
//! A port of CPython 3.11's `formatter_unicode.c`, including its quirks: zero
//! padding with `=` alignment is grouped (`f"{1234:08,}"` is `0,001,234`), `'0'`
//! only implies `=` for numbers, and `bool` formats as `int` once a spec is given.

use kora_check::hir::Program;

use super::float::{format_float_body, write_float_repr};
use crate::error::{codes, fail, type_error, RtResult};
use crate::value::big_int::IntRef;
use crate::value::unicode;
use crate::value::Value;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Grouping {
    None,
    Comma,
    Underscore,
    /// `_` with `b`, `o`, `x`, `X`: every four digits.
    UnderFour,
}

struct Spec {
    fill: char,
    align: char,
    /// `'+'`, `' '`, `'-'`, or `'\0'` when absent.
    sign: char,
    no_neg_0: bool,
    alt: bool,
    width: Option<usize>,
    grouping: Grouping,
    precision: Option<usize>,
    /// `'\0'` when absent.
    ty: char,
}

/// `format(v, spec)`.
pub fn format_value(p: &Program, v: &Value, spec: &str) -> RtResult<String> {
    match v {
        Value::Str(s) if spec.is_empty() => Ok(s.as_str().to_string()),
        Value::Str(s) => format_str(s.as_str(), spec),
        Value::Int(i) if spec.is_empty() => Ok(i.to_string()),
        Value::Int(i) => format_int(IntRef::Small(*i), spec, "int"),
        Value::BigInt(b) if spec.is_empty() => crate::value::big_int::to_decimal(b),
        Value::BigInt(b) => format_int(IntRef::Big(b), spec, "int"),
        Value::Bool(b) if spec.is_empty() => Ok(if *b { "True" } else { "False" }.to_string()),
        Value::Bool(b) => format_int(IntRef::Small(*b as i64), spec, "bool"),
        Value::Float(f) if spec.is_empty() => {
            let mut s = String::new();
            write_float_repr(*f, &mut s);
            Ok(s)
        }
        Value::Float(f) => format_float(*f, spec),
        Value::Cell(c) => format_value(p, &c.borrow(), spec),
        _ if spec.is_empty() => Ok(super::to_string(p, v)),
        _ => type_error(format!(
            "unsupported format string passed to {}.__format__",
            super::type_name_in(p, v)
        )),
    }
}

fn value_error<T>(msg: impl Into<String>) -> RtResult<T> {
    fail(codes::VALUE, msg)
}

fn quoted_code(c: char) -> String {
    if (c as u32) > 32 && (c as u32) < 128 {
        format!("'{c}'")
    } else {
        format!("'\\x{:x}'", c as u32)
    }
}

fn unknown_type<T>(ty: char, type_name: &str) -> RtResult<T> {
    value_error(format!(
        "Unknown format code {} for object of type '{type_name}'",
        quoted_code(ty)
    ))
}

/// Reads decimal digits (any script, as CPython does) starting at `*pos`.
fn get_integer(chars: &[char], pos: &mut usize) -> RtResult<Option<usize>> {
    let mut acc: usize = 0;
    let mut any = false;
    while let Some(d) = chars.get(*pos).and_then(|c| unicode::decimal_value(*c)) {
        acc = match acc
            .checked_mul(10)
            .and_then(|a| a.checked_add(d as usize))
            .filter(|a| *a <= isize::MAX as usize)
        {
            Some(a) => a,
            None => return value_error("Too many decimal digits in format string"),
        };
        any = true;
        *pos += 1;
    }
    Ok(any.then_some(acc))
}

fn parse(spec: &str, default_type: char, default_align: char, tname: &str) -> RtResult<Spec> {
    let chars: Vec<char> = spec.chars().collect();
    let is_align = |c: Option<&char>| matches!(c, Some('<' | '>' | '=' | '^'));
    let mut s = Spec {
        fill: ' ',
        align: default_align,
        sign: '\0',
        no_neg_0: false,
        alt: false,
        width: None,
        grouping: Grouping::None,
        precision: None,
        ty: default_type,
    };
    let mut pos = 0;
    let (mut fill_specified, mut align_specified) = (false, false);
    if chars.len() >= 2 && is_align(chars.get(1)) {
        s.fill = chars[0];
        s.align = chars[1];
        fill_specified = true;
        align_specified = true;
        pos = 2;
    } else if is_align(chars.first()) {
        s.align = chars[0];
        align_specified = true;
        pos = 1;
    }
    if let Some(&c @ ('+' | '-' | ' ')) = chars.get(pos) {
        s.sign = c;
        pos += 1;
    }
    if chars.get(pos) == Some(&'z') {
        s.no_neg_0 = true;
        pos += 1;
    }
    if chars.get(pos) == Some(&'#') {
        s.alt = true;
        pos += 1;
    }
    if !fill_specified && chars.get(pos) == Some(&'0') {
        s.fill = '0';
        if !align_specified && default_align == '>' {
            s.align = '=';
        }
        pos += 1;
    }
    s.width = get_integer(&chars, &mut pos)?;
    if chars.get(pos) == Some(&',') {
        s.grouping = Grouping::Comma;
        pos += 1;
    }
    if chars.get(pos) == Some(&'_') {
        if s.grouping != Grouping::None {
            return value_error("Cannot specify both ',' and '_'.");
        }
        s.grouping = Grouping::Underscore;
        pos += 1;
    }
    if chars.get(pos) == Some(&',') && s.grouping == Grouping::Underscore {
        return value_error("Cannot specify both ',' and '_'.");
    }
    if chars.get(pos) == Some(&'.') {
        pos += 1;
        match get_integer(&chars, &mut pos)? {
            Some(p) => s.precision = Some(p),
            None => return value_error("Format specifier missing precision"),
        }
    }
    match chars.len() - pos.min(chars.len()) {
        0 => {}
        1 => s.ty = chars[pos],
        _ => {
            return value_error(format!(
                "Invalid format specifier '{spec}' for object of type '{tname}'"
            ))
        }
    }
    if s.grouping != Grouping::None {
        match s.ty {
            'd' | 'e' | 'f' | 'g' | 'E' | 'G' | '%' | 'F' | '\0' => {}
            'b' | 'o' | 'x' | 'X' if s.grouping == Grouping::Underscore => {
                s.grouping = Grouping::UnderFour;
            }
            t => {
                let sep = if s.grouping == Grouping::Comma {
                    ','
                } else {
                    '_'
                };
                return value_error(format!("Cannot specify '{sep}' with {}.", quoted_code(t)));
            }
        }
    }
    Ok(s)
}

fn format_str(v: &str, spec: &str) -> RtResult<String> {
    let s = parse(spec, 's', '<', "str")?;
    if s.ty != 's' {
        return unknown_type(s.ty, "str");
    }
    if s.sign == ' ' {
        return value_error("Space not allowed in string format specifier");
    }
    if s.sign != '\0' {
        return value_error("Sign not allowed in string format specifier");
    }
    if s.no_neg_0 {
        return value_error("Negative zero coercion (z) not allowed in string format specifier");
    }
    if s.alt {
        return value_error("Alternate form (#) not allowed in string format specifier");
    }
    if s.align == '=' {
        return value_error("'=' alignment not allowed in string format specifier");
    }
    let text = match s.precision {
        Some(p) => match v.char_indices().nth(p) {
            Some((i, _)) => &v[..i],
            None => v,
        },
        None => v,
    };
    let len = text.chars().count();
    let width = s.width.unwrap_or(0);
    let pad = width.saturating_sub(len);
    let left = match s.align {
        '>' => pad,
        '^' => pad / 2,
        _ => 0,
    };
    let mut out = reserve(
        pad.saturating_mul(s.fill.len_utf8())
            .saturating_add(text.len()),
    )?;
    push_fill(&mut out, s.fill, left);
    out.push_str(text);
    push_fill(&mut out, s.fill, pad - left);
    Ok(out)
}

/// Longest formatted field we build; beyond it CPython would raise MemoryError too.
const MAX_FIELD: usize = 1 << 28;

/// A buffer for `n` bytes, refusing sizes that cannot sensibly be allocated.
pub(crate) fn reserve(n: usize) -> RtResult<String> {
    let mut out = String::new();
    if n > crate::value::grow::max_bytes() || out.try_reserve(n).is_err() {
        return crate::value::grow::too_large("the formatted value");
    }
    Ok(out)
}

fn push_fill(out: &mut String, c: char, n: usize) {
    for _ in 0..n {
        out.push(c);
    }
}

fn format_int(i: IntRef<'_>, spec: &str, tname: &str) -> RtResult<String> {
    let s = parse(spec, 'd', '>', tname)?;
    match s.ty {
        'b' | 'c' | 'd' | 'o' | 'x' | 'X' | 'n' => {}
        'e' | 'E' | 'f' | 'F' | 'g' | 'G' | '%' => return float_with(i.to_f64()?, &s),
        t => return unknown_type(t, tname),
    }
    if s.precision.is_some() {
        return value_error("Precision not allowed in integer format specifier");
    }
    if s.no_neg_0 {
        return value_error("Negative zero coercion (z) not allowed in integer format specifier");
    }
    if s.ty == 'c' {
        if s.sign != '\0' {
            return value_error("Sign not allowed with integer format specifier 'c'");
        }
        if s.alt {
            return value_error("Alternate form (#) not allowed with integer format specifier 'c'");
        }
        let small = match i {
            IntRef::Small(n) => Some(n),
            IntRef::Big(_) => None,
        };
        let c = match small
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n <= 0x10ffff)
        {
            Some(n) => match char::from_u32(n) {
                Some(c) => c,
                None => {
                    return value_error("%c arg is a lone surrogate, which a Kora str cannot hold")
                }
            },
            None => return fail(codes::OVERFLOW, "%c arg not in range(0x110000)"),
        };
        return layout(&s, false, "", "", c.encode_utf8(&mut [0; 4]), None);
    }
    if let IntRef::Big(b) = i {
        if matches!(s.ty, 'd' | 'n') {
            // The same digit limit as `str(n)`.
            crate::value::big_int::to_decimal(b)?;
        }
    }
    let (digits, prefix) = match s.ty {
        'b' => (i.magnitude_digits(2), "0b"),
        'o' => (i.magnitude_digits(8), "0o"),
        'x' => (i.magnitude_digits(16), "0x"),
        'X' => (i.magnitude_digits(16).to_ascii_uppercase(), "0X"),
        _ => (i.magnitude_digits(10), ""),
    };
    let prefix = if s.alt { prefix } else { "" };
    let sep = if s.ty == 'n' {
        None
    } else {
        separator(s.grouping)
    };
    layout(&s, i.is_negative(), prefix, &digits, "", sep)
}

fn separator(g: Grouping) -> Option<(char, usize)> {
    match g {
        Grouping::None => None,
        Grouping::Comma => Some((',', 3)),
        Grouping::Underscore => Some(('_', 3)),
        Grouping::UnderFour => Some(('_', 4)),
    }
}

fn format_float(f: f64, spec: &str) -> RtResult<String> {
    let s = parse(spec, '\0', '>', "float")?;
    match s.ty {
        '\0' | 'e' | 'E' | 'f' | 'F' | 'g' | 'G' | 'n' | '%' => float_with(f, &s),
        t => unknown_type(t, "float"),
    }
}

fn float_with(f: f64, s: &Spec) -> RtResult<String> {
    if s.precision.is_some_and(|p| p > i32::MAX as usize) {
        return value_error("precision too big");
    }
    if s.precision.is_some_and(|p| p > MAX_FIELD) {
        return fail(codes::VALUE, "MemoryError: formatted value too large");
    }
    let body = format_float_body(f, s.ty, s.precision, s.alt, s.no_neg_0);
    let plain = s.sign != '+' && s.sign != ' ' && s.width.is_none() && s.ty != 'n';
    if plain && s.grouping == Grouping::None {
        return Ok(body);
    }
    let (negative, unsigned) = match body.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, body.as_str()),
    };
    let split = unsigned
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(unsigned.len());
    let (digits, remainder) = unsigned.split_at(split);
    let sep = if s.ty == 'n' {
        None
    } else {
        separator(s.grouping)
    };
    layout(s, negative, "", digits, remainder, sep)
}

/// CPython's `calc_number_widths` + `fill_number`:
/// `<lpad><sign><prefix><spad><grouped digits><remainder><rpad>`.
fn layout(
    s: &Spec,
    negative: bool,
    prefix: &str,
    digits: &str,
    remainder: &str,
    sep: Option<(char, usize)>,
) -> RtResult<String> {
    let sign = match (s.sign, negative) {
        (_, true) => Some('-'),
        ('+', false) => Some('+'),
        (' ', false) => Some(' '),
        _ => None,
    };
    let width = s.width.map_or(-1, |w| w as i64);
    let non_digit = sign.is_some() as i64 + prefix.len() as i64 + remainder.chars().count() as i64;
    let min_width = if s.fill == '0' && s.align == '=' {
        width - non_digit
    } else {
        0
    };
    if min_width > MAX_FIELD as i64 {
        return fail(codes::VALUE, "MemoryError: formatted value too large");
    }
    let grouped = if digits.is_empty() {
        String::new()
    } else {
        group(digits, min_width, sep)?
    };
    let padding = (width - (non_digit + grouped.len() as i64)).max(0) as usize;
    let (lpad, spad, rpad) = match s.align {
        '<' => (0, 0, padding),
        '^' => (padding / 2, 0, padding - padding / 2),
        '=' => (0, padding, 0),
        _ => (padding, 0, 0),
    };
    let mut out = reserve(
        padding
            .saturating_mul(s.fill.len_utf8())
            .saturating_add(grouped.len() + remainder.len() + 4),
    )?;
    push_fill(&mut out, s.fill, lpad);
    if let Some(c) = sign {
        out.push(c);
    }
    out.push_str(prefix);
    push_fill(&mut out, s.fill, spad);
    out.push_str(&grouped);
    out.push_str(remainder);
    push_fill(&mut out, s.fill, rpad);
    Ok(out)
}

/// CPython's `_PyUnicode_InsertThousandsGrouping`: groups `digits` (ASCII) from the
/// right, zero-padding to `min_width` and grouping the padding too.
fn group(digits: &str, min_width: i64, sep: Option<(char, usize)>) -> RtResult<String> {
    let d = digits.as_bytes();
    let mut remaining = d.len() as i64;
    let mut min_width = min_width.max(0);
    let Some((sep, size)) = sep else {
        let l = remaining.max(min_width).max(1);
        let mut out = reserve(l as usize)?;
        push_fill(&mut out, '0', (l - remaining) as usize);
        out.push_str(digits);
        return Ok(out);
    };
    let size = size as i64;
    let mut rev: Vec<u8> = Vec::new();
    if rev
        .try_reserve((remaining.max(min_width) * 2) as usize)
        .is_err()
    {
        return fail(codes::VALUE, "MemoryError: formatted value too large");
    }
    let mut end = d.len();
    let mut use_sep = false;
    loop {
        let l = size.min(remaining.max(min_width).max(1));
        let n_zeros = (l - remaining).max(0);
        let n_chars = remaining.min(l).max(0) as usize;
        if use_sep {
            rev.push(sep as u8);
        }
        rev.extend(d[end - n_chars..end].iter().rev());
        rev.extend(std::iter::repeat_n(b'0', n_zeros as usize));
        end -= n_chars;
        use_sep = true;
        remaining -= n_chars as i64;
        min_width -= l;
        if remaining <= 0 && min_width <= 0 {
            break;
        }
        min_width -= 1;
    }
    rev.reverse();
    Ok(String::from_utf8(rev).unwrap_or_default())
}

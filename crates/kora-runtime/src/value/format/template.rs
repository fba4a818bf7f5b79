//! `str.format`: replacement fields, automatic and manual numbering, `!r`/`!s`/`!a`, nested specs.
//!
//! Follows CPython's `unicode_format.h` scanner, so malformed templates fail with
//! Python's messages. Only ASCII bytes are structural, which keeps byte slicing on
//! character boundaries.

use kora_check::hir::{Program, Sym};

use super::{format_field, str_repr};
use crate::error::{codes, fail, RtResult};
use crate::value::unicode;
use crate::value::Value;

/// `template.format(*args, **kwargs)`.
pub fn format_template(
    p: &Program,
    template: &str,
    args: &[Value],
    kwargs: &[(Sym, Value)],
) -> RtResult<String> {
    let mut st = State {
        p,
        args,
        kwargs,
        numbering: Numbering::Unset,
        next: 0,
    };
    let mut out = String::with_capacity(template.len() + 16);
    st.render(template, 2, &mut out)?;
    Ok(out)
}

#[derive(PartialEq, Eq)]
enum Numbering {
    Unset,
    Auto,
    Manual,
}

struct State<'a> {
    p: &'a Program,
    args: &'a [Value],
    kwargs: &'a [(Sym, Value)],
    numbering: Numbering,
    next: usize,
}

fn value_error<T>(msg: &str) -> RtResult<T> {
    fail(codes::VALUE, msg)
}

struct Field<'s> {
    name: &'s str,
    conv: Option<char>,
    spec: &'s str,
}

impl State<'_> {
    fn render(&mut self, s: &str, depth: u32, out: &mut String) -> RtResult<()> {
        if depth == 0 {
            return value_error("Max string recursion exceeded");
        }
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            let start = i;
            let mut c = 0u8;
            let mut markup = false;
            while i < b.len() {
                c = b[i];
                i += 1;
                if c == b'{' || c == b'}' {
                    markup = true;
                    break;
                }
            }
            if !markup {
                out.push_str(&s[start..]);
                break;
            }
            let at_end = i >= b.len();
            if c == b'}' && (at_end || b[i] != b'}') {
                return value_error("Single '}' encountered in format string");
            }
            if at_end && c == b'{' {
                return value_error("Single '{' encountered in format string");
            }
            out.push_str(&s[start..i - 1]);
            if b[i] == c {
                out.push(c as char);
                i += 1;
                continue;
            }
            let (field, next) = parse_field(s, i)?;
            i = next;
            self.field(&field, depth, out)?;
        }
        Ok(())
    }

    fn field(&mut self, f: &Field<'_>, depth: u32, out: &mut String) -> RtResult<()> {
        let obj = self.lookup(f.name)?;
        let expanded;
        let spec = if f.spec.contains('{') {
            let mut s = String::new();
            self.render(f.spec, depth - 1, &mut s)?;
            expanded = s;
            expanded.as_str()
        } else {
            f.spec
        };
        format_field(self.p, &obj, f.conv, spec, out)
    }

    fn lookup(&mut self, name: &str) -> RtResult<Value> {
        let first_end = name.find(['.', '[']).unwrap_or(name.len());
        let (first, mut rest) = name.split_at(first_end);
        let mut obj = if first.is_empty() {
            if self.numbering == Numbering::Manual {
                return value_error(
                    "cannot switch from manual field specification to automatic field numbering",
                );
            }
            self.numbering = Numbering::Auto;
            let i = self.next;
            self.next += 1;
            self.positional(i)?
        } else if let Some(i) = decimal(first)? {
            if self.numbering == Numbering::Auto {
                return value_error(
                    "cannot switch from automatic field numbering to manual field specification",
                );
            }
            self.numbering = Numbering::Manual;
            self.positional(i)?
        } else {
            match self.kwargs.iter().find(|(k, _)| self.p.name(*k) == first) {
                Some((_, v)) => v.clone(),
                None => return key_error(first),
            }
        };
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                let attr = &r[..end];
                if attr.is_empty() {
                    return value_error("Empty attribute in format string");
                }
                obj = self.getattr(&obj, attr)?;
                rest = &r[end..];
            } else if let Some(r) = rest.strip_prefix('[') {
                let Some(end) = r.find(']') else {
                    return value_error("Missing ']' in format string");
                };
                let key = &r[..end];
                if key.is_empty() {
                    return value_error("Empty attribute in format string");
                }
                let idx = match decimal(key)? {
                    Some(i) => Value::Int(i64::try_from(i).unwrap_or(i64::MAX)),
                    None => Value::str(key),
                };
                obj = crate::value::index::get_index(self.p, &obj, &idx)?;
                rest = &r[end + 1..];
                if !rest.is_empty() && !rest.starts_with(['.', '[']) {
                    return value_error("Only '.' or '[' may follow ']' in format field specifier");
                }
            } else {
                return value_error("Only '.' or '[' may follow ']' in format field specifier");
            }
        }
        Ok(obj)
    }

    fn positional(&self, i: usize) -> RtResult<Value> {
        match self.args.get(i) {
            Some(v) => Ok(v.clone()),
            None => fail(
                codes::INDEX,
                format!("Replacement index {i} out of range for positional args tuple"),
            ),
        }
    }

    fn getattr(&self, obj: &Value, attr: &str) -> RtResult<Value> {
        if let Value::Record(r) = obj {
            let ty = self.p.record(r.ty);
            if let Some(i) = ty.fields.iter().position(|f| self.p.name(f.name) == attr) {
                if let Some(v) = r.fields.borrow().get(i) {
                    return Ok(v.clone());
                }
            }
        }
        fail(
            codes::ATTRIBUTE,
            format!(
                "'{}' object has no attribute '{attr}'",
                super::type_name_in(self.p, obj)
            ),
        )
    }
}

fn key_error<T>(key: &str) -> RtResult<T> {
    let mut m = String::new();
    str_repr(key, &mut m);
    fail(codes::KEY, m)
}

/// A field name made only of decimal digits is a positional index.
fn decimal(s: &str) -> RtResult<Option<usize>> {
    let mut acc: usize = 0;
    for c in s.chars() {
        let Some(d) = unicode::decimal_value(c) else {
            return Ok(None);
        };
        acc = match acc.checked_mul(10).and_then(|a| a.checked_add(d as usize)) {
            Some(a) if a <= isize::MAX as usize => a,
            _ => return value_error("Too many decimal digits in format string"),
        };
    }
    Ok((!s.is_empty()).then_some(acc))
}

/// CPython's `parse_field`, starting just after the opening `{`; returns the field
/// and the index just past its closing `}`.
fn parse_field(s: &str, start: usize) -> RtResult<(Field<'_>, usize)> {
    let b = s.as_bytes();
    let mut j = start;
    let mut c = 0u8;
    while j < b.len() {
        c = b[j];
        j += 1;
        match c {
            b'{' => return value_error("unexpected '{' in field name"),
            b'[' => {
                while j < b.len() && b[j] != b']' {
                    j += 1;
                }
            }
            b'}' | b':' | b'!' => break,
            _ => {}
        }
    }
    let name = s.get(start..j.saturating_sub(1).max(start)).unwrap_or("");
    let mut field = Field {
        name,
        conv: None,
        spec: "",
    };
    if c == b'!' || c == b':' {
        if c == b'!' {
            let Some(conv) = s[j..].chars().next() else {
                return value_error("end of string while looking for conversion specifier");
            };
            field.conv = Some(conv);
            j += conv.len_utf8();
            if j < b.len() {
                let c2 = b[j];
                j += 1;
                if c2 == b'}' {
                    return Ok((field, j));
                }
                if c2 != b':' {
                    return value_error("expected ':' after conversion specifier");
                }
            }
        }
        let spec_start = j;
        let mut count = 1;
        while j < b.len() {
            let c = b[j];
            j += 1;
            if c == b'{' {
                count += 1;
            } else if c == b'}' {
                count -= 1;
                if count == 0 {
                    field.spec = &s[spec_start..j - 1];
                    return Ok((field, j));
                }
            }
        }
        return value_error("unmatched '{' in format spec");
    }
    if c != b'}' {
        return value_error("expected '}' before end of string");
    }
    Ok((field, j))
}

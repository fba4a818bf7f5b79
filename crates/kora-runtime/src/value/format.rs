//! Rendering values as text the way CPython 3.11 does: `repr`, `str`, float repr and format specs.
//!
//! `print` and f-strings are the most visible place where Kora promises Python's
//! answers byte for byte, so every rule here follows CPython's own code
//! (`unicode_repr`, `float_repr_style='short'`, `formatter_unicode.c`).

mod float;
mod spec;
mod template;

use std::fmt::Write as _;
use std::rc::Rc;

use kora_check::hir::{self, Program};

use crate::error::{codes, fail, RtResult};
use crate::value::unicode;
use crate::value::{KStr, Value};

pub use float::{float_repr, write_float_repr};
pub use spec::format_value;
pub(crate) use spec::reserve;
pub use template::format_template;

/// Nesting deeper than this prints `...` instead of recursing (CPython raises RecursionError).
const MAX_REPR_DEPTH: usize = 400;

/// Python's `type(v).__name__`, for error messages. Records say `record`: their
/// name needs the program (see [`type_name_in`]).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::None => "NoneType",
        Value::Bool(_) => "bool",
        Value::Int(_) | Value::BigInt(_) => "int",
        Value::Float(_) => "float",
        Value::Str(_) => "str",
        Value::List(_) => "list",
        Value::Tuple(_) => "tuple",
        Value::Dict(_) => "dict",
        Value::Set(_) => "set",
        Value::Range(_) => "range",
        Value::Record(_) => "record",
        Value::Outcome(o) => o.tag.name(),
        Value::Func(_) => "function",
        Value::Builtin(_) | Value::Method(_) => "builtin_function_or_method",
        Value::Type(_) => "type",
        Value::Module(_) => "module",
        Value::Cell(c) => type_name(&c.borrow()),
        Value::Native(n) => n.type_name(),
        Value::Labeled(l) => type_name(&l.value),
        Value::LabeledSmall(s) => type_name(&s.plain()),
    }
}

/// Like [`type_name`], but names a record by its declared type.
pub fn type_name_in<'p>(p: &'p Program, v: &Value) -> &'p str {
    match v {
        Value::Record(r) => &p.record(r.ty).name,
        _ => type_name(v),
    }
}

/// `repr(v)` appended to `out`.
pub fn repr(p: &Program, v: &Value, out: &mut String) {
    let mut seen = Vec::new();
    repr_in(p, v, out, &mut seen);
}

/// `repr(v)` as a new string.
pub fn repr_string(p: &Program, v: &Value) -> String {
    let mut s = String::new();
    repr(p, v, &mut s);
    s
}

/// `str(v)` appended to `out`: strings raw, everything else as its repr.
pub fn to_str(p: &Program, v: &Value, out: &mut String) {
    match v {
        Value::Str(s) => out.push_str(s.as_str()),
        Value::Int(i) => crate::value::int_text::push_int(out, *i),
        Value::Cell(c) => to_str(p, &c.borrow(), out),
        Value::Native(n) => n.to_str(out),
        Value::Labeled(l) if crate::labels::view::is_mutable_container(&l.value) => repr(p, v, out),
        Value::Labeled(l) if l.bits & crate::labels::label::CLASSIFIED != 0 => {
            out.push_str(crate::labels::label::placeholder())
        }
        Value::Labeled(l) => to_str(p, &l.value, out),
        Value::LabeledSmall(s) if s.tag().is_classified() => {
            out.push_str(crate::labels::label::placeholder())
        }
        Value::LabeledSmall(s) => to_str(p, &s.plain(), out),
        _ => repr(p, v, out),
    }
}

/// `str(v)` as a new string.
pub fn to_string(p: &Program, v: &Value) -> String {
    let mut s = String::new();
    to_str(p, v, &mut s);
    s
}

/// One f-string field: `{v!conv:spec}` appended to `out`.
pub fn format_field(
    p: &Program,
    v: &Value,
    conv: Option<char>,
    spec: &str,
    out: &mut String,
) -> RtResult<()> {
    crate::value::big_int::check_text(v)?;
    let converted;
    let v = match conv {
        None => v,
        Some('s') => {
            converted = Value::str(to_string(p, v));
            &converted
        }
        Some('r') => {
            converted = Value::str(repr_string(p, v));
            &converted
        }
        Some('a') => {
            converted = Value::str(ascii_escape(&repr_string(p, v)));
            &converted
        }
        Some(c) => return fail(codes::VALUE, format!("Unknown conversion specifier {c}")),
    };
    let piece = if spec.is_empty() {
        if let Value::Str(s) = v {
            return crate::value::grow::push_str(out, s.as_str(), "the formatted string");
        }
        to_string(p, v)
    } else {
        format_value(p, v, spec)?
    };
    crate::value::grow::push_str(out, &piece, "the formatted string")
}

/// `ascii()`: a repr with every non-ASCII character escaped.
pub fn ascii_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        push_escaped_code(c, &mut out, !c.is_ascii());
    }
    out
}

/// Pushes `c`, or its `\xNN`/`\uNNNN`/`\UNNNNNNNN` escape when `escape` holds.
fn push_escaped_code(c: char, out: &mut String, escape: bool) {
    if !escape {
        out.push(c);
        return;
    }
    let n = c as u32;
    let _ = if n < 0x100 {
        write!(out, "\\x{n:02x}")
    } else if n < 0x10000 {
        write!(out, "\\u{n:04x}")
    } else {
        write!(out, "\\U{n:08x}")
    };
}

/// Python's string repr: quote choice and escapes exactly as `unicode_repr`.
pub fn str_repr(s: &str, out: &mut String) {
    let has_single = s.contains('\'');
    let quote = if has_single && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    out.reserve(s.len() + 2);
    out.push(quote);
    let plain = s
        .bytes()
        .all(|b| (b' '..=b'~').contains(&b) && b != b'\\' && b != quote as u8);
    if plain {
        out.push_str(s);
    } else {
        for c in s.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c if c == quote => {
                    out.push('\\');
                    out.push(c);
                }
                c => push_escaped_code(c, out, !unicode::is_printable(c)),
            }
        }
    }
    out.push(quote);
}

fn repr_in(p: &Program, v: &Value, out: &mut String, seen: &mut Vec<*const ()>) {
    if let Some(view) = crate::labels::shape::seen(v) {
        return repr_in(p, &view, out, seen);
    }
    match v {
        // Every rendering is a sink (terminal, file, error message): a secret shows as the
        // placeholder. `str()` of a secret reveals it only into a classified string.
        // A classified list, dict or set shows as one placeholder: how many items it has
        // is as secret as they are. A record's fields are its type's, so a view of one
        // shows its structure, each leaf as its label makes it, as other views do.
        Value::Labeled(l)
            if l.bits & crate::labels::label::CLASSIFIED != 0
                && matches!(l.value, Value::List(_) | Value::Dict(_) | Value::Set(_)) =>
        {
            out.push_str(crate::labels::label::placeholder())
        }
        Value::Labeled(l) if crate::labels::view::is_mutable_container(&l.value) => {
            repr_in(p, &crate::labels::view::expand(v), out, seen)
        }
        Value::Labeled(l) if l.bits & crate::labels::label::CLASSIFIED != 0 => {
            out.push_str(crate::labels::label::placeholder())
        }
        Value::Labeled(l) => repr_in(p, &l.value, out, seen),
        Value::LabeledSmall(s) if s.tag().is_classified() => {
            out.push_str(crate::labels::label::placeholder())
        }
        Value::LabeledSmall(s) => repr_in(p, &s.plain(), out, seen),
        Value::None => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => {
            crate::value::int_text::push_int(out, *i);
        }
        Value::BigInt(b) => crate::value::big_int::push_decimal(b, out),
        Value::Float(f) => write_float_repr(*f, out),
        Value::Str(s) => str_repr(s.as_str(), out),
        Value::List(l) => {
            let ptr = Rc::as_ptr(l) as *const ();
            if seen.contains(&ptr) || seen.len() >= MAX_REPR_DEPTH {
                out.push_str("[...]");
                return;
            }
            seen.push(ptr);
            out.push('[');
            seq_items(p, &l.borrow(), out, seen);
            out.push(']');
            seen.pop();
        }
        Value::Tuple(t) => {
            if seen.len() >= MAX_REPR_DEPTH {
                out.push_str("(...)");
                return;
            }
            // Tuples cannot contain themselves, but nesting depth still counts.
            seen.push(std::ptr::null());
            out.push('(');
            seq_items(p, t, out, seen);
            if t.len() == 1 {
                out.push(',');
            }
            out.push(')');
            seen.pop();
        }
        Value::Dict(d) => {
            let ptr = Rc::as_ptr(d) as *const ();
            if seen.contains(&ptr) || seen.len() >= MAX_REPR_DEPTH {
                out.push_str("{...}");
                return;
            }
            seen.push(ptr);
            out.push('{');
            for (i, (k, v)) in d.borrow().iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_in(p, &k.0, out, seen);
                out.push_str(": ");
                repr_in(p, v, out, seen);
            }
            out.push('}');
            seen.pop();
        }
        Value::Set(s) => {
            let s = s.borrow();
            if s.is_empty() {
                out.push_str("set()");
                return;
            }
            seen.push(std::ptr::null());
            out.push('{');
            for (i, k) in s.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                repr_in(p, &k.0, out, seen);
            }
            out.push('}');
            seen.pop();
        }
        Value::Range(r) => {
            let _ = if r.step == 1 {
                write!(out, "range({}, {})", r.start, r.stop)
            } else {
                write!(out, "range({}, {}, {})", r.start, r.stop, r.step)
            };
        }
        Value::Record(r) => {
            let ptr = Rc::as_ptr(r) as *const ();
            let ty = p.record(r.ty);
            out.push_str(&ty.name);
            if seen.contains(&ptr) || seen.len() >= MAX_REPR_DEPTH {
                out.push_str("(...)");
                return;
            }
            seen.push(ptr);
            out.push('(');
            for (i, (f, v)) in ty.fields.iter().zip(r.fields.borrow().iter()).enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(p.name(f.name));
                out.push('=');
                repr_in(p, v, out, seen);
            }
            out.push(')');
            seen.pop();
        }
        Value::Outcome(o) => {
            out.push_str(o.tag.name());
            out.push('(');
            seen.push(std::ptr::null());
            if seen.len() >= MAX_REPR_DEPTH {
                out.push_str("...");
            } else {
                repr_in(p, &o.payload, out, seen);
            }
            seen.pop();
            out.push(')');
        }
        Value::Func(f) => {
            let _ = write!(out, "<function {}>", f.def.name);
        }
        Value::Builtin(b) => {
            let name = hir::builtin_name(*b);
            let _ = if builtin_is_class(name) {
                write!(out, "<class '{name}'>")
            } else {
                write!(out, "<built-in function {name}>")
            };
        }
        Value::Method(m) => {
            let _ = write!(
                out,
                "<built-in method {} of {} object>",
                p.name(m.1),
                type_name_in(p, &m.0)
            );
        }
        Value::Type(t) => {
            let _ = write!(out, "<type {}>", p.record(*t).name);
        }
        Value::Module(m) => {
            let display = &p.module(*m).display;
            let stem = std::path::Path::new(display)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or(display);
            let _ = write!(out, "<module {stem}>");
        }
        Value::Cell(c) => repr_in(p, &c.borrow(), out, seen),
        Value::Native(n) => n.repr(out),
    }
}

fn seq_items(p: &Program, items: &[Value], out: &mut String, seen: &mut Vec<*const ()>) {
    for (i, x) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        repr_in(p, x, out, seen);
    }
}

/// Builtins that are classes in Python print as `<class 'int'>`.
pub fn builtin_is_class(name: &str) -> bool {
    matches!(
        name,
        "range"
            | "enumerate"
            | "zip"
            | "reversed"
            | "str"
            | "int"
            | "float"
            | "bool"
            | "list"
            | "dict"
            | "set"
            | "tuple"
            | "map"
            | "filter"
            | "type"
    )
}

/// A one-character string; ASCII ones are shared, so iterating a string rarely allocates.
pub fn char_value(c: char) -> Value {
    thread_local! {
        static ASCII: Vec<Value> = (0u8..128)
            .map(|b| Value::Str(Rc::new(KStr::new((b as char).to_string()))))
            .collect();
    }
    if c.is_ascii() {
        ASCII.with(|t| t[c as usize].clone())
    } else {
        Value::str(c.to_string())
    }
}

#[cfg(test)]
mod tests;

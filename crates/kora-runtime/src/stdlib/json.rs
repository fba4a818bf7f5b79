//! `json`: `parse(text) -> Result[T]` into the declared type, naming the failing path; `encode(value) -> str`.
//!
//! The defect fixed: Python's `json.loads` hands back untyped dicts and a
//! missing key surfaces later as a `KeyError` or a silent `None`; here the
//! annotation is checked at the parse, and a mismatch is an `Err` naming the
//! path. Parsing builds Kora values in one pass (objects keep their order).

use std::fmt::Write as _;

use kora_check::hir::Program;
use kora_check::std_api::StdFn;

use super::typed::Lenience;
use super::{err, ok, Args};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::{Key, Value};

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    match a.func {
        StdFn::JsonParse => {
            let text = a.str(0)?;
            Ok(match parse_untyped(text) {
                Err(why) => err(why),
                Ok(v) => match it.narrow_root(v, &a.expect, Lenience::Strict) {
                    Ok(v) => ok(v),
                    Err(why) => err(why),
                },
            })
        }
        StdFn::JsonEncode => {
            let indent = match a.get(1) {
                None => None,
                Some(Value::Int(n)) if *n >= 0 => Some(*n as usize),
                Some(_) => {
                    return Err(RtError::new(
                        codes::STD_VALUE,
                        "`json.encode(indent=...)` takes a non-negative int or None",
                    ))
                }
            };
            let mut out = String::new();
            encode(&it.prog, a.value(0)?, indent, 0, &mut out)
                .map_err(|m| RtError::new(codes::NOT_ENCODABLE, m))?;
            Ok(Value::str(out))
        }
        _ => unreachable!("json::call got {:?}", a.func),
    }
}

/// JSON text into plain Kora values; the error names line and column.
pub fn parse_untyped(text: &str) -> Result<Value, String> {
    super::json_build::Builder::default()
        .parse(text)
        .map_err(|e| describe(&e))
}

fn describe(e: &serde_json::Error) -> String {
    let msg = e.to_string();
    let msg = match msg.find(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg,
    };
    if e.line() == 0 {
        format!("invalid JSON: {msg}")
    } else {
        format!(
            "invalid JSON at line {}, column {}: {msg}",
            e.line(),
            e.column()
        )
    }
}

/// Python's `json.dumps` layout (`", "` and `": "`, or `indent` spaces per level), UTF-8 kept as is.
pub fn encode(
    p: &Program,
    v: &Value,
    indent: Option<usize>,
    depth: usize,
    out: &mut String,
) -> Result<(), String> {
    if depth > 500 {
        return Err("`json.encode`: the value nests deeper than 500 levels (a cycle?)".into());
    }
    let items = |out: &mut String,
                 n: usize,
                 open: char,
                 close: char,
                 f: &mut dyn FnMut(&mut String, usize) -> Result<(), String>|
     -> Result<(), String> {
        out.push(open);
        if n == 0 {
            out.push(close);
            return Ok(());
        }
        for i in 0..n {
            if i > 0 {
                out.push(',');
                if indent.is_none() {
                    out.push(' ');
                }
            }
            if let Some(w) = indent {
                out.push('\n');
                out.extend(std::iter::repeat_n(' ', w * (depth + 1)));
            }
            f(out, i)?;
        }
        if let Some(w) = indent {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', w * depth));
        }
        out.push(close);
        Ok(())
    };
    match v {
        Value::None => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::BigInt(b) => {
            out.push_str(&crate::value::big_int::to_decimal(b).map_err(|e| e.message)?)
        }
        Value::Float(f) => {
            if !f.is_finite() {
                return Err(format!(
                    "`json.encode`: {f} has no JSON form (JSON has no NaN or infinity)"
                ));
            }
            crate::value::format::repr(p, v, out);
        }
        Value::Str(s) => quote(s.as_str(), out),
        Value::List(l) => {
            let l = l.borrow();
            items(out, l.len(), '[', ']', &mut |o, i| {
                encode(p, &l[i], indent, depth + 1, o)
            })?;
        }
        Value::Tuple(t) => items(out, t.len(), '[', ']', &mut |o, i| {
            encode(p, &t[i], indent, depth + 1, o)
        })?,
        Value::Set(s) => {
            let s = s.borrow();
            let v: Vec<&Key> = s.iter().collect();
            items(out, v.len(), '[', ']', &mut |o, i| {
                encode(p, &v[i].0, indent, depth + 1, o)
            })?;
        }
        Value::Dict(d) => {
            let d = d.borrow();
            let v: Vec<(&Key, &Value)> = d.iter().collect();
            items(out, v.len(), '{', '}', &mut |o, i| {
                quote(&key_text(p, &v[i].0 .0)?, o);
                o.push_str(": ");
                encode(p, v[i].1, indent, depth + 1, o)
            })?;
        }
        Value::Record(r) => {
            let rec = p.record(r.ty);
            let fields = r.fields.borrow();
            items(out, fields.len(), '{', '}', &mut |o, i| {
                quote(p.name(rec.fields[i].name), o);
                o.push_str(": ");
                encode(p, &fields[i], indent, depth + 1, o)
            })?;
        }
        Value::Outcome(o) => {
            items(out, 1, '{', '}', &mut |s, _| {
                quote(o.tag.kind(), s);
                s.push_str(": ");
                encode(p, &o.payload, indent, depth + 1, s)
            })?;
        }
        Value::Native(n) => match n.downcast_ref::<jiff::ZonedDateTime>() {
            Some(z) => quote(&super::time::iso(z), out),
            None => {
                return Err(format!(
                    "`json.encode`: a `{}` has no JSON form",
                    n.type_name()
                ))
            }
        },
        Value::Cell(c) => encode(p, &c.borrow(), indent, depth, out)?,
        other => {
            return Err(format!(
                "`json.encode`: a `{}` has no JSON form",
                crate::value::format::type_name_in(p, other)
            ))
        }
    }
    Ok(())
}

/// Python's rule for non-string keys: numbers and booleans become their JSON text.
fn key_text(p: &Program, k: &Value) -> Result<String, String> {
    Ok(match k {
        Value::Str(s) => s.as_str().to_string(),
        Value::Int(i) => i.to_string(),
        Value::BigInt(b) => crate::value::big_int::to_decimal(b).map_err(|e| e.message)?,
        Value::Float(_) => crate::value::format::repr_string(p, k),
        Value::Bool(b) => (if *b { "true" } else { "false" }).to_string(),
        Value::None => "null".to_string(),
        other => {
            return Err(format!(
                "`json.encode`: a `{}` cannot be an object key",
                crate::value::format::type_name_in(p, other)
            ))
        }
    })
}

fn quote(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

//! `bytes(...)`: Python's constructor, for payloads a program builds itself (a helper's
//! request, a test's malformed file).

use kora_check::hir::Sym;

use super::args;
use crate::error::{codes, fail, type_error, RtResult};
use crate::labels::label;
use crate::value::bytes::Bytes;
use crate::value::format::type_name;
use crate::value::iter::iterate;
use crate::value::Value;

/// `bytes()`, `bytes(n)` (n zero bytes), `bytes(b)`, `bytes(text, "utf-8")`, `bytes(ints)`.
/// A label on an argument, or on an int in it, is carried by the bytes made from it.
pub(super) fn construct(args: Vec<Value>, kwargs: &[(Sym, Value)]) -> RtResult<Value> {
    args::no_kwargs("bytes", kwargs)?;
    args::count("bytes", &args, 0, 2)?;
    let mut tag = None;
    let args: Vec<Value> = args
        .iter()
        .map(|a| {
            let (plain, t) = label::split(a);
            tag = label::join(tag, t);
            plain.into_owned()
        })
        .collect();
    let made = build(&args, &mut tag).map_err(|e| label::withhold(e, tag))?;
    Ok(label::wrap_opt(made, tag))
}

fn build(args: &[Value], tag: &mut Option<label::Tag>) -> RtResult<Value> {
    let Some(first) = args.first() else {
        return Ok(Bytes::value(Vec::new()));
    };
    if let Value::Str(s) = first {
        return match args.get(1) {
            None => type_error("string argument without an encoding"),
            Some(Value::Str(e)) if is_utf8(e.as_str()) => Ok(Bytes::value(s.as_str().into())),
            Some(Value::Str(e)) => fail(
                codes::VALUE,
                format!(
                    "unknown encoding: {} (Kora's text is UTF-8: pass \"utf-8\")",
                    e.as_str()
                ),
            ),
            Some(other) => type_error(format!(
                "bytes() argument 'encoding' must be str, not {}",
                type_name(other)
            )),
        };
    }
    if args.len() == 2 {
        return type_error("encoding without a string argument");
    }
    if let Some(b) = Bytes::of(first) {
        return Ok(Bytes::value(b.to_vec()));
    }
    if let Value::Int(n) = first {
        return match usize::try_from(*n) {
            Ok(n) if n <= 1 << 30 => Ok(Bytes::value(vec![0; n])),
            Ok(_) => fail(codes::VALUE, "bytes() of more than 1 GiB of zeros"),
            Err(_) => fail(codes::VALUE, "negative count"),
        };
    }
    let mut it = iterate(first).or_else(|_| {
        type_error(format!(
            "cannot convert '{}' object to bytes",
            type_name(first)
        ))
    })?;
    let mut out = Vec::with_capacity(it.size_hint());
    while let Some(x) = it.next() {
        let (x, t) = label::split(&x);
        *tag = label::join(*tag, t);
        match x.into_owned() {
            Value::Int(n) => match u8::try_from(n) {
                Ok(b) => out.push(b),
                Err(_) => return fail(codes::VALUE, "bytes must be in range(0, 256)"),
            },
            other => {
                return type_error(format!(
                    "'{}' object cannot be interpreted as an integer",
                    type_name(&other)
                ))
            }
        }
    }
    Ok(Bytes::value(out))
}

fn is_utf8(e: &str) -> bool {
    matches!(
        e.to_ascii_lowercase().replace('_', "-").as_str(),
        "utf-8" | "utf8"
    )
}

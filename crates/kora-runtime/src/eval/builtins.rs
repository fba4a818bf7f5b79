//! The built-in functions (`hir::BUILTINS`): dispatch, and the small ones (print, len, repr, ord, ...).
//!
//! Deviations from CPython, by design: `zip`, `enumerate`, `map`, `filter` and
//! `reversed` return lists rather than lazy iterators; `type(x)` returns the
//! builtin (`int`, `str`, ...) or record type when there is one, and otherwise
//! the string `"<class 'NoneType'>"` (so printing it still matches Python);
//! `isinstance` answers for the built-in types and records, as Python's does (`True` is an
//! `int`); `exit` ends the run with a status, as `sys.exit` does.

pub(crate) mod args;
mod bytes_ctor;
mod convert;
mod num;
mod seq;

use kora_check::hir::{sym, BuiltinId, Sym, TypeTest};

use crate::error::{codes, fail, type_error, RtResult};
use crate::value::caller::Caller;
use crate::value::compare::hash_key;
use crate::value::format::{repr_string, to_str, type_name};
use crate::value::{OutcomeTag, Value};

pub use convert::{float_to_int, parse_float, parse_int, to_float, to_int};
pub use num::{py_hash, round_float};
pub(crate) use seq::sort_options as seq_sort_options;
pub use seq::Reverse;

/// `BuiltinId`s, in `hir::BUILTINS` order (checked by a test).
pub mod id {
    pub const PRINT: u16 = 0;
    pub const LEN: u16 = 1;
    pub const RANGE: u16 = 2;
    pub const ENUMERATE: u16 = 3;
    pub const ZIP: u16 = 4;
    pub const SORTED: u16 = 5;
    pub const REVERSED: u16 = 6;
    pub const MIN: u16 = 7;
    pub const MAX: u16 = 8;
    pub const SUM: u16 = 9;
    pub const ABS: u16 = 10;
    pub const ROUND: u16 = 11;
    pub const STR: u16 = 12;
    pub const INT: u16 = 13;
    pub const FLOAT: u16 = 14;
    pub const BOOL: u16 = 15;
    pub const LIST: u16 = 16;
    pub const DICT: u16 = 17;
    pub const SET: u16 = 18;
    pub const TUPLE: u16 = 19;
    pub const ANY: u16 = 20;
    pub const ALL: u16 = 21;
    pub const REPR: u16 = 22;
    pub const ORD: u16 = 23;
    pub const CHR: u16 = 24;
    pub const DIVMOD: u16 = 25;
    pub const MAP: u16 = 26;
    pub const FILTER: u16 = 27;
    pub const OK: u16 = 28;
    pub const ERR: u16 = 29;
    pub const UNCERTAIN: u16 = 30;
    pub const EXHAUSTED: u16 = 31;
    pub const FAILED: u16 = 32;
    pub const ISINSTANCE: u16 = 33;
    pub const HASH: u16 = 34;
    pub const POW: u16 = 35;
    pub const INPUT: u16 = 36;
    pub const TYPE: u16 = 37;
    pub const REMAINING: u16 = 38;
    pub const REDACT: u16 = 39;
    pub const HEX: u16 = 40;
    pub const OCT: u16 = 41;
    pub const BIN: u16 = 42;
    pub const EXIT: u16 = 43;
    pub const BYTES: u16 = 44;
}

/// Calls built-in `id` with evaluated arguments.
pub fn call_builtin(
    ctx: &mut dyn Caller,
    id: BuiltinId,
    args: Vec<Value>,
    kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    if crate::labels::label::any() {
        return crate::eval::label_calls::builtin(ctx, id, args, kwargs);
    }
    call_plain(ctx, id, args, kwargs)
}

/// Calls built-in `id` on arguments whose labels `label_calls` has already handled.
pub(crate) fn call_plain(
    ctx: &mut dyn Caller,
    id: BuiltinId,
    args: Vec<Value>,
    kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let name = kora_check::hir::builtin_name(id);
    match id.0 {
        id::PRINT => print(ctx, args, kwargs),
        id::LEN => {
            args::no_kwargs("len", &kwargs)?;
            args::exactly_one("len", &args)?;
            len(&args[0]).map(Value::Int)
        }
        id::RANGE => seq::range(&args, &kwargs),
        id::ENUMERATE => seq::enumerate(ctx, args, kwargs),
        id::ZIP => seq::zip(ctx, args, kwargs),
        id::SORTED => seq::sorted(ctx, args, kwargs),
        id::REVERSED => seq::reversed(args, &kwargs),
        id::MIN | id::MAX => seq::min_max(ctx, id.0 == id::MAX, args, kwargs),
        id::SUM => seq::sum(ctx, args, kwargs),
        id::MAP => seq::map(ctx, args, &kwargs),
        id::FILTER => seq::filter(ctx, args, &kwargs),
        id::ANY | id::ALL => {
            args::no_kwargs(name, &kwargs)?;
            args::exactly_one(name, &args)?;
            let want = id.0 == id::ALL;
            let mut it = crate::value::iter::iterate(&args[0])?;
            while let Some(x) = it.next() {
                if x.truthy() != want {
                    return Ok(Value::Bool(!want));
                }
            }
            Ok(Value::Bool(want))
        }
        id::ABS => num::abs(&args, &kwargs),
        id::ROUND => num::round(ctx, args, kwargs),
        id::DIVMOD => num::divmod(&args, &kwargs),
        id::POW => num::pow(&args, &kwargs),
        id::HEX | id::OCT | id::BIN => num::radix(name, &args, &kwargs),
        id::HASH => {
            args::no_kwargs("hash", &kwargs)?;
            args::exactly_one("hash", &args)?;
            hash_key(&args[0])?;
            Ok(Value::Int(py_hash(&args[0])))
        }
        id::STR | id::INT | id::FLOAT | id::BOOL | id::LIST | id::DICT | id::SET | id::TUPLE => {
            convert::construct(ctx, id.0, args, kwargs)
        }
        id::REPR => {
            args::no_kwargs("repr", &kwargs)?;
            args::exactly_one("repr", &args)?;
            crate::value::big_int::check_text(&args[0])?;
            Ok(Value::str(repr_string(ctx.program(), &args[0])))
        }
        id::ORD => {
            args::no_kwargs("ord", &kwargs)?;
            args::exactly_one("ord", &args)?;
            ord(&args[0])
        }
        id::CHR => {
            args::no_kwargs("chr", &kwargs)?;
            args::exactly_one("chr", &args)?;
            let i = args::index(&args[0])?;
            match u32::try_from(i).ok().filter(|n| *n < 0x110000) {
                Some(n) => match char::from_u32(n) {
                    Some(c) => Ok(crate::value::format::char_value(c)),
                    None => fail(
                        codes::VALUE,
                        "chr() arg is a lone surrogate, which a Kora str cannot hold",
                    ),
                },
                None => fail(codes::VALUE, "chr() arg not in range(0x110000)"),
            }
        }
        id::OK | id::ERR | id::UNCERTAIN | id::EXHAUSTED | id::FAILED => {
            outcome(id.0, name, args, &kwargs)
        }
        id::ISINSTANCE => {
            args::no_kwargs("isinstance", &kwargs)?;
            if args.len() != 2 {
                return type_error(format!(
                    "isinstance expected 2 arguments, got {}",
                    args.len()
                ));
            }
            isinstance(&args[0], &args[1]).map(Value::Bool)
        }
        id::EXIT => exit(ctx, args, kwargs),
        id::BYTES => bytes_ctor::construct(args, &kwargs),
        id::INPUT => input(ctx, args, &kwargs),
        id::TYPE => {
            args::no_kwargs("type", &kwargs)?;
            if args.len() != 1 {
                return type_error("type() takes 1 argument");
            }
            Ok(type_of(&args[0]))
        }
        id::REMAINING => {
            args::no_kwargs("remaining", &kwargs)?;
            match args.as_slice() {
                [Value::Str(m)] => ctx.remaining(m.as_str()),
                _ => fail(
                    codes::UNKNOWN_METER,
                    "`remaining` takes one meter's name: \"tokens\", \"calls\", \"steps\" or \"seconds\"",
                ),
            }
        }
        id::REDACT => {
            args::no_kwargs("redact", &kwargs)?;
            args::exactly_one("redact", &args)?;
            Ok(crate::labels::redact::redact(ctx.program(), &args[0]))
        }
        _ => fail(codes::TYPE, format!("unknown builtin {name}")),
    }
}

fn print(ctx: &mut dyn Caller, args: Vec<Value>, mut kwargs: Vec<(Sym, Value)>) -> RtResult<Value> {
    let sep = opt_str_kw(&mut kwargs, sym::SEP, "sep")?;
    let end = opt_str_kw(&mut kwargs, sym::END, "end")?;
    let p = ctx.program();
    // `flush=` is accepted and ignored: output is flushed by the host.
    let _ = args::take_named(p, &mut kwargs, "flush");
    args::done(p, &kwargs, "print")?;
    let mut out = String::new();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(sep.as_deref().unwrap_or(" "));
        }
        crate::value::big_int::check_text(a)?;
        to_str(p, a, &mut out);
    }
    out.push_str(end.as_deref().unwrap_or("\n"));
    ctx.write_out(&out)?;
    Ok(Value::None)
}

fn opt_str_kw(kwargs: &mut args::Kwargs, s: Sym, what: &str) -> RtResult<Option<String>> {
    let v = args::take(kwargs, s);
    // `print` is a sink: a classified separator is shown as the placeholder, as a
    // classified argument is; any other label is only text here.
    if let Some(t) = v.as_ref().and_then(crate::labels::label::tag_of) {
        if t.is_classified() {
            return Ok(Some(crate::labels::label::placeholder().to_string()));
        }
    }
    match v
        .as_ref()
        .map(|v| crate::labels::label::plain(v).into_owned())
    {
        None | Some(Value::None) => Ok(None),
        Some(Value::Str(v)) => Ok(Some(v.as_str().to_string())),
        Some(v) => type_error(format!(
            "{what} must be None or a string, not {}",
            type_name(&v)
        )),
    }
}

/// `len(v)`.
pub fn len(v: &Value) -> RtResult<i64> {
    let n = match v {
        Value::Str(s) => s.char_len(),
        Value::List(l) => l.borrow().len(),
        Value::Tuple(t) => t.len(),
        Value::Dict(d) => d.borrow().len(),
        Value::Set(s) => s.borrow().len(),
        Value::Range(r) => r.len(),
        Value::Cell(c) => return len(&c.borrow()),
        Value::Native(_) if crate::value::bytes::Bytes::of(v).is_some() => {
            crate::value::bytes::Bytes::of(v).map_or(0, |b| b.len())
        }
        _ => return type_error(format!("object of type '{}' has no len()", type_name(v))),
    };
    match i64::try_from(n) {
        Ok(n) => Ok(n),
        Err(_) => fail(
            codes::OVERFLOW,
            "Python int too large to convert to C ssize_t",
        ),
    }
}

fn ord(v: &Value) -> RtResult<Value> {
    match v {
        Value::Str(s) => {
            let mut it = s.as_str().chars();
            match (it.next(), it.next()) {
                (Some(c), None) => Ok(Value::Int(c as i64)),
                _ => type_error(format!(
                    "ord() expected a character, but string of length {} found",
                    s.char_len()
                )),
            }
        }
        _ => type_error(format!(
            "ord() expected string of length 1, but {} found",
            type_name(v)
        )),
    }
}

const METERS: &[&str] = &["tokens", "calls", "steps", "time", "context"];

fn outcome(
    which: u16,
    name: &str,
    mut args: Vec<Value>,
    kwargs: &[(Sym, Value)],
) -> RtResult<Value> {
    args::no_kwargs(name, kwargs)?;
    args::exactly_one(name, &args)?;
    let payload = args.pop().unwrap_or_default();
    let tag = match which {
        id::OK => OutcomeTag::Ok,
        id::ERR => OutcomeTag::Err,
        id::UNCERTAIN => OutcomeTag::Uncertain,
        id::EXHAUSTED => {
            let meter = crate::labels::label::plain(&payload);
            if !meter.as_str().is_some_and(|m| METERS.contains(&m)) {
                return fail(
                    codes::VALUE,
                    "Exhausted() meter must be one of \"tokens\", \"calls\", \"steps\", \"time\", \"context\"",
                );
            }
            OutcomeTag::Exhausted
        }
        _ => OutcomeTag::Failed,
    };
    Ok(Value::outcome(tag, payload))
}

fn input(ctx: &mut dyn Caller, args: Vec<Value>, kwargs: &[(Sym, Value)]) -> RtResult<Value> {
    args::no_kwargs("input", kwargs)?;
    args::count("input", &args, 0, 1)?;
    if let Some(prompt) = args.first() {
        let mut s = String::new();
        to_str(ctx.program(), prompt, &mut s);
        ctx.write_out(&s)?;
    }
    match ctx.read_line()? {
        Some(mut line) => {
            if line.ends_with('\n') {
                line.pop();
                if line.ends_with('\r') {
                    line.pop();
                }
            }
            Ok(Value::str(line))
        }
        None => fail(codes::IO, "EOF when reading a line"),
    }
}

/// Whether `v` is an instance of the built-in type `test`, as Python's `isinstance` answers
/// (a `bool` is an `int`; an `int` is not a `float`). A label does not change the answer.
pub fn is_instance(test: TypeTest, v: &Value) -> bool {
    let plain = crate::labels::label::plain(v);
    let v: &Value = &plain;
    match (test, v) {
        (_, Value::Cell(c)) => is_instance(test, &c.borrow()),
        (TypeTest::Int, Value::Int(_) | Value::BigInt(_) | Value::Bool(_)) => true,
        (TypeTest::Float, Value::Float(_)) => true,
        (TypeTest::Str, Value::Str(_)) => true,
        (TypeTest::Bool, Value::Bool(_)) => true,
        (TypeTest::List, Value::List(_)) => true,
        (TypeTest::Dict, Value::Dict(_)) => true,
        (TypeTest::Tuple, Value::Tuple(_)) => true,
        (TypeTest::Set, Value::Set(_)) => true,
        _ => false,
    }
}

/// `isinstance(v, t)` where `t` is a built-in type, a record type or a tuple of them.
fn isinstance(v: &Value, t: &Value) -> RtResult<bool> {
    match t {
        Value::Builtin(b) => match TypeTest::from_name(kora_check::hir::builtin_name(*b)) {
            Some(test) => Ok(is_instance(test, v)),
            None => not_a_type(t),
        },
        Value::Type(tid) => Ok(match &*crate::labels::label::plain(v) {
            Value::Record(r) => r.ty == *tid,
            _ => false,
        }),
        Value::Tuple(ts) => {
            for x in ts.iter() {
                if isinstance(v, x)? {
                    return Ok(true);
                }
            }
            Ok(false)
        }
        _ => not_a_type(t),
    }
}

fn not_a_type<T>(t: &Value) -> RtResult<T> {
    type_error(format!(
        "isinstance() arg 2 must be a type or tuple of types, not {}",
        type_name(t)
    ))
}

/// `exit()`, `exit(code)`, `exit("message")`: ends the run. An int (or `None`, 0) is the
/// process status, as the operating system keeps it (0 to 255); anything else is printed
/// on stderr and the status is 1, as CPython's `sys.exit` does.
fn exit(
    ctx: &mut dyn Caller,
    mut args: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let p = ctx.program();
    let code = args::take_named(p, &mut kwargs, "code");
    args::done(p, &kwargs, "exit")?;
    args::count("exit", &args, 0, 1)?;
    let arg = match (args.pop(), code) {
        (Some(_), Some(_)) => return type_error("exit() got multiple values for argument 'code'"),
        (Some(v), None) | (None, Some(v)) => v,
        (None, None) => Value::None,
    };
    // The exit status is a sink the parent process reads: a classified one would carry
    // eight bits of the secret (its length, a character) out of the run.
    if let Some(t) = crate::labels::label::deep(&arg).filter(|t| t.is_classified()) {
        return fail(
            codes::CLASSIFIED_TO_SINK,
            format!(
                "`exit` cannot end the run with a classified status or message ({} is in it): the process that started the run would read it; exit with a plain code, or show `redact(...)`",
                crate::labels::label::origin_text(t.secret_from)
            ),
        );
    }
    let plain = crate::labels::label::plain(&arg);
    let (status, message) = match &*plain {
        Value::None => (0, String::new()),
        Value::Int(i) => ((*i & 0xff) as i32, String::new()),
        Value::Bool(b) => (*b as i32, String::new()),
        _ => {
            let mut m = String::new();
            to_str(p, &arg, &mut m);
            (1, m)
        }
    };
    Err(crate::error::RtError::exit(status, message))
}

fn type_of(v: &Value) -> Value {
    let builtin = |id: u16| Value::Builtin(BuiltinId(id));
    match v {
        Value::Int(_) | Value::BigInt(_) => builtin(id::INT),
        Value::Float(_) => builtin(id::FLOAT),
        Value::Str(_) => builtin(id::STR),
        Value::Bool(_) => builtin(id::BOOL),
        Value::List(_) => builtin(id::LIST),
        Value::Dict(_) => builtin(id::DICT),
        Value::Set(_) => builtin(id::SET),
        Value::Tuple(_) => builtin(id::TUPLE),
        Value::Range(_) => builtin(id::RANGE),
        Value::Record(r) => Value::Type(r.ty),
        Value::Type(_) => builtin(id::TYPE),
        Value::Cell(c) => type_of(&c.borrow()),
        _ => Value::str(format!("<class '{}'>", type_name(v))),
    }
}

#[cfg(test)]
pub(crate) mod tests;

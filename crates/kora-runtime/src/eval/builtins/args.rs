//! Argument checking shared by built-in functions and methods, with CPython's wording.

use std::fmt::{self, Display};

use kora_check::hir::{Program, Sym};

use crate::error::{codes, fail, type_error, RtResult};
use crate::value::format::type_name;
use crate::value::Value;

pub type Kwargs = Vec<(Sym, Value)>;

/// `type.method` for messages, formatted only when an error is reported.
pub struct Qual<'a>(pub &'a str, pub &'a str);

impl Display for Qual<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.0, self.1)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `len() takes exactly one argument (2 given)`.
pub fn exactly_one(fname: impl Display, args: &[Value]) -> RtResult<()> {
    if args.len() == 1 {
        return Ok(());
    }
    fail(
        codes::ARGUMENTS,
        format!(
            "{fname}() takes exactly one argument ({} given)",
            args.len()
        ),
    )
}

/// `list.copy() takes no arguments (1 given)`.
pub fn no_args(fname: impl Display, args: &[Value]) -> RtResult<()> {
    if args.is_empty() {
        return Ok(());
    }
    fail(
        codes::ARGUMENTS,
        format!("{fname}() takes no arguments ({} given)", args.len()),
    )
}

/// `range expected at least 1 argument, got 0` and its siblings.
pub fn count(fname: impl Display, args: &[Value], min: usize, max: usize) -> RtResult<()> {
    let n = args.len();
    if n >= min && n <= max {
        return Ok(());
    }
    let msg = if min == max {
        format!("{fname} expected {min} argument{}, got {n}", plural(min))
    } else if n < min {
        format!(
            "{fname} expected at least {min} argument{}, got {n}",
            plural(min)
        )
    } else {
        format!(
            "{fname} expected at most {max} argument{}, got {n}",
            plural(max)
        )
    };
    fail(codes::ARGUMENTS, msg)
}

/// `len() takes no keyword arguments`.
pub fn no_kwargs(fname: impl Display, kwargs: &[(Sym, Value)]) -> RtResult<()> {
    if kwargs.is_empty() {
        return Ok(());
    }
    fail(
        codes::ARGUMENTS,
        format!("{fname}() takes no keyword arguments"),
    )
}

/// Removes and returns keyword argument `s`.
pub fn take(kwargs: &mut Kwargs, s: Sym) -> Option<Value> {
    let i = kwargs.iter().position(|(k, _)| *k == s)?;
    Some(kwargs.swap_remove(i).1)
}

/// Removes and returns the keyword argument spelled `name` (for names that are not well known).
pub fn take_named(p: &Program, kwargs: &mut Kwargs, name: &str) -> Option<Value> {
    let i = kwargs.iter().position(|(k, _)| p.name(*k) == name)?;
    Some(kwargs.swap_remove(i).1)
}

/// Fails on any keyword argument left unconsumed.
pub fn done(p: &Program, kwargs: &[(Sym, Value)], fname: &str) -> RtResult<()> {
    match kwargs.first() {
        None => Ok(()),
        Some((k, _)) => fail(
            codes::ARGUMENTS,
            format!(
                "'{}' is an invalid keyword argument for {fname}()",
                p.name(*k)
            ),
        ),
    }
}

/// An argument used as an integer (`bool` counts, `float` does not).
pub fn index(v: &Value) -> RtResult<i64> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Bool(b) => Ok(*b as i64),
        // The caller's mode has put the label on the result already (`label_calls.rs`).
        Value::Labeled(_) | Value::LabeledSmall(_) => index(&crate::labels::label::plain(v)),
        Value::BigInt(_) => fail(
            codes::OVERFLOW,
            "Python int too large to convert to C ssize_t",
        ),
        _ => type_error(format!(
            "'{}' object cannot be interpreted as an integer",
            type_name(v)
        )),
    }
}

/// `None` means "absent" for optional integer arguments such as `start`/`end`.
pub fn opt_index(v: Option<&Value>) -> RtResult<Option<i64>> {
    match v {
        None | Some(Value::None) => Ok(None),
        Some(v) => index(v).map(Some),
    }
}

/// A string argument, or `TypeError: {what}` naming the actual type.
pub fn string(v: &Value, what: impl Display) -> RtResult<&str> {
    match v {
        Value::Str(s) => Ok(s.as_str()),
        _ => type_error(format!("{what}, not {}", type_name(v))),
    }
}

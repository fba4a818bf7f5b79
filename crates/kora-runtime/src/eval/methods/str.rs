//! Methods of `str`, with CPython's argument rules and messages; classification uses CPython's Unicode tables.

use std::rc::Rc;

use kora_check::hir::{sym, Sym};

use super::strsplit::{self, Side};
use super::{no_attribute, unicode};
use crate::error::{codes, fail, type_error, RtResult};
use crate::eval::builtins::args;
use crate::value::caller::Caller;
use crate::value::format::{format_template, type_name};
use crate::value::iter::collect;
use crate::value::{KStr, Value};

pub(super) fn call(
    ctx: &mut dyn Caller,
    s: &Rc<KStr>,
    name: Sym,
    a: Vec<Value>,
    mut kwargs: Vec<(Sym, Value)>,
) -> RtResult<Value> {
    let text = s.as_str();
    let p = ctx.program();
    let mname = p.name(name);
    match name {
        sym::FORMAT => return format_template(p, text, &a, &kwargs).map(Value::str),
        sym::SPLIT | sym::RSPLIT => {
            let mut a = a;
            let sep = args::take(&mut kwargs, sym::SEP);
            let maxsplit = args::take_named(p, &mut kwargs, "maxsplit");
            args::done(p, &kwargs, mname)?;
            if let Some(v) = sep {
                a.insert(0, v);
            }
            if let Some(v) = maxsplit {
                if a.is_empty() {
                    a.push(Value::None);
                }
                a.push(v);
            }
            args::count(mname, &a, 0, 2)?;
            let max = match args::opt_index(a.get(1))? {
                Some(n) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => None,
            };
            let parts = match a.first() {
                None | Some(Value::None) if name == sym::SPLIT => {
                    strsplit::split_whitespace(s, max)
                }
                None | Some(Value::None) => strsplit::rsplit_whitespace(text, max),
                Some(sep) => {
                    let sep = args::string(sep, "must be str or None")?;
                    if sep.is_empty() {
                        return fail(codes::VALUE, "empty separator");
                    }
                    if name == sym::SPLIT {
                        strsplit::split_sep(text, sep, max)
                    } else {
                        strsplit::rsplit_sep(text, sep, max)
                    }
                }
            };
            return Ok(Value::list(parts));
        }
        sym::SPLITLINES => {
            let mut a = a;
            if let Some(k) = args::take_named(p, &mut kwargs, "keepends") {
                a.push(k);
            }
            args::done(p, &kwargs, mname)?;
            args::count(mname, &a, 0, 1)?;
            let keep = a.first().is_some_and(Value::truthy);
            return Ok(Value::list(strsplit::splitlines(text, keep)));
        }
        _ => {}
    }
    let qual = args::Qual("str", mname);
    args::no_kwargs(&qual, &kwargs)?;
    let no_args = |a: &[Value]| args::no_args(&qual, a);
    let all = |pred: fn(char) -> bool| !text.is_empty() && text.chars().all(pred);
    Ok(match name {
        sym::JOIN => {
            args::exactly_one(&qual, &a)?;
            let items = collect(&a[0])?;
            let total = items.iter().map(|x| x.as_str().map_or(0, str::len)).fold(
                text.len().saturating_mul(items.len()),
                usize::saturating_add,
            );
            let mut out = crate::value::grow::string(total, "the joined string")?;
            for (i, x) in items.iter().enumerate() {
                let Value::Str(piece) = x else {
                    return type_error(format!(
                        "sequence item {i}: expected str instance, {} found",
                        type_name(x)
                    ));
                };
                if i > 0 {
                    out.push_str(text);
                }
                out.push_str(piece.as_str());
            }
            Value::str(out)
        }
        sym::STRIP | sym::LSTRIP | sym::RSTRIP => {
            args::count(mname, &a, 0, 1)?;
            let chars = match a.first() {
                None | Some(Value::None) => None,
                Some(Value::Str(c)) => Some(c.as_str()),
                Some(_) => return type_error(format!("{mname} arg must be None or str")),
            };
            let side = match name {
                sym::LSTRIP => Side::Left,
                sym::RSTRIP => Side::Right,
                _ => Side::Both,
            };
            same_or_new(s, strsplit::strip(text, chars, side))
        }
        sym::UPPER | sym::LOWER | sym::SWAPCASE | sym::CAPITALIZE | sym::TITLE => {
            no_args(&a)?;
            Value::str(case_map(text, name))
        }
        sym::REPLACE => {
            args::count("replace", &a, 2, 3)?;
            let old = args::string(&a[0], "replace() argument 1 must be str")?;
            let new = args::string(&a[1], "replace() argument 2 must be str")?;
            match args::opt_index(a.get(2))? {
                Some(n) if n >= 0 => Value::str(text.replacen(old, new, n as usize)),
                _ => Value::str(text.replace(old, new)),
            }
        }
        sym::STARTSWITH | sym::ENDSWITH => {
            args::count(mname, &a, 1, 3)?;
            let start = args::opt_index(a.get(1))?;
            let end = args::opt_index(a.get(2))?;
            let Some((x, y)) = strsplit::window(s, start, end) else {
                return Ok(Value::Bool(false));
            };
            let part = &text[x..y];
            let test = |affix: &str| {
                if name == sym::STARTSWITH {
                    part.starts_with(affix)
                } else {
                    part.ends_with(affix)
                }
            };
            match &a[0] {
                Value::Str(affix) => Value::Bool(test(affix.as_str())),
                Value::Tuple(t) => {
                    let mut hit = false;
                    for x in t.iter() {
                        let affix = args::string(
                            x,
                            format_args!("tuple for {mname} must only contain str"),
                        )?;
                        hit |= test(affix);
                    }
                    Value::Bool(hit)
                }
                v => {
                    return type_error(format!(
                        "{mname} first arg must be str or a tuple of str, not {}",
                        type_name(v)
                    ))
                }
            }
        }
        sym::FIND | sym::RFIND | sym::INDEX | sym::COUNT => {
            args::count(mname, &a, 1, 3)?;
            let sub = args::string(&a[0], "must be str")?;
            let start = args::opt_index(a.get(1))?;
            let end = args::opt_index(a.get(2))?;
            if name == sym::COUNT {
                return Ok(Value::Int(strsplit::count(s, sub, start, end)));
            }
            let i = strsplit::find(s, sub, start, end, name == sym::RFIND);
            if i < 0 && name == sym::INDEX {
                return fail(codes::VALUE, "substring not found");
            }
            Value::Int(i)
        }
        sym::ISDIGIT => Value::Bool(all(unicode::is_digit)),
        sym::ISALPHA => Value::Bool(all(unicode::is_alpha)),
        sym::ISDECIMAL => Value::Bool(all(unicode::is_decimal)),
        sym::ISNUMERIC => Value::Bool(all(unicode::is_numeric)),
        sym::ISSPACE => Value::Bool(all(unicode::is_space)),
        sym::ISALNUM => Value::Bool(all(|c| {
            unicode::is_alpha(c)
                || unicode::is_decimal(c)
                || unicode::is_digit(c)
                || unicode::is_numeric(c)
        })),
        sym::ISUPPER | sym::ISLOWER => {
            no_args(&a)?;
            let want_upper = name == sym::ISUPPER;
            let mut cased = false;
            for c in text.chars() {
                let (same, other) = if want_upper {
                    (c.is_uppercase(), c.is_lowercase())
                } else {
                    (c.is_lowercase(), c.is_uppercase())
                };
                if other || unicode::is_titlecase(c) {
                    return Ok(Value::Bool(false));
                }
                cased |= same;
            }
            Value::Bool(cased)
        }
        sym::ZFILL => {
            args::exactly_one(&qual, &a)?;
            let width = args::index(&a[0])?;
            let len = s.char_len() as i64;
            if len >= width {
                return Ok(Value::Str(s.clone()));
            }
            let fill = usize::try_from(width - len).unwrap_or(usize::MAX);
            let mut out = crate::value::format::reserve(fill.saturating_add(text.len()))?;
            let (sign, digits) = match text.as_bytes().first() {
                Some(b'+' | b'-') => text.split_at(1),
                _ => ("", text),
            };
            out.push_str(sign);
            out.extend(std::iter::repeat_n('0', fill));
            out.push_str(digits);
            Value::str(out)
        }
        sym::CENTER | sym::LJUST | sym::RJUST => {
            args::count(mname, &a, 1, 2)?;
            let width = args::index(&a[0])?;
            let fill = match a.get(1) {
                None => ' ',
                Some(Value::Str(f)) if f.char_len() == 1 => {
                    f.as_str().chars().next().unwrap_or(' ')
                }
                Some(Value::Str(_)) => {
                    return type_error("The fill character must be exactly one character long")
                }
                Some(v) => {
                    return type_error(format!(
                        "The fill character must be a unicode character, not {}",
                        type_name(v)
                    ))
                }
            };
            let len = s.char_len() as i64;
            if width <= len {
                return Ok(Value::Str(s.clone()));
            }
            let marg = width - len;
            let left = match name {
                sym::LJUST => 0,
                sym::RJUST => marg,
                _ => marg / 2 + (marg & width & 1),
            } as usize;
            let right = marg as usize - left;
            let bytes = (marg as usize).saturating_mul(fill.len_utf8());
            let mut out = crate::value::format::reserve(bytes.saturating_add(text.len()))?;
            out.extend(std::iter::repeat_n(fill, left));
            out.push_str(text);
            out.extend(std::iter::repeat_n(fill, right));
            Value::str(out)
        }
        sym::PARTITION | sym::RPARTITION => {
            args::exactly_one(&qual, &a)?;
            let sep = args::string(&a[0], "must be str")?;
            if sep.is_empty() {
                return fail(codes::VALUE, "empty separator");
            }
            let found = if name == sym::PARTITION {
                text.find(sep)
            } else {
                text.rfind(sep)
            };
            let parts = match found {
                Some(i) => [&text[..i], sep, &text[i + sep.len()..]],
                None if name == sym::PARTITION => [text, "", ""],
                None => ["", "", text],
            };
            Value::tuple(parts.iter().map(|p| Value::str(*p)).collect())
        }
        sym::REMOVEPREFIX | sym::REMOVESUFFIX => {
            args::exactly_one(&qual, &a)?;
            let affix = args::string(&a[0], format_args!("{mname}() argument must be str"))?;
            let rest = if name == sym::REMOVEPREFIX {
                text.strip_prefix(affix)
            } else {
                text.strip_suffix(affix)
            };
            match rest {
                Some(r) if !affix.is_empty() => Value::str(r),
                _ => Value::Str(s.clone()),
            }
        }
        _ => return no_attribute(ctx, &Value::Str(s.clone()), name),
    })
}

/// Reuses the receiver when an operation left it unchanged (`"abc".strip()`).
fn same_or_new(s: &Rc<KStr>, part: &str) -> Value {
    if part.len() == s.as_str().len() {
        Value::Str(s.clone())
    } else if s.is_ascii() {
        Value::str_ascii(part)
    } else {
        Value::str(part)
    }
}

fn case_map(text: &str, name: Sym) -> String {
    match name {
        sym::UPPER if text.is_ascii() => text.to_ascii_uppercase(),
        sym::LOWER if text.is_ascii() => text.to_ascii_lowercase(),
        sym::UPPER => text.to_uppercase(),
        sym::LOWER => text.to_lowercase(),
        sym::SWAPCASE => {
            let mut out = String::with_capacity(text.len());
            for c in text.chars() {
                if c.is_uppercase() {
                    out.extend(c.to_lowercase());
                } else if c.is_lowercase() {
                    out.extend(c.to_uppercase());
                } else {
                    out.push(c);
                }
            }
            out
        }
        sym::CAPITALIZE => {
            let mut out = String::with_capacity(text.len());
            let mut chars = text.chars();
            if let Some(first) = chars.next() {
                unicode::push_title(first, &mut out);
                out.push_str(&chars.as_str().to_lowercase());
            }
            out
        }
        _ => {
            // title(): a cased character after an uncased one starts a word.
            let mut out = String::with_capacity(text.len());
            let mut prev_cased = false;
            for c in text.chars() {
                if prev_cased {
                    out.extend(c.to_lowercase());
                } else {
                    unicode::push_title(c, &mut out);
                }
                prev_cased = unicode::is_cased(c);
            }
            out
        }
    }
}

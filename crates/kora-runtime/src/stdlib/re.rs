//! `re`: regular expressions with linear-time matching (the regex crate: no backtracking, so no catastrophic patterns).
//!
//! The defect fixed: Python's `re` backtracks, so `(a+)+$` on a long input
//! hangs a program (ReDoS). The regex crate guarantees time linear in the
//! input; the price is no backreferences or lookaround, which a pattern then
//! reports as invalid. A pattern from data is validated with `re.check`
//! first; an invalid pattern reaching the other calls is a program bug.

use std::rc::Rc;

use regex::Regex;
use rustc_hash::FxHashMap;

use kora_check::std_api::StdFn;

use super::{err, ok, Args};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::Interp;
use crate::value::{Dict, Key, Value};

/// Compiled patterns of this run, so a pattern in a loop compiles once.
#[derive(Default)]
pub struct Cache {
    map: FxHashMap<String, Rc<Regex>>,
}

impl Cache {
    fn get(&mut self, pattern: &str) -> Result<Rc<Regex>, String> {
        if let Some(r) = self.map.get(pattern) {
            return Ok(r.clone());
        }
        let r = Rc::new(compile(pattern)?);
        if self.map.len() >= 512 {
            self.map.clear();
        }
        self.map.insert(pattern.to_string(), r.clone());
        Ok(r)
    }
}

fn compile(pattern: &str) -> Result<Regex, String> {
    regex::RegexBuilder::new(pattern)
        .size_limit(1 << 24)
        .build()
        .map_err(|e| match e {
            regex::Error::Syntax(s) => format!(
                "invalid pattern `{pattern}`: {}",
                s.lines().last().unwrap_or(&s).trim_start_matches("error: ")
            ),
            regex::Error::CompiledTooBig(_) => format!("pattern `{pattern}` is too large"),
            other => format!("invalid pattern `{pattern}`: {other}"),
        })
}

/// Byte offsets into char offsets, as Python counts.
fn chars(text: &str, byte: usize) -> i64 {
    if text.is_ascii() {
        byte as i64
    } else {
        text[..byte].chars().count() as i64
    }
}

fn group(c: &regex::Captures, i: usize) -> Value {
    c.get(i)
        .map(|m| Value::str(m.as_str()))
        .unwrap_or(Value::None)
}

pub(super) fn call(it: &mut Interp, a: Args) -> RtResult<Value> {
    if a.func == StdFn::ReEscape {
        return Ok(Value::str(regex::escape(a.str(0)?)));
    }
    let pattern = a.str(0)?;
    if a.func == StdFn::ReCheck {
        return Ok(match compile(pattern) {
            Ok(_) => ok(Value::str(pattern)),
            Err(why) => err(why),
        });
    }
    let re = it.host().regexes.get(pattern).map_err(|why| {
        RtError::new(
            codes::BAD_PATTERN,
            format!("{why}; validate patterns from data with `re.check`"),
        )
    })?;
    let match_ty = it.host().types.re_match;
    let make_match = |it: &Interp, text: &str, c: &regex::Captures| -> Value {
        let whole = c.get(0).expect("group 0 always matches");
        let groups = (1..c.len()).map(|i| group(c, i)).collect();
        let mut named = Dict::default();
        for (i, n) in re.capture_names().enumerate() {
            if let Some(n) = n {
                named.insert(Key(Value::str(n)), group(c, i));
            }
        }
        let fields = vec![
            Value::str(whole.as_str()),
            Value::Int(chars(text, whole.start())),
            Value::Int(chars(text, whole.end())),
            Value::list(groups),
            Value::dict(named),
        ];
        match match_ty {
            Some(t) => it.std_record(t, fields),
            None => Value::tuple(fields),
        }
    };
    match a.func {
        StdFn::ReSearch | StdFn::ReMatch | StdFn::ReFullmatch => {
            let text = a.str(1)?;
            let found = re.captures(text).filter(|c| {
                let m = c.get(0).expect("group 0");
                match a.func {
                    StdFn::ReMatch => m.start() == 0,
                    StdFn::ReFullmatch => m.start() == 0 && m.end() == text.len(),
                    _ => true,
                }
            });
            // A leftmost-first search can miss an anchored match further right, so the
            // anchored forms retry with the anchor written into the pattern.
            let found = match (found, a.func) {
                (Some(c), _) => Some(c),
                (None, StdFn::ReSearch) => None,
                (None, f) => {
                    let anchored = if f == StdFn::ReMatch {
                        format!("^(?:{pattern})")
                    } else {
                        format!("^(?:{pattern})$")
                    };
                    let r2 = it
                        .host()
                        .regexes
                        .get(&anchored)
                        .map_err(|why| RtError::new(codes::BAD_PATTERN, why))?;
                    let c = r2.captures(text);
                    return Ok(match c {
                        Some(c) => {
                            // Group numbers are unchanged: `(?:...)` does not capture.
                            make_match(it, text, &c)
                        }
                        None => Value::None,
                    });
                }
            };
            Ok(match found {
                Some(c) => make_match(it, text, &c),
                None => Value::None,
            })
        }
        StdFn::ReFinditer => {
            let text = a.str(1)?;
            let all = re
                .captures_iter(text)
                .map(|c| make_match(it, text, &c))
                .collect();
            Ok(Value::list(all))
        }
        StdFn::ReFindall => {
            let text = a.str(1)?;
            let n = re.captures_len() - 1;
            let text_of = |c: &regex::Captures, i: usize| {
                Value::str(c.get(i).map(|m| m.as_str()).unwrap_or(""))
            };
            let all = re
                .captures_iter(text)
                .map(|c| match n {
                    0 => text_of(&c, 0),
                    1 => text_of(&c, 1),
                    _ => Value::tuple((1..=n).map(|i| text_of(&c, i)).collect()),
                })
                .collect();
            Ok(Value::list(all))
        }
        StdFn::ReSub => {
            let repl = python_repl(a.str(1)?);
            let text = a.str(2)?;
            let count = a.int(3, 0)?;
            if count < 0 {
                return Err(RtError::new(
                    codes::STD_VALUE,
                    "`re.sub(count=...)` must not be negative",
                ));
            }
            Ok(Value::str(
                re.replacen(text, count as usize, repl.as_str())
                    .into_owned(),
            ))
        }
        StdFn::ReSplit => {
            let text = a.str(1)?;
            let max = a.int(2, 0)?;
            let mut out = Vec::new();
            let mut last = 0;
            for (k, c) in re.captures_iter(text).enumerate() {
                if max > 0 && k as i64 >= max {
                    break;
                }
                let m = c.get(0).expect("group 0");
                out.push(Value::str(&text[last..m.start()]));
                for i in 1..c.len() {
                    out.push(group(&c, i));
                }
                last = m.end();
            }
            out.push(Value::str(&text[last..]));
            Ok(Value::list(out))
        }
        _ => unreachable!("re::call got {:?}", a.func),
    }
}

#[cfg(test)]
pub(super) fn python_repl_for_tests(r: &str) -> String {
    python_repl(r)
}

/// Python's replacement syntax (`\1`, `\g<1>`, `\g<name>`) in the regex crate's (`${1}`).
fn python_repl(r: &str) -> String {
    let mut out = String::with_capacity(r.len());
    let mut it = r.chars().peekable();
    while let Some(c) = it.next() {
        match c {
            '$' => out.push_str("$$"),
            '\\' => match it.peek().copied() {
                Some(d) if d.is_ascii_digit() => {
                    let mut n = String::new();
                    while let Some(d) = it.peek().copied().filter(char::is_ascii_digit) {
                        n.push(d);
                        it.next();
                    }
                    out.push_str(&format!("${{{n}}}"));
                }
                Some('g') => {
                    it.next();
                    if it.peek() == Some(&'<') {
                        it.next();
                        let name: String = it.by_ref().take_while(|c| *c != '>').collect();
                        out.push_str(&format!("${{{name}}}"));
                    } else {
                        out.push_str("\\g");
                    }
                }
                Some('n') => {
                    it.next();
                    out.push('\n');
                }
                Some('t') => {
                    it.next();
                    out.push('\t');
                }
                Some('\\') => {
                    it.next();
                    out.push('\\');
                }
                _ => out.push('\\'),
            },
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_replacements_translate() {
        assert_eq!(python_repl(r"\1-\g<2>-\g<word>"), "${1}-${2}-${word}");
        assert_eq!(python_repl("cost: $5"), "cost: $$5");
    }

    #[test]
    fn catastrophic_pattern_is_linear() {
        // `(a+)+$` backtracks exponentially in Python on "aaaa...b".
        let re = compile("(a+)+$").expect("valid");
        let text = format!("{}b", "a".repeat(100_000));
        assert!(!re.is_match(&text));
    }

    #[test]
    fn backreferences_are_refused_with_a_reason() {
        let e = compile(r"(a)\1").expect_err("no backreferences");
        assert!(e.contains("invalid pattern"), "{e}");
    }
}

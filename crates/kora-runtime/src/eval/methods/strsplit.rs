//! The splitting, stripping and searching algorithms behind the `str` methods.
//!
//! Whitespace means Python's `str.isspace` (which includes `\x1c`-`\x1f`), and
//! `start`/`end` are character indices adjusted like CPython's `ADJUST_INDICES`.

use super::unicode::is_space;
use crate::value::{KStr, Value};

fn push(out: &mut Vec<Value>, s: &str) {
    out.push(Value::str(s));
}

/// `s.split()` / `s.split(None, maxsplit)`.
pub fn split_whitespace(s: &KStr, maxsplit: Option<usize>) -> Vec<Value> {
    if s.is_ascii() {
        return split_ascii_whitespace(s.as_str(), maxsplit);
    }
    split_any_whitespace(s.as_str(), maxsplit)
}

/// `split_whitespace` on any text.
pub(super) fn split_any_whitespace(s: &str, maxsplit: Option<usize>) -> Vec<Value> {
    let mut out = Vec::new();
    let mut rest = s;
    let mut left = maxsplit.unwrap_or(usize::MAX);
    loop {
        rest = rest.trim_start_matches(is_space);
        if rest.is_empty() {
            break;
        }
        if left == 0 {
            push(&mut out, rest);
            break;
        }
        left -= 1;
        let end = rest.find(is_space).unwrap_or(rest.len());
        push(&mut out, &rest[..end]);
        rest = &rest[end..];
    }
    out
}

/// `split_whitespace` on ASCII text: a byte walk, where the general loop decodes every
/// character twice (once to skip spaces, once to find the next one).
pub(super) fn split_ascii_whitespace(s: &str, maxsplit: Option<usize>) -> Vec<Value> {
    let b = s.as_bytes();
    let space = |i: usize| is_space(b[i] as char);
    let mut out = Vec::new();
    let mut left = maxsplit.unwrap_or(usize::MAX);
    let mut i = 0;
    loop {
        while i < b.len() && space(i) {
            i += 1;
        }
        if i == b.len() {
            break;
        }
        if left == 0 {
            out.push(Value::str_ascii(&s[i..]));
            break;
        }
        left -= 1;
        let start = i;
        while i < b.len() && !space(i) {
            i += 1;
        }
        out.push(Value::str_ascii(&s[start..i]));
    }
    out
}

/// `s.rsplit()` / `s.rsplit(None, maxsplit)`.
pub fn rsplit_whitespace(s: &str, maxsplit: Option<usize>) -> Vec<Value> {
    let mut out = Vec::new();
    let mut rest = s;
    let mut left = maxsplit.unwrap_or(usize::MAX);
    loop {
        rest = rest.trim_end_matches(is_space);
        if rest.is_empty() {
            break;
        }
        if left == 0 {
            push(&mut out, rest);
            break;
        }
        left -= 1;
        let start = rest.rfind(is_space).map_or(0, |i| {
            i + rest[i..].chars().next().map_or(1, char::len_utf8)
        });
        push(&mut out, &rest[start..]);
        rest = &rest[..start];
    }
    out.reverse();
    out
}

/// `s.split(sep, maxsplit)` for a non-empty `sep`.
pub fn split_sep(s: &str, sep: &str, maxsplit: Option<usize>) -> Vec<Value> {
    // A one-byte separator is an ASCII character: splitting on the char searches with
    // memchr, where a `&str` pattern sets up a two-way searcher per call.
    if let [c] = sep.as_bytes() {
        let c = *c as char;
        return match maxsplit {
            None => s.split(c).map(Value::str).collect(),
            Some(n) => s.splitn(n.saturating_add(1), c).map(Value::str).collect(),
        };
    }
    match maxsplit {
        None => s.split(sep).map(Value::str).collect(),
        Some(n) => s.splitn(n.saturating_add(1), sep).map(Value::str).collect(),
    }
}

/// `s.rsplit(sep, maxsplit)` for a non-empty `sep`.
pub fn rsplit_sep(s: &str, sep: &str, maxsplit: Option<usize>) -> Vec<Value> {
    let mut out: Vec<Value> = match maxsplit {
        None => s.rsplit(sep).map(Value::str).collect(),
        Some(n) => s
            .rsplitn(n.saturating_add(1), sep)
            .map(Value::str)
            .collect(),
    };
    out.reverse();
    out
}

fn is_line_break(c: char) -> bool {
    matches!(
        c,
        '\n' | '\r'
            | '\x0b'
            | '\x0c'
            | '\x1c'
            | '\x1d'
            | '\x1e'
            | '\u{85}'
            | '\u{2028}'
            | '\u{2029}'
    )
}

/// `s.splitlines(keepends)`.
pub fn splitlines(s: &str, keepends: bool) -> Vec<Value> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut it = s.char_indices().peekable();
    while let Some((i, c)) = it.next() {
        if !is_line_break(c) {
            continue;
        }
        let mut end = i + c.len_utf8();
        if c == '\r' {
            if let Some(&(_, '\n')) = it.peek() {
                it.next();
                end += 1;
            }
        }
        push(&mut out, &s[start..if keepends { end } else { i }]);
        start = end;
    }
    if start < s.len() {
        push(&mut out, &s[start..]);
    }
    out
}

/// Which ends `strip` works on.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
    Both,
}

/// `s.strip(chars)`; `None` strips whitespace.
pub fn strip<'a>(s: &'a str, chars: Option<&str>, side: Side) -> &'a str {
    let pred = |c: char| match chars {
        None => is_space(c),
        Some(set) => set.contains(c),
    };
    match side {
        Side::Left => s.trim_start_matches(pred),
        Side::Right => s.trim_end_matches(pred),
        Side::Both => s.trim_matches(pred),
    }
}

/// CPython's `ADJUST_INDICES` on character positions; `start` may exceed `len`.
pub fn adjust(len: usize, start: Option<i64>, end: Option<i64>) -> (i128, i128) {
    let len = len as i128;
    let end = match end {
        None => len,
        Some(e) => {
            let e = e as i128;
            if e > len {
                len
            } else if e < 0 {
                (e + len).max(0)
            } else {
                e
            }
        }
    };
    let start = match start {
        None => 0,
        Some(s) => {
            let s = s as i128;
            if s < 0 {
                (s + len).max(0)
            } else {
                s
            }
        }
    };
    (start, end)
}

/// Byte offset of character `ci` (at most the length).
pub fn byte_at(s: &KStr, ci: i128) -> usize {
    let text = s.as_str();
    let ci = usize::try_from(ci.max(0)).unwrap_or(usize::MAX);
    if s.is_ascii() {
        return ci.min(text.len());
    }
    text.char_indices().nth(ci).map_or(text.len(), |(b, _)| b)
}

/// Character index of byte offset `b` (on a character boundary).
pub fn char_at(s: &KStr, b: usize) -> i64 {
    if s.is_ascii() {
        return b as i64;
    }
    s.as_str().get(..b).map_or(0, |p| p.chars().count() as i64)
}

/// The window `s[start:end]` in bytes, or `None` when `start > len` or `end < start`
/// (where nothing, not even `''`, is found).
pub fn window(s: &KStr, start: Option<i64>, end: Option<i64>) -> Option<(usize, usize)> {
    let len = s.char_len();
    let (a, b) = adjust(len, start, end);
    if a > len as i128 || b < a {
        return None;
    }
    Some((byte_at(s, a), byte_at(s, b)))
}

/// `s.find(sub, start, end)` / `rfind`: character index or -1.
pub fn find(s: &KStr, sub: &str, start: Option<i64>, end: Option<i64>, reverse: bool) -> i64 {
    let Some((a, b)) = window(s, start, end) else {
        return -1;
    };
    let hay = &s.as_str()[a..b];
    let pos = if reverse {
        hay.rfind(sub)
    } else {
        hay.find(sub)
    };
    match pos {
        Some(p) => char_at(s, a + p),
        None => -1,
    }
}

/// `s.count(sub, start, end)`: non-overlapping occurrences.
pub fn count(s: &KStr, sub: &str, start: Option<i64>, end: Option<i64>) -> i64 {
    let Some((a, b)) = window(s, start, end) else {
        return 0;
    };
    let hay = &s.as_str()[a..b];
    if sub.is_empty() {
        return hay.chars().count() as i64 + 1;
    }
    hay.matches(sub).count() as i64
}

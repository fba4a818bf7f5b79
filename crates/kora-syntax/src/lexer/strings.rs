//! String literal anatomy (prefix, quotes, body) and escape decoding, with Python's escape rules.

use crate::diagnostic::Diagnostic;
use crate::span::Span;
use std::ops::Range;

/// Where the pieces of a raw string literal are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LitParts {
    pub prefix_len: usize,
    pub raw: bool,
    pub bytes: bool,
    pub fmt: bool,
    pub quote_len: usize,
    /// Byte range of the text between the quotes.
    pub body: Range<usize>,
    pub terminated: bool,
}

/// Splits a literal as the lexer produced it (`r'..'`, `f"""..."""`, an unterminated `'abc`).
pub fn split_literal(raw: &str) -> LitParts {
    let prefix_len = raw
        .bytes()
        .take_while(|b| matches!(b, b'r' | b'R' | b'b' | b'B' | b'u' | b'U' | b'f' | b'F'))
        .count();
    let prefix = &raw[..prefix_len];
    let rest = &raw.as_bytes()[prefix_len..];
    let q = rest.first().copied().unwrap_or(b'"');
    let triple = rest.len() >= 3 && rest[1] == q && rest[2] == q;
    let quote_len = if triple { 3 } else { 1 };
    let open_end = (prefix_len + quote_len).min(raw.len());
    let closes = if triple {
        rest.len() >= 6 && rest[rest.len() - 3..].iter().all(|b| *b == q)
    } else {
        rest.len() >= 2 && rest[rest.len() - 1] == q
    };
    let trailing_backslashes = if closes {
        rest[..rest.len() - quote_len]
            .iter()
            .rev()
            .take_while(|b| **b == b'\\')
            .count()
    } else {
        0
    };
    let terminated = closes && trailing_backslashes % 2 == 0;
    let body_end = if terminated {
        raw.len() - quote_len
    } else {
        raw.len()
    };
    LitParts {
        prefix_len,
        raw: prefix.contains(['r', 'R']),
        bytes: prefix.contains(['b', 'B']),
        fmt: prefix.contains(['f', 'F']),
        quote_len,
        body: open_end..body_end.max(open_end),
        terminated,
    }
}

/// The value of a plain string literal token; errors were reported by the lexer.
pub fn decode_string(raw: &str) -> String {
    let parts = split_literal(raw);
    let body = raw.get(parts.body.clone()).unwrap_or("");
    unescape(body, parts.raw, 0, None)
}

/// The bytes of a `b"..."` literal (raw, prefix and quotes included), escapes decoded.
pub fn decode_bytes(raw: &str) -> Vec<u8> {
    let parts = split_literal(raw);
    let body = raw.get(parts.body.clone()).unwrap_or("");
    unescape_bytes(body, parts.raw, 0, None)
}

/// Decodes escapes in `body` (at file offset `base`); with `diags`, reports bad escapes.
pub fn unescape(body: &str, raw: bool, base: u32, diags: Option<&mut Vec<Diagnostic>>) -> String {
    unescape_in(body, raw, false, base, diags)
}

/// As `unescape`, for a bytes literal: `\u`, `\U` and `\N` are not escapes there (Python keeps
/// them as written), and every escape names one byte. A character above `\xff` (only ever
/// there after an error was reported) becomes `?`.
pub fn unescape_bytes(
    body: &str,
    raw: bool,
    base: u32,
    diags: Option<&mut Vec<Diagnostic>>,
) -> Vec<u8> {
    unescape_in(body, raw, true, base, diags)
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

fn unescape_in(
    body: &str,
    raw: bool,
    bytes: bool,
    base: u32,
    mut diags: Option<&mut Vec<Diagnostic>>,
) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\r' && matches!(chars.peek(), Some((_, '\n'))) {
            continue;
        }
        if c != '\\' || raw {
            out.push(c);
            continue;
        }
        let Some((j, e)) = chars.next() else {
            out.push('\\');
            break;
        };
        let simple = match e {
            '\n' => Some(None),
            '\r' => {
                if matches!(chars.peek(), Some((_, '\n'))) {
                    chars.next();
                }
                Some(None)
            }
            '\\' => Some(Some('\\')),
            '\'' => Some(Some('\'')),
            '"' => Some(Some('"')),
            'a' => Some(Some('\x07')),
            'b' => Some(Some('\x08')),
            'f' => Some(Some('\x0c')),
            'n' => Some(Some('\n')),
            'r' => Some(Some('\r')),
            't' => Some(Some('\t')),
            'v' => Some(Some('\x0b')),
            _ => None,
        };
        if let Some(ch) = simple {
            out.extend(ch);
            continue;
        }
        let mut end = j + e.len_utf8();
        let mut report = |msg: &str, help: &str, end: usize| {
            if let Some(d) = diags.as_deref_mut() {
                let span = Span::new(base + i as u32, base + end as u32);
                d.push(
                    Diagnostic::error("E0003", msg.to_string(), span)
                        .with_label("in this escape")
                        .with_help(help.to_string()),
                );
            }
        };
        match e {
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek() {
                        Some(&(k, d @ '0'..='7')) => {
                            v = v * 8 + d.to_digit(8).unwrap_or(0);
                            end = k + 1;
                            chars.next();
                        }
                        _ => break,
                    }
                }
                if bytes && v > 0o377 {
                    report(
                        &format!("`\\{v:o}` is past the largest byte, `\\377`"),
                        "an octal escape in a bytes literal names one byte: `\\0` to `\\377`",
                        end,
                    );
                }
                out.extend(char::from_u32(v));
            }
            'u' | 'U' | 'N' if bytes => {
                // Not escapes in bytes: kept as written, as Python does.
                out.push('\\');
                out.push(e);
            }
            'x' | 'u' | 'U' => {
                let want = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                let mut got = 0;
                while got < want {
                    match chars.peek() {
                        Some(&(k, d)) if d.is_ascii_hexdigit() => {
                            v = v.wrapping_mul(16) + d.to_digit(16).unwrap_or(0);
                            end = k + 1;
                            got += 1;
                            chars.next();
                        }
                        _ => break,
                    }
                }
                if got < want {
                    report(
                        &format!("invalid `\\{e}` escape: expected {want} hex digits"),
                        &format!(
                            "write exactly {want} hex digits after `\\{e}`, as in `\\{e}{}`",
                            "0".repeat(want - 1) + "a"
                        ),
                        end,
                    );
                } else {
                    match char::from_u32(v) {
                        Some(ch) => out.push(ch),
                        None => report(
                            &format!("`\\{e}{v:X}` is not a valid Unicode character"),
                            "Unicode scalar values stop at 10FFFF and exclude the surrogates D800-DFFF",
                            end,
                        ),
                    }
                }
            }
            'N' => {
                if matches!(chars.peek(), Some((_, '{'))) {
                    for (k, d) in chars.by_ref() {
                        end = k + d.len_utf8();
                        if d == '}' {
                            break;
                        }
                    }
                }
                report(
                    "named Unicode escapes (`\\N{...}`) are not supported",
                    "write the character itself, or its code point as `\\uXXXX`",
                    end,
                );
            }
            other => {
                // Python keeps an unknown escape as written.
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_prefixes_and_quotes() {
        let p = split_literal("rf'''a'''");
        assert!(p.raw && p.fmt && p.terminated);
        assert_eq!(p.quote_len, 3);
        assert_eq!(&"rf'''a'''"[p.body], "a");
        let p = split_literal("''");
        assert!(p.terminated);
        assert_eq!(p.body, 1..1);
        let p = split_literal("'abc");
        assert!(!p.terminated);
        assert_eq!(p.body, 1..4);
    }

    #[test]
    fn decodes_escapes() {
        assert_eq!(
            decode_string(r#""a\tb\n\x41\u00e9\101\q""#),
            "a\tb\nAé\u{41}\\q"
        );
        assert_eq!(decode_string(r#"r"\n""#), "\\n");
        let mut d = Vec::new();
        unescape(r"\xZ1 \N{DASH}", false, 10, Some(&mut d));
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].span(), Span::new(10, 12));
    }
}

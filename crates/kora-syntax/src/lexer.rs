//! Source text to raw tokens (logos), with lexical diagnostics; string literal decoding lives in `lexer::strings`.
//!
//! The lexer never stops: unreadable text becomes a `Tok::Error` token after
//! its diagnostic is recorded, so the parser can carry on past it without
//! reporting the same problem twice.

mod strings;

pub use strings::{decode_bytes, decode_string, split_literal, unescape, unescape_bytes, LitParts};

use crate::diagnostic::Diagnostic;
use crate::span::Span;
use crate::token::Tok;
use logos::{Lexer, Logos};

/// Lexer state threaded through logos callbacks.
#[derive(Default)]
pub struct Extras {
    pub diags: Vec<Diagnostic>,
    /// Offset of the lexed text inside the file, so fragments (f-string fields) report file positions.
    pub base: u32,
}

#[derive(Default, Debug, Clone, PartialEq)]
pub enum LexError {
    /// No rule matched; the driver loop reports it.
    #[default]
    Unexpected,
    /// A callback already recorded a diagnostic.
    Reported,
}

type Lx<'a> = Lexer<'a, Tok<'a>>;

fn here(lex: &Lx<'_>) -> Span {
    let r = lex.span();
    let b = lex.extras.base;
    Span::new(b + r.start as u32, b + r.end as u32)
}

pub(crate) fn lex_ident<'a>(lex: &mut Lx<'a>) -> Result<&'a str, LexError> {
    let text = lex.slice();
    if text.is_ascii() {
        return Ok(text);
    }
    let start = here(lex).start;
    for (i, c) in text.char_indices() {
        if !c.is_ascii() && !c.is_alphanumeric() {
            let at = start + i as u32;
            let span = Span::new(at, at + c.len_utf8() as u32);
            lex.extras.diags.push(unexpected_char(c, span));
            return Err(LexError::Reported);
        }
    }
    Ok(text)
}

pub(crate) fn lex_decimal(lex: &mut Lx<'_>) -> Option<Option<u64>> {
    let text = lex.slice();
    if text.len() > 1 && text.starts_with('0') && text.bytes().any(|b| b != b'0' && b != b'_') {
        let span = here(lex);
        lex.extras.diags.push(
            Diagnostic::error(
                "E0006",
                "leading zeros are not allowed in a decimal integer",
                span,
            )
            .with_label("this literal starts with `0`")
            .with_help(format!(
                "write `{}`, or use the `0o` prefix for an octal number",
                text.trim_start_matches(['0', '_'])
            )),
        );
    }
    let digits: String = text.chars().filter(|c| *c != '_').collect();
    Some(digits.parse::<u64>().ok())
}

pub(crate) fn lex_radix(lex: &mut Lx<'_>) -> Option<Option<u64>> {
    let text = lex.slice();
    let radix = match text.as_bytes().get(1) {
        Some(b'x' | b'X') => 16,
        Some(b'o' | b'O') => 8,
        _ => 2,
    };
    let digits: String = text.chars().skip(2).filter(|c| *c != '_').collect();
    Some(u64::from_str_radix(&digits, radix).ok())
}

pub(crate) fn lex_float(lex: &mut Lx<'_>) -> f64 {
    let digits: String = lex.slice().chars().filter(|c| *c != '_').collect();
    digits.parse::<f64>().unwrap_or(f64::NAN)
}

pub(crate) fn bad_number(lex: &mut Lx<'_>) -> Result<(), LexError> {
    let span = here(lex);
    let text = lex.slice();
    let help = if text.contains("__") || text.ends_with('_') {
        "an underscore may only separate two digits, as in `1_000`"
    } else if text.len() > 2 && matches!(&text[..2], "0x" | "0X" | "0o" | "0O" | "0b" | "0B") {
        "`0x` takes hex digits, `0o` octal digits and `0b` only 0 and 1"
    } else {
        "a name cannot start with a digit; numbers are written like `42`, `0x2a`, `1.5` or `1e-3`"
    };
    lex.extras.diags.push(
        Diagnostic::error("E0005", format!("invalid number literal `{text}`"), span)
            .with_label("not a valid number")
            .with_help(help),
    );
    Err(LexError::Reported)
}

/// Finds the end of a string literal whose prefix and opening quote were just matched.
fn scan_string<'a>(lex: &mut Lx<'a>) -> &'a str {
    let opened = lex.slice();
    let quote = opened.as_bytes()[opened.len() - 1];
    let rest = lex.remainder().as_bytes();
    let triple = rest.len() >= 2 && rest[0] == quote && rest[1] == quote;
    let start = here(lex).start;
    let mut i = if triple { 2 } else { 0 };
    let mut end = None;
    while i < rest.len() {
        let b = rest[i];
        if b == b'\\' {
            i += 2;
            continue;
        }
        if b == quote
            && (!triple || (rest.len() >= i + 3 && rest[i + 1] == quote && rest[i + 2] == quote))
        {
            end = Some(i + if triple { 3 } else { 1 });
            break;
        }
        if !triple && (b == b'\n' || b == b'\r') {
            break;
        }
        i += 1;
    }
    match end {
        Some(n) => lex.bump(n),
        None => {
            let consumed = i.min(rest.len());
            lex.bump(consumed);
            let open_len = opened.len() as u32 + if triple { 2 } else { 0 };
            let span = Span::new(start, start + open_len);
            let (what, help) = if triple {
                (
                    "unterminated triple-quoted string",
                    "close it with the same three quotes it was opened with",
                )
            } else {
                (
                    "unterminated string",
                    "close the string on the same line, or use triple quotes for text spanning lines",
                )
            };
            lex.extras.diags.push(
                Diagnostic::error("E0002", what, span)
                    .with_label("this string is never closed")
                    .with_help(help),
            );
        }
    }
    lex.slice()
}

pub(crate) fn lex_string<'a>(lex: &mut Lx<'a>) -> &'a str {
    scan_string(lex)
}

pub(crate) fn lex_fstring<'a>(lex: &mut Lx<'a>) -> &'a str {
    scan_string(lex)
}

fn unexpected_char(c: char, span: Span) -> Diagnostic {
    let help = match c {
        '\\' => "a `\\` continues a line only as the very last character on it",
        '!' => "write `not x` for negation and `!=` for inequality",
        '$' | '`' | '?' => "remove this character; it has no meaning in Kora",
        c if c.is_whitespace() => "replace this unusual whitespace with an ordinary space",
        '\u{201c}' | '\u{201d}' | '\u{2018}' | '\u{2019}' => {
            "this is a typographic quote; use a plain `\"` or `'`"
        }
        _ => "remove this character, or put it inside a string",
    };
    let shown = if c.is_whitespace() || c.is_control() {
        format!("U+{:04X}", c as u32)
    } else {
        format!("`{c}`")
    };
    Diagnostic::error("E0001", format!("unexpected character {shown}"), span)
        .with_label("not valid here")
        .with_help(help)
}

/// Lexes `src`, whose first byte sits at file offset `base`.
///
/// Physical newlines are kept as `Newline` tokens; the layout pass decides
/// which ones end a logical line.
pub fn lex(src: &str, base: u32) -> (Vec<(Tok<'_>, Span)>, Vec<Diagnostic>) {
    let mut lexer = Tok::lexer_with_extras(
        src,
        Extras {
            diags: Vec::new(),
            base,
        },
    );
    // Programs run at about one token per three or four bytes; reserving that avoids
    // copying a large file's tokens each time the vector doubles.
    let mut toks: Vec<(Tok<'_>, Span)> = Vec::with_capacity(src.len() / 3 + 16);
    let mut unexpected: Vec<Diagnostic> = Vec::new();
    let mut last_unexpected_end: Option<u32> = None;
    while let Some(res) = lexer.next() {
        let r = lexer.span();
        let span = Span::new(base + r.start as u32, base + r.end as u32);
        match res {
            Ok(tok) => {
                let tok = match tok {
                    // Ints have no size limit: a literal past 64 bits keeps its text for the parser.
                    Tok::Int(None) => Tok::BigInt(lexer.slice()),
                    Tok::Str(raw) => check_string(raw, span.start, &mut lexer.extras.diags),
                    other => other,
                };
                toks.push((tok, span));
            }
            Err(LexError::Reported) => toks.push((Tok::Error, span)),
            Err(LexError::Unexpected) => {
                let text = src.get(r.clone()).unwrap_or("");
                let c = text.chars().next().unwrap_or('?');
                // A run of junk is one problem, not one per character.
                if last_unexpected_end == Some(span.start) {
                    if let (Some(d), Some((_, s))) = (unexpected.last_mut(), toks.last_mut()) {
                        if let Some(l) = d.labels.first_mut() {
                            l.span.end = span.end;
                        }
                        s.end = span.end;
                    }
                } else {
                    unexpected.push(unexpected_char(c, span));
                    toks.push((Tok::Error, span));
                }
                last_unexpected_end = Some(span.end);
            }
        }
    }
    let mut diags = lexer.extras.diags;
    diags.extend(unexpected);
    diags.sort_by_key(|d| d.span().start);
    (toks, diags)
}

/// Reports bad escapes in a string literal (and anything but ASCII in a bytes literal); a
/// literal with a `b` prefix becomes a `Bytes` token.
fn check_string<'a>(raw: &'a str, start: u32, diags: &mut Vec<Diagnostic>) -> Tok<'a> {
    let parts = split_literal(raw);
    let body_start = start + parts.body.start as u32;
    let body = raw.get(parts.body.clone()).unwrap_or("");
    if !parts.bytes {
        unescape(body, parts.raw, body_start, Some(diags));
        return Tok::Str(raw);
    }
    if let Some((i, c)) = body.char_indices().find(|(_, c)| !c.is_ascii()) {
        let at = body_start + i as u32;
        diags.push(
            Diagnostic::error(
                "E0007",
                format!("a bytes literal holds ASCII only, and `{c}` is not ASCII"),
                Span::new(at, at + c.len_utf8() as u32),
            )
            .with_label("not ASCII")
            .with_help(format!(
                "write its bytes as `\\xNN` escapes, or build the value with `bytes(\"{c}\", \"utf-8\")`"
            )),
        );
    }
    unescape_bytes(body, parts.raw, body_start, Some(diags));
    Tok::Bytes(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok<'_>> {
        lex(src, 0).0.into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn numbers() {
        assert_eq!(
            kinds("1_000 0x1F 0o17 0b101 1.5 .5 1e10 1_0.5"),
            vec![
                Tok::Int(Some(1000)),
                Tok::Int(Some(31)),
                Tok::Int(Some(15)),
                Tok::Int(Some(5)),
                Tok::Float(1.5),
                Tok::Float(0.5),
                Tok::Float(1e10),
                Tok::Float(10.5),
            ]
        );
        assert_eq!(
            kinds("99999999999999999999"),
            vec![Tok::BigInt("99999999999999999999")]
        );
        let (toks, diags) = lex("0x 1__0", 0);
        assert_eq!(toks.len(), 2);
        assert_eq!(diags.len(), 2);
        assert!(diags.iter().all(|d| d.code == "E0005"));
    }

    #[test]
    fn keywords_soft_words_and_operators() {
        assert_eq!(
            kinds("def match -> ** //= x.y"),
            vec![
                Tok::Def,
                Tok::Name("match"),
                Tok::Arrow,
                Tok::DoubleStar,
                Tok::DoubleSlashEq,
                Tok::Name("x"),
                Tok::Dot,
                Tok::Name("y"),
            ]
        );
    }

    #[test]
    fn strings_and_comments() {
        let toks = kinds("'a' \"b\" r'\\d' f\"{x}\" '''t\nq''' # c\n");
        assert_eq!(
            toks,
            vec![
                Tok::Str("'a'"),
                Tok::Str("\"b\""),
                Tok::Str("r'\\d'"),
                Tok::FStr("f\"{x}\""),
                Tok::Str("'''t\nq'''"),
                Tok::Newline,
            ]
        );
    }

    #[test]
    fn unterminated_string_reports_and_continues() {
        let (toks, diags) = lex("x = 'abc\ny = 1\n", 0);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].code, "E0002");
        assert!(toks.contains(&(Tok::Name("y"), Span::new(9, 10))));
    }

    #[test]
    fn unicode_names_and_bad_characters() {
        assert_eq!(kinds("café"), vec![Tok::Name("café")]);
        let (toks, diags) = lex("a $$ b", 0);
        assert_eq!(toks.len(), 3);
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].span(), Span::new(2, 4));
    }
}

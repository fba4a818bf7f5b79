//! f-strings: splitting literal text from `{expr!conv:spec}` fields, and parsing each field in place.
//!
//! Each field's expression is lexed and parsed as a fragment of the file,
//! so its spans (and any error in it) point at the right bytes. The format
//! spec is itself an f-string body: `{x:>{width}}` nests a field.

use crate::ast::FStringPart;
use crate::diagnostic::Diagnostic;
use crate::lexer::{split_literal, unescape};
use crate::span::Span;

/// Python allows a field inside a format spec, but no deeper.
const MAX_SPEC_NESTING: usize = 2;

struct Fs<'t, 'd> {
    text: &'t str,
    base: u32,
    raw: bool,
    diags: &'d mut Vec<Diagnostic>,
}

fn err(code_msg: &str, help: &str, span: Span) -> Diagnostic {
    Diagnostic::error("E0008", format!("f-string: {code_msg}"), span)
        .with_label("in this f-string field")
        .with_help(help.to_string())
}

/// Parses the raw token text of an f-string that starts at file offset `start`.
pub fn parse(raw: &str, start: u32, diags: &mut Vec<Diagnostic>) -> Vec<FStringPart> {
    let lit = split_literal(raw);
    let body = raw.get(lit.body.clone()).unwrap_or("");
    let mut fs = Fs {
        text: body,
        base: start + lit.body.start as u32,
        raw: lit.raw,
        diags,
    };
    fs.parts(0, body.len(), 0)
}

impl Fs<'_, '_> {
    fn span(&self, a: usize, b: usize) -> Span {
        Span::new(self.base + a as u32, self.base + b as u32)
    }

    fn byte(&self, i: usize) -> Option<u8> {
        self.text.as_bytes().get(i).copied()
    }

    fn flush(&mut self, buf: &mut String, from: usize, to: usize) {
        if from < to {
            let chunk = self.text.get(from..to).unwrap_or("");
            let base = self.base + from as u32;
            buf.push_str(&unescape(chunk, self.raw, base, Some(self.diags)));
        }
    }

    fn push_lit(out: &mut Vec<FStringPart>, buf: &mut String) {
        if !buf.is_empty() {
            out.push(FStringPart::Lit(std::mem::take(buf)));
        }
    }

    /// Literal text and fields in `text[from..to]`; `nesting` counts enclosing format specs,
    /// in which `{{`/`}}` are not escapes.
    fn parts(&mut self, from: usize, to: usize, nesting: usize) -> Vec<FStringPart> {
        let in_spec = nesting > 0;
        let mut out = Vec::new();
        let mut buf = String::new();
        let mut run = from;
        let mut i = from;
        while i < to {
            match self.byte(i) {
                Some(b'{') => {
                    self.flush(&mut buf, run, i);
                    if !in_spec && self.byte(i + 1) == Some(b'{') {
                        buf.push('{');
                        i += 2;
                    } else {
                        Self::push_lit(&mut out, &mut buf);
                        i = self.field(i, to, nesting, &mut out);
                    }
                    run = i;
                }
                Some(b'}') => {
                    self.flush(&mut buf, run, i);
                    if !in_spec && self.byte(i + 1) == Some(b'}') {
                        buf.push('}');
                        i += 2;
                    } else {
                        let d = err(
                            "single `}` is not allowed",
                            "write `}}` for a literal `}`",
                            self.span(i, i + 1),
                        );
                        self.diags.push(d);
                        i += 1;
                    }
                    run = i;
                }
                _ => i += 1,
            }
        }
        self.flush(&mut buf, run, to);
        Self::push_lit(&mut out, &mut buf);
        out
    }

    /// Where the expression of the field at `open` ends, and what ends it.
    fn scan_expr(&self, open: usize, to: usize) -> (usize, Option<u8>, Option<usize>) {
        let b = self.text.as_bytes();
        let mut depth = 0usize;
        let mut j = open + 1;
        let mut debug_eq = None;
        while j < to {
            let c = b[j];
            match c {
                b'(' | b'[' | b'{' => depth += 1,
                b')' | b']' if depth > 0 => depth -= 1,
                b'}' if depth > 0 => depth -= 1,
                b'\'' | b'"' => {
                    let mut k = j + 1;
                    while k < to && b[k] != c {
                        k += if b[k] == b'\\' { 2 } else { 1 };
                    }
                    j = k;
                }
                b'}' | b':' if depth == 0 => return (j, Some(c), debug_eq),
                b'!' if depth == 0 && b.get(j + 1) != Some(&b'=') => return (j, Some(c), debug_eq),
                b'!' | b'<' | b'>' | b'=' if b.get(j + 1) == Some(&b'=') => j += 1,
                b'=' if depth == 0 => {
                    let rest = self.text.get(j + 1..to).unwrap_or("");
                    let after = rest.trim_start();
                    if after.starts_with(['}', '!', ':']) {
                        debug_eq = Some(j);
                    }
                }
                _ => {}
            }
            j += 1;
        }
        (to, None, debug_eq)
    }

    /// Parses the field whose `{` is at `open`; returns the index after its `}`.
    fn field(
        &mut self,
        open: usize,
        to: usize,
        nesting: usize,
        out: &mut Vec<FStringPart>,
    ) -> usize {
        if nesting >= MAX_SPEC_NESTING {
            let end = self.skip_field(open + 1, to);
            let d = err(
                "expressions nested too deeply",
                "a format spec may contain a field, as in `{x:>{width}}`, but that field may not contain another",
                self.span(open, end),
            );
            self.diags.push(d);
            return end;
        }
        let (end, stop, debug_eq) = self.scan_expr(open, to);
        let Some(mut stop) = stop else {
            let d = err(
                "expected `}` to close this field",
                "close the field with `}`, or write `{{` for a literal `{`",
                self.span(open, to),
            );
            self.diags.push(d);
            return to;
        };
        let expr_end = debug_eq.unwrap_or(end);
        let src = self.text.get(open + 1..expr_end).unwrap_or("");
        let expr = if src.trim().is_empty() {
            let d = err(
                "empty expression not allowed",
                "put a value between the braces, as in `{name}`, or write `{{` for a literal `{`",
                self.span(open, end + 1),
            );
            self.diags.push(d);
            super::err_expr(self.span(open, end))
        } else {
            super::parse_fragment(src, self.base + open as u32 + 1, self.diags)
        };
        let debug_text = debug_eq.map(|_| self.text.get(open + 1..end).unwrap_or("").to_string());
        let mut j = end;
        let mut conv = None;
        if stop == b'!' {
            let c = self.text.get(j + 1..).and_then(|s| s.chars().next());
            match c {
                Some(c @ ('r' | 's' | 'a')) => conv = Some(c),
                _ => {
                    let d = err(
                        "invalid conversion character",
                        "a conversion is `!r`, `!s` or `!a`",
                        self.span(j, (j + 1 + c.map(char::len_utf8).unwrap_or(0)).min(to)),
                    );
                    self.diags.push(d);
                }
            }
            j += 1 + c.map(char::len_utf8).unwrap_or(0);
            match self.byte(j) {
                Some(c @ (b':' | b'}')) => stop = c,
                _ => {
                    let d = err(
                        "expected `}` after the conversion",
                        "write the field as `{value!r}` or `{value!r:spec}`",
                        self.span(open, j.min(to)),
                    );
                    self.diags.push(d);
                    return self.skip_field(j, to);
                }
            }
        }
        let mut spec = Vec::new();
        if stop == b':' {
            let spec_start = j + 1;
            let spec_end = self.spec_end(spec_start, to);
            spec = self.parts(spec_start, spec_end, nesting + 1);
            j = spec_end;
            if j >= to {
                let d = err(
                    "expected `}` to close this field",
                    "close the field with `}`",
                    self.span(open, to),
                );
                self.diags.push(d);
                return to;
            }
        }
        if debug_text.is_some() && conv.is_none() && spec.is_empty() {
            // Python shows the repr when a `{x=}` field names no conversion or spec.
            conv = Some('r');
        }
        out.push(FStringPart::Expr {
            expr: Box::new(expr),
            conv,
            spec,
            debug_text,
        });
        j + 1
    }

    fn spec_end(&self, from: usize, to: usize) -> usize {
        let mut depth = 0usize;
        let b = self.text.as_bytes();
        let mut j = from;
        while j < to {
            match b[j] {
                b'{' => depth += 1,
                b'}' if depth == 0 => return j,
                b'}' => depth -= 1,
                _ => {}
            }
            j += 1;
        }
        to
    }

    fn skip_field(&self, from: usize, to: usize) -> usize {
        self.text
            .get(from..to)
            .and_then(|s| s.find('}'))
            .map(|k| from + k + 1)
            .unwrap_or(to)
    }
}

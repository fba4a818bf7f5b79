//! The parser driver: lex, lay out, pre-parse f-strings, run the chumsky grammar, and gather diagnostics.
//!
//! The grammar is split by concept: `expr` (precedence levels), `atoms` and
//! `trailers` (primaries), `stmt` (simple statements, blocks, recovery),
//! `compound` (Python's compound statements), `kora` (Kora's own
//! statements), `pattern`, `types` and `fstring`. Every file builds boxed
//! chumsky parsers over the token slice that `layout` produced. `error` and
//! `labels` turn chumsky's errors into teaching diagnostics; `depth` keeps
//! trees shallow enough for recursive passes.

mod atoms;
mod chunks;
mod compound;
mod depth;
mod error;
mod expr;
mod fstring;
mod kora;
mod labels;
mod pattern;
mod stmt;
mod trailers;
mod types;

use crate::ast::{Expr, ExprKind, FStringPart, Ident, Module};
use crate::diagnostic::Diagnostic;
use crate::layout::layout;
use crate::lexer::lex;
use crate::span::Span;
use crate::token::Tok;
use crate::Parsed;
use chumsky::input::{Input as _, MappedInput};
use chumsky::prelude::*;
use error::{to_diagnostic, Lbl, Quiet, SynErr};
use std::collections::HashMap;
use std::sync::Arc;

pub(crate) type In<'a> = MappedInput<'a, Tok<'a>, Span, &'a [(Tok<'a>, Span)]>;
pub(crate) type Ex<'a> = extra::Err<SynErr<'a>>;
pub(crate) type P<'a, O> = Boxed<'a, 'a, In<'a>, O, Ex<'a>>;

/// Parsed f-strings, keyed by the start offset of their token.
pub(crate) type FTable = Arc<HashMap<u32, Vec<FStringPart>>>;

impl chumsky::span::Span for Span {
    type Context = ();
    type Offset = u32;

    fn new(_: (), range: std::ops::Range<u32>) -> Span {
        Span::new(range.start, range.end)
    }

    fn context(&self) {}

    fn start(&self) -> u32 {
        self.start
    }

    fn end(&self) -> u32 {
        self.end
    }
}

/// Matches a token, reporting the label when it is missing.
pub(crate) fn expect<'a>(
    tok: Tok<'a>,
    lbl: Lbl,
) -> impl Parser<'a, In<'a>, Tok<'a>, Ex<'a>> + Clone {
    just(tok).labelled(lbl)
}

/// A `,` between items of a bracketed list.
pub(crate) fn comma<'a>() -> impl Parser<'a, In<'a>, Tok<'a>, Ex<'a>> + Clone {
    just(Tok::Comma).labelled(labels::COMMA)
}

/// A soft keyword: a `Name` token with this exact text.
pub(crate) fn kw<'a>(word: &'static str) -> impl Parser<'a, In<'a>, Span, Ex<'a>> + Clone {
    any()
        .filter(move |t: &Tok<'a>| matches!(t, Tok::Name(n) if *n == word))
        .map_with(|_, e| e.span())
}

pub(crate) fn ident<'a>() -> impl Parser<'a, In<'a>, Ident, Ex<'a>> + Clone {
    select! { Tok::Name(n) = e => Ident { name: n.to_string(), span: e.span() } }
        .labelled(labels::NAME)
}

/// A parser that always fails; stands in where a grammar piece is unavailable.
pub(crate) fn never<'a, O: 'a>() -> P<'a, O> {
    empty()
        .try_map(|_, span: Span| {
            Err(SynErr::Expected {
                span,
                expected: Vec::new(),
                found: None,
            })
        })
        .boxed()
}

pub(crate) fn err_expr(span: Span) -> Expr {
    Expr::new(ExprKind::Error, span)
}

/// Parses every f-string token up front, so the grammar can look parts up by offset.
fn fstring_table(tokens: &[(Tok<'_>, Span)], diags: &mut Vec<Diagnostic>) -> FTable {
    let mut map = HashMap::new();
    for (tok, span) in tokens {
        if let Tok::FStr(raw) = tok {
            map.insert(span.start, fstring::parse(raw, span.start, diags));
        }
    }
    Arc::new(map)
}

fn collect_errors(
    errs: Vec<SynErr<'_>>,
    synthetic: &[(Span, u32)],
    end_name: &str,
    diags: &mut Vec<Diagnostic>,
) {
    for e in errs {
        if let Some(d) = to_diagnostic(e, end_name) {
            let s = d.span();
            // The layout pass already reported the unclosed bracket this closer stands for.
            if s.is_empty() && synthetic.iter().any(|(_, at)| *at == s.start) && d.code == "E0030" {
                continue;
            }
            diags.push(d);
        }
    }
}

/// An unclosed bracket with another error inside its extent (an unterminated
/// string that swallowed the `)`, a parse error at the real culprit) is a
/// consequence; reporting it too would only add noise.
fn drop_explained_unclosed(diags: &mut Vec<Diagnostic>, synthetic: &[(Span, u32)]) {
    let explained: Vec<Span> = synthetic
        .iter()
        .filter(|(open, close)| {
            diags.iter().any(|d| {
                let s = d.span().start;
                d.code != "E0025" && open.start < s && s <= *close
            })
        })
        .map(|(open, _)| *open)
        .collect();
    diags.retain(|d| !(d.code == "E0025" && explained.contains(&d.span())));
}

/// Parses one expression embedded in a larger file (an f-string field) at offset `base`.
pub(crate) fn parse_fragment(text: &str, base: u32, diags: &mut Vec<Diagnostic>) -> Expr {
    let whole = Span::new(base, base + text.len() as u32);
    let (raw, lex_diags) = lex(text, base);
    diags.extend(lex_diags);
    let toks: Vec<(Tok<'_>, Span)> = raw
        .into_iter()
        .filter(|(t, _)| *t != Tok::Newline)
        .collect();
    match toks.as_slice() {
        [] => return err_expr(whole),
        // Most fields are one name; skip building a grammar for them.
        [(Tok::Name(n), s)] => return Expr::new(ExprKind::Name(n.to_string()), *s),
        _ => {}
    }
    let ft = fstring_table(&toks, diags);
    let exprs = expr::build(ft);
    let parser = exprs.list.clone().then_ignore(end());
    let eoi = Span::new(whole.end, whole.end);
    let (out, errs) = parser
        .parse(toks.as_slice().split_token_span(eoi))
        .into_output_errors();
    collect_errors(errs, &[], "the end of the f-string field", diags);
    match out {
        Some(e) => depth::guard(e, diags),
        None => err_expr(whole),
    }
}

/// Parses a whole file. See [`crate::parse`].
pub fn parse_module(src: &str) -> Parsed {
    parse_file(src, Some(chunks::PIECE_TOKENS), chunks::MIN_TOKENS).0
}

/// [`parse_module`] with the grammar run once over the whole file, never piece by piece:
/// the reference the piecewise path is tested against.
pub fn parse_module_whole(src: &str) -> Parsed {
    parse_file(src, None, 0).0
}

/// [`parse_module`] cut into pieces of at least `piece` tokens whatever the file's size, and
/// whether the pieces were used (a file with a syntax error is parsed whole); for tests.
pub fn parse_module_in_pieces(src: &str, piece: usize) -> (Parsed, bool) {
    parse_file(src, Some(piece), 0)
}

/// `piece`: cut a file of at least `min_tokens` tokens into pieces of that many tokens.
fn parse_file(src: &str, piece: Option<usize>, min_tokens: usize) -> (Parsed, bool) {
    if src.len() > u32::MAX as usize {
        let d = Diagnostic::error("E0009", "source file is too large", Span::new(0, 0))
            .with_label("this file is over 4 GiB")
            .with_help("split the program into several `.ko` files joined with `use`");
        let p = Parsed {
            module: Module::default(),
            diagnostics: vec![d],
        };
        return (p, false);
    }
    // A UTF-8 byte order mark (which some Windows editors write) is not part of the program;
    // lexing after it keeps every span an offset into the file as it is on disk.
    let bom = if src.starts_with('\u{feff}') { 3 } else { 0 };
    let (raw, mut diags) = lex(&src[bom..], bom as u32);
    let lay = layout(src, &raw);
    // Freed before the parse allocates the tree, which can then reuse its memory.
    drop(raw);
    diags.extend(lay.diags);
    let ft = fstring_table(&lay.tokens, &mut diags);
    let end_at = src.len() as u32;
    let eoi = Span::new(end_at, end_at);
    let input = || lay.tokens.as_slice().split_token_span(eoi);
    // A first run whose errors record nothing; its tree stands when it found no error.
    let quick = piece.and_then(|n| {
        let _quiet = Quiet::new();
        if lay.tokens.len() >= min_tokens {
            return chunks::parse_pieces(&lay.tokens, &ft, end_at, n);
        }
        let exprs = expr::build(ft.clone());
        let (out, errs) = stmt::module(&exprs).parse(input()).into_output_errors();
        out.filter(|_| errs.is_empty())
    });
    let used = quick.is_some();
    let mut stmts = match quick {
        Some(stmts) => stmts,
        None => {
            let exprs = expr::build(ft);
            let module = stmt::module(&exprs);
            let (out, errs) = module.parse(input()).into_output_errors();
            collect_errors(errs, &lay.synthetic, "end of file", &mut diags);
            out.unwrap_or_default()
        }
    };
    drop_explained_unclosed(&mut diags, &lay.synthetic);
    depth::limit(&mut stmts, &mut diags);
    diags.sort_by_key(|d| (d.span().start, d.span().end));
    diags.dedup_by(|a, b| a.code == b.code && a.span() == b.span() && a.message == b.message);
    let p = Parsed {
        module: Module { stmts },
        diagnostics: diags,
    };
    (p, used)
}

//! Parsing a file's token stream as independent top-level statements, the fast path for clean files.
//!
//! One chumsky run over a whole large file was slower per line the larger the
//! file (its per-run state and the failed alternatives it records grow with the
//! input). A top-level statement boundary is a token at indentation depth 0
//! right after a `NEWLINE` or `DEDENT`; no rule of the grammar continues a
//! finished top-level statement across one except the clauses that attach to the
//! statement above (`elif`, `else`, a `case` or `on` line), so the stream is
//! never split before those. Each piece is parsed alone, with the token before
//! it and the start of the token after it given to chumsky so every span comes
//! out as in the whole-file run. The answer is only used when no piece reports
//! a syntax error: recovery can look across statements, so a file with errors is
//! parsed whole and its diagnostics are exactly the whole-file ones.

use super::error::Quiet;
use super::{stmt, FTable, In, P};
use crate::ast::Stmt;
use crate::span::Span;
use crate::token::Tok;
use chumsky::input::Input as _;
use chumsky::prelude::*;
use rayon::prelude::*;

/// Below this many tokens a file is parsed in one run; splitting would only add overhead.
pub(super) const MIN_TOKENS: usize = 4096;

/// Aim for pieces of about this many tokens: large enough that the per-run setup is noise.
pub(super) const PIECE_TOKENS: usize = 2048;

/// The statements of a clean file parsed in pieces of at least `piece` tokens (the last may
/// be shorter), or `None` when there is one piece or any piece has a syntax error (the
/// caller then parses the file whole).
pub(super) fn parse_pieces(
    tokens: &[(Tok<'_>, Span)],
    ft: &FTable,
    end_at: u32,
    piece: usize,
) -> Option<Vec<Stmt>> {
    let cuts = boundaries(tokens, piece);
    if cuts.len() < 2 {
        return None;
    }
    // The pieces are independent, so runs of them go to the cores; chumsky's parsers
    // are not `Send`, so each run builds its own grammar (well under a millisecond).
    let runs = rayon::current_num_threads().clamp(1, cuts.len());
    let per = cuts.len().div_ceil(runs);
    let groups: Vec<(usize, usize)> = (0..cuts.len())
        .step_by(per)
        .map(|a| (a, (a + per).min(cuts.len())))
        .collect();
    let parts: Vec<Option<Vec<Stmt>>> = groups
        .into_par_iter()
        .map(|(a, b)| {
            let _quiet = Quiet::new();
            parse_run(tokens, ft, end_at, &cuts, a, b)
        })
        .collect();
    let mut out = Vec::with_capacity(parts.iter().flatten().map(Vec::len).sum());
    for part in parts {
        out.extend(part?);
    }
    Some(out)
}

/// Pieces `a..b` (indices into `cuts`) parsed one after another with one grammar.
fn parse_run(
    tokens: &[(Tok<'_>, Span)],
    ft: &FTable,
    end_at: u32,
    cuts: &[usize],
    a: usize,
    b: usize,
) -> Option<Vec<Stmt>> {
    let exprs = super::expr::build(ft.clone());
    let first = stmt::statements(&exprs);
    let rest = any().ignore_then(first.clone()).then_ignore(end()).boxed();
    let first = first.then_ignore(end()).boxed();
    let mut out = Vec::new();
    for i in a..b {
        let from = if i == 0 { 0 } else { cuts[i - 1] };
        let to = cuts[i];
        // The token before the piece is given too (and skipped) so that chumsky's spans,
        // which end at the last token consumed before a position, come out as in one run.
        let start = from.saturating_sub(1);
        let eoi_at = tokens.get(to).map_or(end_at, |(_, s)| s.start);
        let eoi = Span::new(eoi_at, eoi_at);
        let input: In<'_> = tokens[start..to].split_token_span(eoi);
        let parser: &P<'_, Vec<Stmt>> = if i == 0 { &first } else { &rest };
        let (got, errs) = parser.parse(input).into_output_errors();
        if !errs.is_empty() {
            return None;
        }
        out.extend(got?);
    }
    Some(out)
}

/// The end (exclusive) of each piece, the last one `tokens.len()`; each piece holds at
/// least `piece` tokens except the last.
fn boundaries(tokens: &[(Tok<'_>, Span)], piece: usize) -> Vec<usize> {
    let mut cuts = Vec::new();
    let mut depth = 0i64;
    let mut last = 0;
    for i in 0..tokens.len() {
        if i > 0 && depth == 0 && i - last >= piece && starts_statement(tokens, i) {
            cuts.push(i);
            last = i;
        }
        match tokens[i].0 {
            Tok::Indent => depth += 1,
            Tok::Dedent => depth -= 1,
            _ => {}
        }
    }
    cuts.push(tokens.len());
    cuts
}

/// Whether a new top-level statement that nothing above can continue starts at `i`.
fn starts_statement(tokens: &[(Tok<'_>, Span)], i: usize) -> bool {
    let after_line = matches!(tokens[i - 1].0, Tok::Newline | Tok::Dedent);
    let continues = match tokens[i].0 {
        Tok::Newline | Tok::Indent | Tok::Dedent | Tok::Elif | Tok::Else => true,
        Tok::Name(n) => matches!(n, "case" | "on"),
        _ => false,
    };
    after_line && !continues
}

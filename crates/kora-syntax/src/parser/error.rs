//! The parser's error type (what chumsky accumulates) and its translation into teaching diagnostics.
//!
//! Chumsky merges every alternative that failed at the furthest position into
//! one error. The raw "expected one of 30 tokens" is useless to a reader, so
//! grammar points that matter carry a `Lbl`: a phrase ("`:` after the `if`
//! condition") plus a help line and a code. When an error holds a label, the
//! label speaks for it; otherwise a short token list or a plain "unexpected X".

use crate::diagnostic::Diagnostic;
use crate::span::Span;
use crate::token::Tok;
use chumsky::error::{Error, LabelError};
use chumsky::input::Input;
use chumsky::util::MaybeRef;
use chumsky::DefaultExpected;
use std::cell::Cell;

thread_local! {
    /// Whether errors record what was expected; see [`Quiet`].
    static RECORD: Cell<bool> = const { Cell::new(true) };
}

/// While alive, errors on this thread record nothing of what was expected.
///
/// Chumsky builds and merges an error for every alternative that fails, even when
/// the parse as a whole succeeds; recording the expected tokens of each was a
/// quarter of a large file's check. Whether the parse had an error does not depend
/// on what the errors say, so a first run keeps them empty, and only a file that
/// does have an error is parsed again with full errors for its diagnostics.
pub(crate) struct Quiet(bool);

impl Quiet {
    pub(crate) fn new() -> Quiet {
        Quiet(RECORD.with(|r| r.replace(false)))
    }
}

impl Drop for Quiet {
    fn drop(&mut self) {
        RECORD.with(|r| r.set(self.0));
    }
}

fn recording() -> bool {
    RECORD.with(Cell::get)
}

/// A named expectation at one point of the grammar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lbl {
    /// Completes "expected ...".
    pub what: &'static str,
    pub help: &'static str,
    pub code: &'static str,
    /// When several labels compete at one position, the highest wins.
    pub rank: u8,
}

impl Lbl {
    pub const fn new(what: &'static str, help: &'static str) -> Lbl {
        Lbl {
            what,
            help,
            code: "E0030",
            rank: 1,
        }
    }

    pub const fn ranked(mut self, rank: u8) -> Lbl {
        self.rank = rank;
        self
    }

    pub const fn code(mut self, code: &'static str) -> Lbl {
        self.code = code;
        self
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Pat<'a> {
    Tok(Tok<'a>),
    Label(Lbl),
    End,
    Other,
}

#[derive(Clone, Debug)]
pub enum SynErr<'a> {
    Expected {
        span: Span,
        expected: Vec<Pat<'a>>,
        found: Option<Tok<'a>>,
    },
    /// A fully formed diagnostic raised by a validation step.
    Custom(Box<Diagnostic>),
}

impl SynErr<'_> {
    pub fn custom(d: Diagnostic) -> Self {
        SynErr::Custom(Box::new(d))
    }
}

fn default_pat<'a>(e: DefaultExpected<'a, Tok<'a>>) -> Pat<'a> {
    match e {
        DefaultExpected::Token(t) => Pat::Tok(*t),
        DefaultExpected::EndOfInput => Pat::End,
        _ => Pat::Other,
    }
}

fn push_unique<'a>(into: &mut Vec<Pat<'a>>, p: Pat<'a>) {
    if !into.contains(&p) {
        into.push(p);
    }
}

impl<'a, I> Error<'a, I> for SynErr<'a>
where
    I: Input<'a, Token = Tok<'a>, Span = Span>,
{
    fn merge(self, other: Self) -> Self {
        match (self, other) {
            (
                SynErr::Expected {
                    span,
                    mut expected,
                    found,
                },
                SynErr::Expected {
                    expected: more,
                    found: found2,
                    ..
                },
            ) => {
                for p in more {
                    push_unique(&mut expected, p);
                }
                SynErr::Expected {
                    span,
                    expected,
                    found: found.or(found2),
                }
            }
            (c @ SynErr::Custom(_), _) | (_, c @ SynErr::Custom(_)) => c,
        }
    }
}

impl<'a, I> LabelError<'a, I, DefaultExpected<'a, Tok<'a>>> for SynErr<'a>
where
    I: Input<'a, Token = Tok<'a>, Span = Span>,
{
    fn expected_found<E: IntoIterator<Item = DefaultExpected<'a, Tok<'a>>>>(
        expected: E,
        found: Option<MaybeRef<'a, Tok<'a>>>,
        span: Span,
    ) -> Self {
        if !recording() {
            return SynErr::Expected {
                span,
                expected: Vec::new(),
                found: None,
            };
        }
        SynErr::Expected {
            span,
            expected: expected.into_iter().map(default_pat).collect(),
            found: found.as_deref().copied(),
        }
    }

    // Chumsky calls these for every alternative that fails where an error already stands;
    // the defaults build a second error and merge it, which allocated per alternative and
    // was a fifth of a large file's check. These extend the standing error in place.
    fn merge_expected_found<E: IntoIterator<Item = DefaultExpected<'a, Tok<'a>>>>(
        self,
        expected: E,
        found: Option<MaybeRef<'a, Tok<'a>>>,
        _span: Span,
    ) -> Self {
        if !recording() {
            return self;
        }
        merge_in_place(self, expected.into_iter().map(default_pat), found)
    }

    fn replace_expected_found<E: IntoIterator<Item = DefaultExpected<'a, Tok<'a>>>>(
        self,
        expected: E,
        found: Option<MaybeRef<'a, Tok<'a>>>,
        span: Span,
    ) -> Self {
        if !recording() {
            return self;
        }
        replace_in_place(self, expected.into_iter().map(default_pat), found, span)
    }
}

/// `err` merged with a new expectation at the same place, reusing its list.
fn merge_in_place<'a>(
    err: SynErr<'a>,
    more: impl Iterator<Item = Pat<'a>>,
    found: Option<MaybeRef<'a, Tok<'a>>>,
) -> SynErr<'a> {
    match err {
        SynErr::Expected {
            span: at,
            mut expected,
            found: was,
        } => {
            for p in more {
                push_unique(&mut expected, p);
            }
            SynErr::Expected {
                span: at,
                expected,
                found: was.or_else(|| found.as_deref().copied()),
            }
        }
        custom @ SynErr::Custom(_) => custom,
    }
}

/// A new expectation further on replacing `err`, reusing its list's allocation.
fn replace_in_place<'a>(
    err: SynErr<'a>,
    new: impl Iterator<Item = Pat<'a>>,
    found: Option<MaybeRef<'a, Tok<'a>>>,
    span: Span,
) -> SynErr<'a> {
    let mut expected = match err {
        SynErr::Expected { mut expected, .. } => {
            expected.clear();
            expected
        }
        SynErr::Custom(_) => Vec::new(),
    };
    expected.extend(new);
    SynErr::Expected {
        span,
        expected,
        found: found.as_deref().copied(),
    }
}

impl<'a, I> LabelError<'a, I, Lbl> for SynErr<'a>
where
    I: Input<'a, Token = Tok<'a>, Span = Span>,
{
    fn expected_found<E: IntoIterator<Item = Lbl>>(
        expected: E,
        found: Option<MaybeRef<'a, Tok<'a>>>,
        span: Span,
    ) -> Self {
        if !recording() {
            return SynErr::Expected {
                span,
                expected: Vec::new(),
                found: None,
            };
        }
        SynErr::Expected {
            span,
            expected: expected.into_iter().map(Pat::Label).collect(),
            found: found.as_deref().copied(),
        }
    }

    fn merge_expected_found<E: IntoIterator<Item = Lbl>>(
        self,
        expected: E,
        found: Option<MaybeRef<'a, Tok<'a>>>,
        _span: Span,
    ) -> Self {
        if !recording() {
            return self;
        }
        merge_in_place(self, expected.into_iter().map(Pat::Label), found)
    }

    fn replace_expected_found<E: IntoIterator<Item = Lbl>>(
        self,
        expected: E,
        found: Option<MaybeRef<'a, Tok<'a>>>,
        span: Span,
    ) -> Self {
        if !recording() {
            return self;
        }
        replace_in_place(self, expected.into_iter().map(Pat::Label), found, span)
    }

    fn label_with(&mut self, label: Lbl) {
        if !recording() {
            return;
        }
        if let SynErr::Expected { expected, .. } = self {
            expected.clear();
            expected.push(Pat::Label(label));
        }
    }
}

/// The diagnostic for one parser error; `None` when the lexer already reported the cause.
///
/// `end_name` names the end of the input: "end of file", or the end of an f-string field.
pub fn to_diagnostic(err: SynErr<'_>, end_name: &str) -> Option<Diagnostic> {
    let (span, expected, found) = match err {
        SynErr::Custom(d) => return Some(*d),
        SynErr::Expected {
            span,
            expected,
            found,
        } => (span, expected, found),
    };
    if found == Some(Tok::Error) {
        return None;
    }
    let found_text = found
        .map(|t| t.describe())
        .unwrap_or_else(|| end_name.to_string());
    let mut lbls: Vec<Lbl> = Vec::new();
    for p in &expected {
        if let Pat::Label(l) = p {
            if !lbls.iter().any(|x| x.what == l.what) {
                lbls.push(*l);
            }
        }
    }
    // Highest rank first; among equals, the order the grammar tried them.
    lbls.sort_by_key(|l| std::cmp::Reverse(l.rank));
    if let Some(first) = lbls.first().copied() {
        let what = match lbls.get(1) {
            Some(second) if second.rank == first.rank => {
                format!("{} or {}", first.what, second.what)
            }
            _ => first.what.to_string(),
        };
        return Some(
            Diagnostic::error(
                first.code,
                format!("expected {what}, found {found_text}"),
                span,
            )
            .with_label(format!("expected {what} here"))
            .with_help(first.help),
        );
    }
    let toks: Vec<String> = expected
        .iter()
        .filter_map(|p| match p {
            Pat::Tok(t) => Some(format!("`{t}`")),
            Pat::End => Some(end_name.to_string()),
            _ => None,
        })
        .collect();
    let d = if !toks.is_empty() && toks.len() <= 3 {
        let list = match toks.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => toks.join(""),
        };
        Diagnostic::error(
            "E0030",
            format!("expected {list}, found {found_text}"),
            span,
        )
        .with_label(format!("expected {list} here"))
        .with_help("check for a missing or extra symbol just before this point")
    } else {
        Diagnostic::error("E0030", format!("unexpected {found_text}"), span)
            .with_label("the parser could not make sense of this")
            .with_help("check for a missing operator, comma or bracket just before this point")
    };
    Some(d)
}

//! Atoms: literals, names, displays, comprehensions, and Kora's `analyze` / `ask_human` / `classified`.
//!
//! Each bracketed form parses its first element once and then branches on
//! the next token (`for`, `,`, `:`, closer). Trying whole alternatives would
//! re-parse that element per alternative, which is exponential in nesting
//! depth.

use super::error::SynErr;
use super::labels;
use super::{comma, err_expr, expect, kw, FTable, P};
use crate::ast::{Arg, ArgKind, CompClause, CompKind, Expr, ExprKind, FStringPart};
use crate::diagnostic::Diagnostic;
use crate::lexer::{decode_bytes, decode_string};
use crate::span::Span;
use crate::token::Tok;
use chumsky::prelude::*;

/// The sub-parsers atoms need from the levels above them.
pub(crate) struct Parts<'a> {
    pub test: P<'a, Expr>,
    pub star_test: P<'a, Expr>,
    pub disj: P<'a, Expr>,
    pub targets: P<'a, Expr>,
    pub ft: FTable,
}

pub(crate) fn comp(
    kind: CompKind,
    elt: Expr,
    value: Option<Expr>,
    clauses: Vec<CompClause>,
    span: Span,
) -> Expr {
    Expr::new(
        ExprKind::Comp {
            kind,
            elt: Box::new(elt),
            value: value.map(Box::new),
            clauses,
        },
        span,
    )
}

/// One or more `for target in iter [if cond]...` clauses.
pub(crate) fn clauses<'a>(p: &Parts<'a>) -> P<'a, Vec<CompClause>> {
    just(Tok::For)
        .ignore_then(p.targets.clone())
        .then_ignore(expect(Tok::In, labels::IN_FOR))
        .then(p.disj.clone())
        .then(
            just(Tok::If)
                .ignore_then(p.disj.clone())
                .repeated()
                .collect::<Vec<_>>(),
        )
        .map(|((target, iter), conds)| CompClause {
            target,
            iter,
            conds,
        })
        .repeated()
        .at_least(1)
        .collect()
        .boxed()
}

/// The rest of a display after its first element: more elements, then the closer.
fn rest_items<'a>(elem: P<'a, Expr>, close: Tok<'a>, lbl: super::error::Lbl) -> P<'a, Vec<Expr>> {
    comma()
        .ignore_then(elem)
        .repeated()
        .collect::<Vec<_>>()
        .then_ignore(comma().or_not())
        .then_ignore(expect(close, lbl))
        .boxed()
}

pub(crate) fn recover_brackets<'a>(
    open: Tok<'a>,
    close: Tok<'a>,
) -> impl Parser<'a, super::In<'a>, Expr, super::Ex<'a>> + Clone {
    let others: Vec<(Tok<'a>, Tok<'a>)> = [
        (Tok::LParen, Tok::RParen),
        (Tok::LBracket, Tok::RBracket),
        (Tok::LBrace, Tok::RBrace),
    ]
    .into_iter()
    .filter(|(o, _)| *o != open)
    .collect();
    let pair = |i: usize| others.get(i).copied().unwrap_or((Tok::LParen, Tok::RParen));
    nested_delimiters(open, close, [pair(0), pair(1)], err_expr)
}

fn paren<'a>(p: &Parts<'a>, cl: P<'a, Vec<CompClause>>) -> P<'a, Expr> {
    #[derive(Clone)]
    enum Tail {
        Gen(Vec<CompClause>),
        Tuple(Vec<Expr>),
        Paren,
    }
    let close = || expect(Tok::RParen, labels::CLOSE_PAREN);
    let tail = choice((
        cl.then_ignore(close()).map(Tail::Gen),
        comma()
            .ignore_then(
                p.star_test
                    .clone()
                    .separated_by(comma())
                    .allow_trailing()
                    .collect::<Vec<_>>(),
            )
            .then_ignore(close())
            .map(Tail::Tuple),
        close().to(Tail::Paren),
    ));
    just(Tok::LParen)
        .ignore_then(choice((
            just(Tok::RParen).to(None),
            p.star_test.clone().then(tail).map(Some),
        )))
        .map_with(|inner, e| match inner {
            None => Expr::new(ExprKind::Tuple(Vec::new()), e.span()),
            Some((first, Tail::Gen(cs))) => comp(CompKind::Generator, first, None, cs, e.span()),
            Some((first, Tail::Tuple(rest))) => {
                let mut items = vec![first];
                items.extend(rest);
                Expr::new(ExprKind::Tuple(items), e.span())
            }
            Some((first, Tail::Paren)) => first,
        })
        .recover_with(via_parser(recover_brackets(Tok::LParen, Tok::RParen)))
        .boxed()
}

fn list<'a>(p: &Parts<'a>, cl: P<'a, Vec<CompClause>>) -> P<'a, Expr> {
    let tail = cl
        .then_ignore(expect(Tok::RBracket, labels::CLOSE_BRACKET))
        .map(Ok)
        .or(rest_items(p.star_test.clone(), Tok::RBracket, labels::CLOSE_BRACKET).map(Err));
    just(Tok::LBracket)
        .ignore_then(choice((
            just(Tok::RBracket).to(None),
            p.star_test.clone().then(tail).map(Some),
        )))
        .map_with(|inner, e| match inner {
            None => Expr::new(ExprKind::List(Vec::new()), e.span()),
            Some((first, Ok(cs))) => comp(CompKind::List, first, None, cs, e.span()),
            Some((first, Err(rest))) => {
                let mut items = vec![first];
                items.extend(rest);
                Expr::new(ExprKind::List(items), e.span())
            }
        })
        .recover_with(via_parser(recover_brackets(Tok::LBracket, Tok::RBracket)))
        .boxed()
}

fn brace<'a>(p: &Parts<'a>, cl: P<'a, Vec<CompClause>>) -> P<'a, Expr> {
    #[derive(Clone)]
    enum Tail {
        DictComp(Expr, Vec<CompClause>),
        Dict(Expr, Vec<(Expr, Expr)>),
        SetComp(Vec<CompClause>),
        Set(Vec<Expr>),
    }
    let close = || expect(Tok::RBrace, labels::CLOSE_BRACE);
    let pair = p
        .test
        .clone()
        .then_ignore(expect(Tok::Colon, labels::COLON_DICT))
        .then(p.test.clone());
    let dict_rest = comma()
        .ignore_then(pair)
        .repeated()
        .collect::<Vec<_>>()
        .then_ignore(comma().or_not())
        .then_ignore(close());
    let dict_tail = just(Tok::Colon).ignore_then(p.test.clone()).then(choice((
        cl.clone().then_ignore(close()).map(Ok),
        dict_rest.map(Err),
    )));
    let tail = choice((
        dict_tail.map(|(v, rest)| match rest {
            Ok(cs) => Tail::DictComp(v, cs),
            Err(items) => Tail::Dict(v, items),
        }),
        cl.then_ignore(close()).map(Tail::SetComp),
        rest_items(p.star_test.clone(), Tok::RBrace, labels::CLOSE_BRACE).map(Tail::Set),
    ));
    just(Tok::LBrace)
        .ignore_then(choice((
            just(Tok::RBrace).to(None),
            p.star_test.clone().then(tail).map(Some),
        )))
        .map_with(|inner, e| match inner {
            None => Expr::new(ExprKind::Dict(Vec::new()), e.span()),
            Some((k, Tail::DictComp(v, cs))) => comp(CompKind::Dict, k, Some(v), cs, e.span()),
            Some((k, Tail::Dict(v, rest))) => {
                let mut items = vec![(k, v)];
                items.extend(rest);
                Expr::new(ExprKind::Dict(items), e.span())
            }
            Some((first, Tail::SetComp(cs))) => comp(CompKind::Set, first, None, cs, e.span()),
            Some((first, Tail::Set(rest))) => {
                let mut items = vec![first];
                items.extend(rest);
                Expr::new(ExprKind::Set(items), e.span())
            }
        })
        .recover_with(via_parser(recover_brackets(Tok::LBrace, Tok::RBrace)))
        .boxed()
}

/// Adjacent string literals concatenate, as in Python; any f-string makes the whole an f-string.
fn strings<'a>(ft: FTable) -> P<'a, Expr> {
    #[derive(Clone)]
    enum Piece {
        Plain(String),
        F(Vec<FStringPart>),
    }
    select! {
        Tok::Str(raw) => Piece::Plain(decode_string(raw)),
        Tok::FStr(_) = e => {
            let at: Span = e.span();
            Piece::F(ft.get(&at.start).cloned().unwrap_or_default())
        },
    }
    .repeated()
    .at_least(1)
    .collect::<Vec<_>>()
    .map_with(|pieces, e| {
        if pieces.iter().all(|p| matches!(p, Piece::Plain(_))) {
            let mut s = String::new();
            for p in pieces {
                if let Piece::Plain(t) = p {
                    s.push_str(&t);
                }
            }
            return Expr::new(ExprKind::Str(s), e.span());
        }
        let mut parts: Vec<FStringPart> = Vec::new();
        let push_lit = |parts: &mut Vec<FStringPart>, t: String| {
            if t.is_empty() {
                return;
            }
            if let Some(FStringPart::Lit(prev)) = parts.last_mut() {
                prev.push_str(&t);
            } else {
                parts.push(FStringPart::Lit(t));
            }
        };
        for p in pieces {
            match p {
                Piece::Plain(t) => push_lit(&mut parts, t),
                Piece::F(fs) => {
                    for part in fs {
                        match part {
                            FStringPart::Lit(t) => push_lit(&mut parts, t),
                            other => parts.push(other),
                        }
                    }
                }
            }
        }
        Expr::new(ExprKind::FString(parts), e.span())
    })
    .boxed()
}

/// Adjacent bytes literals concatenate; a string beside one is a syntax error, as in Python.
fn byte_strings<'a>() -> P<'a, Expr> {
    select! { Tok::Bytes(raw) => decode_bytes(raw) }
        .repeated()
        .at_least(1)
        .collect::<Vec<_>>()
        .map_with(|pieces, e| Expr::new(ExprKind::Bytes(pieces.concat()), e.span()))
        .boxed()
}

fn int_literal<'a>() -> P<'a, Expr> {
    select! {
        Tok::Int(Some(v)) = e => Ok((v, e.span())),
        Tok::BigInt(raw) = e => Err((raw, e.span())),
    }
    .validate(|lit, _, emitter| match lit {
        Ok((v, span)) if v <= i64::MAX as u64 => Expr::new(ExprKind::Int(v as i64), span),
        Ok((v, span)) => Expr::new(ExprKind::BigInt(v.to_string()), span),
        Err((raw, span)) => big_literal(raw, span, emitter),
    })
    .boxed()
}

/// CPython's limit on the digits of a decimal int read from text (`sys.int_info`), applied to
/// literals as CPython 3.11 applies it: past it, converting costs quadratic time.
pub(crate) const MAX_DECIMAL_DIGITS: usize = 4300;

/// An int literal past 64 bits, or E0004 when it has more digits than CPython reads.
pub(crate) fn big_literal<'a>(
    raw: &str,
    span: crate::span::Span,
    emitter: &mut chumsky::input::Emitter<SynErr<'a>>,
) -> Expr {
    let digits: String = raw.chars().filter(|c| *c != '_').collect();
    let decimal = !digits.starts_with("0x")
        && !digits.starts_with("0X")
        && !digits.starts_with("0o")
        && !digits.starts_with("0O")
        && !digits.starts_with("0b")
        && !digits.starts_with("0B");
    if decimal && digits.len() > MAX_DECIMAL_DIGITS {
        emitter.emit(SynErr::custom(
            Diagnostic::error("E0004", "integer literal has too many digits", span)
                .with_label(format!("{} digits", digits.len()))
                .with_help(format!(
                    "a decimal literal has at most {MAX_DECIMAL_DIGITS} digits, as in CPython; write it in hex, or compute it (`10 ** 5000`)"
                )),
        ));
        return err_expr(span);
    }
    Expr::new(ExprKind::BigInt(digits.to_ascii_lowercase()), span)
}

fn kora_atoms<'a>(args: P<'a, Vec<Arg>>) -> P<'a, Expr> {
    let bracket_next = just(Tok::LBracket).rewind().or_not().map(|b| b.is_some());
    let analyze = just(Tok::Analyze)
        .ignore_then(args.clone().map(Ok).or(bracket_next.map(Err)))
        .then(kw("stream").or_not())
        .validate(|(args, stream), e, emitter| match args {
            Ok(args) => Expr::new(
                ExprKind::Analyze {
                    args,
                    stream: stream.is_some(),
                },
                e.span(),
            ),
            Err(bracket) => {
                let d = if bracket {
                    Diagnostic::error("E0038", "`analyze[T](...)` is not Kora syntax", e.span())
                        .with_label("the result type is not written here")
                        .with_help("declare the type on the left instead: `x: T = analyze(data, \"prompt\")`")
                } else {
                    Diagnostic::error("E0038", "`analyze` must be called", e.span())
                        .with_label("`analyze` is a keyword, not a value")
                        .with_help("call it with the data and the prompt: `analyze(data, \"prompt\")`")
                };
                emitter.emit(SynErr::custom(d));
                err_expr(e.span())
            }
        });
    let ask = just(Tok::AskHuman)
        .ignore_then(args.clone())
        .map_with(|args, e| Expr::new(ExprKind::AskHuman(args), e.span()));
    let classified =
        just(Tok::Classified)
            .ignore_then(args)
            .validate(|args, e, emitter| match args.as_slice() {
                [Arg {
                    kind: ArgKind::Positional(x),
                    ..
                }] => Expr::new(ExprKind::Classified(Box::new(x.clone())), e.span()),
                _ => {
                    emitter.emit(SynErr::custom(
                        Diagnostic::error(
                            "E0038",
                            "`classified(...)` takes exactly one value",
                            e.span(),
                        )
                        .with_label("wrap a single value")
                        .with_help(
                            "write `classified(value)`; to label several values, wrap each one",
                        ),
                    ));
                    err_expr(e.span())
                }
            });
    choice((analyze, ask, classified)).boxed()
}

/// One atom: a literal, a name, a bracketed display, or a Kora call form.
pub(crate) fn atom<'a>(p: &Parts<'a>, args: P<'a, Vec<Arg>>) -> P<'a, Expr> {
    let cl = clauses(p);
    let simple = select! {
        Tok::Name(n) = e => Expr::new(ExprKind::Name(n.to_string()), e.span()),
        Tok::Float(f) = e => Expr::new(ExprKind::Float(f), e.span()),
        Tok::True = e => Expr::new(ExprKind::Bool(true), e.span()),
        Tok::False = e => Expr::new(ExprKind::Bool(false), e.span()),
        Tok::None = e => Expr::new(ExprKind::None, e.span()),
        Tok::Error = e => err_expr(e.span()),
    };
    choice((
        simple.boxed(),
        int_literal(),
        strings(p.ft.clone()),
        byte_strings(),
        paren(p, cl.clone()),
        list(p, cl.clone()),
        brace(p, cl),
        kora_atoms(args),
    ))
    .labelled(labels::EXPR)
    .boxed()
}

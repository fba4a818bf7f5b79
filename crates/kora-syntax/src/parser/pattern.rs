//! `case` patterns: wildcard, capture, literals, constructors with positional and keyword sub-patterns, sequences, `|` and `as`.

use super::expr::Exprs;
use super::labels;
use super::stmt::emit;
use super::{comma, expect, ident, P};
use crate::ast::{Expr, ExprKind, Ident, Pattern, PatternKind};
use crate::diagnostic::Diagnostic;
use crate::lexer::{decode_bytes, decode_string};
use crate::token::Tok;
use chumsky::prelude::*;

fn number<'a>() -> P<'a, PatternKind> {
    enum Num<'a> {
        I(Option<u64>),
        Big(&'a str),
        F(f64),
    }
    just(Tok::Minus)
        .or_not()
        .then(
            select! { Tok::Int(v) => Num::I(v), Tok::BigInt(raw) => Num::Big(raw), Tok::Float(f) => Num::F(f) }
                .map_with(|n, e| (n, e.span())),
        )
        .validate(|(minus, (n, nspan)), e, emitter| {
            let neg = minus.is_some();
            let kind = match n {
                Num::F(f) => ExprKind::Float(if neg { -f } else { f }),
                Num::I(Some(v)) if v <= i64::MAX as u64 => {
                    ExprKind::Int(if neg { -(v as i64) } else { v as i64 })
                }
                Num::I(Some(v)) if neg && v == 1u64 << 63 => ExprKind::Int(i64::MIN),
                Num::I(v) => {
                    let big = Expr::new(ExprKind::BigInt(v.unwrap_or(0).to_string()), nspan);
                    signed(neg, big)
                }
                Num::Big(raw) => signed(neg, super::atoms::big_literal(raw, nspan, emitter)),
            };
            PatternKind::Literal(Expr::new(kind, e.span()))
        })
        .boxed()
}

/// `-literal` as the negation the runtime evaluates (a big literal has no signed form).
fn signed(neg: bool, lit: Expr) -> ExprKind {
    if neg && !matches!(lit.kind, ExprKind::Error) {
        ExprKind::Unary(crate::ast::UnaryOp::Neg, Box::new(lit))
    } else {
        lit.kind
    }
}

/// Wraps several comma-separated patterns as a sequence; a lone pattern without a comma stands for itself.
fn sequence(mut items: Vec<Pattern>, trailing: bool, span: crate::span::Span) -> Pattern {
    if items.len() == 1 && !trailing {
        if let Some(p) = items.pop() {
            return p;
        }
    }
    Pattern {
        kind: PatternKind::Sequence(items),
        span,
    }
}

pub(crate) fn pattern<'a>(_x: &Exprs<'a>) -> P<'a, Pattern> {
    recursive(|pat| {
        let pat: P<'a, Pattern> = pat.boxed();
        let strings = select! { Tok::Str(raw) => decode_string(raw) }
            .repeated()
            .at_least(1)
            .collect::<Vec<_>>()
            .map_with(|parts, e| {
                PatternKind::Literal(Expr::new(ExprKind::Str(parts.concat()), e.span()))
            });
        let byte_strings = select! { Tok::Bytes(raw) => decode_bytes(raw) }
            .repeated()
            .at_least(1)
            .collect::<Vec<_>>()
            .map_with(|parts, e| {
                PatternKind::Literal(Expr::new(ExprKind::Bytes(parts.concat()), e.span()))
            });
        let consts = select! {
            Tok::True = e => PatternKind::Literal(Expr::new(ExprKind::Bool(true), e.span())),
            Tok::False = e => PatternKind::Literal(Expr::new(ExprKind::Bool(false), e.span())),
            Tok::None = e => PatternKind::Literal(Expr::new(ExprKind::None, e.span())),
        };
        enum CtorArg {
            Pos(Pattern),
            Kw(Ident, Pattern),
        }
        let keyword = select! { Tok::Name(n) = e => Ident { name: n.to_string(), span: e.span() } }
            .then_ignore(just(Tok::Assign))
            .then(pat.clone())
            .map(|(k, p)| CtorArg::Kw(k, p));
        let ctor_args = keyword
            .or(pat.clone().map(CtorArg::Pos))
            .separated_by(comma())
            .allow_trailing()
            .collect::<Vec<_>>()
            .delimited_by(just(Tok::LParen), expect(Tok::RParen, labels::CLOSE_PAREN));
        let named =
            ident()
                .then(ctor_args.or_not())
                .validate(|(name, args), _, emitter| match args {
                    None if name.name == "_" => PatternKind::Wildcard,
                    None => PatternKind::Capture(name.name),
                    Some(list) => {
                        let mut pos = Vec::new();
                        let mut kws = Vec::new();
                        for a in list {
                            match a {
                                CtorArg::Pos(p) if !kws.is_empty() => {
                                    emit(
                                    emitter,
                                    Diagnostic::error(
                                        "E0037",
                                        "positional pattern follows keyword pattern",
                                        p.span,
                                    )
                                    .with_label("this comes after a `name=pattern`")
                                    .with_help(
                                        "put positional sub-patterns first, then the keyword ones",
                                    ),
                                );
                                    pos.push(p);
                                }
                                CtorArg::Pos(p) => pos.push(p),
                                CtorArg::Kw(k, p) => kws.push((k, p)),
                            }
                        }
                        PatternKind::Constructor {
                            name,
                            args: pos,
                            kwargs: kws,
                        }
                    }
                });
        let items = pat
            .clone()
            .then(
                comma()
                    .ignore_then(pat.clone())
                    .repeated()
                    .collect::<Vec<_>>(),
            )
            .then(comma().or_not())
            .map(|((first, rest), trailing)| {
                let mut v = vec![first];
                v.extend(rest);
                (v, trailing.is_some())
            })
            .or_not();
        let paren = items
            .clone()
            .delimited_by(just(Tok::LParen), expect(Tok::RParen, labels::CLOSE_PAREN))
            .map_with(|inner, e| match inner {
                Some((v, trailing)) => sequence(v, trailing, e.span()),
                None => Pattern {
                    kind: PatternKind::Sequence(Vec::new()),
                    span: e.span(),
                },
            });
        let bracket = items
            .delimited_by(
                just(Tok::LBracket),
                expect(Tok::RBracket, labels::CLOSE_BRACKET),
            )
            .map_with(|inner, e| Pattern {
                kind: PatternKind::Sequence(inner.map(|(v, _)| v).unwrap_or_default()),
                span: e.span(),
            });
        // `*rest` is only meaningful inside a sequence; the checker refuses it elsewhere.
        let star = just(Tok::Star)
            .ignore_then(ident())
            .map(PatternKind::Star)
            .boxed();
        let simple = choice((
            number(),
            strings.boxed(),
            byte_strings.boxed(),
            consts.boxed(),
            named.boxed(),
            star,
        ))
        .map_with(|kind, e| Pattern {
            kind,
            span: e.span(),
        });
        let closed =
            choice((simple.boxed(), paren.boxed(), bracket.boxed())).labelled(labels::PATTERN);
        let or = closed
            .separated_by(just(Tok::Pipe))
            .at_least(1)
            .collect::<Vec<_>>()
            .map_with(|mut alts, e| {
                if alts.len() == 1 {
                    alts.pop().unwrap_or(Pattern {
                        kind: PatternKind::Error,
                        span: e.span(),
                    })
                } else {
                    Pattern {
                        kind: PatternKind::Or(alts),
                        span: e.span(),
                    }
                }
            });
        or.then(just(Tok::As).ignore_then(ident()).or_not())
            .map_with(|(p, name), e| match name {
                Some(n) => Pattern {
                    kind: PatternKind::As(Box::new(p), n),
                    span: e.span(),
                },
                None => p,
            })
            .boxed()
    })
    .boxed()
}

/// The top level of a `case`: `case a, b:` is a sequence without brackets.
pub(crate) fn open_pattern<'a>(pat: P<'a, Pattern>) -> P<'a, Pattern> {
    pat.clone()
        .then(
            just(Tok::Comma)
                .ignore_then(pat)
                .repeated()
                .collect::<Vec<_>>(),
        )
        .then(just(Tok::Comma).or_not())
        .map_with(|((first, rest), trailing), e| {
            let mut v = vec![first];
            v.extend(rest);
            sequence(v, trailing.is_some(), e.span())
        })
        .boxed()
}

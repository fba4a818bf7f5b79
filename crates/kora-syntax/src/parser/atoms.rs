//! Atoms and trailers: literals, names, displays, comprehensions, calls, attributes, subscripts, and Kora's `analyze` / `ask_human` / `classified`.
//!
//! Each bracketed form parses its first element once and then branches on
//! the next token (`for`, `,`, `:`, closer). Trying whole alternatives would
//! re-parse that element per alternative, which is exponential in nesting
//! depth.

use super::error::SynErr;
use super::labels;
use super::{err_expr, expect, kw, FTable, P};
use crate::ast::{Arg, ArgKind, CompClause, CompKind, Expr, ExprKind, FStringPart};
use crate::diagnostic::Diagnostic;
use crate::lexer::decode_string;
use crate::span::Span;
use crate::token::Tok;
use chumsky::input::Emitter;
use chumsky::prelude::*;

/// The sub-parsers atoms need from the levels above them.
pub(crate) struct Parts<'a> {
    pub test: P<'a, Expr>,
    pub star_test: P<'a, Expr>,
    pub disj: P<'a, Expr>,
    pub targets: P<'a, Expr>,
    pub ft: FTable,
}

fn comp(
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
fn clauses<'a>(p: &Parts<'a>) -> P<'a, Vec<CompClause>> {
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
    just(Tok::Comma)
        .ignore_then(elem)
        .repeated()
        .collect::<Vec<_>>()
        .then_ignore(just(Tok::Comma).or_not())
        .then_ignore(expect(close, lbl))
        .boxed()
}

fn recover_brackets<'a>(
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
        just(Tok::Comma)
            .ignore_then(
                p.star_test
                    .clone()
                    .separated_by(just(Tok::Comma))
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
    let dict_rest = just(Tok::Comma)
        .ignore_then(pair)
        .repeated()
        .collect::<Vec<_>>()
        .then_ignore(just(Tok::Comma).or_not())
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

fn int_literal<'a>() -> P<'a, Expr> {
    select! { Tok::Int(v) = e => (v, e.span()) }
        .validate(|(v, span), _, emitter| match v {
            Some(v) if v <= i64::MAX as u64 => Expr::new(ExprKind::Int(v as i64), span),
            _ => {
                emitter.emit(SynErr::custom(
                    Diagnostic::error("E0004", "integer literal too large for a 64-bit int", span)
                        .with_label("this does not fit in a 64-bit signed integer")
                        .with_help(
                            "Kora's `int` holds -9223372036854775808 to 9223372036854775807; use a float for larger magnitudes",
                        ),
                ));
                err_expr(span)
            }
        })
        .boxed()
}

fn kora_atoms<'a>(args: P<'a, Vec<Arg>>) -> P<'a, Expr> {
    let analyze = just(Tok::Analyze)
        .ignore_then(args.clone().or_not())
        .then(kw("stream").or_not())
        .validate(|(args, stream), e, emitter| match args {
            Some(args) => Expr::new(
                ExprKind::Analyze {
                    args,
                    stream: stream.is_some(),
                },
                e.span(),
            ),
            None => {
                emitter.emit(SynErr::custom(
                    Diagnostic::error("E0038", "`analyze` must be called", e.span())
                        .with_label("`analyze` is a keyword, not a value")
                        .with_help(
                            "call it with the data and the prompt: `analyze(data, \"prompt\")`",
                        ),
                ));
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

pub(crate) fn call_args<'a>(p: &Parts<'a>) -> P<'a, Vec<Arg>> {
    let keyword_name =
        select! { Tok::Name(n) = e => crate::ast::Ident { name: n.to_string(), span: e.span() } };
    let arg = choice((
        just(Tok::Star)
            .ignore_then(p.test.clone())
            .map(ArgKind::Star),
        just(Tok::DoubleStar)
            .ignore_then(p.test.clone())
            .map(ArgKind::DoubleStar),
        keyword_name
            .then_ignore(just(Tok::Assign))
            .then(p.test.clone())
            .map(|(k, v)| ArgKind::Keyword(k, v)),
        p.test
            .clone()
            .then(clauses(p).or_not())
            .map_with(|(x, cs), e| match cs {
                Some(cs) => ArgKind::Positional(comp(CompKind::Generator, x, None, cs, e.span())),
                None => ArgKind::Positional(x),
            }),
    ))
    .map_with(|kind, e| Arg {
        kind,
        span: e.span(),
    });
    arg.separated_by(just(Tok::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(just(Tok::LParen), expect(Tok::RParen, labels::CLOSE_PAREN))
        .validate(|args: Vec<Arg>, _, emitter| {
            let mut keyword_seen = false;
            for a in &args {
                match a.kind {
                    ArgKind::Keyword(..) | ArgKind::DoubleStar(_) => keyword_seen = true,
                    ArgKind::Positional(_) if keyword_seen => {
                        emitter.emit(SynErr::custom(
                            Diagnostic::error(
                                "E0037",
                                "positional argument follows keyword argument",
                                a.span,
                            )
                            .with_label("this comes after a `name=value` argument")
                            .with_help(
                                "put positional arguments first, then the keyword arguments",
                            ),
                        ));
                        break;
                    }
                    _ => {}
                }
            }
            args
        })
        .recover_with(via_parser(
            recover_brackets(Tok::LParen, Tok::RParen).map(|_| Vec::new()),
        ))
        .boxed()
}

enum Sub {
    Item(Expr),
    Slice(Option<Expr>, Option<Expr>, Option<Expr>),
    Empty,
}

enum Trailer {
    Attr(crate::ast::Ident),
    Call(Vec<Arg>),
    Index(Expr),
    Slice(Option<Expr>, Option<Expr>, Option<Expr>),
}

/// Turns the items between `[` and `]` into an index or a slice, reporting the forms Kora lacks.
fn subscript_items(
    mut items: Vec<Sub>,
    trailing: bool,
    span: Span,
    emitter: &mut Emitter<SynErr<'_>>,
) -> Trailer {
    if items.len() == 1 && !trailing {
        return match items.pop() {
            Some(Sub::Item(x)) => Trailer::Index(x),
            Some(Sub::Slice(lo, hi, step)) => Trailer::Slice(lo, hi, step),
            _ => {
                emitter.emit(SynErr::custom(
                    Diagnostic::error("E0030", "expected an index or a slice, found `]`", span)
                        .with_label("empty subscript")
                        .with_help("write an index such as `xs[0]` or a slice such as `xs[1:]`"),
                ));
                Trailer::Index(err_expr(span))
            }
        };
    }
    let mut elems = Vec::new();
    for it in items {
        match it {
            Sub::Item(x) => elems.push(x),
            _ => {
                emitter.emit(SynErr::custom(
                    Diagnostic::error("E0044", "a slice cannot be part of a tuple subscript", span)
                        .with_label("this subscript mixes `,` with `:`")
                        .with_help(
                            "index with one slice, `xs[lo:hi]`, or with plain values, `grid[i, j]`",
                        ),
                ));
                elems.push(err_expr(span));
            }
        }
    }
    let tspan = match (elems.first(), elems.last()) {
        (Some(a), Some(b)) => a.span.to(b.span),
        _ => span,
    };
    Trailer::Index(Expr::new(ExprKind::Tuple(elems), tspan))
}

fn subscript<'a>(p: &Parts<'a>) -> P<'a, Trailer> {
    let test = p.test.clone();
    let item = test
        .clone()
        .or_not()
        .then(
            just(Tok::Colon)
                .ignore_then(test.clone().or_not())
                .then(just(Tok::Colon).ignore_then(test.or_not()).or_not())
                .or_not(),
        )
        .map(|(lo, rest)| match (lo, rest) {
            (Some(x), None) => Sub::Item(x),
            (None, None) => Sub::Empty,
            (lo, Some((hi, step))) => Sub::Slice(lo, hi, step.flatten()),
        });
    item.clone()
        .then(
            just(Tok::Comma)
                .ignore_then(item)
                .repeated()
                .collect::<Vec<_>>(),
        )
        .then(just(Tok::Comma).or_not())
        .delimited_by(
            just(Tok::LBracket),
            expect(Tok::RBracket, labels::CLOSE_BRACKET),
        )
        .validate(|((first, rest), trailing), e, emitter| {
            let mut items = vec![first];
            items.extend(rest);
            subscript_items(items, trailing.is_some(), e.span(), emitter)
        })
        .boxed()
}

fn apply(lhs: Expr, tr: Trailer, span: Span) -> Expr {
    let boxed = Box::new(lhs);
    let kind = match tr {
        Trailer::Attr(name) => ExprKind::Attr(boxed, name),
        Trailer::Call(args) => ExprKind::Call { func: boxed, args },
        Trailer::Index(x) => ExprKind::Index(boxed, Box::new(x)),
        Trailer::Slice(lo, hi, step) => ExprKind::Slice {
            value: boxed,
            lo: lo.map(Box::new),
            hi: hi.map(Box::new),
            step: step.map(Box::new),
        },
    };
    Expr::new(kind, span)
}

/// An atom followed by any number of `.name`, `(args)` and `[subscript]` trailers.
pub(crate) fn primary<'a>(p: &Parts<'a>, args: P<'a, Vec<Arg>>) -> P<'a, Expr> {
    let cl = clauses(p);
    let simple = select! {
        Tok::Name(n) = e => Expr::new(ExprKind::Name(n.to_string()), e.span()),
        Tok::Float(f) = e => Expr::new(ExprKind::Float(f), e.span()),
        Tok::True = e => Expr::new(ExprKind::Bool(true), e.span()),
        Tok::False = e => Expr::new(ExprKind::Bool(false), e.span()),
        Tok::None = e => Expr::new(ExprKind::None, e.span()),
        Tok::Error = e => err_expr(e.span()),
    };
    let atom = choice((
        simple.boxed(),
        int_literal(),
        strings(p.ft.clone()),
        paren(p, cl.clone()),
        list(p, cl.clone()),
        brace(p, cl),
        kora_atoms(args.clone()),
    ))
    .labelled(labels::EXPR)
    .boxed();
    let trailer = choice((
        just(Tok::Dot)
            .ignore_then(super::ident())
            .map(Trailer::Attr)
            .boxed(),
        args.map(Trailer::Call).boxed(),
        subscript(p),
    ));
    atom.foldl_with(trailer.repeated(), |lhs, tr, e| apply(lhs, tr, e.span()))
        .boxed()
}

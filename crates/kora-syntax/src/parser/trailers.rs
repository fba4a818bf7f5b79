//! Trailers: call arguments, attribute access, and subscripts (indexes and slices) after an atom.

use super::atoms::{atom, clauses, comp, recover_brackets, Parts};
use super::error::SynErr;
use super::labels;
use super::{comma, err_expr, expect, P};
use crate::ast::{Arg, ArgKind, CompKind, Expr, ExprKind};
use crate::diagnostic::Diagnostic;
use crate::span::Span;
use crate::token::Tok;
use chumsky::input::Emitter;
use chumsky::prelude::*;

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
    arg.separated_by(comma())
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
        .then(comma().ignore_then(item).repeated().collect::<Vec<_>>())
        .then(comma().or_not())
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
    let trailer = choice((
        just(Tok::Dot)
            .ignore_then(super::ident())
            .map(Trailer::Attr)
            .boxed(),
        args.clone().map(Trailer::Call).boxed(),
        subscript(p),
    ));
    atom(p, args)
        .foldl_with(trailer.repeated(), |lhs, tr, e| apply(lhs, tr, e.span()))
        .boxed()
}

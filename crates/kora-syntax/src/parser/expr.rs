//! Expression precedence, from `lambda` down to `**`, one foldl per level as in Python's grammar.
//!
//! Levels, loosest first: lambda < `a if c else b` < or < and < not <
//! comparisons (chained) < | < ^ < & < << >> < + - < * / // % < unary - + ~
//! < ** (right-associative, binding tighter than a unary on its left).
//! Atoms and trailers live in `atoms`. The builder exports several entry
//! points because statements need more than "an expression": `for` targets
//! stop below comparisons (so `in` is not swallowed), and comprehensions
//! iterate over an or-level expression.

use super::atoms::Parts;
use super::labels;
use super::trailers;
use super::{never, FTable, P};
use crate::ast::{Arg, BinOp, BoolOp, CmpOp, Expr, ExprKind, Param, UnaryOp};
use crate::token::Tok;
use chumsky::prelude::*;

#[derive(Clone)]
pub(crate) struct Exprs<'a> {
    /// One expression, no bare tuple.
    pub test: P<'a, Expr>,
    /// `a, *b, c` as a tuple; a single element stands for itself.
    pub list: P<'a, Expr>,
    /// A `for` target list: names, attributes, subscripts, tuples, starred.
    pub targets: P<'a, Expr>,
    /// A parenthesized call argument list.
    pub args: P<'a, Vec<Arg>>,
}

fn unary(op: UnaryOp, operand: Expr, start: u32) -> Expr {
    let span = crate::span::Span::new(start, operand.span.end.max(start));
    Expr::new(ExprKind::Unary(op, Box::new(operand)), span)
}

fn binary_level<'a>(lower: P<'a, Expr>, ops: P<'a, BinOp>) -> P<'a, Expr> {
    lower
        .clone()
        .foldl_with(ops.then(lower).repeated(), |a, (op, b), e| {
            Expr::new(ExprKind::Binary(op, Box::new(a), Box::new(b)), e.span())
        })
        .boxed()
}

fn ops<'a>(table: &[(Tok<'a>, BinOp)]) -> P<'a, BinOp> {
    let mut p: Option<P<'a, BinOp>> = None;
    for (tok, op) in table.iter().copied() {
        let one = just(tok).to(op).boxed();
        p = Some(match p {
            Some(prev) => prev.or(one).boxed(),
            None => one,
        });
    }
    p.unwrap_or_else(never)
}

/// Unary operators, `**`, and the binary operators down to `|`.
fn arith<'a>(primary: P<'a, Expr>) -> P<'a, Expr> {
    let factor = recursive(|factor| {
        let factor: P<'a, Expr> = factor.boxed();
        let power = primary
            .clone()
            .then(just(Tok::DoubleStar).ignore_then(factor.clone()).or_not())
            .map_with(|(base, exp), e| match exp {
                Some(x) => Expr::new(
                    ExprKind::Binary(BinOp::Pow, Box::new(base), Box::new(x)),
                    e.span(),
                ),
                None => base,
            });
        // `-9223372036854775808` is the one literal whose magnitude only fits when negated.
        let min_int = just(Tok::Minus)
            .ignore_then(select! { Tok::Int(Some(v)) if v == 1u64 << 63 => () })
            .then_ignore(just(Tok::DoubleStar).not())
            .map_with(|_, e| Expr::new(ExprKind::Int(i64::MIN), e.span()));
        let op = select! {
            Tok::Minus => UnaryOp::Neg,
            Tok::Plus => UnaryOp::Pos,
            Tok::Tilde => UnaryOp::Invert,
        }
        .map_with(|op, e| (op, e.span()));
        let prefixed = op.then(factor).map(|((op, s), x)| unary(op, x, s.start));
        choice((min_int, prefixed, power)).boxed()
    })
    .boxed();
    let term = binary_level(
        factor,
        ops(&[
            (Tok::Star, BinOp::Mul),
            (Tok::Slash, BinOp::Div),
            (Tok::DoubleSlash, BinOp::FloorDiv),
            (Tok::Percent, BinOp::Mod),
        ]),
    );
    let sum = binary_level(
        term,
        ops(&[(Tok::Plus, BinOp::Add), (Tok::Minus, BinOp::Sub)]),
    );
    let shift = binary_level(sum, ops(&[(Tok::Shl, BinOp::Shl), (Tok::Shr, BinOp::Shr)]));
    let band = binary_level(shift, ops(&[(Tok::Amp, BinOp::BitAnd)]));
    let bxor = binary_level(band, ops(&[(Tok::Caret, BinOp::BitXor)]));
    binary_level(bxor, ops(&[(Tok::Pipe, BinOp::BitOr)]))
}

/// Comparisons, `not`, `and`, `or` over the bitwise-or level.
fn logic<'a>(bor: P<'a, Expr>) -> P<'a, Expr> {
    let cmp_op = choice((
        just(Tok::EqEq).to(CmpOp::Eq),
        just(Tok::Ne).to(CmpOp::Ne),
        just(Tok::Le).to(CmpOp::Le),
        just(Tok::Ge).to(CmpOp::Ge),
        just(Tok::Lt).to(CmpOp::Lt),
        just(Tok::Gt).to(CmpOp::Gt),
        just(Tok::In).to(CmpOp::In),
        just(Tok::Not).then(just(Tok::In)).to(CmpOp::NotIn),
        just(Tok::Is).then(just(Tok::Not)).to(CmpOp::IsNot),
        just(Tok::Is).to(CmpOp::Is),
    ));
    let comparison = bor
        .clone()
        .then(cmp_op.then(bor).repeated().collect::<Vec<_>>())
        .map_with(|(first, rest), e| {
            if rest.is_empty() {
                first
            } else {
                Expr::new(ExprKind::Compare(Box::new(first), rest), e.span())
            }
        });
    let not_test = just(Tok::Not)
        .map_with(|_, e| e.span())
        .repeated()
        .foldr(comparison, |s: crate::span::Span, x| {
            unary(UnaryOp::Not, x, s.start)
        })
        .boxed();
    let and_test = not_test
        .clone()
        .foldl_with(
            just(Tok::And).ignore_then(not_test).repeated(),
            |a, b, e| {
                Expr::new(
                    ExprKind::BoolOp(BoolOp::And, Box::new(a), Box::new(b)),
                    e.span(),
                )
            },
        )
        .boxed();
    and_test
        .clone()
        .foldl_with(just(Tok::Or).ignore_then(and_test).repeated(), |a, b, e| {
            Expr::new(
                ExprKind::BoolOp(BoolOp::Or, Box::new(a), Box::new(b)),
                e.span(),
            )
        })
        .labelled(labels::EXPR)
        .boxed()
}

/// `*x` (a starred bitwise-or expression) or a full expression.
fn star<'a>(bor: P<'a, Expr>, test: P<'a, Expr>) -> P<'a, Expr> {
    just(Tok::Star)
        .ignore_then(bor)
        .map_with(|x, e| Expr::new(ExprKind::Starred(Box::new(x)), e.span()))
        .or(test)
        .boxed()
}

/// Comma-separated elements; a tuple when there is a comma, the element itself otherwise.
pub(crate) fn comma_list<'a>(elem: P<'a, Expr>) -> P<'a, Expr> {
    elem.clone()
        .then(
            just(Tok::Comma)
                .ignore_then(elem)
                .repeated()
                .collect::<Vec<_>>(),
        )
        .then(just(Tok::Comma).or_not())
        .map_with(|((first, rest), trailing), e| {
            if rest.is_empty() && trailing.is_none() {
                first
            } else {
                let mut items = vec![first];
                items.extend(rest);
                Expr::new(ExprKind::Tuple(items), e.span())
            }
        })
        .boxed()
}

fn lambda<'a>(test: P<'a, Expr>) -> P<'a, Expr> {
    let param = just(Tok::Star)
        .or_not()
        .then(super::ident())
        .then(just(Tok::Assign).ignore_then(test.clone()).or_not())
        .map_with(|((star, name), default), e| Param {
            name,
            ty: None,
            default,
            star: star.is_some(),
            span: e.span(),
        });
    just(Tok::Lambda)
        .ignore_then(
            param
                .separated_by(just(Tok::Comma))
                .allow_trailing()
                .collect::<Vec<_>>(),
        )
        .then_ignore(just(Tok::Colon))
        .then(test)
        .map_with(|(params, body), e| {
            Expr::new(
                ExprKind::Lambda {
                    params,
                    body: Box::new(body),
                },
                e.span(),
            )
        })
        .boxed()
}

/// `name := value`: Python's assignment expression, parsed only to say that Kora has none.
fn walrus<'a>(test: P<'a, Expr>) -> P<'a, Expr> {
    super::ident()
        .then_ignore(just(Tok::Walrus))
        .then(test)
        .validate(|(name, value), e, emitter| {
            emitter.emit(super::error::SynErr::custom(
                crate::Diagnostic::error(
                    "E0044",
                    "Kora has no assignment expression (`:=`)",
                    e.span(),
                )
                .with_label("Python's walrus operator")
                .with_help(format!(
                    "assign on the line before: `{} = ...`, then use `{}` in the condition",
                    name.name, name.name
                )),
            ));
            Expr::new(ExprKind::Error, value.span)
        })
        .boxed()
}

pub(crate) fn build<'a>(ft: FTable) -> Exprs<'a> {
    let mut bor_out: Option<P<'a, Expr>> = None;
    let mut args_out: Option<P<'a, Vec<Arg>>> = None;
    let test = recursive(|test| {
        let test: P<'a, Expr> = test.boxed();
        let bor = recursive(|bor| {
            let bor: P<'a, Expr> = bor.boxed();
            let parts = Parts {
                test: test.clone(),
                star_test: star(bor.clone(), test.clone()),
                disj: logic(bor.clone()),
                targets: comma_list(star(bor.clone(), bor.clone())),
                ft: ft.clone(),
            };
            let args = trailers::call_args(&parts);
            args_out = Some(args.clone());
            arith(trailers::primary(&parts, args))
        })
        .boxed();
        bor_out = Some(bor.clone());
        let disj = logic(bor);
        let ternary = disj
            .clone()
            .then(
                just(Tok::If)
                    .ignore_then(disj)
                    .then_ignore(just(Tok::Else))
                    .then(test.clone())
                    .or_not(),
            )
            .map_with(|(then, rest), e| match rest {
                Some((cond, orelse)) => Expr::new(
                    ExprKind::IfExp {
                        cond: Box::new(cond),
                        then: Box::new(then),
                        orelse: Box::new(orelse),
                    },
                    e.span(),
                ),
                None => then,
            });
        lambda(test.clone())
            .or(walrus(test))
            .or(ternary)
            .labelled(labels::EXPR)
            .boxed()
    })
    .boxed();
    let bor = bor_out.unwrap_or_else(never);
    let star_test = star(bor.clone(), test.clone());
    Exprs {
        list: comma_list(star_test),
        targets: comma_list(star(bor.clone(), bor)),
        args: args_out.unwrap_or_else(never),
        test,
    }
}

/// Why `e` cannot be assigned to, if it cannot.
pub(crate) fn target_problem(
    e: &Expr,
    allow_unpack: bool,
) -> Option<(&'static str, crate::span::Span)> {
    match &e.kind {
        ExprKind::Name(_) | ExprKind::Attr(..) | ExprKind::Index(..) | ExprKind::Slice { .. } => {
            None
        }
        ExprKind::Tuple(items) | ExprKind::List(items) if allow_unpack => {
            items.iter().find_map(|i| target_problem(i, true))
        }
        ExprKind::Starred(inner) if allow_unpack => target_problem(inner, true),
        ExprKind::Error => None,
        ExprKind::Call { .. } | ExprKind::Analyze { .. } | ExprKind::AskHuman(_) => {
            Some(("a function call", e.span))
        }
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Str(_)
        | ExprKind::Bytes(_)
        | ExprKind::FString(_) => Some(("a literal", e.span)),
        ExprKind::Bool(_) | ExprKind::None => Some(("a constant", e.span)),
        ExprKind::Tuple(_) | ExprKind::List(_) | ExprKind::Starred(_) => Some(("a tuple", e.span)),
        ExprKind::Compare(..) => Some(("a comparison", e.span)),
        ExprKind::Lambda { .. } => Some(("a lambda", e.span)),
        _ => Some(("an expression", e.span)),
    }
}

/// Reports an invalid assignment target.
pub(crate) fn check_target<'a>(
    e: &Expr,
    allow_unpack: bool,
    emitter: &mut chumsky::input::Emitter<super::error::SynErr<'a>>,
) {
    if let Some((what, span)) = target_problem(e, allow_unpack) {
        emitter.emit(super::error::SynErr::custom(
            crate::Diagnostic::error("E0031", format!("cannot assign to {what}"), span)
                .with_label("not something a value can be stored in")
                .with_help("assign to a name, an attribute (`x.a`), an element (`xs[i]`) or a tuple of these"),
        ));
    }
}

//! Type expressions: names, dotted names, generic arguments, string-literal members, `None`, and `|` unions.

use super::labels;
use super::{comma, expect, P};
use crate::ast::{TypeExpr, TypeExprKind};
use crate::lexer::decode_string;
use crate::token::Tok;
use chumsky::prelude::*;

pub(crate) fn ty<'a>() -> P<'a, TypeExpr> {
    recursive(|ty| {
        let name = select! { Tok::Name(n) => n }
            .separated_by(just(Tok::Dot))
            .at_least(1)
            .collect::<Vec<_>>()
            .map(|parts| parts.join("."));
        let args = ty
            .clone()
            .separated_by(comma())
            .at_least(1)
            .allow_trailing()
            .collect::<Vec<_>>()
            .delimited_by(
                just(Tok::LBracket),
                expect(Tok::RBracket, labels::CLOSE_BRACKET),
            );
        let named = name
            .then(args.or_not())
            .map(|(name, args)| TypeExprKind::Named {
                name,
                args: args.unwrap_or_default(),
            });
        // `tuple[int, ...]`: any number of items of one type.
        let ellipsis =
            just(Tok::Dot)
                .then(just(Tok::Dot))
                .then(just(Tok::Dot))
                .to(TypeExprKind::Named {
                    name: "...".into(),
                    args: Vec::new(),
                });
        let simple = choice((
            named,
            ellipsis,
            select! { Tok::Str(raw) => TypeExprKind::Literal(decode_string(raw)) },
            just(Tok::None).to(TypeExprKind::None),
        ))
        .map_with(|kind, e| TypeExpr {
            kind,
            span: e.span(),
        });
        // `Callable[[int, str], bool]`: a bracketed parameter list is a type argument.
        let params = ty
            .clone()
            .separated_by(comma())
            .allow_trailing()
            .collect::<Vec<_>>()
            .delimited_by(
                just(Tok::LBracket),
                expect(Tok::RBracket, labels::CLOSE_BRACKET),
            )
            .map_with(|args, e| TypeExpr {
                kind: TypeExprKind::Named {
                    name: "[]".into(),
                    args,
                },
                span: e.span(),
            });
        let grouped = ty.delimited_by(just(Tok::LParen), expect(Tok::RParen, labels::CLOSE_PAREN));
        let atom = simple.or(grouped).or(params).labelled(labels::TYPE);
        atom.separated_by(just(Tok::Pipe))
            .at_least(1)
            .collect::<Vec<_>>()
            .map_with(|mut members, e| {
                if members.len() == 1 {
                    members.pop().unwrap_or(TypeExpr {
                        kind: TypeExprKind::Error,
                        span: e.span(),
                    })
                } else {
                    TypeExpr {
                        kind: TypeExprKind::Union(members),
                        span: e.span(),
                    }
                }
            })
            .boxed()
    })
    .boxed()
}

//! Python's compound statements: `if`/`elif`/`else`, `while`, `for`, `parallel for`, and `def`/`tool`/`agent`.

use super::error::{Lbl, SynErr};
use super::expr::check_target;
use super::labels;
use super::stmt::{emit, one, Ctx};
use super::{comma, err_expr, expect, ident, kw, P};
use crate::ast::{
    Block, Expr, ExprKind, FuncDef, FuncKind, ParallelInto, ParallelMode, Param, Stmt, StmtKind,
    TypeExpr,
};
use crate::diagnostic::Diagnostic;
use crate::span::Span;
use crate::token::Tok;
use chumsky::input::Emitter;
use chumsky::prelude::*;

/// `<condition> : <block>`, committed: a broken header still yields its block,
/// and a condition that parsed is kept even when what follows it is broken.
fn cond_block<'a>(ctx: &Ctx<'a>, colon: Lbl, body: Lbl) -> P<'a, (Expr, Block)> {
    let after = ctx.commit(
        expect(Tok::Colon, colon)
            .ignore_then(ctx.block(body))
            .boxed(),
        |_, b| b,
    );
    let p = ctx.x.test.clone().then(after).boxed();
    ctx.commit(p, |s, b| (err_expr(s), b))
}

pub(crate) fn if_stmt<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let else_body = ctx.commit(
        expect(Tok::Colon, labels::COLON_ELSE)
            .ignore_then(ctx.block(labels::block("an indented block after `else`")))
            .boxed(),
        |_, b| b,
    );
    just(Tok::If)
        .ignore_then(cond_block(
            ctx,
            labels::COLON_IF,
            labels::block("an indented block after the `if` line"),
        ))
        .then(
            elif_kw()
                .ignore_then(cond_block(
                    ctx,
                    labels::COLON_ELIF,
                    labels::block("an indented block after the `elif` line"),
                ))
                .repeated()
                .collect::<Vec<_>>(),
        )
        .then(just(Tok::Else).ignore_then(else_body).or_not())
        .map_with(|((first, elifs), orelse), e| {
            let mut branches = vec![first];
            branches.extend(elifs);
            one(StmtKind::If { branches, orelse }, e.span())
        })
        .boxed()
}

/// `elif`, or `else if` reported and read as `elif` so the chain stays whole.
fn elif_kw<'a>() -> P<'a, ()> {
    let else_if = just(Tok::Else)
        .then(just(Tok::If))
        .validate(|_, e, emitter| {
            emit(
                emitter,
                Diagnostic::error("E0043", "`else if` is written `elif`", e.span())
                    .with_label("Kora, like Python, spells this `elif`")
                    .with_help("replace `else if` with `elif`"),
            );
        });
    just(Tok::Elif).ignored().or(else_if).boxed()
}

pub(crate) fn while_stmt<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    just(Tok::While)
        .ignore_then(cond_block(
            ctx,
            labels::COLON_WHILE,
            labels::block("an indented block after the `while` line"),
        ))
        .map_with(|(cond, body), e| one(StmtKind::While { cond, body }, e.span()))
        .boxed()
}

/// `for target in iter [first]: body`; `first` is a keyword only in a `parallel for`, right before `:`.
fn for_rest<'a>(ctx: &Ctx<'a>, parallel: bool) -> P<'a, StmtKind> {
    let first = if parallel {
        kw("first")
            .then_ignore(just(Tok::Colon).rewind())
            .or_not()
            .map(|f| f.is_some())
            .boxed()
    } else {
        empty().to(false).boxed()
    };
    let p = ctx
        .x
        .targets
        .clone()
        .then_ignore(expect(Tok::In, labels::IN_FOR))
        .then(ctx.x.list.clone())
        .then(first)
        .then_ignore(expect(Tok::Colon, labels::COLON_FOR))
        .then(ctx.block(labels::block("an indented block after the `for` line")))
        .validate(|(((target, iter), first), body), _, emitter| {
            check_target(&target, true, emitter);
            (target, iter, first, body)
        })
        .boxed();
    ctx.commit(p, |s, b| (err_expr(s), err_expr(s), false, b))
        .map(move |(target, iter, first, body)| StmtKind::For {
            target,
            iter,
            body,
            parallel: match (parallel, first) {
                (false, _) => None,
                (true, false) => Some(ParallelMode::Collect),
                (true, true) => Some(ParallelMode::First),
            },
            into: None,
        })
        .boxed()
}

pub(crate) fn for_stmt<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let plain = just(Tok::For).ignore_then(for_rest(ctx, false));
    let parallel = just(Tok::Parallel)
        .ignore_then(expect(
            Tok::For,
            Lbl::new("`for` after `parallel`", "write `parallel for x in xs:`").ranked(3),
        ))
        .ignore_then(for_rest(ctx, true));
    // `results = parallel for ...`: the left side is only a target once `parallel`
    // follows the `=`, so an ordinary assignment backtracks out of this early.
    let into = ctx
        .x
        .targets
        .clone()
        .then(just(Tok::Colon).ignore_then(ctx.ty.clone()).or_not())
        .then_ignore(just(Tok::Assign))
        .then_ignore(just(Tok::Parallel))
        .then_ignore(expect(
            Tok::For,
            Lbl::new(
                "`for` after `parallel`",
                "write `x = parallel for y in ys:`",
            )
            .ranked(3),
        ))
        .then(for_rest(ctx, true))
        .validate(|((target, ty), mut kind), _, emitter| {
            check_target(&target, true, emitter);
            if ty.is_some() && !matches!(target.kind, ExprKind::Name(_)) {
                emit(
                    emitter,
                    Diagnostic::error("E0032", "only a plain name can be annotated", target.span)
                        .with_label("a type annotation needs a variable name on its left")
                        .with_help("annotate a name: `results: list[int] = parallel for ...`"),
                );
            }
            if let StmtKind::For { into, .. } = &mut kind {
                *into = Some(Box::new(ParallelInto { target, ty }));
            }
            kind
        });
    into.or(plain)
        .or(parallel)
        .map_with(|kind, e| one(kind, e.span()))
        .boxed()
}

/// One parameter; `None` for forms Kora does not have (reported here).
fn param<'a>(ctx: &Ctx<'a>) -> P<'a, Option<Param>> {
    let annot = just(Tok::Colon).ignore_then(ctx.ty.clone()).or_not();
    let star = just(Tok::Star)
        .ignore_then(ident().or_not())
        .then(annot.clone())
        .validate(|(name, ty), e, emitter| match name {
            Some(name) => Some(Param {
                name,
                ty,
                default: None,
                star: true,
                span: e.span(),
            }),
            None => {
                unsupported(emitter, e.span(), "a bare `*` (keyword-only marker)");
                None
            }
        });
    let double = just(Tok::DoubleStar)
        .ignore_then(ident())
        .then(annot.clone())
        .validate(|_, e, emitter| {
            unsupported(emitter, e.span(), "`**kwargs` parameters");
            None
        });
    let slash = just(Tok::Slash).validate(|_, e, emitter| {
        unsupported(emitter, e.span(), "a `/` (positional-only marker)");
        None
    });
    let plain = ident()
        .then(annot)
        .then(just(Tok::Assign).ignore_then(ctx.x.test.clone()).or_not())
        .map_with(|((name, ty), default), e| {
            Some(Param {
                name,
                ty,
                default,
                star: false,
                span: e.span(),
            })
        });
    choice((star.boxed(), double.boxed(), slash.boxed(), plain.boxed())).boxed()
}

fn unsupported(emitter: &mut Emitter<SynErr<'_>>, span: Span, what: &str) {
    emit(
        emitter,
        Diagnostic::error("E0035", format!("Kora functions do not take {what}"), span)
            .with_label("unsupported parameter form")
            .with_help("use ordinary parameters, defaults, and at most one `*rest` parameter"),
    );
}

fn params<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Param>> {
    param(ctx)
        .separated_by(comma())
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(
            expect(Tok::LParen, labels::PARAMS),
            expect(Tok::RParen, labels::CLOSE_PAREN),
        )
        .validate(|ps, _, emitter| {
            let ps: Vec<Param> = ps.into_iter().flatten().collect();
            let mut default_seen = false;
            for p in &ps {
                if p.star {
                    continue;
                }
                if p.default.is_some() {
                    default_seen = true;
                } else if default_seen {
                    emit(
                        emitter,
                        Diagnostic::error(
                            "E0036",
                            "a parameter without a default follows one with a default",
                            p.span,
                        )
                        .with_label("this parameter needs a default value")
                        .with_help("move parameters with defaults to the end of the list"),
                    );
                    break;
                }
            }
            ps
        })
        .boxed()
}

/// The docstring: the first statement, when it is a string literal.
pub(crate) fn docstring(body: &[Stmt]) -> Option<String> {
    match body.first().map(|s| &s.kind) {
        Some(StmtKind::Expr {
            expr: Expr {
                kind: ExprKind::Str(s),
                ..
            },
            ..
        }) => Some(s.clone()),
        _ => None,
    }
}

pub(crate) fn func_def<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let kind = select! {
        Tok::Def => FuncKind::Def,
        Tok::Tool => FuncKind::Tool,
        Tok::Agent => FuncKind::Agent,
    };
    // `isolated`, `model("name")`, or both, between the colon and the end of the line.
    let model = kw("model")
        .ignore_then(just(Tok::LParen))
        .ignore_then(ctx.x.test.clone())
        .then_ignore(just(Tok::RParen));
    let modifiers = kw("isolated")
        .or_not()
        .map(|i| i.is_some())
        .then(model.or_not())
        .then_ignore(just(Tok::Newline).rewind());
    let rest = params(ctx)
        .then(just(Tok::Arrow).ignore_then(ctx.ty.clone()).or_not())
        .then_ignore(expect(Tok::Colon, labels::COLON_DEF))
        .then(modifiers.or_not().map(|m| m.unwrap_or((false, None))))
        .then(ctx.block(labels::block(
            "an indented body after the function signature",
        )))
        .boxed();
    type Sig = ((Vec<Param>, Option<TypeExpr>), (bool, Option<Expr>));
    let rest: P<'a, (Sig, Block)> =
        ctx.commit(rest, |_, b| (((Vec::new(), None), (false, None)), b));
    kind.then(
        ident()
            .labelled(Lbl::new("the function's name", "write `def name(params) -> T:`").ranked(2)),
    )
    .then(rest)
    .map_with(
        |((kind, name), (((params, ret), (isolated, model)), body)), e| {
            let span = e.span();
            one(
                StmtKind::Def(FuncDef {
                    kind,
                    name,
                    params,
                    ret,
                    doc: docstring(&body),
                    body,
                    isolated,
                    model,
                    span,
                }),
                span,
            )
        },
    )
    .boxed()
}

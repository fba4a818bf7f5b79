//! Kora's own statements (`type`, `match`, `budget`, `with context/mock`, `declassify`, `test`) and the teaching errors for Python forms Kora lacks.
//!
//! The soft keywords here are recognised by shape, not by spelling alone:
//! `match x:` at the end of a line, `type Name:` / `type Name =`,
//! `budget(...):`, `test "name":`. Anything else with those words is an
//! ordinary name, so `type(x)` or `match = re.match(...)` still parse.

use super::error::Lbl;
use super::labels;
use super::pattern::open_pattern;
use super::stmt::{emit, one, Ctx};
use super::{err_expr, expect, ident, kw, P};
use crate::ast::{
    Block, FieldDecl, Ident, MatchArm, Pattern, PatternKind, RecordDecl, Stmt, StmtKind, TypeExpr,
    TypeExprKind,
};
use crate::diagnostic::Diagnostic;
use crate::lexer::decode_string;
use crate::span::Span;
use crate::token::Tok;
use chumsky::prelude::*;

fn colon_block<'a>(ctx: &Ctx<'a>, what: &'static str) -> P<'a, Block> {
    expect(Tok::Colon, labels::COLON_BLOCK)
        .ignore_then(ctx.block(labels::block(what)))
        .boxed()
}

fn with_forms<'a>(ctx: &Ctx<'a>) -> P<'a, StmtKind> {
    let args_block = |what: &'static str| {
        ctx.commit(
            ctx.x.args.clone().then(colon_block(ctx, what)).boxed(),
            |_, b| (Vec::new(), b),
        )
    };
    let budget = kw("budget")
        .ignore_then(args_block("an indented block after the `budget` line"))
        .map(|(args, body)| StmtKind::Budget { args, body });
    let context = kw("context")
        .ignore_then(args_block("an indented block after the `context` line"))
        .map(|(args, body)| StmtKind::Context { args, body });
    let model = kw("model")
        .ignore_then(args_block("an indented block after the `model` line"))
        .map(|(args, body)| StmtKind::ModelBlock { args, body });
    // `with mock fs.read_file -> ...`: an external module's member, named `alias.member`.
    let target = choice((
        super::stmt::dotted_ident().filter(|i: &Ident| i.name.contains('.')),
        select! {
        Tok::Name(n) = e => Ident { name: n.to_string(), span: e.span() },
        Tok::Analyze = e => Ident { name: "analyze".to_string(), span: e.span() },
        Tok::AskHuman = e => Ident { name: "ask_human".to_string(), span: e.span() },
        },
    ))
    .labelled(
        Lbl::new(
            "the name of what to mock",
            "write `with mock analyze -> value:`",
        )
        .ranked(2),
    );
    let mock_rest = target
        .then_ignore(expect(Tok::Arrow, labels::ARROW_MOCK))
        .then(ctx.x.test.clone())
        .then(colon_block(ctx, "an indented block after the `mock` line"))
        .boxed();
    let mock = kw("mock")
        .ignore_then(ctx.commit(mock_rest, |s, b| {
            (
                (
                    Ident {
                        name: String::new(),
                        span: s,
                    },
                    err_expr(s),
                ),
                b,
            )
        }))
        .map(|((target, value), body)| StmtKind::Mock {
            target,
            value,
            body,
        });
    choice((budget, context, model, mock)).boxed()
}

pub(crate) fn with_stmt<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let kora_form = any()
        .filter(|t: &Tok<'a>| matches!(t, Tok::Name("budget" | "context" | "model" | "mock")))
        .rewind()
        .ignore_then(with_forms(ctx));
    let general = ctx.skip.clone().validate(|_, e, emitter| {
        emit(
            emitter,
            Diagnostic::error("E0033", "Kora has no general `with` statement", e.span())
                .with_label("`with` here does not open a budget, context, model or mock block")
                .with_help(
                    "the `with` forms are `with budget(...)`, `with context(...)`, `with model(\"name\")` and `with mock analyze -> value:`; \
                     files need no `with`, because `fs` functions open and close them",
                ),
        );
        StmtKind::Error
    });
    just(Tok::With)
        .ignore_then(kora_form.or(general))
        .map_with(|kind, e| one(kind, e.span()))
        .boxed()
}

pub(crate) fn budget<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    kw("budget")
        .ignore_then(ctx.x.args.clone())
        .then_ignore(just(Tok::Colon))
        .then(ctx.block(labels::block("an indented block after the `budget` line")))
        .map_with(|(args, body), e| one(StmtKind::Budget { args, body }, e.span()))
        .boxed()
}

pub(crate) fn declassify<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let rest = ctx
        .x
        .test
        .clone()
        .then_ignore(expect(Tok::For, labels::FOR_SINK))
        .then(ident())
        .then(colon_block(
            ctx,
            "an indented block after the `declassify` line",
        ))
        .boxed();
    just(Tok::Declassify)
        .ignore_then(ctx.commit(rest, |s, b| {
            (
                (
                    err_expr(s),
                    Ident {
                        name: String::new(),
                        span: s,
                    },
                ),
                b,
            )
        }))
        .map_with(|((value, sink), body), e| {
            one(StmtKind::Declassify { value, sink, body }, e.span())
        })
        .boxed()
}

pub(crate) fn test_block<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let name = select! { Tok::Str(raw) => decode_string(raw) };
    kw("test")
        .ignore_then(name)
        .then(ctx.commit(
            colon_block(ctx, "an indented block after the `test` line"),
            |_, b| b,
        ))
        .map_with(|(name, body), e| one(StmtKind::Test { name, body }, e.span()))
        .boxed()
}

#[derive(Clone)]
enum RecordItem {
    Field(FieldDecl),
    Doc(String),
    Nothing,
}

fn record_body<'a>(ctx: &Ctx<'a>) -> P<'a, (Vec<FieldDecl>, Option<String>)> {
    let field = ident()
        .labelled(labels::FIELD)
        .then_ignore(expect(
            Tok::Colon,
            Lbl::new(
                "`:` and the field's type",
                "write each field as `name: Type`",
            )
            .ranked(3),
        ))
        .then(ctx.ty.clone())
        .then(just(Tok::Assign).ignore_then(ctx.x.test.clone()).or_not())
        .map_with(|((name, ty), default), e| {
            RecordItem::Field(FieldDecl {
                name,
                ty,
                default,
                span: e.span(),
            })
        })
        .then_ignore(expect(Tok::Newline, labels::END_STMT));
    let doc = select! { Tok::Str(raw) => RecordItem::Doc(decode_string(raw)) }
        .then_ignore(just(Tok::Newline));
    let pass = just(Tok::Pass)
        .then(just(Tok::Newline))
        .to(RecordItem::Nothing);
    let item = choice((field, doc, pass))
        .recover_with(via_parser(ctx.skip.clone().to(RecordItem::Nothing)));
    just(Tok::Newline)
        .ignore_then(just(Tok::Indent).labelled(labels::block(
            "an indented block of fields after the `type` line",
        )))
        .ignore_then(item.repeated().at_least(1).collect::<Vec<_>>())
        .then_ignore(just(Tok::Dedent))
        .map(|items| {
            let mut fields = Vec::new();
            let mut doc = None;
            for it in items {
                match it {
                    RecordItem::Field(f) => fields.push(f),
                    RecordItem::Doc(d) if doc.is_none() && fields.is_empty() => doc = Some(d),
                    _ => {}
                }
            }
            (fields, doc)
        })
        .boxed()
}

pub(crate) fn type_decl<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    enum Decl {
        Record(Vec<FieldDecl>, Option<String>),
        Alias(TypeExpr),
    }
    let record = just(Tok::Colon)
        .ignore_then(ctx.commit(record_body(ctx), |_, _| (Vec::new(), None)))
        .map(|(f, d)| Decl::Record(f, d));
    let alias_rest = ctx
        .ty
        .clone()
        .then_ignore(expect(Tok::Newline, labels::END_STMT))
        .boxed();
    let alias = just(Tok::Assign)
        .ignore_then(ctx.commit(alias_rest, |s, _| TypeExpr {
            kind: TypeExprKind::Error,
            span: s,
        }))
        .map(Decl::Alias);
    kw("type")
        .ignore_then(ident())
        .then(record.or(alias))
        .map_with(|(name, decl), e| {
            let span = e.span();
            let kind = match decl {
                Decl::Record(fields, doc) => StmtKind::Record(RecordDecl {
                    name,
                    fields,
                    doc,
                    span,
                }),
                Decl::Alias(ty) => StmtKind::TypeAlias { name, ty },
            };
            one(kind, span)
        })
        .boxed()
}

pub(crate) fn match_stmt<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let rest = open_pattern(ctx.pat.clone())
        .then(just(Tok::If).ignore_then(ctx.x.test.clone()).or_not())
        .then_ignore(expect(Tok::Colon, labels::COLON_CASE))
        .then(ctx.block(labels::block("an indented block after the `case` line")))
        .boxed();
    let error_pattern = |s: Span| Pattern {
        kind: PatternKind::Error,
        span: s,
    };
    let arm = kw("case")
        .labelled(labels::CASE)
        .ignore_then(ctx.commit(rest, move |s, b| ((error_pattern(s), None), b)))
        .map_with(|((pattern, guard), body), e| MatchArm {
            pattern,
            guard,
            body,
            span: e.span(),
        })
        .recover_with(via_parser(ctx.skip.clone().map_with(move |body, e| {
            MatchArm {
                pattern: error_pattern(e.span()),
                guard: None,
                body,
                span: e.span(),
            }
        })));
    kw("match")
        .ignore_then(ctx.x.list.clone())
        .then_ignore(just(Tok::Colon))
        .then_ignore(just(Tok::Newline))
        .then_ignore(just(Tok::Indent))
        .then(arm.repeated().at_least(1).collect::<Vec<_>>())
        .then_ignore(just(Tok::Dedent))
        .map_with(|(subject, arms), e| one(StmtKind::Match { subject, arms }, e.span()))
        .boxed()
}

/// Python statements Kora does not have, recognised by their first word and the token after it.
pub(crate) fn python_isms<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let word = select! {
        Tok::Name(n) if matches!(n, "class" | "try" | "except" | "finally" | "raise" | "yield" | "async" | "await") => n,
    }
    .map_with(|w, e| (w, e.span()));
    let next = any().filter(|t: &Tok<'a>| {
        matches!(
            t,
            Tok::Name(_) | Tok::Colon | Tok::Def | Tok::For | Tok::With | Tok::Str(_) | Tok::Int(_)
        )
    });
    let decorator = just(Tok::At)
        .map_with(|_, e| ("@", e.span()))
        .then_ignore(ident().rewind());
    word.then_ignore(next.rewind())
        .or(decorator)
        .then(ctx.skip.clone())
        .validate(|((w, span), _), e, emitter| {
            let help = match w {
                "class" => "declare a record with `type Name:` and `field: Type` lines, and write functions that take it",
                "try" | "except" | "finally" => {
                    "failures are values in Kora: `match` on `Ok(x)` / `Err(why)`, or write `x: T = call() else:`"
                }
                "raise" => "return a failure value such as `Err(\"why\")` instead of raising",
                "yield" => "build a list and return it; Kora has no generators",
                "@" => "call the wrapper yourself after the `def`: `f = wrap(f)`; Kora has no decorators",
                _ => "run work concurrently with `parallel for`; Kora has no `async`/`await`",
            };
            let what = if w == "@" {
                "Kora has no decorators (`@name` before a `def`)".to_string()
            } else {
                format!("Kora has no `{w}` statement")
            };
            emit(
                emitter,
                Diagnostic::error("E0034", what, span)
                    .with_label("this is Python syntax that Kora does not have")
                    .with_help(help),
            );
            one(StmtKind::Error, e.span())
        })
        .boxed()
}

/// `elif`/`else` with no `if` above, `case` outside a `match`, and an `on` handler attached to nothing.
pub(crate) fn stray_clause<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let clause =
        select! { Tok::Elif => "elif", Tok::Else => "else" }.map_with(|w, e| (w, e.span()));
    let stray_else = clause.then(ctx.skip.clone()).validate(|((w, span), _), e, emitter| {
        emit(
            emitter,
            Diagnostic::error("E0041", format!("`{w}` without a matching `if`"), span)
                .with_label(format!("no `if` at this indentation comes before this `{w}`"))
                .with_help(format!(
                    "line the `{w}` up with its `if`; Kora has no `for ... else` or `while ... else`"
                )),
        );
        one(StmtKind::Error, e.span())
    });
    let pattern_start = any().filter(|t: &Tok<'a>| {
        matches!(
            t,
            Tok::Name(_)
                | Tok::Str(_)
                | Tok::Bytes(_)
                | Tok::Int(_)
                | Tok::Float(_)
                | Tok::True
                | Tok::False
                | Tok::None
        )
    });
    let stray_case = kw("case")
        .then_ignore(pattern_start.rewind())
        .then(ctx.skip.clone())
        .validate(|(span, _), e, emitter| {
            emit(
                emitter,
                Diagnostic::error("E0042", "`case` outside of a `match`", span)
                    .with_label("this arm belongs to no `match`")
                    .with_help("indent `case` arms one level under a `match subject:` line"),
            );
            one(StmtKind::Error, e.span())
        });
    let stray_on = kw("on")
        .then_ignore(ident().then(just(Tok::LParen)).rewind())
        .then(ctx.skip.clone())
        .validate(|(span, _), e, emitter| {
            emit(
                emitter,
                Diagnostic::error("E0040", "an `on` handler must follow the call it handles", span)
                    .with_label("this handler is attached to no statement")
                    .with_help("write it at the end of the `x = analyze(...)` line, or indented on the lines right below it"),
            );
            one(StmtKind::Error, e.span())
        });
    choice((stray_else.boxed(), stray_case.boxed(), stray_on.boxed())).boxed()
}

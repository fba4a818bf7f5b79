//! Statements: the module, blocks, recovery, simple statements, and `on` / `else` clauses attached to them.
//!
//! Recovery has two layers. A compound statement commits once its keyword is
//! read: a broken header skips to the end of its line and still parses the
//! indented body (`Ctx::commit`). A line that matches no statement at all is
//! skipped whole, with its body, and becomes `StmtKind::Error`. Either way one
//! diagnostic is recorded and parsing resumes on the next line, which is what
//! lets a single parse report every broken statement in a file.

use super::error::{Lbl, SynErr};
use super::expr::{check_target, Exprs};
use super::labels;
use super::{compound, err_expr, expect, ident, kora, kw, pattern, types, P};
use crate::ast::{
    BinOp, Block, ElseClause, Expr, ExprKind, Handler, Ident, Pattern, Stmt, StmtKind, TypeExpr,
    UseDecl, UseTarget,
};
use crate::diagnostic::Diagnostic;
use crate::lexer::decode_string;
use crate::span::Span;
use crate::token::Tok;
use chumsky::prelude::*;

/// Everything the statement parsers share.
#[derive(Clone)]
pub(crate) struct Ctx<'a> {
    pub x: Exprs<'a>,
    pub ty: P<'a, TypeExpr>,
    pub pat: P<'a, Pattern>,
    /// One statement line (several for `a; b` or `import a, b`).
    pub stmt: P<'a, Vec<Stmt>>,
    /// Simple statements ending the line, used as a same-line body (`if x: return 1`).
    pub plain_line: P<'a, Block>,
    /// Skips the rest of the line and any indented block under it, parsing that block.
    pub skip: P<'a, Block>,
    /// `INDENT stmt+ DEDENT`.
    pub indented: P<'a, Block>,
}

impl<'a> Ctx<'a> {
    /// The body after a header's `:`: an indented block or simple statements on the same line.
    pub fn block(&self, lbl: Lbl) -> P<'a, Block> {
        just(Tok::Newline)
            .ignore_then(self.indented.clone().labelled(lbl))
            .or(self.plain_line.clone())
            .boxed()
    }

    /// Once a statement's keyword is read, a failure in the rest skips the line (keeping its block).
    pub fn commit<O: 'a>(
        &self,
        p: P<'a, O>,
        fallback: impl Fn(Span, Block) -> O + Clone + 'a,
    ) -> P<'a, O> {
        p.recover_with(via_parser(
            self.skip
                .clone()
                .map_with(move |b, e| fallback(e.span(), b)),
        ))
        .boxed()
    }
}

pub(crate) fn one(kind: StmtKind, span: Span) -> Vec<Stmt> {
    vec![Stmt::new(kind, span)]
}

fn flatten(v: Vec<Vec<Stmt>>) -> Vec<Stmt> {
    v.into_iter().flatten().collect()
}

pub(crate) fn emit(emitter: &mut chumsky::input::Emitter<SynErr<'_>>, d: Diagnostic) {
    emitter.emit(SynErr::custom(d));
}

fn aug_op<'a>() -> impl Parser<'a, super::In<'a>, BinOp, super::Ex<'a>> + Clone {
    select! {
        Tok::PlusEq => BinOp::Add,
        Tok::MinusEq => BinOp::Sub,
        Tok::StarEq => BinOp::Mul,
        Tok::SlashEq => BinOp::Div,
        Tok::DoubleSlashEq => BinOp::FloorDiv,
        Tok::PercentEq => BinOp::Mod,
        Tok::DoubleStarEq => BinOp::Pow,
        Tok::AmpEq => BinOp::BitAnd,
        Tok::PipeEq => BinOp::BitOr,
        Tok::CaretEq => BinOp::BitXor,
        Tok::ShlEq => BinOp::Shl,
        Tok::ShrEq => BinOp::Shr,
    }
}

/// Expression statements and the assignment family, which all start with an expression list.
fn expr_family<'a>(ctx: &Ctx<'a>) -> P<'a, StmtKind> {
    #[derive(Clone)]
    enum Fam {
        Ann(TypeExpr, Option<Expr>),
        Aug(BinOp, Expr),
        Assign(Vec<Expr>),
        Plain,
    }
    let list = ctx.x.list.clone();
    let fam = choice((
        just(Tok::Colon)
            .ignore_then(ctx.ty.clone())
            .then(just(Tok::Assign).ignore_then(list.clone()).or_not())
            .map(|(t, v)| Fam::Ann(t, v)),
        aug_op().then(list.clone()).map(|(op, v)| Fam::Aug(op, v)),
        just(Tok::Assign)
            .ignore_then(list.clone())
            .repeated()
            .at_least(1)
            .collect::<Vec<_>>()
            .map(Fam::Assign),
        empty().to(Fam::Plain),
    ));
    list.then(fam)
        .validate(|(lhs, fam), _, emitter| match fam {
            Fam::Plain => StmtKind::Expr {
                expr: lhs,
                handlers: Vec::new(),
            },
            Fam::Assign(mut rest) => {
                let value = rest.pop().unwrap_or_else(|| err_expr(lhs.span));
                let mut targets = vec![lhs];
                targets.extend(rest);
                for t in &targets {
                    check_target(t, true, emitter);
                }
                StmtKind::Assign {
                    targets,
                    value,
                    handlers: Vec::new(),
                }
            }
            Fam::Aug(op, value) => {
                check_target(&lhs, false, emitter);
                StmtKind::AugAssign { target: lhs, op, value }
            }
            Fam::Ann(ty, value) => match lhs.kind {
                ExprKind::Name(name) => StmtKind::AnnAssign {
                    target: Ident { name, span: lhs.span },
                    ty,
                    value,
                    handlers: Vec::new(),
                    else_: None,
                },
                _ => {
                    emit(
                        emitter,
                        Diagnostic::error("E0032", "only a plain name can be annotated", lhs.span)
                            .with_label("a type annotation needs a variable name on its left")
                            .with_help("annotate a name, `x: int = ...`, then assign to the attribute or element"),
                    );
                    StmtKind::Error
                }
            },
        })
        .boxed()
}

fn use_stmt<'a>() -> P<'a, StmtKind> {
    let alias = just(Tok::As).ignore_then(ident().labelled(labels::AS_NAME));
    let path = select! { Tok::Str(raw) = e => UseTarget::File { path: decode_string(raw), span: e.span() } };
    let target = choice((
        path.then(alias.clone().or_not()),
        ident()
            .then(dotted_ident())
            .then(alias.clone().or_not())
            .map(|((kind, name), a)| (UseTarget::Provider { kind, name }, a)),
        // `use json` or a package, `use pkg` / `use pkg.module`: which one is the loader's
        // call, since only the importing file's manifest knows its packages.
        dotted_ident()
            .then(alias.or_not())
            .map(|(m, a)| (UseTarget::Std(m), a)),
    ))
    .labelled(labels::USE_TARGET);
    just(Tok::Use)
        .ignore_then(target)
        .map_with(|(target, alias), e| {
            StmtKind::Use(UseDecl {
                target,
                alias,
                span: e.span(),
            })
        })
        .boxed()
}

/// `os.path`: names joined by dots, as one identifier spanning them all (a Python module path).
pub(crate) fn dotted_ident<'a>() -> impl Parser<'a, super::In<'a>, Ident, super::Ex<'a>> + Clone {
    ident()
        .separated_by(just(Tok::Dot))
        .at_least(1)
        .collect::<Vec<_>>()
        .map_with(|parts, e| Ident {
            name: parts
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join("."),
            span: e.span(),
        })
}

fn dotted<'a>() -> impl Parser<'a, super::In<'a>, String, super::Ex<'a>> + Clone {
    select! { Tok::Name(n) => n }
        .separated_by(just(Tok::Dot))
        .at_least(1)
        .collect::<Vec<_>>()
        .map(|parts| parts.join("."))
}

/// `import a.b as c, d` and `from x import y`: kept only so the checker can name the Kora form.
fn python_import<'a>() -> P<'a, Vec<Stmt>> {
    let import = just(Tok::Import)
        .ignore_then(
            dotted()
                .then_ignore(just(Tok::As).then(ident()).or_not())
                .separated_by(just(Tok::Comma))
                .at_least(1)
                .collect::<Vec<_>>(),
        )
        .map_with(|mods, e| {
            mods.into_iter()
                .map(|module| {
                    Stmt::new(
                        StmtKind::PythonImport {
                            module,
                            names: Vec::new(),
                        },
                        e.span(),
                    )
                })
                .collect::<Vec<_>>()
        });
    let star = just(Tok::Star).map_with(|_, e| {
        vec![Ident {
            name: "*".to_string(),
            span: e.span(),
        }]
    });
    let name_list = ident()
        .then_ignore(just(Tok::As).then(ident()).or_not())
        .separated_by(just(Tok::Comma))
        .at_least(1)
        .allow_trailing()
        .collect::<Vec<_>>();
    let names = choice((
        star,
        name_list
            .clone()
            .delimited_by(just(Tok::LParen), just(Tok::RParen)),
        name_list,
    ))
    .then_ignore(just(Tok::Newline).or(just(Tok::Semi)).rewind())
    .or(none_of([Tok::Newline, Tok::Semi]).repeated().to(Vec::new()));
    let from = just(Tok::From)
        .ignore_then(just(Tok::Dot).repeated().count())
        .then(dotted().or_not())
        .then_ignore(just(Tok::Import))
        .then(names)
        .map_with(|((dots, name), names), e| {
            let module = format!("{}{}", ".".repeat(dots), name.unwrap_or_default());
            one(StmtKind::PythonImport { module, names }, e.span())
        });
    import.or(from).boxed()
}

fn small_stmt<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    let x = &ctx.x;
    let names = || {
        ident()
            .separated_by(just(Tok::Comma))
            .at_least(1)
            .collect::<Vec<_>>()
    };
    let single = choice((
        just(Tok::Pass).to(StmtKind::Pass).boxed(),
        just(Tok::Continue).to(StmtKind::Continue).boxed(),
        just(Tok::Break)
            .ignore_then(x.list.clone().or_not())
            .map(StmtKind::Break)
            .boxed(),
        just(Tok::Return)
            .ignore_then(x.list.clone().or_not())
            .map(StmtKind::Return)
            .boxed(),
        just(Tok::Nonlocal)
            .ignore_then(names())
            .map(StmtKind::Nonlocal)
            .boxed(),
        just(Tok::Global)
            .ignore_then(names())
            .map(StmtKind::Global)
            .boxed(),
        just(Tok::Assert)
            .ignore_then(x.test.clone())
            .then(just(Tok::Comma).ignore_then(x.test.clone()).or_not())
            .map(|(cond, msg)| StmtKind::Assert { cond, msg })
            .boxed(),
        kw("del")
            .ignore_then(
                x.test
                    .clone()
                    .separated_by(just(Tok::Comma))
                    .at_least(1)
                    .allow_trailing()
                    .collect::<Vec<_>>(),
            )
            .map(StmtKind::Del)
            .boxed(),
        use_stmt(),
        expr_family(ctx),
    ))
    .map_with(|kind, e| one(kind, e.span()));
    python_import().or(single).boxed()
}

/// `on name(params):` and its body.
pub(crate) fn on_handler<'a>(ctx: &Ctx<'a>) -> P<'a, Handler> {
    let params = ident()
        .separated_by(just(Tok::Comma))
        .allow_trailing()
        .collect::<Vec<_>>()
        .delimited_by(just(Tok::LParen), expect(Tok::RParen, labels::CLOSE_PAREN))
        .or_not()
        .map(Option::unwrap_or_default);
    let rest = params
        .then_ignore(expect(Tok::Colon, labels::COLON_BLOCK))
        .then(ctx.block(labels::block("an indented block after the `on` line")))
        .boxed();
    kw("on")
        .ignore_then(ident())
        .then(ctx.commit(rest, |_, b| (Vec::new(), b)))
        .map_with(|(event, (params, body)), e| Handler {
            event,
            params,
            body,
            span: e.span(),
        })
        .boxed()
}

fn else_clause<'a>(ctx: &Ctx<'a>) -> P<'a, ElseClause> {
    let binds = just(Tok::LParen)
        .ignore_then(ident())
        .then_ignore(just(Tok::Comma))
        .then(ident())
        .then_ignore(expect(Tok::RParen, labels::CLOSE_PAREN))
        .or_not();
    let rest = binds
        .then_ignore(expect(Tok::Colon, labels::COLON_ELSE))
        .then(ctx.block(labels::block("an indented block after `else`")))
        .boxed();
    just(Tok::Else)
        .ignore_then(ctx.commit(rest, |_, b| (None, b)))
        .map_with(|(binds, body), e| ElseClause {
            binds,
            body,
            span: e.span(),
        })
        .boxed()
}

#[derive(Clone)]
enum Tail {
    On(Handler),
    Else(ElseClause),
    End,
}

fn attach(
    stmt: &mut Stmt,
    handlers: Vec<Handler>,
    emitter: &mut chumsky::input::Emitter<SynErr<'_>>,
) {
    let Some(first) = handlers.first() else {
        return;
    };
    let first_span = first.event.span;
    match &mut stmt.kind {
        StmtKind::Expr { handlers: h, .. }
        | StmtKind::Assign { handlers: h, .. }
        | StmtKind::AnnAssign { handlers: h, .. } => h.extend(handlers),
        StmtKind::Error => {}
        _ => emit(
            emitter,
            Diagnostic::error(
                "E0040",
                "an `on` handler must follow a call or an assignment",
                first_span,
            )
            .with_label("nothing here produces events to handle")
            .with_help("attach `on token(piece):` to the statement that calls `analyze(...)`"),
        ),
    }
}

fn attach_else(
    stmt: &mut Stmt,
    clause: ElseClause,
    emitter: &mut chumsky::input::Emitter<SynErr<'_>>,
) {
    let at = Span::new(clause.span.start, clause.span.start + 4);
    match &mut stmt.kind {
        StmtKind::AnnAssign { value: Some(_), else_, .. } => *else_ = Some(clause),
        StmtKind::Assign { .. } => emit(
            emitter,
            Diagnostic::error("E0039", "an `else` clause needs a typed assignment", at)
                .with_label("this assignment has no type annotation")
                .with_help("write `name: T = <outcome> else:` so the successful value has a declared type"),
        ),
        StmtKind::Error => {}
        _ => emit(
            emitter,
            Diagnostic::error("E0039", "`else` can only follow `name: T = <outcome>`", at)
                .with_label("nothing here can fail over to an `else`")
                .with_help("use `if`/`else` for a condition, or `x: T = analyze(...) else:` for an outcome"),
        ),
    }
}

/// Simple statements up to the end of the line, with any `on` / `else` clauses.
fn simple_line<'a>(ctx: &Ctx<'a>, smalls: P<'a, Vec<Stmt>>) -> P<'a, Vec<Stmt>> {
    let handler = on_handler(ctx);
    let tail = choice((
        handler.clone().map(Tail::On),
        else_clause(ctx).map(Tail::Else),
        expect(Tok::Newline, labels::END_STMT).to(Tail::End),
    ));
    let below = just(Tok::Indent)
        .ignore_then(handler.repeated().at_least(1).collect::<Vec<_>>())
        .then_ignore(just(Tok::Dedent));
    smalls
        .then(tail)
        .then(below.or_not())
        .validate(|((mut stmts, tail), below), e, emitter| {
            let end = e.span().end;
            if let Some(last) = stmts.last_mut() {
                let extended = !matches!(tail, Tail::End) || below.is_some();
                match tail {
                    Tail::On(h) => attach(last, vec![h], emitter),
                    Tail::Else(c) => attach_else(last, c, emitter),
                    Tail::End => {}
                }
                if let Some(hs) = below {
                    attach(last, hs, emitter);
                }
                if extended {
                    last.span.end = end;
                }
            }
            stmts
        })
        .boxed()
}

fn unexpected_indent<'a>(ctx: &Ctx<'a>) -> P<'a, Vec<Stmt>> {
    just(Tok::Indent)
        .map_with(|_, e| e.span())
        .then(ctx.stmt.clone().repeated().at_least(1).collect::<Vec<_>>())
        .then_ignore(just(Tok::Dedent))
        .validate(|(span, stmts), _, emitter| {
            emit(
                emitter,
                Diagnostic::error("E0023", "unexpected indent", span)
                    .with_label("this line is indented more than the one above it")
                    .with_help("remove the extra indentation, or end the line above with `:` if it opens a block"),
            );
            flatten(stmts)
        })
        .boxed()
}

/// The whole file.
/// The whole file: its statements, then anything left reported as one error.
pub(crate) fn module<'a>(x: &Exprs<'a>) -> P<'a, Vec<Stmt>> {
    let leftover = any()
        .map_with(|t: Tok<'a>, e| (t, e.span()))
        .repeated()
        .collect::<Vec<_>>()
        .validate(|rest, _, emitter| {
            if let Some((t, span)) = rest.first() {
                emit(
                    emitter,
                    Diagnostic::error("E0030", format!("unexpected {}", t.describe()), *span)
                        .with_label("the parser could not continue from here")
                        .with_help("check the indentation and brackets of the lines above"),
                );
            }
        });
    statements(x)
        .then_ignore(leftover)
        .then_ignore(end())
        .boxed()
}

/// Top-level statements, as many as parse (with recovery) from the start of the input.
pub(crate) fn statements<'a>(x: &Exprs<'a>) -> P<'a, Vec<Stmt>> {
    let ty = types::ty();
    let pat = pattern::pattern(x);
    let stmt = recursive(|stmt| {
        let stmt: P<'a, Vec<Stmt>> = stmt.boxed();
        let indented = just(Tok::Indent)
            .ignore_then(stmt.clone().repeated().at_least(1).collect::<Vec<_>>())
            .then_ignore(just(Tok::Dedent))
            .map(flatten)
            .boxed();
        let skip = none_of([Tok::Newline, Tok::Indent, Tok::Dedent])
            .repeated()
            .then(just(Tok::Newline))
            .ignore_then(indented.clone().or_not())
            .map(Option::unwrap_or_default)
            .boxed();
        let mut ctx = Ctx {
            x: x.clone(),
            ty,
            pat,
            stmt,
            plain_line: super::never(),
            skip: skip.clone(),
            indented,
        };
        let smalls = small_stmt(&ctx)
            .separated_by(just(Tok::Semi))
            .at_least(1)
            .allow_trailing()
            .collect::<Vec<_>>()
            .map(flatten)
            .boxed();
        ctx.plain_line = smalls
            .clone()
            .then_ignore(expect(Tok::Newline, labels::END_STMT))
            .boxed();
        let statement = choice((
            unexpected_indent(&ctx),
            compound::if_stmt(&ctx),
            compound::while_stmt(&ctx),
            compound::for_stmt(&ctx),
            compound::func_def(&ctx),
            kora::with_stmt(&ctx),
            kora::declassify(&ctx),
            kora::type_decl(&ctx),
            kora::match_stmt(&ctx),
            kora::budget(&ctx),
            kora::test_block(&ctx),
            kora::python_isms(&ctx),
            kora::stray_clause(&ctx),
            simple_line(&ctx, smalls),
        ))
        .labelled(labels::STMT);
        statement.recover_with(via_parser(
            skip.map_with(|_, e| one(StmtKind::Error, e.span())),
        ))
    });
    stmt.repeated().collect::<Vec<_>>().map(flatten).boxed()
}

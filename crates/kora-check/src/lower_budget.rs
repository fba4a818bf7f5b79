//! Lowering `budget(...):` blocks (tighten-only for literal limits), `ask_human(question)` and `remaining(meter)`.
//!
//! A nested budget may only tighten. When both limits are written as
//! literals the checker says so before anything runs; any other value is
//! compared when the block is entered (the runtime's E1321).

use crate::codes;
use crate::hir::{self, BudgetArg, ExprKind as H};
use crate::lower::Lowerer;
use crate::lower_expr::{ex, Lowered};
use crate::types::Ty;
use kora_syntax::ast::{self, ArgKind, ExprKind as AE};
use kora_syntax::{Diagnostic, Span};

/// The meters `remaining(...)` reads.
const METERS: [&str; 4] = ["tokens", "calls", "steps", "seconds"];

/// A literal limit of an enclosing `budget`, kept while its body is lowered.
#[derive(Clone, Copy)]
pub(crate) struct LiteralLimit {
    pub arg: BudgetArg,
    pub value: f64,
    pub span: Span,
}

fn literal_number(e: &ast::Expr) -> Option<f64> {
    match &e.kind {
        AE::Int(n) => Some(*n as f64),
        AE::Float(f) => Some(*f),
        _ => None,
    }
}

impl Lowerer<'_> {
    pub(crate) fn budget_block(
        &mut self,
        args: &[ast::Arg],
        body: &[ast::Stmt],
        span: Span,
    ) -> Option<hir::StmtKind> {
        let mut limits = Vec::new();
        let mut literals = Vec::new();
        for a in args {
            let (name, value) = match &a.kind {
                ArgKind::Keyword(k, v) => (k, v),
                _ => {
                    self.arg_expr(a);
                    self.err(
                        Diagnostic::error(
                            codes::BUDGET_ARG,
                            "a budget's limits are named",
                            a.span,
                        )
                        .with_label("an unnamed limit")
                        .with_help("write `budget(max_tokens=N, max_calls=N, max_steps=N, max_seconds=N):`, any of them"),
                    );
                    continue;
                }
            };
            let (e, ty) = self.expr(value);
            let Some(arg) = BudgetArg::from_keyword(&name.name) else {
                let help = match crate::suggest::closest(
                    &name.name,
                    BudgetArg::ALL.iter().map(|a| a.keyword()),
                ) {
                    Some(s) => format!("did you mean `{s}`? a budget takes max_tokens, max_calls, max_steps and max_seconds"),
                    None => "a budget takes max_tokens, max_calls, max_steps and max_seconds".to_string(),
                };
                self.err(
                    Diagnostic::error(
                        codes::BUDGET_ARG,
                        format!("`budget` has no limit `{}`", name.name),
                        name.span,
                    )
                    .with_label("not a budget meter")
                    .with_help(help),
                );
                continue;
            };
            if limits.iter().any(|(a, _)| *a == arg) {
                self.err(
                    Diagnostic::error(
                        codes::BUDGET_ARG,
                        format!("`{}` is given twice", arg.keyword()),
                        name.span,
                    )
                    .with_label("the second one")
                    .with_help("keep one value per limit"),
                );
                continue;
            }
            let numeric = match arg {
                BudgetArg::Seconds => matches!(ty, Ty::Int | Ty::Float | Ty::Any),
                _ => matches!(ty, Ty::Int | Ty::Any),
            };
            let lit = literal_number(value);
            if !numeric || lit.is_some_and(|v| v < 0.0) {
                let want = if arg == BudgetArg::Seconds {
                    "a number of seconds"
                } else {
                    "a whole number"
                };
                self.err(
                    Diagnostic::error(
                        codes::BUDGET_ARG,
                        format!("`{}` takes {want} that is zero or more", arg.keyword()),
                        value.span,
                    )
                    .with_label(format!("this is `{ty}`"))
                    .with_help(format!("write `{}=10`", arg.keyword())),
                );
            }
            if let Some(v) = lit {
                self.check_tightens(arg, v, value.span);
                literals.push(LiteralLimit {
                    arg,
                    value: v,
                    span: value.span,
                });
            }
            limits.push((arg, e));
        }
        let _ = span;
        let depth = self.budget_literals.len();
        self.budget_literals.extend(literals);
        let body = self.block(body);
        self.budget_literals.truncate(depth);
        Some(hir::StmtKind::Budget(Box::new(hir::BudgetBlock {
            limits,
            body,
        })))
    }

    /// A literal limit above the nearest enclosing literal of the same meter is a loosening.
    fn check_tightens(&mut self, arg: BudgetArg, v: f64, at: Span) {
        let Some(outer) = self
            .budget_literals
            .iter()
            .rev()
            .find(|l| l.arg == arg)
            .copied()
        else {
            return;
        };
        if v > outer.value {
            self.err(
                Diagnostic::error(
                    codes::BUDGET_LOOSENED,
                    format!(
                        "a nested budget cannot loosen `{}`: {} is more than the enclosing {}",
                        arg.keyword(),
                        show(v),
                        show(outer.value)
                    ),
                    at,
                )
                .with_label("asks for more")
                .with_secondary(outer.span, "the enclosing budget's limit")
                .with_help(format!(
                    "a nested budget may only tighten: use {} or less, or raise the outer one",
                    show(outer.value)
                )),
            );
        }
    }

    pub(crate) fn ask_human(&mut self, args: &[ast::Arg], span: Span) -> Lowered {
        let mut question = None;
        for a in args {
            match &a.kind {
                ArgKind::Positional(x) if question.is_none() => {
                    let (e, ty) = self.expr(x);
                    if !matches!(ty, Ty::Str | Ty::Any | Ty::Literal(_)) {
                        self.mismatch(&Ty::Str, &ty, x.span, "the question `ask_human` shows");
                    }
                    question = Some(e);
                }
                _ => {
                    self.arg_expr(a);
                    self.err(
                        Diagnostic::error(codes::ARITY, "`ask_human` takes one question", a.span)
                            .with_label("an extra argument")
                            .with_help("write `answer = ask_human(\"Approve the refund?\")`"),
                    );
                }
            }
        }
        let Some(question) = question else {
            self.err(
                Diagnostic::error(codes::ARITY, "`ask_human` needs a question", span)
                    .with_help("write `answer = ask_human(\"Approve the refund?\")`"),
            );
            return (ex(H::None, span), Ty::Str);
        };
        let site = self.site_of(span);
        (
            ex(
                H::AskHuman(Box::new(hir::AskHumanCall { question, site })),
                span,
            ),
            Ty::Str,
        )
    }

    /// `remaining(meter)` called by its name: a literal meter is checked here.
    pub(crate) fn remaining(&mut self, args: &[ast::Arg], span: Span) -> Lowered {
        let [ast::Arg {
            kind: ArgKind::Positional(x),
            ..
        }] = args
        else {
            for a in args {
                self.arg_expr(a);
            }
            self.err(
                Diagnostic::error(codes::ARITY, "`remaining` takes one meter", span)
                    .with_help("write `remaining(\"tokens\")`; the meters are \"tokens\", \"calls\", \"steps\" and \"seconds\""),
            );
            return (ex(H::None, span), Ty::Any);
        };
        if let AE::Str(s) = &x.kind {
            if !METERS.contains(&s.as_str()) {
                self.err(
                    Diagnostic::error(
                        codes::UNKNOWN_METER,
                        format!("a budget has no meter {s:?}"),
                        x.span,
                    )
                    .with_label("not a meter")
                    .with_help("the meters are \"tokens\", \"calls\", \"steps\" and \"seconds\""),
                );
            }
        }
        let (e, _) = self.expr(x);
        let site = self.site_of(span);
        (ex(H::Remaining(Box::new(e), site), span), Ty::Any)
    }
}

fn show(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

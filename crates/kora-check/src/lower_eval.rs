//! The `eval` module: answer relevancy, faithfulness, hallucination and a G-Eval judge.
//!
//! Each metric is an `analyze` call to a judge model with a fixed rubric,
//! lowered here into the same `hir::AnalyzeCall` a program writes by hand. So
//! a metric replays from the cassette, is recorded by `--live`, answers from a
//! `with mock analyze -> Ok(Judgement(...))`, shows in traces and cost
//! reports, and never needs a Python bridge. The answer is the record
//! `Judgement(score: float, reason: str)`, which `use eval` declares.

use kora_syntax::ast::{self, ArgKind, ExprKind as AE, StmtKind};
use kora_syntax::{Diagnostic, Span};

use crate::codes;
use crate::hir::{self, ExprKind as H};
use crate::lower::{Ctx, Lowerer};
use crate::lower_expr::{ex, Lowered};
use crate::types::Ty;

/// The record every metric answers with.
pub const JUDGEMENT: &str = "Judgement";

struct Metric {
    name: &'static str,
    /// What the judge reads, in positional order; each becomes a key of the data it is sent.
    params: &'static [&'static str],
    rubric: &'static str,
}

const METRICS: &[Metric] = &[
    Metric {
        name: "answer_relevancy",
        params: &["question", "answer"],
        rubric: "You are an evaluation judge measuring answer relevancy. Split `answer` into its statements and decide, for each, whether it helps answer `question`. score = relevant statements / all statements, from 0.0 to 1.0 (1.0 when every statement is relevant). reason: one or two sentences naming the irrelevant statements, if any.",
    },
    Metric {
        name: "faithfulness",
        params: &["answer", "context"],
        rubric: "You are an evaluation judge measuring faithfulness. List the factual claims made in `answer` and decide, for each, whether `context` supports it. score = supported claims / all claims, from 0.0 to 1.0 (1.0 when the answer claims nothing the context does not support). reason: one or two sentences naming the unsupported claims, if any.",
    },
    Metric {
        name: "hallucination",
        params: &["answer", "context"],
        rubric: "You are an evaluation judge measuring hallucination. For each statement in `context`, decide whether `answer` contradicts it. score = contradicted statements / all statements, from 0.0 to 1.0 (0.0 is best: nothing contradicted). reason: one or two sentences naming the contradictions, if any.",
    },
    Metric {
        name: "g_eval",
        params: &["criteria", "input", "output"],
        rubric: "You are an evaluation judge (G-Eval). First write, privately, the concrete evaluation steps that `criteria` implies. Then apply them to `output`, produced for `input`, and score how well it meets the criteria from 0.0 (not at all) to 1.0 (fully). reason: one or two sentences justifying the score by the steps.",
    },
];

/// Whether a file's top level says `use eval`.
pub fn uses_eval(m: &ast::Module) -> bool {
    m.stmts.iter().any(|s| {
        matches!(&s.kind, StmtKind::Use(u)
            if matches!(&u.target, ast::UseTarget::Std(n) if n.name == "eval"))
    })
}

/// Declares `Judgement(score: float, reason: str)` when any file says `use eval`.
pub fn register_judgement(ctx: &mut Ctx, any_uses_eval: bool, module: hir::ModId) {
    if !any_uses_eval || ctx.type_ix.contains_key(JUDGEMENT) {
        return;
    }
    let id = hir::TypeId(ctx.types.len() as u32);
    let fields = vec![
        hir::FieldDef {
            name: ctx.names.intern("score"),
            ty: Ty::Float,
            default: None,
        },
        hir::FieldDef {
            name: ctx.names.intern("reason"),
            ty: Ty::Str,
            default: None,
        },
    ];
    ctx.type_ix.insert(JUDGEMENT.to_string(), id);
    ctx.types.push(hir::RecordType {
        id,
        name: JUDGEMENT.to_string(),
        module,
        fields,
        doc: Some("A judge model's verdict: `score` from 0.0 to 1.0 and its `reason`.".into()),
        span: Span::default(),
    });
}

impl Lowerer<'_> {
    /// `eval.metric(...)` in a file that says `use eval`; `None` for any other call.
    pub(crate) fn eval_call(
        &mut self,
        func: &ast::Expr,
        args: &[ast::Arg],
        span: Span,
    ) -> Option<Lowered> {
        if !self.uses_eval {
            return None;
        }
        let AE::Attr(obj, member) = &func.kind else {
            return None;
        };
        if !matches!(&obj.kind, AE::Name(n) if n == "eval") {
            return None;
        }
        let judgement = Ty::Record(*self.ctx.type_ix.get(JUDGEMENT)?, JUDGEMENT.into());
        let result = Ty::outcome(judgement.clone(), crate::types::Tags::MODEL);
        let Some(metric) = METRICS.iter().find(|m| m.name == member.name) else {
            let mut d = Diagnostic::error(
                codes::UNKNOWN_METRIC,
                format!("the `eval` module has no metric `{}`", member.name),
                member.span,
            )
            .with_label("not an `eval` metric");
            let names = METRICS.iter().map(|m| m.name);
            d = match crate::suggest::closest(&member.name, names) {
                Some(s) => d.with_help(format!("did you mean `eval.{s}`?")),
                None => d.with_help(format!(
                    "the metrics are {}",
                    METRICS
                        .iter()
                        .map(|m| m.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
            };
            self.err(d);
            return Some((ex(H::None, span), result));
        };
        let mut given: Vec<Option<hir::Expr>> = metric.params.iter().map(|_| None).collect();
        let mut model = None;
        let mut next = 0;
        for a in args {
            let (slot, x) = match &a.kind {
                ArgKind::Positional(x) => {
                    next += 1;
                    (Some(next - 1), x)
                }
                ArgKind::Keyword(k, x) if k.name == "model" => {
                    model = Some(self.expr(x).0);
                    continue;
                }
                ArgKind::Keyword(k, x) => (metric.params.iter().position(|p| *p == k.name), x),
                _ => {
                    self.bad_metric_args(metric, a.span);
                    continue;
                }
            };
            let (e, t) = self.expr(x);
            match slot.filter(|i| *i < given.len() && given[*i].is_none()) {
                Some(i) => {
                    if !Ty::Str.accepts(&t) {
                        self.mismatch(&Ty::Str, &t, x.span, "what a judge reads");
                    }
                    given[i] = Some(e);
                }
                None => self.bad_metric_args(metric, a.span),
            }
        }
        let mut items = Vec::new();
        for (p, e) in metric.params.iter().zip(given) {
            let Some(e) = e else {
                self.bad_metric_args(metric, span);
                return Some((ex(H::None, span), result));
            };
            let key = self.ctx.string(p);
            items.push((ex(H::Str(key), span), e));
        }
        let rubric = self.ctx.string(metric.rubric);
        let site = match self.ops.get(span) {
            Some(op) => format!("{}:{}#{}", self.site_file, op.func, op.index),
            None => format!("{}:@{}", self.site_file, span.start),
        };
        let call = hir::AnalyzeCall {
            data: ex(H::Dict(items), span),
            prompt: ex(H::Str(rubric), span),
            model,
            expect: judgement,
            stream: false,
            site,
            tools: None,
            on_tool_call: None,
            on_tool_result: None,
            on_token: None,
        };
        Some((ex(H::Analyze(Box::new(call)), span), result))
    }

    fn bad_metric_args(&mut self, metric: &Metric, span: Span) {
        self.err(
            Diagnostic::error(
                codes::METRIC_ARGS,
                format!("`eval.{}` takes {}", metric.name, metric.params.join(", ")),
                span,
            )
            .with_label("arguments do not match")
            .with_help(format!(
                "write `eval.{}({})`, optionally with `model=\"judge\"`",
                metric.name,
                metric.params.join(", ")
            )),
        );
    }
}

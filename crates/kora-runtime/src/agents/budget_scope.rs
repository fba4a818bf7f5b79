//! Running a `budget(...):` block, handing its chain to another interpreter, and `remaining(meter)`.
//!
//! The chain in force lives in a cell the interpreter shares with its
//! `BudgetObserver`; entering a block swaps a nested chain in and the old one
//! back on the way out, on every path (a raise included), which is what makes
//! the scope lexical.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Instant;

use kora_check::hir::{self, BudgetArg};

use crate::agents::budget::{BudgetChain, BudgetObserver, Limits, Meter};
use crate::durable::effect::{Class, Effect, Kind};
use crate::error::{codes, RtError, RtResult};
use crate::eval::interp::{Flow, Interp};
use crate::value::Value;

impl Interp<'_> {
    /// The budget chain in force: what a `parallel for` hands to each worker (`adopt_budget`),
    /// so every branch spends from the same meters. Empty when unbudgeted.
    pub fn budget_chain(&self) -> BudgetChain {
        self.budget
            .as_ref()
            .map(|c| c.borrow().clone())
            .unwrap_or_default()
    }

    /// Runs this interpreter inside `chain` (a worker of a `parallel for`): its model calls are
    /// admitted and charged against the same atomic meters as its siblings'. Call it after
    /// `set_run`, before the worker runs anything.
    pub fn adopt_budget(&mut self, chain: BudgetChain) {
        match &self.budget {
            Some(cur) => *cur.borrow_mut() = chain,
            None => {
                let cur = Rc::new(RefCell::new(chain));
                self.attach_budget_observer(&cur);
                self.budget = Some(cur);
            }
        }
    }

    pub(crate) fn attach_budget_observer(&mut self, cur: &crate::agents::budget::CurrentBudget) {
        let observer = BudgetObserver::new(cur.clone());
        self.host().pipeline.attach(Box::new(observer));
    }

    pub(crate) fn exec_budget(
        &mut self,
        b: &hir::BudgetBlock,
        span: kora_syntax::Span,
    ) -> RtResult<Flow> {
        let limits = self.budget_limits(&b.limits)?;
        let outer = self.budget_chain();
        let inner = outer.enter(limits, Instant::now()).map_err(|l| {
            let at = self.place(span);
            RtError::new(
                codes::BUDGET_LOOSENED,
                format!(
                    "the budget at {at} asks for {}={} but an enclosing budget allows {}; a nested budget may only tighten: lower it to {} or less",
                    l.meter.keyword(),
                    number(l.asked),
                    number(l.allowed),
                    number(l.allowed)
                ),
            )
        })?;
        self.adopt_budget(inner);
        let r = self.exec_block(&b.body);
        if let Some(cur) = &self.budget {
            *cur.borrow_mut() = outer;
        }
        r
    }

    fn budget_limits(&mut self, args: &[(BudgetArg, hir::Expr)]) -> RtResult<Limits> {
        let mut limits = Limits::default();
        for (arg, e) in args {
            let v = self.eval(e)?;
            let bad = |got: &str| {
                RtError::new(
                    codes::BUDGET_VALUE,
                    format!(
                        "`{}=` takes a number that is zero or more, got {got}",
                        arg.keyword()
                    ),
                )
            };
            match arg {
                BudgetArg::Seconds => {
                    let s = match v {
                        Value::Int(n) => n as f64,
                        Value::Float(f) => f,
                        other => return Err(bad(&format!("a `{}`", other.type_name()))),
                    };
                    if !(s >= 0.0 && s.is_finite()) {
                        return Err(bad(&s.to_string()));
                    }
                    limits.seconds = Some(s);
                }
                _ => {
                    let n = match v {
                        Value::Int(n) if n >= 0 => n as u64,
                        Value::Int(n) => return Err(bad(&n.to_string())),
                        other => return Err(bad(&format!("a `{}`", other.type_name()))),
                    };
                    match arg {
                        BudgetArg::Tokens => limits.tokens = Some(n),
                        BudgetArg::Calls => limits.calls = Some(n),
                        _ => limits.steps = Some(n),
                    }
                }
            }
        }
        Ok(limits)
    }

    /// `remaining("tokens" | "calls" | "steps" | "seconds")`: what the budgets in force leave;
    /// `None` when no enclosing budget limits that meter. Reading time goes through the
    /// pipeline like the clock, so a journal can replay what the run saw.
    pub(crate) fn remaining(&mut self, meter: &str, site: &str) -> RtResult<Value> {
        let Some(m) = Meter::parse(meter) else {
            return Err(RtError::new(
                codes::UNKNOWN_METER,
                format!(
                    "`remaining({meter:?})`: a budget has the meters \"tokens\", \"calls\", \"steps\" and \"seconds\""
                ),
            ));
        };
        let chain = self.budget_chain();
        if m != Meter::Time {
            return Ok(match chain.remaining(m, Instant::now()) {
                Some(v) => Value::Int(v as i64),
                None => Value::None,
            });
        }
        let effect = Effect {
            kind: Kind::Clock,
            class: Class::Effect,
            op: site,
            call: "remaining",
            target: "seconds",
        };
        let r: Result<Option<f64>, String> =
            self.host().effect(
                &effect,
                |_| Ok(chain.remaining(Meter::Time, Instant::now())),
            )?;
        Ok(match r.ok().flatten() {
            Some(s) => Value::Float(s),
            None => Value::None,
        })
    }
}

/// `3` rather than `3.0` for the counted meters in a message.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

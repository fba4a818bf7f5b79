//! The span of one agent invocation (`invoke_agent {name}`), with what the agent spent as
//! budget units: tokens, calls and steps of every model call made under it.
//!
//! The span wraps the whole invocation, whichever way the agent was reached (a direct
//! call, a tool of a tool loop, an `isolated` agent in its fresh interpreter), so the
//! model and tool spans of its work nest under it. Spend is counted from the model
//! calls themselves rather than read off the budget meters: a `parallel for` shares
//! its meters with sibling branches, and an agent outside any `budget` block has none.
//!
//! Only the declared name and counts reach the span, never the arguments or the answer.

use std::rc::Rc;
use std::time::SystemTime;

use crate::agents::model_span::ModelObs;
use crate::error::RtResult;
use crate::eval::interp::{Interp, KwNames};
use crate::observe::trace::{AttrValue, SpanKind, SpanStatus, Spend};
use crate::value::{Function, Value};

impl Interp<'_> {
    /// The provider and model an agent's calls go to unless a call names another: its own
    /// `model(...)`, else the one in force where it is called. `None` when model calls are
    /// not set up or the name is unknown (the call itself will say so).
    fn agent_model(&self, c: &Rc<Function>) -> Option<(&'static str, String)> {
        let name = c
            .def
            .model
            .clone()
            .or_else(|| self.model_scope.last().cloned())
            .or_else(|| {
                self.models
                    .as_ref()
                    .and_then(|m| crate::agents::analyze::lock(m).main_model.clone())
            });
        let entry = self.with_config(|cfg| cfg.resolve(name.as_deref()).ok())??;
        Some((ModelObs::provider_of(entry.api), entry.name))
    }

    /// `invoke` for an agent while a tracer is attached: the same call inside its span.
    pub(crate) fn invoke_traced_agent(
        &mut self,
        c: &Rc<Function>,
        base: usize,
        npos: usize,
        kw: KwNames<'_>,
    ) -> RtResult<Value> {
        let name = c.def.name.as_str();
        let model = self.agent_model(c);
        if let Some(t) = self.tracing.as_mut() {
            let id = t.open_nested(SpanKind::Agent, "invoke_agent ", name, SystemTime::now());
            t.sink.attr(
                id,
                "gen_ai.operation.name",
                AttrValue::Static("invoke_agent"),
            );
            t.sink.attr_str(id, "gen_ai.agent.name", name);
            if let Some((provider, model)) = &model {
                t.sink
                    .attr(id, "gen_ai.provider.name", AttrValue::Static(provider));
                t.sink.attr_str(id, "gen_ai.request.model", model);
            }
            if c.def.isolated {
                t.sink
                    .attr(id, "kora.agent.isolated", AttrValue::Bool(true));
            }
            t.spend.push(Spend::default());
        }
        let r = self.invoke_plain(c, base, npos, kw);
        let Some(t) = self.tracing.as_mut() else {
            return r;
        };
        let (Some(id), Some(spent)) = (t.open.pop(), t.spend.pop()) else {
            return r;
        };
        // What an agent spent, its caller spent too.
        t.charge(spent);
        t.sink.attr(
            id,
            "kora.budget.tokens",
            AttrValue::count(spent.input_tokens + spent.output_tokens),
        );
        t.sink.attr(
            id,
            "kora.budget.input_tokens",
            AttrValue::count(spent.input_tokens),
        );
        t.sink.attr(
            id,
            "kora.budget.output_tokens",
            AttrValue::count(spent.output_tokens),
        );
        t.sink
            .attr(id, "kora.budget.calls", AttrValue::count(spent.calls));
        t.sink
            .attr(id, "kora.budget.steps", AttrValue::count(spent.steps));
        // As with model calls, an error's text may quote program values: only its code is kept.
        let status = match &r {
            Ok(_) => SpanStatus::Ok,
            Err(e) => {
                t.sink.attr(id, "error.type", AttrValue::Static(e.code));
                SpanStatus::Error
            }
        };
        t.sink.close(id, SystemTime::now(), status, None);
        r
    }
}

//! The spans of a tool loop's tool calls: one `execute_tool {name}` child of the model call's span
//! per call, saying what really ran (skipped by a handler, rewritten, replaced, refused).
//!
//! A tool call's span is open while the tool runs, so an agent used as a tool nests
//! under it. Only declared tool names and fixed words reach a span: the model's
//! arguments and the tool's result are program data and may be classified.

use std::time::SystemTime;

use crate::agents::tool_loop::ToolObs;
use crate::eval::interp::Interp;
use crate::observe::trace::{AttrValue, SpanId, SpanKind, SpanStatus};

impl Interp<'_> {
    /// Opens a tool call's span under the model call's; `None` when nothing is traced.
    pub(crate) fn open_tool_span(&mut self, seen: &ToolObs) -> Option<SpanId> {
        let t = self.tracing.as_mut()?;
        let name = seen.name.as_deref().unwrap_or("unknown");
        let id = t.open_nested(SpanKind::ToolCall, "execute_tool ", name, seen.start);
        t.sink.attr(
            id,
            "gen_ai.operation.name",
            AttrValue::Static("execute_tool"),
        );
        t.sink.attr_str(id, "gen_ai.tool.name", name);
        t.sink
            .attr(id, "gen_ai.tool.type", AttrValue::Static("function"));
        if !seen.call_id.is_empty() {
            // The id is the provider's text, so it passes the redaction like a reason does.
            let clean = match self.model_sink.as_ref() {
                Some((_, entry, _)) => {
                    kora_models::Redactor::for_entry(entry).cleaned(&seen.call_id)
                }
                None => kora_models::Redactor::default().cleaned(&seen.call_id),
            };
            if let Some(t) = self.tracing.as_mut() {
                t.sink.attr_str(id, "gen_ai.tool.call.id", &clean);
            }
        }
        Some(id)
    }

    /// Closes a tool call's span with what happened; `raised` when the tool's code raised.
    pub(crate) fn close_tool_span(&mut self, span: Option<SpanId>, seen: &ToolObs, raised: bool) {
        let (Some(t), Some(id)) = (self.tracing.as_mut(), span) else {
            return;
        };
        if let Some(at) = t.open.iter().rposition(|&o| o == id) {
            t.open.truncate(at);
        }
        let outcome = if raised { "raised" } else { seen.outcome };
        t.sink
            .attr(id, "kora.tool.outcome", AttrValue::Static(outcome));
        if seen.rewritten_args {
            t.sink
                .attr(id, "kora.tool.args_rewritten", AttrValue::Bool(true));
        }
        if seen.replaced_result {
            t.sink
                .attr(id, "kora.tool.result_replaced", AttrValue::Bool(true));
        }
        let status = match outcome {
            "ran" | "skipped" => SpanStatus::Ok,
            _ => {
                t.sink.attr(id, "error.type", AttrValue::Static(outcome));
                SpanStatus::Error
            }
        };
        t.sink.close(id, SystemTime::now(), status, None);
    }
}

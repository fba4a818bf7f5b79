//! The spans of a tool loop's tool calls: one `execute_tool {name}` child of the model call's span
//! per call, saying what really ran (skipped by a handler, rewritten, replaced, refused).
//!
//! Only declared tool names and fixed words reach a span: the model's arguments and the
//! tool's result are program data and may be classified.

use crate::model_span::ModelObs;
use crate::trace::{AttrValue, SpanId, SpanKind, SpanStatus, Tracer};

pub(crate) fn report(sink: &mut dyn Tracer, parent: SpanId, obs: &ModelObs) {
    if obs.dropped_exchanges > 0 {
        sink.attr(
            parent,
            "kora.context.dropped_exchanges",
            AttrValue::Int(i64::try_from(obs.dropped_exchanges).unwrap_or(i64::MAX)),
        );
    }
    for t in &obs.tools {
        let name = t.name.as_deref().unwrap_or("unknown");
        let id = sink.open(
            SpanKind::ToolCall,
            &format!("execute_tool {name}"),
            Some(parent),
            t.start,
        );
        sink.attr(
            id,
            "gen_ai.operation.name",
            AttrValue::Static("execute_tool"),
        );
        sink.attr(id, "gen_ai.tool.name", AttrValue::Str(name.to_string()));
        sink.attr(id, "kora.tool.outcome", AttrValue::Static(t.outcome));
        if t.rewritten_args {
            sink.attr(id, "kora.tool.args_rewritten", AttrValue::Bool(true));
        }
        if t.replaced_result {
            sink.attr(id, "kora.tool.result_replaced", AttrValue::Bool(true));
        }
        let status = match t.outcome {
            "ran" | "skipped" => SpanStatus::Ok,
            _ => {
                sink.attr(id, "error.type", AttrValue::Static(t.outcome));
                SpanStatus::Error
            }
        };
        sink.close(id, t.end, status, None);
    }
}

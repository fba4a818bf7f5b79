//! Recorded spans as OTLP JSON: an `ExportTraceServiceRequest` built from opentelemetry-proto's
//! own types and serialised with their serde support (hex ids, string nanoseconds, camelCase).
//!
//! Using the official types both ways means a file this writes is one the
//! OpenTelemetry tooling reads, and `kora trace` reads it back through the
//! same decoder a collector would use.

use std::time::{SystemTime, UNIX_EPOCH};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value, AnyValue, ArrayValue, InstrumentationScope, KeyValue,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{
    span, status, ResourceSpans, ScopeSpans, Span, Status,
};

use kora_runtime::observe::trace::{AttrValue, SpanId, SpanKind, SpanStatus};

use crate::recorder::{Recording, RunIds, SpanData, Streamed};

/// A span's fixed parts: ids, name, kind. Times, attributes and status are filled in later.
pub(crate) fn span_shell(
    ids: &RunIds,
    id: SpanId,
    parent: Option<SpanId>,
    kind: SpanKind,
    name: &str,
) -> Span {
    Span {
        trace_id: ids.trace_id.to_vec(),
        span_id: ids.span_id_bytes(id).to_vec(),
        parent_span_id: parent
            .map(|p| ids.span_id_bytes(p).to_vec())
            .unwrap_or_default(),
        name: name.to_string(),
        kind: match kind {
            SpanKind::ModelCall | SpanKind::Attempt => span::SpanKind::Client,
            _ => span::SpanKind::Internal,
        } as i32,
        ..Span::default()
    }
}

/// A span's status in OTLP's shape.
pub(crate) fn status(status: SpanStatus, message: Option<&str>) -> Status {
    Status {
        message: message.unwrap_or_default().to_string(),
        code: match status {
            SpanStatus::Unset => status::StatusCode::Unset,
            SpanStatus::Ok => status::StatusCode::Ok,
            SpanStatus::Error => status::StatusCode::Error,
        } as i32,
    }
}

/// One span in OTLP's shape; `end` stands in for a span that never closed.
pub fn to_span(ids: &RunIds, s: &SpanData, end: SystemTime) -> Span {
    Span {
        start_time_unix_nano: nanos(s.start),
        end_time_unix_nano: nanos(s.end.unwrap_or(end)),
        attributes: s.attrs.iter().map(|(k, v)| kv(k, v)).collect(),
        status: Some(status(s.status, s.message.as_deref())),
        ..span_shell(ids, s.id, s.parent, s.kind, &s.name)
    }
}

/// The export request for one run. `program` names what ran (a file, or `kora test`).
pub fn to_request(rec: &Recording, program: &str) -> ExportTraceServiceRequest {
    let end_of_run = rec
        .spans
        .iter()
        .filter_map(|s| s.end)
        .max()
        .unwrap_or_else(SystemTime::now);
    let spans = rec
        .spans
        .iter()
        .map(|s| to_span(&rec.ids, s, end_of_run))
        .collect();
    envelope(&rec.ids, program, spans)
}

/// The request carrying `spans` of one run: its resource and scope around them.
pub(crate) fn envelope(ids: &RunIds, program: &str, spans: Vec<Span>) -> ExportTraceServiceRequest {
    let resource = Resource {
        attributes: vec![
            kv("service.name", &AttrValue::Static("kora")),
            kv("kora.program", &AttrValue::Str(program.to_string())),
            kv("kora.run_id", &AttrValue::Str(ids.run_id.clone())),
        ],
        ..Resource::default()
    };
    ExportTraceServiceRequest {
        resource_spans: vec![ResourceSpans {
            resource: Some(resource),
            scope_spans: vec![ScopeSpans {
                scope: Some(InstrumentationScope {
                    name: "kora".into(),
                    version: env!("CARGO_PKG_VERSION").into(),
                    ..InstrumentationScope::default()
                }),
                spans,
                ..ScopeSpans::default()
            }],
            ..ResourceSpans::default()
        }],
    }
}

/// The envelope's JSON before and after the `spans` array's items.
pub fn envelope_parts(ids: &RunIds, program: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let empty = to_json(&envelope(ids, program, Vec::new()));
    // The envelope's only `spans` array is the last thing named so: resource attributes come first.
    let at = empty.rfind("\"spans\":[]")? + "\"spans\":[".len();
    let (before, after) = empty.as_bytes().split_at(at);
    Some((before.to_vec(), after.to_vec()))
}

/// Writes the recording as OTLP JSON: the streamed span items spliced into the envelope,
/// or everything serialised now when nothing was streamed into memory.
pub fn write_recording(
    rec: &Recording,
    program: &str,
    out: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let items = match &rec.streamed {
        Some(Streamed::Memory(items)) => items,
        _ => return out.write_all(to_json(&to_request(rec, program)).as_bytes()),
    };
    match envelope_parts(&rec.ids, program) {
        Some((before, after)) => {
            out.write_all(&before)?;
            out.write_all(items)?;
            out.write_all(&after)
        }
        None => out.write_all(to_json(&to_request(rec, program)).as_bytes()),
    }
}

/// The recording as OTLP JSON text.
pub fn recording_json(rec: &Recording, program: &str) -> String {
    let mut buf = Vec::new();
    let _ = write_recording(rec, program, &mut buf);
    String::from_utf8(buf).unwrap_or_default()
}

/// The request as OTLP JSON text.
pub fn to_json(req: &ExportTraceServiceRequest) -> String {
    serde_json::to_string(req).unwrap_or_else(|_| "{}".into())
}

/// Reads OTLP JSON back into the official request type.
pub fn from_json(text: &str) -> Result<ExportTraceServiceRequest, String> {
    serde_json::from_str(text).map_err(|e| format!("not an OTLP JSON trace: {e}"))
}

pub(crate) fn kv(key: &str, v: &AttrValue) -> KeyValue {
    let value = match v {
        AttrValue::Str(s) => any_value::Value::StringValue(s.clone()),
        AttrValue::Static(s) => any_value::Value::StringValue((*s).to_string()),
        AttrValue::Int(n) => any_value::Value::IntValue(*n),
        AttrValue::Float(f) => any_value::Value::DoubleValue(*f),
        AttrValue::Bool(b) => any_value::Value::BoolValue(*b),
        AttrValue::StrList(l) => any_value::Value::ArrayValue(ArrayValue {
            values: l
                .iter()
                .map(|s| AnyValue {
                    value: Some(any_value::Value::StringValue(s.clone())),
                })
                .collect(),
        }),
    };
    KeyValue {
        key: key.to_string(),
        value: Some(AnyValue { value: Some(value) }),
        ..KeyValue::default()
    }
}

/// Nanoseconds since the Unix epoch, as OTLP carries times (0 before it, saturating after).
pub(crate) fn nanos(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kora_runtime::observe::trace::Tracer;
    use std::time::Duration;

    #[test]
    fn round_trips_through_the_official_types() {
        let mut rec = crate::Recorder::streaming();
        let t0 = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let run = rec.open(SpanKind::Run, "run main.ko", None, t0);
        let call = rec.open(SpanKind::ModelCall, "chat m", Some(run), t0);
        rec.attr(call, "gen_ai.usage.input_tokens", AttrValue::Int(12));
        rec.close(call, t0 + Duration::from_millis(5), SpanStatus::Ok, None);
        rec.close(run, t0 + Duration::from_millis(9), SpanStatus::Ok, None);
        let rec = rec.finish(t0);
        let text = recording_json(&rec, "main.ko");
        let whole = to_json(&to_request(&rec, "main.ko"));
        assert_eq!(
            from_json(&text),
            from_json(&whole),
            "streamed and whole agree"
        );
        // OTLP JSON: hex ids, nanoseconds as strings, integer enums.
        assert!(
            text.contains("\"startTimeUnixNano\":\"1700000000000000000\""),
            "{text}"
        );
        assert!(text.contains("\"intValue\":\"12\""), "{text}");
        assert!(text.contains("\"kind\":3"), "{text}");
        let back = from_json(&text).expect("decodes");
        let spans = &back.resource_spans[0].scope_spans[0].spans;
        assert_eq!(spans.len(), 2);
        // Streamed spans arrive as they close: the call before the run.
        assert_eq!(spans[0].parent_span_id, spans[1].span_id);
        assert_eq!(spans[0].trace_id.len(), 16);
        assert_eq!(spans[0].span_id.len(), 8);
    }
}

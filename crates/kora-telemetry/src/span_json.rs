//! One recorded span written straight to OTLP JSON bytes, for the trace a run streams.
//!
//! Going through opentelemetry-proto's `Span` and serde costs several microseconds a span
//! (every id, key and value is copied into owned vectors and strings first, and ids are
//! hex-encoded through intermediate strings); a run of microsecond mocked calls pays that
//! many times over. This writer produces the same span directly from `SpanData`, leaving out
//! the fields that hold their defaults (no trace state, flags, events or links, no parent for
//! a root, an empty status message), as proto3's JSON mapping allows: a quarter fewer bytes
//! for the file to take. The official types stay the judge: the tests decode its output with
//! them and compare it with `otlp::to_span`, field by field.

use std::time::SystemTime;

use kora_runtime::trace::{AttrValue, SpanKind, SpanStatus};

use crate::otlp::nanos;
use crate::recorder::{RunIds, SpanData};

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends one span, as an item of OTLP JSON's `spans` array, to `out`.
pub fn write_span(out: &mut Vec<u8>, ids: &RunIds, s: &SpanData, end: SystemTime) {
    out.extend_from_slice(b"{\"traceId\":\"");
    hex(out, &ids.trace_id);
    out.extend_from_slice(b"\",\"spanId\":\"");
    hex(out, &ids.span_id_bytes(s.id));
    if let Some(p) = s.parent {
        out.extend_from_slice(b"\",\"parentSpanId\":\"");
        hex(out, &ids.span_id_bytes(p));
    }
    out.extend_from_slice(b"\",\"name\":");
    string(out, &s.name);
    out.extend_from_slice(b",\"kind\":");
    // OTLP's SpanKind: 1 internal, 3 client.
    out.push(match s.kind {
        SpanKind::ModelCall | SpanKind::Attempt => b'3',
        _ => b'1',
    });
    out.extend_from_slice(b",\"startTimeUnixNano\":\"");
    uint(out, nanos(s.start));
    out.extend_from_slice(b"\",\"endTimeUnixNano\":\"");
    uint(out, nanos(s.end.unwrap_or(end)));
    out.extend_from_slice(b"\",\"attributes\":[");
    for (i, (k, v)) in s.attrs.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"key\":");
        string(out, k);
        out.extend_from_slice(b",\"value\":{");
        value(out, v);
        out.extend_from_slice(b"}}");
    }
    out.extend_from_slice(b"],\"status\":{");
    if let Some(m) = s.message.as_deref().filter(|m| !m.is_empty()) {
        out.extend_from_slice(b"\"message\":");
        string(out, m);
        out.push(b',');
    }
    out.extend_from_slice(b"\"code\":");
    out.push(match s.status {
        SpanStatus::Unset => b'0',
        SpanStatus::Ok => b'1',
        SpanStatus::Error => b'2',
    });
    out.extend_from_slice(b"}}");
}

fn value(out: &mut Vec<u8>, v: &AttrValue) {
    match v {
        AttrValue::Str(s) => {
            out.extend_from_slice(b"\"stringValue\":");
            string(out, s);
        }
        AttrValue::Static(s) => {
            out.extend_from_slice(b"\"stringValue\":");
            string(out, s);
        }
        // OTLP JSON writes 64-bit integers as strings.
        AttrValue::Int(n) => {
            out.extend_from_slice(b"\"intValue\":\"");
            if *n < 0 {
                out.push(b'-');
            }
            uint(out, n.unsigned_abs());
            out.push(b'"');
        }
        AttrValue::Float(f) => {
            out.extend_from_slice(b"\"doubleValue\":");
            if serde_json::to_writer(&mut *out, f).is_err() {
                out.extend_from_slice(b"null");
            }
        }
        AttrValue::Bool(b) => {
            out.extend_from_slice(if *b {
                b"\"boolValue\":true"
            } else {
                b"\"boolValue\":false"
            });
        }
    }
}

fn hex(out: &mut Vec<u8>, bytes: &[u8]) {
    for b in bytes {
        out.push(HEX[usize::from(b >> 4)]);
        out.push(HEX[usize::from(b & 15)]);
    }
}

fn uint(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

/// A JSON string literal: quotes, backslashes and control characters escaped.
fn string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    // Names, keys and values are almost always plain: one scan, one copy.
    if !bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\') {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut from = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let esc: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0..=0x1f => b"",
            _ => continue,
        };
        out.extend_from_slice(&bytes[from..i]);
        if esc.is_empty() {
            out.extend_from_slice(b"\\u00");
            hex(out, &[b]);
        } else {
            out.extend_from_slice(esc);
        }
        from = i + 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::otlp::to_span;
    use kora_runtime::trace::Tracer;
    use opentelemetry_proto::tonic::trace::v1::Span;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn matches_the_official_types_span_for_span() {
        let mut rec = crate::Recorder::new();
        let t0 = UNIX_EPOCH + Duration::from_nanos(1_700_000_000_123_456_789);
        let run = rec.open(SpanKind::Run, "run \"odd\"\\name\n\u{1}é.ko", None, t0);
        let call = rec.open(SpanKind::ModelCall, "chat m", Some(run), t0);
        rec.attr(call, "gen_ai.usage.input_tokens", AttrValue::Int(12));
        rec.attr(call, "kora.neg", AttrValue::Int(i64::MIN));
        rec.attr(call, "kora.zero", AttrValue::Int(0));
        rec.attr(call, "kora.f", AttrValue::Float(0.25));
        rec.attr(call, "kora.t", AttrValue::Bool(true));
        rec.attr(call, "kora.n", AttrValue::Bool(false));
        rec.attr(call, "kora.s", AttrValue::Str("tab\there \"q\"".into()));
        rec.attr(call, "kora.st", AttrValue::Static("chat"));
        rec.close(
            call,
            t0 + Duration::from_millis(5),
            SpanStatus::Error,
            Some("why \"x\""),
        );
        let open = rec.open(SpanKind::Agent, "invoke_agent a", Some(run), t0);
        rec.close(run, t0 + Duration::from_millis(9), SpanStatus::Ok, None);
        let end = t0 + Duration::from_secs(1);
        let recording = rec.finish(end);
        assert_eq!(recording.spans.len(), 3);
        assert!(recording.spans.iter().any(|s| s.id == open));
        for s in &recording.spans {
            let mut out = Vec::new();
            write_span(&mut out, &recording.ids, s, end);
            let text = String::from_utf8(out).expect("utf-8");
            let ours: Span = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            assert_eq!(ours, to_span(&recording.ids, s, end), "{text}");
            // What is left out is only what holds its default.
            let theirs = serde_json::to_string(&to_span(&recording.ids, s, end)).expect("serde");
            assert!(text.len() < theirs.len(), "{text}");
        }
    }
}

//! `kora trace`: a recorded run as a tree of spans, with durations, tokens and outcomes.
//!
//! It reads the OTLP JSON file back through opentelemetry-proto's types, so
//! what it prints is what any OpenTelemetry backend would receive.

use std::collections::HashMap;
use std::fmt::Write;

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{any_value, KeyValue};
use opentelemetry_proto::tonic::trace::v1::{status, Span};

/// The printed tree of every span in the request.
pub fn render(req: &ExportTraceServiceRequest) -> String {
    let mut out = String::new();
    let mut spans: Vec<&Span> = Vec::new();
    for rs in &req.resource_spans {
        if let Some(res) = &rs.resource {
            let program = attr_str(&res.attributes, "kora.program");
            let run = attr_str(&res.attributes, "kora.run_id");
            if let (Some(p), Some(r)) = (program, run) {
                let _ = writeln!(out, "run {r} ({p})");
            }
        }
        for ss in &rs.scope_spans {
            spans.extend(ss.spans.iter());
        }
    }
    let ids: std::collections::HashSet<&[u8]> =
        spans.iter().map(|s| s.span_id.as_slice()).collect();
    let mut children: HashMap<&[u8], Vec<&Span>> = HashMap::new();
    let mut roots = Vec::new();
    for s in &spans {
        if s.parent_span_id.is_empty() || !ids.contains(s.parent_span_id.as_slice()) {
            roots.push(*s);
        } else {
            children
                .entry(s.parent_span_id.as_slice())
                .or_default()
                .push(*s);
        }
    }
    let order = |v: &mut Vec<&Span>| v.sort_by_key(|s| s.start_time_unix_nano);
    order(&mut roots);
    for v in children.values_mut() {
        order(v);
    }
    for r in &roots {
        line(&mut out, r, "", "");
        walk(&mut out, r, &children, "");
    }
    let calls: Vec<&&Span> = spans
        .iter()
        .filter(|s| {
            attr_str(&s.attributes, "gen_ai.operation.name") == Some("chat") && !is_attempt(s)
        })
        .collect();
    let (i, o) = calls.iter().fold((0, 0), |(i, o), s| {
        (
            i + attr_int(&s.attributes, "gen_ai.usage.input_tokens").unwrap_or(0),
            o + attr_int(&s.attributes, "gen_ai.usage.output_tokens").unwrap_or(0),
        )
    });
    let _ = writeln!(
        out,
        "{} model call{}, {i} input + {o} output tokens",
        calls.len(),
        if calls.len() == 1 { "" } else { "s" }
    );
    out
}

fn walk(out: &mut String, s: &Span, children: &HashMap<&[u8], Vec<&Span>>, indent: &str) {
    let Some(kids) = children.get(s.span_id.as_slice()) else {
        return;
    };
    for (n, k) in kids.iter().enumerate() {
        let last = n + 1 == kids.len();
        let (branch, more) = if last {
            ("└─ ", "   ")
        } else {
            ("├─ ", "│  ")
        };
        line(out, k, indent, branch);
        walk(out, k, children, &format!("{indent}{more}"));
    }
}

fn line(out: &mut String, s: &Span, indent: &str, branch: &str) {
    let mut text = format!("{indent}{branch}{}", s.name);
    let dur = s.end_time_unix_nano.saturating_sub(s.start_time_unix_nano);
    let _ = write!(text, "  {}", duration(dur));
    let a = &s.attributes;
    if let (Some(i), Some(o)) = (
        attr_int(a, "gen_ai.usage.input_tokens"),
        attr_int(a, "gen_ai.usage.output_tokens"),
    ) {
        let _ = write!(text, "  {i} in / {o} out tokens");
    }
    // An agent's spend, in the budget's own units.
    if let (Some(t), Some(c), Some(st)) = (
        attr_int(a, "kora.budget.tokens"),
        attr_int(a, "kora.budget.calls"),
        attr_int(a, "kora.budget.steps"),
    ) {
        let plural = |n: i64| if n == 1 { "" } else { "s" };
        let _ = write!(
            text,
            "  spent {t} token{}, {c} call{}, {st} step{}",
            plural(t),
            plural(c),
            plural(st)
        );
    }
    if let Some(n) = attr_int(a, "kora.parallel.branches") {
        let done = attr_int(a, "kora.parallel.finished").unwrap_or(0);
        let _ = write!(text, "  {done} of {n} branches finished");
    }
    if let Some(i) = attr_int(a, "kora.parallel.branch") {
        let _ = write!(text, "  (branch {})", i + 1);
    }
    if let Some(by) = attr_str(a, "kora.answered_by") {
        let _ = write!(text, "  [{by}]");
    }
    if let Some(outcome) = attr_str(a, "kora.outcome") {
        let _ = write!(text, "  -> {outcome}");
    }
    if let Some(code) = attr_int(a, "http.response.status_code") {
        let _ = write!(text, "  HTTP {code}");
    }
    if let Some(st) = &s.status {
        if st.code == status::StatusCode::Error as i32 {
            text.push_str("  ERROR");
            if !st.message.is_empty() {
                let _ = write!(text, ": {}", st.message);
            }
        }
    }
    out.push_str(&text);
    out.push('\n');
}

fn is_attempt(s: &Span) -> bool {
    attr_int(&s.attributes, "kora.attempt").is_some()
}

/// Nanoseconds as a short human duration.
pub fn duration(ns: u64) -> String {
    let ms = ns as f64 / 1e6;
    if ms < 1.0 {
        format!("{ms:.3} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}

pub fn attr_str<'a>(attrs: &'a [KeyValue], key: &str) -> Option<&'a str> {
    attrs.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            any_value::Value::StringValue(s) => Some(s.as_str()),
            _ => None,
        }
    })
}

pub fn attr_int(attrs: &[KeyValue], key: &str) -> Option<i64> {
    attrs.iter().find(|kv| kv.key == key).and_then(|kv| {
        match kv.value.as_ref()?.value.as_ref()? {
            any_value::Value::IntValue(n) => Some(*n),
            _ => None,
        }
    })
}

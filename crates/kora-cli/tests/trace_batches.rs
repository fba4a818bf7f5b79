//! End to end: spans cross to the trace's encoder thread in batches, and a run that stops
//! on an error still writes every one of them, each mocked call with its own span.

mod support;

use std::path::Path;

use kora_telemetry::tree::attr_str;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::{status::StatusCode, Span};

/// More calls than a few batches hold, so several cross before the error.
const CALLS: usize = 1500;

fn trace(d: &Path) -> ExportTraceServiceRequest {
    let dir = d.join(".kora/traces");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    assert_eq!(
        files.len(),
        1,
        "one trace file, no leftover part: {files:?}"
    );
    let text = std::fs::read_to_string(&files[0]).expect("trace");
    kora_telemetry::otlp::from_json(&text).expect("official OTLP JSON")
}

fn spans(req: &ExportTraceServiceRequest) -> Vec<&Span> {
    req.resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .collect()
}

#[test]
fn a_test_that_raises_after_many_mocked_calls_keeps_every_span() {
    let d = support::temp_dir("kora-trace-batches", "raises");
    std::fs::write(
        d.join("kora.toml"),
        "[models]\ndefault = \"openai:bench-model\"\n",
    )
    .expect("config");
    std::fs::write(
        d.join("calls.ko"),
        format!(
            "type Label:\n    name: str\n    score: int\n\n\
             agent label(i: int) -> int:\n    l: Label = analyze(str(i), \"Label this.\") else:\n        return -1\n    return l.score\n\n\
             test \"mocked calls, then a crash\":\n    total = 0\n    with mock analyze -> Ok(Label(\"x\", 2)):\n        for i in range({CALLS}):\n            total += label(i)\n    print(total // (total - total))\n"
        ),
    )
    .expect("program");
    let r = support::run_in(&d, &["test", "calls.ko"]);
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(r.stdout.contains("1 failed"), "{}", r.stdout);

    let req = trace(&d);
    let all = spans(&req);
    let calls: Vec<&&Span> = all
        .iter()
        .filter(|s| s.name == "chat bench-model")
        .collect();
    let agents: Vec<&&Span> = all
        .iter()
        .filter(|s| s.name == "invoke_agent label")
        .collect();
    assert_eq!(calls.len(), CALLS);
    assert_eq!(agents.len(), CALLS);
    // Each call nests under its own agent invocation, with the mock named as what answered.
    for (c, a) in calls.iter().zip(&agents) {
        assert_eq!(c.parent_span_id, a.span_id);
        assert_eq!(attr_str(&c.attributes, "kora.answered_by"), Some("mock"));
        assert_eq!(attr_str(&c.attributes, "gen_ai.agent.name"), Some("label"));
        assert_eq!(
            attr_str(&c.attributes, "kora.site"),
            Some("calls.ko:label#0")
        );
    }
    let test = all
        .iter()
        .find(|s| s.name.starts_with("test "))
        .expect("the test's span");
    assert_eq!(
        test.status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );
    let mut ids: Vec<&[u8]> = all.iter().map(|s| &s.span_id[..]).collect();
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), all.len(), "span ids are distinct");

    let tree = support::run_in(&d, &["trace"]);
    assert_eq!(tree.code, 0, "{}", tree.stderr);
    assert!(tree.stdout.contains("chat bench-model"), "{}", tree.stdout);
    let _ = std::fs::remove_dir_all(&d);
}

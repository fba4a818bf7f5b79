//! End to end: a run writes OTLP JSON that decodes into opentelemetry-proto's
//! `ExportTraceServiceRequest` with GenAI attributes and one span per attempt, and
//! `kora trace` prints it as a tree; `--report cost` sums the same spans.

mod support;

use std::path::{Path, PathBuf};

use support::Run;

use kora_telemetry::tree::{attr_int, attr_str};
use kora_testkit::{Behaviour, FakeProvider};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::{status::StatusCode, Span};

fn kora(d: &Path, args: &[&str]) -> Run {
    support::run_in(d, args)
}

fn setup(name: &str, fake: &FakeProvider, extra: &str) -> PathBuf {
    let d = support::temp_dir("kora-trace", name);
    support::write_config(
        &d,
        &fake.openai_endpoint(),
        None,
        &format!("timeout_secs = 2\n{extra}"),
    );
    std::fs::write(
        d.join("main.ko"),
        "agent summarize(text: str) -> str:\n    s: str = analyze(text, \"Summarize.\") else:\n        return \"none\"\n    return s\n\nprint(summarize(\"a long text\"))\n",
    )
    .expect("program");
    d
}

fn traces(d: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(d.join(".kora/traces"))
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn spans(req: &ExportTraceServiceRequest) -> Vec<&Span> {
    req.resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .collect()
}

#[test]
fn otlp_file_decodes_with_genai_attributes_and_one_span_per_attempt() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Status(429, Some("0".into())));
    fake.push(Behaviour::AnswerWithUsage("A summary.".into(), 100, 20));
    let d = setup("otlp", &fake, "");
    let r = kora(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "A summary.\n");
    let files = traces(&d);
    assert_eq!(files.len(), 1, "one trace per run, with no setup");
    let text = std::fs::read_to_string(&files[0]).expect("trace");
    let req: ExportTraceServiceRequest = serde_json::from_str(&text).expect("official OTLP JSON");
    let all = spans(&req);
    let run = all
        .iter()
        .find(|s| s.name == "run main.ko")
        .expect("run span");
    assert!(run.parent_span_id.is_empty());
    let call = all
        .iter()
        .find(|s| s.name == "chat fake-model")
        .expect("model call span");
    let agent = all
        .iter()
        .find(|s| s.name == "invoke_agent summarize")
        .expect("agent span");
    assert_eq!(agent.parent_span_id, run.span_id);
    assert_eq!(
        call.parent_span_id, agent.span_id,
        "the call nests under its agent"
    );
    assert_eq!(call.trace_id, run.trace_id);
    let a = &call.attributes;
    assert_eq!(attr_str(a, "gen_ai.operation.name"), Some("chat"));
    assert_eq!(attr_str(a, "gen_ai.request.model"), Some("fake-model"));
    assert_eq!(attr_str(a, "gen_ai.provider.name"), Some("openai"));
    assert_eq!(attr_str(a, "gen_ai.agent.name"), Some("summarize"));
    assert_eq!(attr_int(a, "gen_ai.usage.input_tokens"), Some(100));
    assert_eq!(attr_int(a, "gen_ai.usage.output_tokens"), Some(20));
    assert_eq!(attr_str(a, "kora.answered_by"), Some("model"));
    assert_eq!(attr_int(a, "kora.attempts"), Some(2));
    let mut attempts: Vec<&&Span> = all
        .iter()
        .filter(|s| s.parent_span_id == call.span_id)
        .collect();
    attempts.sort_by_key(|s| attr_int(&s.attributes, "kora.attempt"));
    assert_eq!(attempts.len(), 2, "each retry is its own span");
    assert_eq!(
        attr_int(&attempts[0].attributes, "http.response.status_code"),
        Some(429)
    );
    assert_eq!(attr_str(&attempts[0].attributes, "error.type"), Some("429"));
    assert_eq!(
        attempts[0].status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );
    assert_eq!(
        attr_int(&attempts[1].attributes, "gen_ai.usage.input_tokens"),
        Some(100)
    );
    assert_eq!(
        attempts[1].status.as_ref().map(|s| s.code),
        Some(StatusCode::Ok as i32)
    );
    // No program value reaches a span: the data and prompt appear nowhere in the file.
    assert!(
        !text.contains("a long text") && !text.contains("Summarize."),
        "{text}"
    );

    let r = kora(&d, &["trace"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tree = &r.stdout;
    assert!(tree.contains("run main.ko"), "{tree}");
    assert!(tree.contains("└─ invoke_agent summarize"), "{tree}");
    assert!(tree.contains("   └─ chat fake-model"), "{tree}");
    assert!(
        tree.contains("100 in / 20 out tokens  [model]  -> ok"),
        "{tree}"
    );
    assert!(
        tree.contains("├─ attempt 1") && tree.contains("HTTP 429  ERROR"),
        "{tree}"
    );
    assert!(tree.contains("└─ attempt 2"), "{tree}");
    assert!(
        tree.contains("1 model call, 100 input + 20 output tokens"),
        "{tree}"
    );
    let id = files[0]
        .file_stem()
        .and_then(|s| s.to_str())
        .expect("run id");
    let by_id = kora(&d, &["trace", id]);
    assert_eq!(by_id.stdout, r.stdout);
    let missing = kora(&d, &["trace", "19990101"]);
    assert_eq!(missing.code, 2);
    assert!(
        missing.stderr.contains("no run `19990101`"),
        "{}",
        missing.stderr
    );

    let r = kora(&d, &["run", "--no-trace", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(traces(&d).len(), 1, "--no-trace writes nothing");
}

#[test]
fn cost_report_prices_tokens_per_model_and_agent() {
    let fake = FakeProvider::start();
    fake.push(Behaviour::Status(503, None));
    fake.push(Behaviour::AnswerWithUsage("A summary.".into(), 1000, 500));
    let d = setup(
        "cost",
        &fake,
        "max_retries = 1\n\n[budget.pricing]\n\"fake-model\" = { input = 2.0, output = 8.0 }\n",
    );
    let r = kora(&d, &["run", "--report", "cost", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "A summary.\n", "the report stays off stdout");
    let row = |first: &str| -> Vec<String> {
        r.stderr
            .lines()
            .find(|l| l.split_whitespace().next() == Some(first))
            .unwrap_or_else(|| panic!("no row {first}:\n{}", r.stderr))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    // 1000 * 2.0 / 1e6 + 500 * 8.0 / 1e6 = 0.006
    assert_eq!(
        row("fake-model"),
        ["fake-model", "1", "1000", "500", "0.006000"]
    );
    assert_eq!(
        row("summarize"),
        ["summarize", "1", "1000", "500", "0.006000"]
    );
    assert!(r.stderr.contains("cost (USD)"), "{}", r.stderr);

    std::fs::write(
        d.join("kora.toml"),
        "[models]\ndefault = \"openai:fake-model\"\n\n[budget.pricing]\n\"fake-model\" = { input = 2.0, outptu = 8.0 }\n",
    )
    .expect("config");
    let r = kora(&d, &["run", "--report", "cost", "main.ko"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("kora.toml:5:") && r.stderr.contains("outptu"),
        "{}",
        r.stderr
    );
}

//! End to end: a run's spans exported over OTLP/HTTP to a loopback collector, decoded with
//! opentelemetry-proto's own `ExportTraceServiceRequest` (protobuf through prost, or OTLP JSON).
//!
//! The collector is `kora-testkit`'s loopback server, which records every request whole. What
//! it received is compared with the run's local trace file, which stays the complete record.

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use kora_telemetry::tree::{attr_int, attr_str};
use kora_testkit::{Behaviour, FakeProvider, Recorded};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message;
use serde_json::json;
use support::Run;

const AGENTS: &str = r#"agent lookup(city: str) -> int:
    "A number for a city."
    n: str = analyze(city, "Say a number.") else:
        return 0
    return 21

type Plan:
    text: str

agent planner(q: str) -> str:
    p: Plan = analyze(q, "Plan with tools.", tools=[lookup]) else:
        return "none"
    return p.text

print(planner("Paris?"))
"#;

/// A model fake scripted for `AGENTS`, and a folder whose `kora.toml` points at it.
fn agents(name: &str, telemetry: &str) -> (FakeProvider, PathBuf) {
    let fake = FakeProvider::start();
    fake.push(Behaviour::ToolCalls(vec![(
        "lookup".into(),
        json!({"city": "Paris"}),
    )]));
    fake.push(Behaviour::AnswerWithUsage("7".into(), 11, 3));
    fake.push(Behaviour::AnswerWithUsage(
        r#"{"ok": {"text": "a plan"}, "uncertain": null}"#.into(),
        40,
        5,
    ));
    let d = support::temp_dir("kora-otlp", name);
    support::write_config(
        &d,
        &fake.openai_endpoint(),
        None,
        &format!("max_retries = 0\n{telemetry}"),
    );
    std::fs::write(d.join("main.ko"), AGENTS).expect("program");
    (fake, d)
}

fn kora(d: &Path, args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut c = support::kora_cmd();
    c.args(args).current_dir(d);
    // The test's own environment must not export anywhere else.
    for v in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_HEADERS",
        "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
        "OTEL_SDK_DISABLED",
        "OTEL_TRACES_EXPORTER",
    ] {
        c.env_remove(v);
    }
    c.envs(env.iter().copied());
    support::collect(&mut c, None)
}

fn decode(r: &Recorded) -> ExportTraceServiceRequest {
    match r.header("content-type") {
        Some("application/x-protobuf") => {
            ExportTraceServiceRequest::decode(r.raw_body.as_slice()).expect("protobuf")
        }
        Some("application/json") => serde_json::from_slice(&r.raw_body).expect("OTLP JSON"),
        other => panic!("unexpected content type {other:?}"),
    }
}

fn spans(req: &ExportTraceServiceRequest) -> Vec<Span> {
    req.resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| s.spans.clone())
        .collect()
}

/// Every span the collector received, across its requests.
fn received(collector: &FakeProvider) -> Vec<Span> {
    collector
        .requests()
        .iter()
        .flat_map(|r| spans(&decode(r)))
        .collect()
}

/// The spans of the run's local trace file.
fn local(d: &Path) -> Vec<Span> {
    let file = std::fs::read_dir(d.join(".kora/traces"))
        .expect("trace folder")
        .flatten()
        .find(|e| e.path().extension().is_some_and(|x| x == "json"))
        .expect("a trace file");
    let text = std::fs::read_to_string(file.path()).expect("trace");
    spans(&serde_json::from_str(&text).expect("OTLP JSON"))
}

fn ids(spans: &[Span]) -> BTreeSet<(Vec<u8>, String)> {
    spans
        .iter()
        .map(|s| (s.span_id.clone(), s.name.clone()))
        .collect()
}

fn one<'a>(all: &'a [Span], name: &str) -> &'a Span {
    let found: Vec<&Span> = all.iter().filter(|s| s.name == name).collect();
    assert_eq!(
        found.len(),
        1,
        "{name}: {:?}",
        all.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    found[0]
}

fn strings(s: &Span, key: &str) -> Vec<String> {
    let v = s
        .attributes
        .iter()
        .find(|kv| kv.key == key)
        .and_then(|kv| kv.value.as_ref()?.value.clone());
    match v {
        Some(any_value::Value::ArrayValue(a)) => a
            .values
            .iter()
            .filter_map(|v| match &v.value {
                Some(any_value::Value::StringValue(s)) => Some(s.clone()),
                _ => None,
            })
            .collect(),
        other => panic!("{} has {key} = {other:?}", s.name),
    }
}

#[test]
fn spans_reach_a_collector_as_protobuf_with_the_genai_attributes() {
    let collector = FakeProvider::start();
    let (fake, d) = agents("protobuf", "");
    let r = kora(
        &d,
        &["run", "--otlp", &collector.url(), "main.ko"],
        &[("OTEL_EXPORTER_OTLP_HEADERS", "x-team=team%20key,x-other=1")],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "a plan\n");
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let reqs = collector.requests();
    assert!(!reqs.is_empty());
    for q in &reqs {
        assert_eq!(q.path, "/v1/traces");
        assert_eq!(q.header("content-type"), Some("application/x-protobuf"));
        assert_eq!(q.header("x-team"), Some("team key"));
    }
    let got = received(&collector);
    let file = local(&d);
    assert_eq!(ids(&got), ids(&file), "the collector has what the file has");

    let port = fake
        .url()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse::<i64>().ok());
    let planner = one(&got, "invoke_agent planner");
    assert_eq!(
        attr_str(&planner.attributes, "gen_ai.provider.name"),
        Some("openai")
    );
    assert_eq!(
        attr_str(&planner.attributes, "gen_ai.request.model"),
        Some("fake-model")
    );
    let chats: Vec<&Span> = got
        .iter()
        .filter(|s| {
            s.name == "chat fake-model" && attr_int(&s.attributes, "kora.attempt").is_none()
        })
        .collect();
    assert_eq!(chats.len(), 2);
    for c in &chats {
        let a = &c.attributes;
        assert_eq!(attr_str(a, "gen_ai.provider.name"), Some("openai"));
        assert_eq!(attr_str(a, "gen_ai.response.id"), Some("chatcmpl-fake"));
        assert_eq!(attr_str(a, "gen_ai.response.model"), Some("fake"));
        assert_eq!(attr_str(a, "server.address"), Some("127.0.0.1"));
        assert_eq!(attr_int(a, "server.port"), port);
        assert_eq!(strings(c, "gen_ai.response.finish_reasons"), ["stop"]);
    }
    let tool = one(&got, "execute_tool lookup");
    assert_eq!(
        attr_str(&tool.attributes, "gen_ai.tool.call.id"),
        Some("call_0")
    );
    assert_eq!(
        attr_str(&tool.attributes, "gen_ai.tool.type"),
        Some("function")
    );
    let lookup = one(&got, "invoke_agent lookup");
    assert_eq!(
        attr_str(&lookup.attributes, "gen_ai.provider.name"),
        Some("openai")
    );
    // No program value reaches the collector either.
    for q in &reqs {
        let body = String::from_utf8_lossy(&q.raw_body);
        assert!(
            !body.contains("Paris") && !body.contains("a plan"),
            "{body}"
        );
    }
}

#[test]
fn the_standard_variables_choose_the_collector_and_json() {
    let collector = FakeProvider::start();
    let (_fake, d) = agents("json", "");
    let r = kora(
        &d,
        &["run", "main.ko"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.url()),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let reqs = collector.requests();
    assert!(!reqs.is_empty());
    assert!(reqs
        .iter()
        .all(|q| q.path == "/v1/traces" && q.header("content-type") == Some("application/json")));
    assert_eq!(ids(&received(&collector)), ids(&local(&d)));

    // The traces-only variable is used exactly as given, and wins over the general one.
    let exact = FakeProvider::start();
    let (_fake, d) = agents("traces-endpoint", "");
    let r = kora(
        &d,
        &["run", "main.ko"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                &format!("{}/custom/traces", exact.url()),
            ),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    assert!(exact.requests().iter().all(|q| q.path == "/custom/traces"));
    assert_eq!(ids(&received(&exact)), ids(&local(&d)));
}

#[test]
fn the_telemetry_table_exports_even_without_a_trace_file() {
    let collector = FakeProvider::start();
    let (_fake, d) = agents("table", "");
    std::fs::write(
        d.join("kora.toml"),
        format!(
            "{}\n[telemetry]\nendpoint = \"{}\"\n",
            std::fs::read_to_string(d.join("kora.toml")).expect("kora.toml"),
            collector.url()
        ),
    )
    .expect("kora.toml");
    let r = kora(&d, &["run", "--no-trace", "main.ko"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !d.join(".kora/traces").exists(),
        "no trace file with --no-trace"
    );
    let got = received(&collector);
    assert!(
        got.iter().any(|s| s.name == "run main.ko"),
        "{:?}",
        got.len()
    );
    assert!(got.iter().any(|s| s.name == "invoke_agent planner"));
}

#[test]
fn a_long_run_is_exported_in_batches_and_loses_nothing() {
    let collector = FakeProvider::start();
    let d = support::temp_dir("kora-otlp", "batches");
    std::fs::write(
        d.join("app.ko"),
        r#"type Label:
    name: str

def label(i: int) -> str:
    l: Label = analyze(str(i), "Label this.") else:
        return "none"
    return l.name

test "many mocked calls":
    with mock analyze -> Ok(Label("x")):
        for i in range(3000):
            assert label(i) == "x"
"#,
    )
    .expect("program");
    let r = kora(&d, &["test", "--otlp", &collector.url(), "app.ko"], &[]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    let reqs = collector.count();
    assert!(
        reqs >= 2,
        "exported as the run went, not in one request: {reqs}"
    );
    let got = received(&collector);
    let file = local(&d);
    assert!(file.len() > 3000);
    assert_eq!(ids(&got), ids(&file));
}

#[test]
fn a_down_collector_is_one_warning_and_exit_0() {
    // A port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let (_fake, d) = agents("down", "");
    let start = Instant::now();
    let r = kora(
        &d,
        &[
            "run",
            "--otlp",
            &format!("http://127.0.0.1:{port}"),
            "main.ko",
        ],
        &[],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "a plan\n");
    let warnings: Vec<&str> = r.stderr.lines().filter(|l| l.contains("warning")).collect();
    assert_eq!(warnings.len(), 1, "{}", r.stderr);
    assert!(
        warnings[0].contains("were not exported to http://127.0.0.1:")
            && warnings[0].contains("connection refused (is the collector running?), 3 tries")
            && warnings[0].contains(".kora/traces/")
            && warnings[0].ends_with("has all of them"),
        "{}",
        warnings[0]
    );
    assert!(!local(&d).is_empty(), "the trace file is still written");
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_failing_collector_is_retried_a_bounded_number_of_times() {
    let busy = FakeProvider::with_default(Behaviour::Status(503, Some("0".into())));
    let (_fake, d) = agents("busy", "");
    let r = kora(&d, &["run", "--otlp", &busy.url(), "main.ko"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        busy.count(),
        3,
        "three tries, then the collector is left alone"
    );
    assert_eq!(r.stderr.matches("warning").count(), 1, "{}", r.stderr);
    assert!(r.stderr.contains("HTTP 503"), "{}", r.stderr);

    // A request the collector refuses as wrong is not sent again.
    let wrong = FakeProvider::with_default(Behaviour::Status(400, None));
    let (_fake, d) = agents("wrong", "");
    let r = kora(&d, &["run", "--otlp", &wrong.url(), "main.ko"], &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(wrong.count(), 1);
    assert!(r.stderr.contains("HTTP 400"), "{}", r.stderr);
}

#[test]
fn unusable_export_settings_are_named() {
    let (_fake, d) = agents("settings", "");
    let r = kora(&d, &["run", "--otlp", "localhost:4318", "main.ko"], &[]);
    assert_eq!(r.code, 2, "a bad flag is a usage error: {}", r.stderr);
    assert!(r.stderr.contains("--otlp"), "{}", r.stderr);
    // A bad environment is one warning, and the run goes on with its local trace.
    let r = kora(
        &d,
        &["run", "main.ko"],
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stderr.matches("warning").count(), 1, "{}", r.stderr);
    assert!(
        r.stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL"),
        "{}",
        r.stderr
    );
    // A bad [telemetry] table stops the run before it starts, naming the line.
    std::fs::write(
        d.join("kora.toml"),
        "[telemetry]\nendpoint = \"localhost\"\n",
    )
    .expect("toml");
    let r = kora(&d, &["run", "main.ko"], &[]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("kora.toml:2:"), "{}", r.stderr);
}

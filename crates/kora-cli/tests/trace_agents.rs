//! End to end: agent spans (called directly, as a tool, `isolated`) with their budget spend,
//! and the spans of model calls made in `parallel for` branches, read back from the OTLP
//! JSON a run writes through opentelemetry-proto's `ExportTraceServiceRequest`.

mod support;

use std::path::{Path, PathBuf};

use kora_telemetry::tree::{attr_int, attr_str};
use kora_testkit::{Behaviour, FakeProvider};
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value;
use opentelemetry_proto::tonic::trace::v1::{status::StatusCode, Span};
use serde_json::json;

fn setup(name: &str, fake: &FakeProvider, program: &str) -> PathBuf {
    let d = support::temp_dir("kora-trace-agents", name);
    support::write_config(&d, &fake.openai_endpoint(), None, "max_retries = 0\n");
    std::fs::write(d.join("main.ko"), program).expect("program");
    d
}

/// The run's one trace file, decoded by the official types.
fn trace(d: &Path) -> (String, ExportTraceServiceRequest) {
    let dir = d.join(".kora/traces");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("trace folder")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(files.remove(0)).expect("trace");
    let req = serde_json::from_str(&text).expect("official OTLP JSON");
    (text, req)
}

fn spans(req: &ExportTraceServiceRequest) -> Vec<&Span> {
    req.resource_spans
        .iter()
        .flat_map(|r| &r.scope_spans)
        .flat_map(|s| &s.spans)
        .collect()
}

fn named<'a>(all: &[&'a Span], name: &str) -> Vec<&'a Span> {
    all.iter().copied().filter(|s| s.name == name).collect()
}

fn children<'a>(all: &[&'a Span], parent: &Span) -> Vec<&'a Span> {
    all.iter()
        .copied()
        .filter(|s| s.parent_span_id == parent.span_id)
        .collect()
}

fn int(s: &Span, key: &str) -> i64 {
    attr_int(&s.attributes, key).unwrap_or_else(|| panic!("{} has no {key}", s.name))
}

/// Tokens of the model calls under `s`, however deep (attempts not counted twice).
fn tokens_under(all: &[&Span], s: &Span) -> i64 {
    children(all, s)
        .iter()
        .map(|c| {
            // An attempt's usage is already in its call's.
            let call = attr_str(&c.attributes, "gen_ai.operation.name") == Some("chat")
                && attr_int(&c.attributes, "kora.attempt").is_none();
            let own = if call {
                int(c, "gen_ai.usage.input_tokens") + int(c, "gen_ai.usage.output_tokens")
            } else {
                0
            };
            own + tokens_under(all, c)
        })
        .sum()
}

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

agent specialist(x: str) -> str: isolated
    s: str = analyze(x, "Go deep.") else:
        return "none"
    return s

print(planner("Paris?"))
print(specialist("deep question"))
"#;

#[test]
fn agent_spans_nest_their_work_and_carry_what_it_spent() {
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
    fake.push(Behaviour::AnswerWithUsage("an answer".into(), 100, 20));
    let d = setup("agents", &fake, AGENTS);
    let r = support::run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "a plan\nan answer\n");
    let (text, req) = trace(&d);
    let all = spans(&req);
    let run = named(&all, "run main.ko")[0];

    // planner -> chat -> execute_tool lookup -> lookup -> chat
    let planner = named(&all, "invoke_agent planner");
    assert_eq!(planner.len(), 1);
    let planner = planner[0];
    assert_eq!(planner.parent_span_id, run.span_id);
    let a = &planner.attributes;
    assert_eq!(attr_str(a, "gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(attr_str(a, "gen_ai.agent.name"), Some("planner"));
    let chat = children(&all, planner);
    assert_eq!(chat.len(), 1, "one model call under the planner");
    assert_eq!(chat[0].name, "chat fake-model");
    let tool = children(&all, chat[0]);
    let tool: Vec<&&Span> = tool
        .iter()
        .filter(|s| s.name == "execute_tool lookup")
        .collect();
    assert_eq!(tool.len(), 1, "the tool call is a child of the model call");
    let lookup = children(&all, tool[0]);
    assert_eq!(lookup.len(), 1);
    assert_eq!(lookup[0].name, "invoke_agent lookup");
    let inner = children(&all, lookup[0]);
    assert_eq!(inner.len(), 1);
    assert_eq!(
        attr_str(&inner[0].attributes, "gen_ai.agent.name"),
        Some("lookup")
    );

    // Spend: the lookup's one call, and the planner's two turns plus what its tool spent.
    assert_eq!(int(lookup[0], "kora.budget.calls"), 1);
    assert_eq!(int(lookup[0], "kora.budget.steps"), 1);
    assert_eq!(int(lookup[0], "kora.budget.tokens"), 14);
    assert_eq!(
        int(lookup[0], "kora.budget.tokens"),
        tokens_under(&all, lookup[0])
    );
    assert_eq!(int(planner, "kora.budget.calls"), 2);
    assert_eq!(int(planner, "kora.budget.steps"), 3);
    assert_eq!(
        int(planner, "kora.budget.tokens"),
        tokens_under(&all, planner)
    );
    assert_eq!(
        int(planner, "kora.budget.tokens"),
        int(planner, "kora.budget.input_tokens") + int(planner, "kora.budget.output_tokens")
    );

    // The isolated agent runs in a fresh interpreter; its call still lands under its span.
    let spec = named(&all, "invoke_agent specialist");
    assert_eq!(spec.len(), 1, "one span, not one per interpreter");
    let spec = spec[0];
    assert_eq!(spec.parent_span_id, run.span_id);
    let isolated = spec
        .attributes
        .iter()
        .find(|kv| kv.key == "kora.agent.isolated")
        .and_then(|kv| kv.value.as_ref()?.value.clone());
    assert_eq!(isolated, Some(any_value::Value::BoolValue(true)));
    let calls = children(&all, spec);
    assert_eq!(calls.len(), 1);
    assert_eq!(int(calls[0], "gen_ai.usage.input_tokens"), 100);
    assert_eq!(int(spec, "kora.budget.tokens"), 120);
    assert_eq!(int(spec, "kora.budget.calls"), 1);
    assert!(spec.start_time_unix_nano <= calls[0].start_time_unix_nano);
    assert!(spec.end_time_unix_nano >= calls[0].end_time_unix_nano);
    for s in [planner, lookup[0], spec] {
        assert_eq!(
            s.status.as_ref().map(|st| st.code),
            Some(StatusCode::Ok as i32)
        );
    }
    // No program value reaches a span: arguments and answers appear nowhere.
    for v in ["Paris", "a plan", "deep question"] {
        assert!(!text.contains(v), "{v} leaked into the trace");
    }

    let r = support::run_in(&d, &["trace"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let tree = &r.stdout;
    assert!(
        tree.contains("├─ invoke_agent planner")
            && tree.contains("spent 59 tokens, 2 calls, 3 steps"),
        "{tree}"
    );
    assert!(tree.contains("invoke_agent lookup"), "{tree}");
    assert!(
        tree.contains("└─ invoke_agent specialist")
            && tree.contains("spent 120 tokens, 1 call, 1 step"),
        "{tree}"
    );
    assert!(
        tree.contains("3 model calls, 151 input + 28 output tokens"),
        "{tree}"
    );
}

const FAN_OUT: &str = r#"agent triage(tag: str) -> int:
    results = parallel for x in ["a", "b", "c"]:
        s: str = analyze(x, "Label it.") else:
            return "none"
        return s
    return len(results)

print(triage("go"))
"#;

#[test]
fn model_calls_in_parallel_branches_are_traced_under_the_fan_out() {
    let fake = FakeProvider::with_default(Behaviour::AnswerWithUsage("label".into(), 10, 2));
    let d = setup("fan-out", &fake, FAN_OUT);
    let r = support::run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout, "3\n");
    let (_, req) = trace(&d);
    let all = spans(&req);
    let triage = named(&all, "invoke_agent triage")[0];
    let fan = children(&all, triage);
    assert_eq!(fan.len(), 1);
    assert_eq!(fan[0].name, "parallel for");
    assert_eq!(int(fan[0], "kora.parallel.branches"), 3);
    assert_eq!(int(fan[0], "kora.parallel.finished"), 3);
    let calls = children(&all, fan[0]);
    assert_eq!(calls.len(), 3, "one span per branch's call");
    let mut branches: Vec<i64> = calls
        .iter()
        .map(|c| int(c, "kora.parallel.branch"))
        .collect();
    branches.sort_unstable();
    assert_eq!(branches, [0, 1, 2]);
    let ids: std::collections::HashSet<&[u8]> = all.iter().map(|s| s.span_id.as_slice()).collect();
    assert_eq!(
        ids.len(),
        all.len(),
        "span ids are distinct across branches"
    );
    for c in &calls {
        assert_eq!(c.name, "chat fake-model");
        assert_eq!(attr_str(&c.attributes, "gen_ai.agent.name"), Some("triage"));
        assert_eq!(int(c, "gen_ai.usage.input_tokens"), 10);
        assert!(c.start_time_unix_nano >= fan[0].start_time_unix_nano);
        assert!(c.end_time_unix_nano <= fan[0].end_time_unix_nano);
    }
    // The branches spent on the agent's behalf.
    assert_eq!(int(triage, "kora.budget.calls"), 3);
    assert_eq!(int(triage, "kora.budget.tokens"), 36);

    let r = support::run_in(&d, &["trace"]);
    assert!(
        r.stdout.contains("3 of 3 branches finished"),
        "{}",
        r.stdout
    );
    assert!(r.stdout.contains("(branch 3)"), "{}", r.stdout);
}

#[test]
fn a_raising_branch_still_hands_back_its_spans() {
    let fake = FakeProvider::with_default(Behaviour::AnswerWithUsage("label".into(), 10, 2));
    let program = r#"results = parallel for x in [1, 2]:
    s: str = analyze(str(x), "Label it.") else:
        return "none"
    if x == 2:
        return str(int(s))
    return s
"#;
    let d = setup("raise", &fake, program);
    let r = support::run_in(&d, &["run", "main.ko"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let (_, req) = trace(&d);
    let all = spans(&req);
    let fan = named(&all, "parallel for");
    assert_eq!(fan.len(), 1);
    assert_eq!(
        fan[0].status.as_ref().map(|s| s.code),
        Some(StatusCode::Error as i32)
    );
    assert_eq!(children(&all, fan[0]).len(), 2, "both calls were made");
}
